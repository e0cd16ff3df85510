#pragma once

// Batch ids (docs/format/layout.md, "Batch ids"): the one grammar for the
// names that become batch directories, and the one function that checks it.
//
//   batch-id   = stamp generation node    ; exactly 23 characters
//   stamp      = 20 DIGIT                 ; YYYYMMDDhhmmssuuuuuu, UTC, microseconds
//   generation = 1 ( DIGIT / %x61-7A )    ; 0-9 then a-z: compaction level 0..35
//   node       = 2 ( DIGIT / %x61-7A )    ; "00" on a single node
//
// Every id strata reads (a directory name, meta.json, COMPACTION.json, a CLI
// argument) goes through ValidateBatchId() or BatchId::Parse(), which are the
// same check. Invariants of a BatchId value:
//   1. stamp_micros() is a valid UTC instant from 1970-01-01 00:00:00 through
//      2261-12-31 23:59:59.999999 (so its nanoseconds fit in int64 and u64).
//   2. generation() is 0..35 and node() is 0..1295 (two base-36 digits).
//   3. ToString() is 23 characters of [0-9a-z]; Parse(ToString()) gives the
//      same value back, and ids order (operator<=>) exactly as their strings
//      order bytewise.
//
// Errors: InvalidArgument naming the offending id (quoted, with
// non-printable bytes escaped) and what is wrong with it.

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace strata::storage {

inline constexpr size_t kBatchIdLength = 23;
inline constexpr int kMaxGeneration = 35;
inline constexpr int kMaxNode = 36 * 36 - 1;
// The first and last instants a stamp can hold (Unix microseconds, UTC).
inline constexpr int64_t kMinStampMicros = 0;                 // 1970-01-01 00:00:00
inline constexpr int64_t kMaxStampMicros = 9214646399999999;  // 2261-12-31 23:59:59.999999

class BatchId {
 public:
  // Parses and validates `text` (the grammar above). InvalidArgument if it is
  // not a batch id.
  [[nodiscard]] static absl::StatusOr<BatchId> Parse(std::string_view text);
  // Builds an id from its parts. InvalidArgument if a part is out of range.
  [[nodiscard]] static absl::StatusOr<BatchId> Make(int64_t stamp_micros, int generation,
                                                    int node = 0);

  // Unix microseconds, UTC.
  int64_t stamp_micros() const { return stamp_micros_; }
  // The stamp in Unix nanoseconds (what meta.json's ingest_time holds).
  uint64_t stamp_nanos() const { return static_cast<uint64_t>(stamp_micros_) * 1000; }
  int generation() const { return generation_; }
  int node() const { return node_; }

  // The 23-character id.
  std::string ToString() const;
  // "YYYY-MM-DD": the UTC day of the stamp, the name of the batch's day
  // directory for a level-0 batch.
  std::string Day() const;

  friend bool operator==(const BatchId&, const BatchId&) = default;
  friend std::strong_ordering operator<=>(const BatchId&, const BatchId&) = default;

 private:
  BatchId(int64_t stamp_micros, int generation, int node)
      : stamp_micros_(stamp_micros), generation_(generation), node_(node) {}

  // Declared in the order of the string form, so the defaulted comparison
  // orders ids as their strings order.
  int64_t stamp_micros_;
  int generation_;
  int node_;
};

// The node field's number from its two characters ("00".."zz", as in an
// id). InvalidArgument naming `text` otherwise.
[[nodiscard]] absl::StatusOr<int> ParseBatchIdNode(std::string_view text);

// The one batch-id check: OK if `id` matches the grammar.
[[nodiscard]] absl::Status ValidateBatchId(std::string_view id);

// Day names ("YYYY-MM-DD", the day directories and meta.json's `day`).
// InvalidArgument naming `day` unless it is a valid date in the years a
// stamp can hold (1970-2261).
[[nodiscard]] absl::Status ValidateDay(std::string_view day);
// The first nanosecond of `day` and the first nanosecond of the next day
// (Unix nanoseconds, UTC): a time t lies within the day iff
// first <= t < end.
struct DayBoundsNanos {
  uint64_t first;
  uint64_t end;
};
[[nodiscard]] absl::StatusOr<DayBoundsNanos> DayBounds(std::string_view day);
// The UTC day ("YYYY-MM-DD") that holds Unix nanosecond `nanos`.
std::string DayOfNanos(uint64_t nanos);

// `text` quoted for an error message: at most 64 bytes, non-printable bytes
// as \xNN, so a hostile id cannot forge log lines.
std::string QuoteForError(std::string_view text);

// A clock for the issuer: Unix microseconds, UTC.
using MicrosClock = std::function<int64_t()>;
// The system's real-time clock.
int64_t SystemClockMicros();

// BatchIdIssuer hands out batch ids that increase strictly, without
// randomness: each stamp is max(now, previous stamp + 1 µs), so a clock that
// steps back never produces a duplicate (layout.md). At boot, the owner
// passes every id found in the data directory to Observe() before issuing.
//
// Thread-safety: safe for concurrent use. Errors: FailedPrecondition when
// the next stamp would leave the range a stamp can hold (a clock far in the
// future, or after 2261), InvalidArgument for a generation outside 0..35.
class BatchIdIssuer {
 public:
  // `clock` is called once per Issue(); `node` is 0 ("00") in format 1.
  explicit BatchIdIssuer(MicrosClock clock, int node = 0);

  // Makes later ids greater than `existing`'s stamp.
  void Observe(const BatchId& existing) ABSL_LOCKS_EXCLUDED(mu_);
  // A new id of the given generation, stamped after every id issued or
  // observed so far.
  [[nodiscard]] absl::StatusOr<BatchId> Issue(int generation) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Constant after construction.
  const MicrosClock clock_;
  const int node_;

  Mutex mu_;
  // The largest stamp issued or observed; -1 before any.
  int64_t last_stamp_micros_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace strata::storage
