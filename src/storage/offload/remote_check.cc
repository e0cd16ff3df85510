#include "storage/offload/remote_check.h"

#include <xxhash.h>

#include <optional>
#include <utility>
#include <vector>

#include "common/path.h"
#include "fmt/format.h"
#include "storage/format/batch_meta.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"

namespace strata::storage {
namespace {

RemoteVerdict Verdict(RemoteStatus status, std::string key, std::string message) {
  return RemoteVerdict{.status = status, .key = std::move(key), .message = std::move(message)};
}

}  // namespace

const char* RemoteStatusName(RemoteStatus status) {
  switch (status) {
    case RemoteStatus::kOk:
      return "ok";
    case RemoteStatus::kNotUploaded:
      return "not-uploaded";
    case RemoteStatus::kIncomplete:
      return "incomplete";
    case RemoteStatus::kMismatch:
      return "mismatch";
    case RemoteStatus::kUnreadable:
      return "unreadable";
  }
  return "unknown";
}

RemoteVerdict CheckRemoteCopy(FileSystem& fs, objectstore::BatchStore& store,
                              const std::string& day, const BatchId& id,
                              const std::string& batch_dir, bool deep) {
  const std::string meta_key = BatchObjectKey(day, id, kBatchMetaFileName);
  absl::StatusOr<std::string> local_meta = fs.ReadFile(JoinPath(batch_dir, kBatchMetaFileName));
  if (!local_meta.ok()) {
    return Verdict(RemoteStatus::kUnreadable, "", std::string(local_meta.status().message()));
  }
  absl::StatusOr<BatchMeta> meta = ParseBatchMeta(*local_meta, id.ToString());
  if (!meta.ok())
    return Verdict(RemoteStatus::kUnreadable, "", std::string(meta.status().message()));
  absl::StatusOr<objectstore::ObjectInfo> head = store.Head(meta_key);
  if (absl::IsNotFound(head.status())) {
    return Verdict(RemoteStatus::kNotUploaded, meta_key, "no meta.json in the store");
  }
  if (!head.ok()) return Verdict(RemoteStatus::kUnreadable, meta_key, head.status().ToString());
  absl::StatusOr<std::string> remote_meta = store.Get(meta_key, 0, local_meta->size() + 1);
  if (!remote_meta.ok()) {
    return Verdict(RemoteStatus::kUnreadable, meta_key, remote_meta.status().ToString());
  }
  if (*remote_meta != *local_meta) {
    return Verdict(RemoteStatus::kMismatch, meta_key, "meta.json differs from the local one");
  }
  const std::pair<const char*, const std::optional<FileMeta>*> files[] = {
      {kSpansFileName, &meta->spans_parquet},     {kTraceIndexFileName, &meta->spans_tidx},
      {kLogsFileName, &meta->logs_parquet},       {kMetricsFileName, &meta->metrics_parquet},
      {kRollupsFileName, &meta->rollups_parquet},
  };
  for (const auto& [name, file] : files) {
    if (!file->has_value()) continue;
    const std::string key = BatchObjectKey(day, id, name);
    absl::StatusOr<objectstore::ObjectInfo> info = store.Head(key);
    if (absl::IsNotFound(info.status())) {
      return Verdict(RemoteStatus::kIncomplete, key,
                     fmt::format("{} is missing, but meta.json is in the store", name));
    }
    if (!info.ok()) return Verdict(RemoteStatus::kUnreadable, key, info.status().ToString());
    if (info->size != (*file)->bytes) {
      return Verdict(
          RemoteStatus::kMismatch, key,
          fmt::format("{} has {} bytes, meta.json says {}", name, info->size, (*file)->bytes));
    }
    if (!deep || (*file)->bytes == 0) continue;
    absl::StatusOr<std::string> bytes = store.Get(key, 0, (*file)->bytes);
    if (!bytes.ok()) return Verdict(RemoteStatus::kUnreadable, key, bytes.status().ToString());
    const uint64_t hash = XXH3_64bits(bytes->data(), bytes->size());
    if (bytes->size() != (*file)->bytes || hash != (*file)->xxh3_64) {
      return Verdict(RemoteStatus::kMismatch, key,
                     fmt::format("{}'s xxh3-64 is {}, meta.json says {}", name, FormatXxh3_64(hash),
                                 FormatXxh3_64((*file)->xxh3_64)));
    }
  }
  return RemoteVerdict{};
}

}  // namespace strata::storage
