#include "storage/check/batch_contents.h"

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/layout.h"
#include "storage/index/batch_lookup_state.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/rollups_table.h"
#include "storage/table/spans_table.h"

namespace strata::storage {
namespace {

// Adds the batch to a check's error, keeping its code.
absl::Status InBatch(const absl::Status& status, const std::string& batch_dir) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      fmt::format("batch {}: {}", batch_dir, std::string(status.message())));
}

}  // namespace

absl::Status CheckBatchFileContents(FileSystem& fs, const std::string& batch_dir,
                                    const BatchMeta& meta, std::string_view file_name) {
  const std::string& id = meta.id;
  const std::string path = JoinPath(batch_dir, file_name);
  if (file_name == kSpansFileName) {
    if (!meta.spans_parquet.has_value()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, path));
    return InBatch(CheckSpansTableFooter(source.get(), id, meta.spans.file_rows, kSpansFileName),
                   batch_dir);
  }
  if (file_name == kLogsFileName) {
    if (!meta.logs_parquet.has_value()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, path));
    return InBatch(CheckLogsTableFooter(source.get(), id, meta.logs.file_rows, kLogsFileName),
                   batch_dir);
  }
  if (file_name == kMetricsFileName) {
    if (!meta.metrics_parquet.has_value()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, path));
    return InBatch(
        CheckMetricsTableFooter(source.get(), id, meta.metrics.file_rows, kMetricsFileName),
        batch_dir);
  }
  if (file_name == kRollupsFileName) {
    if (!meta.rollups_parquet.has_value()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, path));
    return InBatch(CheckRollupsTableFooter(source.get(), id, kRollupsFileName, meta.format),
                   batch_dir);
  }
  if (file_name == kTraceIndexFileName) {
    return LoadBatchLookupState(fs, batch_dir, meta, /*budget=*/nullptr).status();
  }
  return absl::InvalidArgumentError(
      fmt::format("CheckBatchFileContents: {} is not a batch data file", file_name));
}

absl::Status CheckBatchContents(FileSystem& fs, const std::string& batch_dir,
                                const BatchMeta& meta) {
  for (const char* file_name : kBatchFileNames) {
    STRATA_RETURN_IF_ERROR(CheckBatchFileContents(fs, batch_dir, meta, file_name));
  }
  return absl::OkStatus();
}

}  // namespace strata::storage
