#include "storage/format/evicted_marker.h"

#include <algorithm>
#include <memory>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/layout.h"

namespace strata::storage {
namespace {

// A marker is an id (23 characters) and a newline; anything much longer is
// not one strata wrote.
constexpr uint64_t kMaxEvictedMarkerBytes = 64;

absl::Status EvictedError(std::string_view id, std::string_view what) {
  return absl::DataLossError(fmt::format("batch {}: meta.json rule 11 (EVICTED): {}", id, what));
}

}  // namespace

bool IsEvictableFile(std::string_view name) {
  return name == kSpansFileName || name == kLogsFileName || name == kMetricsFileName ||
         name == kRollupsFileName;
}

absl::StatusOr<bool> HasEvictedMarker(FileSystem& fs, const std::string& batch_dir) {
  return fs.Exists(JoinPath(batch_dir, kEvictedMarkerFileName));
}

absl::Status WriteEvictedMarker(FileSystem& fs, const std::string& batch_dir, std::string_view id) {
  const std::string temp = JoinPath(batch_dir, kEvictedMarkerTempFileName);
  {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs.NewWritableFile(temp));
    STRATA_RETURN_IF_ERROR(file->Append(fmt::format("{}\n", id)));
    STRATA_RETURN_IF_ERROR(file->Sync());
    STRATA_RETURN_IF_ERROR(file->Close());
  }
  STRATA_RETURN_IF_ERROR(fs.RenameFile(temp, JoinPath(batch_dir, kEvictedMarkerFileName)));
  return fs.SyncDir(batch_dir);
}

absl::Status RemoveEvictedMarkerTemp(FileSystem& fs, const std::string& batch_dir) {
  const std::string temp = JoinPath(batch_dir, kEvictedMarkerTempFileName);
  STRATA_ASSIGN_OR_RETURN(const bool exists, fs.Exists(temp));
  if (!exists) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(fs.RemoveFile(temp));
  return fs.SyncDir(batch_dir);
}

absl::Status CheckEvictedBatchFiles(FileSystem& fs, const std::string& batch_dir,
                                    const BatchMeta& meta) {
  const std::string marker_path = JoinPath(batch_dir, kEvictedMarkerFileName);
  STRATA_ASSIGN_OR_RETURN(const uint64_t marker_size, fs.FileSize(marker_path));
  if (marker_size > kMaxEvictedMarkerBytes) {
    return EvictedError(meta.id, fmt::format("{} is {} bytes long", marker_path, marker_size));
  }
  STRATA_ASSIGN_OR_RETURN(const std::string marker, fs.ReadFile(marker_path));
  if (marker != fmt::format("{}\n", meta.id)) {
    return EvictedError(meta.id, fmt::format("{} does not name this batch", marker_path));
  }
  const std::pair<const char*, const std::optional<FileMeta>*> files[] = {
      {kSpansFileName, &meta.spans_parquet},
      {kTraceIndexFileName, &meta.spans_tidx},
      {kLogsFileName, &meta.logs_parquet},
      {kMetricsFileName, &meta.metrics_parquet},
      {kRollupsFileName, &meta.rollups_parquet}};
  STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> names, fs.ListDir(batch_dir));
  for (const std::string& name : names) {
    bool declared = name == kBatchMetaFileName || name == kEvictedMarkerFileName;
    for (const auto& [file_name, file] : files) {
      declared = declared || (name == file_name && file->has_value());
    }
    if (!declared) {
      return EvictedError(meta.id, fmt::format("{} holds {}, which files does not name", batch_dir,
                                               QuoteForError(name)));
    }
  }
  if (!meta.spans_tidx.has_value()) return absl::OkStatus();
  // The kept file is checked as rule 9 checks every file of a local batch.
  const std::string tidx = JoinPath(batch_dir, kTraceIndexFileName);
  absl::StatusOr<FileChecksum> actual = ChecksumFile(fs, tidx);
  if (absl::IsNotFound(actual.status())) {
    return EvictedError(meta.id, fmt::format("{} is missing", tidx));
  }
  STRATA_RETURN_IF_ERROR(actual.status());
  if (actual->bytes != meta.spans_tidx->bytes || actual->xxh3_64 != meta.spans_tidx->xxh3_64) {
    return EvictedError(
        meta.id, fmt::format("{} is {} bytes with xxh3-64 {}, meta.json says {} and {}", tidx,
                             actual->bytes, FormatXxh3_64(actual->xxh3_64), meta.spans_tidx->bytes,
                             FormatXxh3_64(meta.spans_tidx->xxh3_64)));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RemoveEvictedFiles(FileSystem& fs, const std::string& batch_dir) {
  uint64_t removed = 0;
  bool any = false;
  for (const char* name : {kSpansFileName, kLogsFileName, kMetricsFileName, kRollupsFileName}) {
    const std::string path = JoinPath(batch_dir, name);
    absl::StatusOr<uint64_t> size = fs.FileSize(path);
    if (absl::IsNotFound(size.status())) continue;
    STRATA_RETURN_IF_ERROR(size.status());
    STRATA_RETURN_IF_ERROR(fs.RemoveFile(path));
    removed += *size;
    any = true;
  }
  if (any) STRATA_RETURN_IF_ERROR(fs.SyncDir(batch_dir));
  return removed;
}

}  // namespace strata::storage
