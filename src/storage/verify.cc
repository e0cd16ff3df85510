#include "storage/verify.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/batch_meta.h"
#include "storage/file_source.h"
#include "storage/format_file.h"
#include "storage/logs_table.h"
#include "storage/metrics_table.h"
#include "storage/spans_table.h"
#include "storage/storage.h"
#include "storage/trace_index.h"

namespace strata::storage {
namespace {

constexpr char kSpansFile[] = "spans.parquet";
constexpr char kLogsFile[] = "logs.parquet";
constexpr char kMetricsFile[] = "metrics.parquet";

// The first failed check of a batch.
struct Failure {
  std::string check;
  std::string file;
  absl::Status status;
};
using Outcome = std::optional<Failure>;

std::string HexId(const otlp::TraceId& id) {
  std::string hex;
  for (uint8_t b : id) hex += fmt::format("{:02x}", b);
  return hex;
}

absl::Status Mismatch(std::string_view file, std::string_view what) {
  return absl::DataLossError(fmt::format("{}: {}", file, what));
}

std::string FormatRange(const std::optional<NanosRange>& range) {
  if (!range.has_value()) return "null";
  return fmt::format("[{}, {}]", range->min, range->max);
}

// meta.json's event_time for a signal whose decoded rows have `rows` data
// rows with event times in [min, max] (meta-json.md, `event_time`).
absl::Status CheckEventTime(std::string_view file, const SignalMeta& meta, uint64_t rows,
                            uint64_t min, uint64_t max) {
  const NanosRange expected = rows == 0 ? NanosRange{0, 0} : NanosRange{min, max};
  if (meta.event_time != std::optional<NanosRange>(expected)) {
    return Mismatch(file, fmt::format("the rows' event times span {}, meta.json says {}",
                                      FormatRange(expected), FormatRange(meta.event_time)));
  }
  return absl::OkStatus();
}

absl::Status CheckRowCount(std::string_view file, std::string_view what, uint64_t decoded,
                           uint64_t declared) {
  if (decoded != declared) {
    return Mismatch(file, fmt::format("{} {} decoded, meta.json says {}", decoded, what, declared));
  }
  return absl::OkStatus();
}

// "rows" for spans: counts, distinct traces, event times.
absl::Status CheckSpanCounts(const otlp::TraceBatch& batch, const SignalMeta& meta) {
  const otlp::SpanColumns& s = batch.spans;
  STRATA_RETURN_IF_ERROR(CheckRowCount(kSpansFile, "spans", s.size(), meta.rows));
  uint64_t traces = 0;
  uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 0 || s.trace_id[i] != s.trace_id[i - 1]) ++traces;
    min = std::min({min, s.start_time_unix_nano[i], s.end_time_unix_nano[i]});
    max = std::max({max, s.start_time_unix_nano[i], s.end_time_unix_nano[i]});
  }
  STRATA_RETURN_IF_ERROR(CheckRowCount(kSpansFile, "traces", traces, meta.traces.value_or(0)));
  return CheckEventTime(kSpansFile, meta, s.size(), min, max);
}

// "sort order": (trace id bytewise, start time), non-decreasing.
absl::Status CheckSpanOrder(const otlp::TraceBatch& batch, uint64_t first_span_row) {
  const otlp::SpanColumns& s = batch.spans;
  for (size_t i = 1; i < s.size(); ++i) {
    if (std::tie(s.trace_id[i], s.start_time_unix_nano[i]) <
        std::tie(s.trace_id[i - 1], s.start_time_unix_nano[i - 1])) {
      return Mismatch(kSpansFile,
                      fmt::format("row {} (trace {}, start {}) sorts before row {} (trace {}, "
                                  "start {})",
                                  first_span_row + i, HexId(s.trace_id[i]),
                                  s.start_time_unix_nano[i], first_span_row + i - 1,
                                  HexId(s.trace_id[i - 1]), s.start_time_unix_nano[i - 1]));
    }
  }
  return absl::OkStatus();
}

// "index": spans.tidx against the decoded, sorted spans (trace-index.md,
// "Validation": what verify checks beyond boot).
absl::Status CheckIndexAgrees(const TraceIndex& index, const otlp::TraceBatch& batch,
                              uint64_t first_span_row) {
  const otlp::SpanColumns& s = batch.spans;
  const TraceFilter& header = index.filter();
  if (header.first_covered_row() != first_span_row || header.span_rows() != s.size()) {
    return Mismatch(
        kTraceIndexFileName,
        fmt::format("covers rows [{}, {}), the span rows are [{}, {})", header.first_covered_row(),
                    header.first_covered_row() + header.span_rows(), first_span_row,
                    first_span_row + s.size()));
  }
  const auto entries = index.entries();
  uint64_t covered = 0;
  for (size_t k = 0; k < entries.size(); ++k) {
    const TraceLocation location = index.LocationOf(k);
    const std::string trace = HexId(entries[k].trace_id);
    uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0;
    for (uint64_t row = location.first_row; row < location.end_row; ++row) {
      const size_t i = row - first_span_row;  // in range: the header check above
      if (s.trace_id[i] != entries[k].trace_id) {
        return Mismatch(kTraceIndexFileName,
                        fmt::format("entry {} (trace {}) covers row {}, which holds trace {}", k,
                                    trace, row, HexId(s.trace_id[i])));
      }
      min = std::min({min, s.start_time_unix_nano[i], s.end_time_unix_nano[i]});
      max = std::max({max, s.start_time_unix_nano[i], s.end_time_unix_nano[i]});
    }
    covered += location.end_row - location.first_row;
    if (min != location.min_time_unix_nano) {
      return Mismatch(kTraceIndexFileName,
                      fmt::format("entry {} (trace {}): minimum time {}, its rows' is {}", k, trace,
                                  location.min_time_unix_nano, min));
    }
    const uint64_t bound = location.max_time_bound_unix_nano;
    if (max > bound || (bound != std::numeric_limits<uint64_t>::max() && bound - max >= 1000)) {
      return Mismatch(kTraceIndexFileName,
                      fmt::format("entry {} (trace {}): time upper bound {}, its rows' maximum "
                                  "is {}",
                                  k, trace, bound, max));
    }
  }
  if (covered != s.size()) {  // cannot happen once TraceIndex::Open accepted it
    return Mismatch(kTraceIndexFileName,
                    fmt::format("entries cover {} rows of {}", covered, s.size()));
  }
  return absl::OkStatus();
}

class BatchChecker {
 public:
  BatchChecker(FileSystem& fs, std::string dir, const VerifyOptions& options)
      : fs_(fs), dir_(std::move(dir)), options_(options) {}

  Outcome Run(const std::string& day, const BatchId& id) {
    absl::StatusOr<BatchMeta> meta = ReadBatchMeta(fs_, dir_, day, id);
    if (!meta.ok()) return Failure{"meta.json", kBatchMetaFileName, meta.status()};
    std::string failed_file;
    if (absl::Status files = CheckBatchFiles(fs_, dir_, *meta, &failed_file); !files.ok()) {
      return Failure{"files", failed_file, files};
    }
    for (const char* name : kBatchFileNames) {
      if (absl::Status s = CheckBatchFileContents(fs_, dir_, *meta, name); !s.ok()) {
        return Failure{name == std::string_view(kTraceIndexFileName) ? "trace index" : "footer",
                       name, s};
      }
    }
    if (!options_.deep) return std::nullopt;
    if (Outcome spans = DeepSpans(*meta)) return spans;
    if (Outcome logs = DeepLogs(*meta)) return logs;
    if (Outcome metrics = DeepMetrics(*meta)) return metrics;
    return std::nullopt;
  }

 private:
  std::string PathOf(std::string_view file) const { return fmt::format("{}/{}", dir_, file); }

  absl::StatusOr<std::unique_ptr<FileSource>> Open(std::string_view file) {
    return OpenFileSource(fs_, PathOf(file));
  }

  Outcome External(std::string_view file, uint64_t file_rows) {
    if (!options_.parquet_check.has_value()) return std::nullopt;
    const ParquetFileCheck& check = *options_.parquet_check;
    if (absl::Status s = check.run(PathOf(file), file_rows); !s.ok()) {
      return Failure{check.name, std::string(file), s};
    }
    return std::nullopt;
  }

  Outcome DeepSpans(const BatchMeta& meta) {
    if (!meta.spans_parquet.has_value()) return std::nullopt;
    // The decoded table is released before DuckDB reads the file.
    if (Outcome decoded = DecodeSpans(meta)) return decoded;
    return External(kSpansFile, meta.spans.file_rows);
  }

  // "decode", "rows", "sort order" and "index" for spans.
  Outcome DecodeSpans(const BatchMeta& meta) {
    absl::StatusOr<std::unique_ptr<FileSource>> source = Open(kSpansFile);
    if (!source.ok()) return Failure{"decode", kSpansFile, source.status()};
    absl::StatusOr<otlp::TraceBatch> batch = ReadSpansTable(source->get(), meta.id, kSpansFile);
    if (!batch.ok()) return Failure{"decode", kSpansFile, batch.status()};
    if (absl::Status s = CheckSpanCounts(*batch, meta.spans); !s.ok()) {
      return Failure{"rows", kSpansFile, s};
    }
    // Placeholder rows come first (the reader checked it).
    const uint64_t first_span_row = meta.spans.file_rows - meta.spans.rows;
    if (absl::Status s = CheckSpanOrder(*batch, first_span_row); !s.ok()) {
      return Failure{"sort order", kSpansFile, s};
    }
    if (!meta.spans_tidx.has_value()) return std::nullopt;
    absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
        fs_.NewRandomAccessFile(PathOf(kTraceIndexFileName));
    if (!file.ok()) return Failure{"index", kTraceIndexFileName, file.status()};
    absl::StatusOr<TraceIndex> index = TraceIndex::Open(**file);
    if (!index.ok()) return Failure{"index", kTraceIndexFileName, index.status()};
    if (absl::Status s = CheckIndexAgrees(*index, *batch, first_span_row); !s.ok()) {
      return Failure{"index", kTraceIndexFileName, s};
    }
    return std::nullopt;
  }

  Outcome DeepLogs(const BatchMeta& meta) {
    if (!meta.logs_parquet.has_value()) return std::nullopt;
    {
      absl::StatusOr<std::unique_ptr<FileSource>> source = Open(kLogsFile);
      if (!source.ok()) return Failure{"decode", kLogsFile, source.status()};
      absl::StatusOr<otlp::LogBatch> batch = ReadLogsTable(source->get(), meta.id, kLogsFile);
      if (!batch.ok()) return Failure{"decode", kLogsFile, batch.status()};
      const otlp::LogRecordColumns& logs = batch->logs;
      uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0;
      for (size_t i = 0; i < logs.size(); ++i) {
        const uint64_t t =
            logs.time_unix_nano[i] != 0 ? logs.time_unix_nano[i] : logs.observed_time_unix_nano[i];
        min = std::min(min, t);
        max = std::max(max, t);
      }
      absl::Status s = CheckRowCount(kLogsFile, "log records", logs.size(), meta.logs.rows);
      if (s.ok()) s = CheckEventTime(kLogsFile, meta.logs, logs.size(), min, max);
      if (!s.ok()) return Failure{"rows", kLogsFile, s};
    }
    return External(kLogsFile, meta.logs.file_rows);
  }

  Outcome DeepMetrics(const BatchMeta& meta) {
    if (!meta.metrics_parquet.has_value()) return std::nullopt;
    {
      absl::StatusOr<std::unique_ptr<FileSource>> source = Open(kMetricsFile);
      if (!source.ok()) return Failure{"decode", kMetricsFile, source.status()};
      absl::StatusOr<otlp::MetricBatch> batch =
          ReadMetricsTable(source->get(), meta.id, kMetricsFile);
      if (!batch.ok()) return Failure{"decode", kMetricsFile, batch.status()};
      uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0;
      for (const otlp::PointColumnsBase* points :
           {static_cast<const otlp::PointColumnsBase*>(&batch->number_points),
            static_cast<const otlp::PointColumnsBase*>(&batch->histogram_points),
            static_cast<const otlp::PointColumnsBase*>(&batch->exponential_points),
            static_cast<const otlp::PointColumnsBase*>(&batch->summary_points)}) {
        for (uint64_t t : points->time_unix_nano) {
          min = std::min(min, t);
          max = std::max(max, t);
        }
      }
      const uint64_t points = batch->point_count();
      absl::Status s = CheckRowCount(kMetricsFile, "data points", points, meta.metrics.rows);
      if (s.ok()) s = CheckEventTime(kMetricsFile, meta.metrics, points, min, max);
      if (!s.ok()) return Failure{"rows", kMetricsFile, s};
    }
    return External(kMetricsFile, meta.metrics.file_rows);
  }

  FileSystem& fs_;
  const std::string dir_;
  const VerifyOptions& options_;
};

bool IsIoError(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsPermissionDenied(status);
}

// Compaction marker state and the problems boot would refuse.
absl::Status ObserveCompaction(FileSystem& fs, const DataDirPaths& paths, VerifyReport& report) {
  absl::StatusOr<std::optional<CompactionMarker>> marker = ReadCompactionMarker(fs, paths);
  if (absl::IsInvalidArgument(marker.status())) {
    report.problems.push_back(
        {paths.CompactionMarker(),
         fmt::format("{}; boot refuses such a marker", std::string(marker.status().message()))});
  } else if (!marker.ok()) {
    return marker.status();
  } else {
    report.compaction = *std::move(marker);
  }
  absl::StatusOr<bool> temp = fs.Exists(paths.CompactionMarkerTemp());
  if (!temp.ok()) return temp.status();
  report.compaction_temp = *temp;
  if (report.compaction.has_value() && report.compaction_temp) {
    report.problems.push_back({paths.CompactionMarkerTemp(),
                               "COMPACTION.json.tmp exists beside COMPACTION.json; boot refuses "
                               "both (one compaction publishes at a time)"});
  }
  return absl::OkStatus();
}

}  // namespace

const char* BatchStatusName(BatchStatus status) {
  switch (status) {
    case BatchStatus::kOk:
      return "ok";
    case BatchStatus::kCorrupt:
      return "corrupt";
    case BatchStatus::kGone:
      return "gone";
    case BatchStatus::kUnreadable:
      return "unreadable";
  }
  return "?";
}

size_t VerifyReport::Count(BatchStatus status) const {
  return static_cast<size_t>(
      std::count_if(batches.begin(), batches.end(),
                    [status](const BatchVerdict& verdict) { return verdict.status == status; }));
}

bool VerifyReport::Healthy() const {
  return problems.empty() && Count(BatchStatus::kCorrupt) == 0 &&
         Count(BatchStatus::kUnreadable) == 0;
}

BatchVerdict VerifyBatch(FileSystem& fs, const DataDirPaths& paths, const std::string& day,
                         const BatchId& id, const VerifyOptions& options) {
  BatchVerdict verdict{.day = day, .id = id, .dir = paths.Batch(day, id)};
  BatchChecker checker(fs, verdict.dir, options);
  Outcome failure = checker.Run(day, id);
  if (!failure.has_value()) return verdict;
  // Whatever failed, a batch no longer in days/ was removed by its owner
  // (a running server's compaction or retention) after it was listed.
  absl::StatusOr<bool> still_there = fs.Exists(verdict.dir);
  if (still_there.ok() && !*still_there) {
    verdict.status = BatchStatus::kGone;
    verdict.message = "the batch left days/ while it was checked (compacted or retired)";
    return verdict;
  }
  verdict.status = IsIoError(failure->status) ? BatchStatus::kUnreadable : BatchStatus::kCorrupt;
  verdict.check = std::move(failure->check);
  verdict.file = std::move(failure->file);
  verdict.message = std::string(failure->status.message());
  return verdict;
}

absl::StatusOr<VerifyReport> VerifyDataDir(FileSystem& fs, const std::string& data_dir,
                                           const VerifyOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckExistingDataDir(fs, data_dir));
  const DataDirPaths paths(data_dir);
  VerifyReport report;
  // The marker first: a compaction that publishes meanwhile names batches
  // that the listing then finds, or finds gone.
  STRATA_RETURN_IF_ERROR(ObserveCompaction(fs, paths, report));
  STRATA_ASSIGN_OR_RETURN(const DaysListing listing, ListDays(fs, paths, /*concurrent=*/true));
  for (const absl::Status& unexpected : listing.unexpected) {
    report.problems.push_back({paths.Days(), std::string(unexpected.message())});
  }
  for (const ListedDay& day : listing.days) {
    for (const BatchId& id : day.batches) {
      report.batches.push_back(VerifyBatch(fs, paths, day.day, id, options));
      if (options.on_batch) options.on_batch(report.batches.back());
    }
  }
  return report;
}

}  // namespace strata::storage
