#pragma once

// Test support for verify and quarantine (src/storage and tests/cli; not
// used by production code): data directories of real batches written by
// the real Storage from generated traffic, and the surgery that turns one
// of their files into a chosen kind of corruption.
//
//   WriteTrafficBatches()      N batches, each with spans, logs and metrics
//   RewriteBatchFile()         replaces a file and makes meta.json agree with
//                              the new bytes (size, xxh3-64), so only checks
//                              that read inside the file can notice
//   PageBodyOffset()           the first byte of the compressed body of a
//                              column's first data page
//   RebuildTraceIndex()        spans.tidx from edited entries
//   CompactEverything()        every live batch (one day, generation 0)
//                              compacted into one, the inputs deleted
//
// Header-only; the including target links strata_storage and
// strata_workload. Functions are reentrant; errors come back as Status.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "io/file_system.h"
#include "parquet/file_reader.h"
#include "parquet/metadata.h"
#include "storage/format/batch_meta.h"
#include "storage/index/trace_index.h"
#include "storage/maintenance/compaction.h"
#include "storage/storage.h"
#include "storage/table/trace_run.h"
#include "workload/traffic_generator.h"

namespace strata::storage::verify_testing {

// Writes `batches` requests through Storage into `data_dir` (created if
// missing), one at a time so each becomes one batch, and returns the batch
// directories in id order. Request k carries TrafficGenerator(seed + k)'s
// Traces(spans), Logs(spans / 2) and Metrics(spans / 2).
inline absl::StatusOr<std::vector<std::string>> WriteTrafficBatches(FileSystem& fs,
                                                                    const std::string& data_dir,
                                                                    int batches, int spans = 300,
                                                                    uint64_t seed = 1) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Storage> storage, Storage::Open(fs, data_dir));
  for (int k = 0; k < batches; ++k) {
    workload::TrafficGenerator traffic(workload::TrafficOptions{.seed = seed + k});
    WriteRequest request;
    request.traces = traffic.Traces(spans);
    request.logs = traffic.Logs(spans / 2);
    request.metrics = traffic.Metrics(spans / 2);
    request.rows =
        request.traces->spans.size() + request.logs->logs.size() + request.metrics->point_count();
    request.bytes = request.rows * 200;
    STRATA_RETURN_IF_ERROR(storage->Write(std::move(request)));
  }
  std::vector<std::string> dirs;
  for (const auto& batch : storage->Pin()->batches()) dirs.push_back(batch->dir());
  return dirs;
}

// The id of a batch directory (<id>.batch) and its day (the parent's name).
inline std::string BatchIdOfDir(std::string_view dir) {
  const size_t slash = dir.rfind('/');
  std::string_view name = dir.substr(slash + 1);
  name.remove_suffix(std::string_view(".batch").size());
  return std::string(name);
}
inline std::string DayOfDir(std::string_view dir) {
  std::string_view parent = dir.substr(0, dir.rfind('/'));
  return std::string(parent.substr(parent.rfind('/') + 1));
}

// Writes `bytes` as `name` in `batch_dir` and updates meta.json's size and
// checksum of that file to match.
inline absl::Status RewriteBatchFile(FileSystem& fs, const std::string& batch_dir,
                                     const std::string& name, const std::string& bytes) {
  const std::string path = fmt::format("{}/{}", batch_dir, name);
  STRATA_RETURN_IF_ERROR(WriteFile(fs, path, bytes));
  const std::string meta_path = fmt::format("{}/{}", batch_dir, kBatchMetaFileName);
  STRATA_ASSIGN_OR_RETURN(const std::string json, fs.ReadFile(meta_path));
  STRATA_ASSIGN_OR_RETURN(BatchMeta meta, ParseBatchMeta(json, BatchIdOfDir(batch_dir)));
  STRATA_ASSIGN_OR_RETURN(const FileChecksum checksum, ChecksumFile(fs, path));
  const FileMeta file{.bytes = checksum.bytes, .xxh3_64 = checksum.xxh3_64};
  if (name == "spans.parquet") meta.spans_parquet = file;
  if (name == "spans.tidx") meta.spans_tidx = file;
  if (name == "logs.parquet") meta.logs_parquet = file;
  if (name == "metrics.parquet") meta.metrics_parquet = file;
  if (name == "rollups.parquet") meta.rollups_parquet = file;
  return WriteFile(fs, meta_path, SerializeBatchMeta(meta));
}

// The offset of the first byte of the compressed body of the first data
// page of column `column` (first row group): the start of its zstd frame's
// magic number, so changing it makes the page undecodable. (A byte changed
// further in may decode to other valid values, which no reader can tell
// from the truth; only meta.json's checksum catches that.)
inline absl::StatusOr<uint64_t> PageBodyOffset(const std::string& bytes, std::string_view column) {
  parquet::StringSource source(bytes);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileReader> reader,
                          parquet::FileReader::Open(&source));
  const int index = reader->FindColumn(column);
  if (index < 0) return absl::NotFoundError(fmt::format("no column {}", column));
  const parquet::ColumnChunk& chunk = reader->metadata().row_groups.at(0).columns.at(index);
  const uint64_t header_at = static_cast<uint64_t>(chunk.meta_data->data_page_offset);
  size_t header_bytes = 0;
  STRATA_ASSIGN_OR_RETURN(
      const parquet::PageHeader header,
      parquet::ParsePageHeader(std::string_view(bytes).substr(header_at), &header_bytes));
  if (header.compressed_page_size <= 0) return absl::DataLossError("empty page");
  return header_at + header_bytes;
}

// spans.tidx bytes for `entries` (edited copies of a decoded index's),
// covering `span_rows` rows from `first_covered_row`.
inline absl::StatusOr<std::string> RebuildTraceIndex(const std::vector<TraceIndexEntry>& entries,
                                                     uint64_t span_rows,
                                                     uint64_t first_covered_row) {
  std::vector<TraceRun> runs;
  for (const TraceIndexEntry& entry : entries) {
    runs.push_back(TraceRun{.trace_id = entry.trace_id, .first_row = entry.first_row});
  }
  return BuildTraceIndex(runs, span_rows, first_covered_row);
}

// Compacts every live batch of `storage` (of one day, generation 0) into
// one and runs maintenance until the retired inputs are deleted. Returns
// the output's meta.json.
inline absl::StatusOr<BatchMeta> CompactEverything(Storage& storage) {
  BatchMeta output;
  {
    const std::shared_ptr<const Snapshot> live = storage.Pin();
    if (live->size() < 2) return absl::FailedPreconditionError("fewer than two batches");
    CompactionGroup group{
        .day = live->batches()[0]->day(), .generation = 0, .inputs = live->batches()};
    Compactor compactor(storage.data_dir(),
                        {.merge = {}, .load_attachment = nullptr, .check_stop = nullptr});
    STRATA_ASSIGN_OR_RETURN(CompactionResult result, compactor.Run(group));
    output = std::move(result.output);
  }
  for (int i = 0; i < 10 && storage.maintenance().RunStep(); ++i) {
  }
  return output;
}

}  // namespace strata::storage::verify_testing
