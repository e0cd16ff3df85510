#pragma once

// Service health from the rollups (docs/api.md, "Services and RED"): every
// batch's rollups.parquet rows (rollups/rollup_rows.h), read once per batch
// and kept while the batch is live (RollupCache), merged over a window of
// whole UTC minutes into request rate, error rate and duration quantiles
// per service, operation and endpoint, and into RED time series.
//
// Windows. A rollup row counts in a window [start, end) when its minute's
// first instant lies in it, so answers are exact for windows on whole
// minutes and otherwise cover the minutes that begin inside the window
// (MinuteWindow says which).
//
// Thread-safety: RollupCache is safe for concurrent use; the rest is
// reentrant. Errors: RollupCache returns the rollup readers' errors
// (DataLoss for a damaged file, the FileSystem's for I/O).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "rollups/rollup_rows.h"
#include "storage/commit/catalog.h"

namespace strata::api {

// [first, end): the first instants of the minutes a window covers.
struct MinuteWindow {
  uint64_t first = 0;
  uint64_t end = 0;
  double seconds() const { return static_cast<double>(end - first) / 1e9; }
};
// The minutes whose first instant lies in [start, end).
MinuteWindow MinutesOf(uint64_t start, uint64_t end);

// One batch's rollups as the answers read them: the rows as stored, and
// two merges made once when the batch is read, so long windows add a few
// rows per batch instead of every minute's.
struct BatchRollups {
  rollups::RollupRows rows;
  // The rows merged over their minutes (minute 0 on every row): used when
  // the window holds every minute of the batch.
  rollups::RollupRows whole;
  // Per service, over the batch's minutes (minute 0): the operation rows
  // merged into two, requests (span_kind 2) and other spans (span_kind 0),
  // and the log and metric rows. What the services answer reads of a
  // batch the window holds whole.
  rollups::RollupRows services;
  // Per (minute, service): the operation rows of the request kinds merged
  // (span_name "", span_kind 0): the default RED series.
  rollups::RollupRows requests;
  // The first and last minute of `rows`.
  uint64_t first_minute = 0;
  uint64_t last_minute = 0;

  explicit BatchRollups(rollups::RollupRows stored);
};

class RollupCache {
 public:
  using Rows = std::shared_ptr<const BatchRollups>;

  // The rollups of every batch of `snapshot` that may hold a row of
  // `window` (by meta.json's event times), reading those not read yet.
  // A batch another caller is reading (a request, or Preload) is not read
  // again: its rollups are awaited, after this call has read the batches
  // nobody else was reading.
  [[nodiscard]] absl::StatusOr<std::vector<Rows>> ForWindow(FileSystem& fs,
                                                            const storage::Snapshot& snapshot,
                                                            const MinuteWindow& window)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Reads, newest first (by each batch's newest event), the rollups not
  // read yet of every batch of `snapshot` with an event at or after
  // `from_nanos` (Unix ns; RollupPreload passes its clock's now less its
  // horizon: what ForWindow would read for a window from then to now, and
  // batches with events after now, which come first), one batch at a
  // time, checking `stop` before each. Returns the number of batches it
  // read; a batch that cannot be read is left to ForWindow (which reports
  // its error), and counted in *unreadable.
  size_t Preload(FileSystem& fs, const storage::Snapshot& snapshot, uint64_t from_nanos,
                 const std::function<bool()>& stop, size_t* unreadable) ABSL_LOCKS_EXCLUDED(mu_);

  size_t batches() const ABSL_LOCKS_EXCLUDED(mu_);
  // Rollups files (or, for a batch without one, table files) read since
  // construction: one per batch while it stays live.
  uint64_t reads() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The batch's rollups: cached, else awaited from the caller reading
  // them, else read by this call.
  absl::StatusOr<Rows> Obtain(FileSystem& fs, const storage::LiveBatch& batch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Reads a batch whose id this caller added to reading_, then stores the
  // rows (on success) and removes the id.
  absl::StatusOr<Rows> ReadClaimed(FileSystem& fs, const storage::LiveBatch& batch)
      ABSL_LOCKS_EXCLUDED(mu_);

  mutable Mutex mu_;
  // Signalled whenever an id leaves reading_.
  CondVar read_cv_;
  // By batch id; entries of batches no longer live are dropped when the
  // cache holds more than twice the snapshot's batches.
  absl::flat_hash_map<std::string, Rows> by_batch_ ABSL_GUARDED_BY(mu_);
  // Batches some caller is reading now (not in by_batch_).
  absl::flat_hash_set<std::string> reading_ ABSL_GUARDED_BY(mu_);
  uint64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
};

// Spans merged: counts, the exact duration sum, extremes and a histogram.
class Red {
 public:
  void Add(const rollups::RollupMeasures& m);
  int64_t count() const { return count_; }
  int64_t errors() const { return errors_; }
  __int128 duration_sum() const { return sum_; }
  int64_t duration_min() const { return min_; }
  int64_t duration_max() const { return max_; }
  // The nearest-rank quantile (rollups-parquet.md), q in thousandths,
  // kept within duration_min() and duration_max(); nullopt when count()
  // is 0.
  std::optional<int64_t> Quantile(int thousandths) const;

 private:
  int64_t count_ = 0;
  int64_t errors_ = 0;
  __int128 sum_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  // The quantile as the histogram alone reports it (its bucket's value).
  std::optional<int64_t> BucketQuantile(int thousandths) const;
  // Sorts buckets_ by index and adds up equal indexes.
  void Compact() const;

  // Bucket counts as added, compacted when they grow past twice what the
  // last compaction left (so memory stays near the distinct buckets, and
  // the work near n log n over the rows added) ...
  mutable std::vector<rollups::DurationHistogram::Bucket> buckets_;
  mutable size_t compacted_ = 0;
  // ... until they would pass kDurationBuckets: then one count per bucket
  // (58 KiB), added to in place.
  std::vector<int64_t> dense_;
};

// Whether a span kind counts as a request: SERVER (2) and CONSUMER (5).
constexpr bool IsRequestKind(uint8_t kind) { return kind == 2 || kind == 5; }

using RollupSet = std::vector<RollupCache::Rows>;

// Which service an answer is about: `name`, and `ns` (nullopt: any).
struct ServiceSelector {
  std::string name;
  std::optional<std::string> ns;
  bool Matches(const rollups::RollupKey& key) const {
    return key.service_name == name && (!ns.has_value() || key.service_namespace == *ns);
  }
};

struct ServiceRed {
  std::string ns;
  std::string name;
  Red spans;                      // every kind
  Red requests;                   // IsRequestKind
  std::array<int64_t, 7> logs{};  // by severity class, 0 unset .. 6 FATAL
  int64_t metric_points = 0;
};
// Every service with a row in the window, by (name, namespace).
std::vector<ServiceRed> ServicesRed(const RollupSet& rows, const MinuteWindow& window);

struct OperationRed {
  std::string name;
  uint8_t kind = 0;
  Red red;
};
// The service's operations, by (name, kind).
std::vector<OperationRed> OperationsRed(const RollupSet& rows, const MinuteWindow& window,
                                        const ServiceSelector& service);

struct EndpointRed {
  rollups::EndpointType type = rollups::EndpointType::kNone;
  std::string a;
  std::string b;
  uint8_t kind = 0;
  Red red;
};
// The service's endpoints, by (type, a, b, kind).
std::vector<EndpointRed> EndpointsRed(const RollupSet& rows, const MinuteWindow& window,
                                      const ServiceSelector& service);

// What a RED series counts: the service (or every service), then an
// operation or an endpoint (or every span), of the given kinds (empty:
// the request kinds).
struct RedSelector {
  std::optional<ServiceSelector> service;
  std::optional<std::string> operation;
  struct Endpoint {
    rollups::EndpointType type;
    std::string a;
    std::string b;
  };
  std::optional<Endpoint> endpoint;
  std::vector<uint8_t> kinds;
};
// One point per `step` (a whole number of minutes) from window.first.
std::vector<Red> RedSeries(const RollupSet& rows, const MinuteWindow& window, uint64_t step,
                           const RedSelector& selector);

// The health of a service from its request (or, without requests, span)
// error rate and p99 against thresholds (docs/api.md).
struct HealthThresholds {
  double degraded_error_rate = 0.01;
  double unhealthy_error_rate = 0.05;
  std::optional<int64_t> degraded_p99;
  std::optional<int64_t> unhealthy_p99;
};
// "healthy", "degraded", "unhealthy", or "idle" (no spans in the window).
const char* HealthOf(const Red& red, const HealthThresholds& thresholds);

}  // namespace strata::api
