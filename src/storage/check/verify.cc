#include "storage/check/verify.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/check/batch_contents.h"
#include "storage/check/deep_checks.h"
#include "storage/format/batch_meta.h"
#include "storage/format/evicted_marker.h"
#include "storage/format/format_file.h"
#include "storage/index/trace_index.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/rollups_table.h"
#include "storage/table/spans_table.h"

namespace strata::storage {
namespace {

using Failure = DeepFailure;
using Outcome = DeepOutcome;

class BatchChecker {
 public:
  BatchChecker(FileSystem& fs, std::string dir, const VerifyOptions& options)
      : fs_(fs), dir_(std::move(dir)), options_(options) {}

  Outcome Run(const std::string& day, const BatchId& id) {
    absl::StatusOr<BatchMeta> meta = ReadBatchMeta(fs_, dir_, day, id);
    if (!meta.ok()) return Failure{"meta.json", kBatchMetaFileName, meta.status()};
    // An evicted batch (meta-json.md rule 11) has only meta.json and
    // spans.tidx here; its Parquet files are checked in the object store
    // (--object-store).
    absl::StatusOr<bool> evicted = HasEvictedMarker(fs_, dir_);
    if (!evicted.ok()) return Failure{"files", kEvictedMarkerFileName, evicted.status()};
    if (*evicted) {
      if (absl::Status files = CheckEvictedBatchFiles(fs_, dir_, *meta); !files.ok()) {
        return Failure{"files", kEvictedMarkerFileName, files};
      }
      return std::nullopt;
    }
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
    if (Outcome rollups = DeepRollups(*meta)) return rollups;
    return std::nullopt;
  }

 private:
  std::string PathOf(std::string_view file) const { return JoinPath(dir_, file); }

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
    if (Outcome decoded = DeepCheckSpans(fs_, dir_, meta, options_.chunk_rows)) return decoded;
    return External(kSpansFileName, meta.spans.file_rows);
  }

  Outcome DeepLogs(const BatchMeta& meta) {
    if (!meta.logs_parquet.has_value()) return std::nullopt;
    if (Outcome decoded = DeepCheckLogs(fs_, dir_, meta, options_.chunk_rows)) return decoded;
    return External(kLogsFileName, meta.logs.file_rows);
  }

  Outcome DeepMetrics(const BatchMeta& meta) {
    if (!meta.metrics_parquet.has_value()) return std::nullopt;
    {
      absl::StatusOr<std::unique_ptr<FileSource>> source = Open(kMetricsFileName);
      if (!source.ok()) return Failure{"decode", kMetricsFileName, source.status()};
      absl::StatusOr<otlp::MetricBatch> batch =
          ReadMetricsTable(source->get(), meta.id, kMetricsFileName);
      if (!batch.ok()) return Failure{"decode", kMetricsFileName, batch.status()};
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
      absl::Status s = CheckRowCount(kMetricsFileName, "data points", points, meta.metrics.rows);
      if (s.ok()) s = CheckEventTime(kMetricsFileName, meta.metrics, points, min, max);
      if (!s.ok()) return Failure{"rows", kMetricsFileName, s};
    }
    return External(kMetricsFileName, meta.metrics.file_rows);
  }

  // rollups.parquet holds exactly the rollups of the batch's table rows
  // (rollups-parquet.md, "The one rule").
  Outcome DeepRollups(const BatchMeta& meta) {
    if (!meta.rollups_parquet.has_value()) return std::nullopt;
    absl::StatusOr<rollups::RollupRows> stored = ReadBatchRollups(fs_, dir_, meta);
    if (!stored.ok()) return Failure{"decode", kRollupsFileName, stored.status()};
    absl::StatusOr<rollups::RollupRows> computed = ComputeBatchRollups(fs_, dir_, meta);
    if (!computed.ok()) return Failure{"rollups", kRollupsFileName, computed.status()};
    const rollups::RollupRows* one = &*stored;
    if (rollups::MergeRollups({&one, 1}) != *computed) {
      return Failure{"rollups", kRollupsFileName,
                     DeepMismatch(kRollupsFileName,
                                  fmt::format("{} rows differ from the {} rows its batch's table "
                                              "rows roll up to",
                                              stored->size(), computed->size()))};
    }
    return External(kRollupsFileName, stored->size());
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
  report.strays = listing.strays;
  for (const ListedDay& day : listing.days) {
    for (const BatchId& id : day.batches) {
      report.batches.push_back(VerifyBatch(fs, paths, day.day, id, options));
      if (options.on_batch) options.on_batch(report.batches.back());
    }
  }
  return report;
}

}  // namespace strata::storage
