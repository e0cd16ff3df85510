#pragma once

// spans.tidx, the per-batch trace index (docs/format/trace-index.md): the
// writer, two validating readers and trace-id lookups.
//
//   BuildTraceIndex()     the file's bytes from the spans writer's TraceRuns.
//   TraceFilter::Open()   boot's reader: validates the whole file, streaming
//                         it in 64 KiB pieces, and keeps only the filter and
//                         the header counts (about 9 bits per trace).
//                         Find() then binary-searches the entries in the
//                         file with a few small preads, so the catalog
//                         never holds entries in memory.
//   TraceIndex::Open()    the whole file validated and decoded in memory
//                         (verify, compaction, tests, fuzzing); Find()
//                         searches the decoded entries.
//
// Both readers run every check the page lists for boot except the
// comparison with meta.json, which is Validate(expected_traces,
// expected_span_rows), called by the batch reader with meta.json's spans
// `traces` and `rows`.
//
// Errors: on-disk bytes that break the format are DataLoss with the
// message "<file>: <check>: <what is wrong>", where <file> is the path (or
// the name given for bytes) and <check> one of: magic, version, header
// size, reserved, entry count, file size, covered rows, checksum, filter
// <field>, entry order, first rows, first row, last row, filter
// membership, meta.json traces, meta.json rows. I/O errors come back from
// the FileSystem unchanged. BuildTraceIndex() returns InvalidArgument for
// runs that break the TraceRun contract (a bug in the caller).
//
// Thread-safety: TraceFilter and TraceIndex are immutable after Open() and
// safe for concurrent use (RandomAccessFile is too).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "otlp/batch.h"
#include "storage/format/layout.h"
#include "storage/index/binary_fuse_filter.h"
#include "storage/table/trace_run.h"

namespace strata::storage {

class TraceIndexSource;  // trace_index.cc: the bytes or the file being read

inline constexpr char kTraceIndexMagic[] = "STRATIDX";  // 8 bytes, no terminator on disk
// The version the writer writes. Readers also read version 1, whose
// entries carry 12 more bytes (per-trace time bounds) that they skip.
inline constexpr uint32_t kTraceIndexVersion = 2;
inline constexpr uint64_t kTraceIndexHeaderBytes = 64;
inline constexpr uint64_t kTraceIndexEntryBytes = 20;
inline constexpr uint64_t kTraceIndexV1EntryBytes = 32;
// Rows are u32, so the covered rows end at or before this row.
inline constexpr uint64_t kTraceIndexMaxRowEnd = 0xffffffffu;

// The filter key of a trace id: XXH3_64bits over its 16 bytes (seed 0).
uint64_t TraceFilterKey(const otlp::TraceId& trace_id);

// One decoded entry.
struct TraceIndexEntry {
  otlp::TraceId trace_id{};
  uint32_t first_row = 0;
  friend bool operator==(const TraceIndexEntry&, const TraceIndexEntry&) = default;
};

// Where a trace's spans are in spans.parquet.
struct TraceLocation {
  uint64_t first_row = 0;  // rows [first_row, end_row)
  uint64_t end_row = 0;
  friend bool operator==(const TraceLocation&, const TraceLocation&) = default;
};

// The location an entry describes, given the first row after its spans.
TraceLocation LocationOfEntry(const TraceIndexEntry& entry, uint64_t end_row);

// The spans.tidx bytes for `runs` (one per distinct trace id, ids and
// first rows strictly increasing, runs[0].first_row == first_covered_row,
// every run inside the covered rows [first_covered_row, first_covered_row
// + span_rows)). `runs` must not be empty: a batch
// without spans has no spans.tidx. The output is deterministic.
[[nodiscard]] absl::StatusOr<std::string> BuildTraceIndex(std::span<const TraceRun> runs,
                                                          uint64_t span_rows,
                                                          uint64_t first_covered_row);

// What the catalog keeps per batch: the filter and the header's counts.
class TraceFilter {
 public:
  // Validates all of `file` (see the top of this header) reading it in
  // bounded pieces; holds none of its entries afterwards.
  [[nodiscard]] static absl::StatusOr<TraceFilter> Open(const RandomAccessFile& file);

  // DataLoss unless the header's N equals `expected_traces` and its span
  // rows equal `expected_span_rows` (meta.json's spans `traces`, `rows`).
  [[nodiscard]] absl::Status Validate(uint64_t expected_traces, uint64_t expected_span_rows) const;

  // False only if the batch certainly lacks `trace_id`; true for every id
  // it holds and for about 1 in 256 others.
  bool MayContain(const otlp::TraceId& trace_id) const {
    return filter_.Contains(TraceFilterKey(trace_id));
  }

  // Looks `trace_id` up in `file`, the file this filter was opened from:
  // tests the filter, then binary-searches the entries with preads of 16
  // bytes until at most kFindScanEntries remain, and reads those at once.
  // nullopt when absent. DataLoss if the file no longer matches what Open()
  // validated; the FileSystem's errors on I/O failure.
  [[nodiscard]] absl::StatusOr<std::optional<TraceLocation>> Find(
      const RandomAccessFile& file, const otlp::TraceId& trace_id) const;
  static constexpr uint64_t kFindScanEntries = 128;

  // Entries [first, first + count) of `file` (the file this filter was
  // opened from), decoded, with their end rows: ends[i] is the first row
  // after entries[i]'s spans. For reading an index in order with bounded
  // memory (compaction). DataLoss when the range passes the entry count or
  // the entries break the order the file was validated with.
  [[nodiscard]] absl::Status ReadEntries(const RandomAccessFile& file, uint64_t first,
                                         uint64_t count, std::vector<TraceIndexEntry>* entries,
                                         std::vector<uint64_t>* ends) const;

  uint64_t trace_count() const { return trace_count_; }
  uint64_t span_rows() const { return span_rows_; }
  uint64_t first_covered_row() const { return first_covered_row_; }
  const std::string& file_name() const { return file_name_; }
  const BinaryFuse8Filter& filter() const { return filter_; }
  // Bytes this object holds (itself, the fingerprints, the file name).
  size_t MemoryBytes() const;

 private:
  friend class TraceIndex;
  TraceFilter(std::string file_name, BinaryFuse8Filter filter, uint64_t trace_count,
              uint64_t span_rows, uint64_t first_covered_row, uint64_t entry_bytes);

  // The file offset of entry `i`.
  uint64_t EntryOffset(uint64_t i) const { return kTraceIndexHeaderBytes + i * entry_bytes_; }

  std::string file_name_;
  BinaryFuse8Filter filter_;
  uint64_t trace_count_;
  uint64_t span_rows_;
  uint64_t first_covered_row_;
  uint64_t entry_bytes_;  // kTraceIndexEntryBytes, or kTraceIndexV1EntryBytes
};

// A whole spans.tidx, validated and decoded in memory.
class TraceIndex {
 public:
  // Validates `bytes`; `file_name` names the file in errors.
  [[nodiscard]] static absl::StatusOr<TraceIndex> Open(
      std::string_view bytes, std::string_view file_name = kTraceIndexFileName);
  // Reads and validates all of `file`.
  [[nodiscard]] static absl::StatusOr<TraceIndex> Open(const RandomAccessFile& file);

  // As TraceFilter::Validate().
  [[nodiscard]] absl::Status Validate(uint64_t expected_traces, uint64_t expected_span_rows) const {
    return filter_.Validate(expected_traces, expected_span_rows);
  }

  bool MayContain(const otlp::TraceId& trace_id) const { return filter_.MayContain(trace_id); }
  // Filter, then binary search over the decoded entries.
  std::optional<TraceLocation> Find(const otlp::TraceId& trace_id) const;
  // The location of entries()[index].
  TraceLocation LocationOf(size_t index) const;

  std::span<const TraceIndexEntry> entries() const { return entries_; }
  const TraceFilter& filter() const { return filter_; }

  // Encodes the decoded fields again, in the current version: equals the
  // bytes Open() accepted when they were of the current version.
  std::string Serialize() const;

 private:
  friend class TraceFilter;
  // The one validating reader behind both Open()s and TraceFilter::Open();
  // decodes the entries only when `keep_entries`.
  [[nodiscard]] static absl::StatusOr<TraceIndex> OpenSource(const TraceIndexSource& source,
                                                             bool keep_entries);

  TraceIndex(TraceFilter filter, std::vector<TraceIndexEntry> entries)
      : filter_(std::move(filter)), entries_(std::move(entries)) {}

  TraceFilter filter_;
  std::vector<TraceIndexEntry> entries_;
};

}  // namespace strata::storage
