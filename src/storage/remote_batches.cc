// Storage::AdoptRemoteBatch, RestoreOwnBatch, ReplaceWithStoredBatches,
// ForgetRestoredBatch, the restore marker and DropRemoteBatch (storage.h): batches read from the
// object store through the catalog several servers share.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "io/file_system.h"
#include "storage/check/batch_contents.h"
#include "storage/commit/recovery.h"
#include "storage/format/batch_meta.h"
#include "storage/format/evicted_marker.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"
#include "storage/storage.h"

namespace strata::storage {
namespace {

absl::Status WriteDurably(FileSystem& fs, const std::string& path, std::string_view bytes) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs.NewWritableFile(path));
  STRATA_RETURN_IF_ERROR(file->Append(bytes));
  STRATA_RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

}  // namespace

absl::StatusOr<BatchMeta> Storage::ParseCatalogRecord(std::string_view meta_json) const {
  if (!options_.shared_catalog || resolver_ == nullptr) {
    return absl::FailedPreconditionError("batches of the shared catalog need a shared catalog");
  }
  absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(meta_json, "from the shared catalog");
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(std::string(parsed.status().message()));
  }
  return parsed;
}

absl::Status Storage::AdoptRemoteBatch(std::string_view meta_json) {
  STRATA_ASSIGN_OR_RETURN(const BatchMeta meta, ParseCatalogRecord(meta_json));
  STRATA_ASSIGN_OR_RETURN(const BatchId id, BatchId::Parse(meta.id));
  if (id.node() == options_.node) {
    return absl::InvalidArgumentError(
        fmt::format("batch {} is this node's own; only other nodes' batches are adopted", meta.id));
  }
  return PublishStoredBatch(meta, id);
}

absl::Status Storage::RestoreOwnBatch(std::string_view meta_json) {
  STRATA_ASSIGN_OR_RETURN(const BatchMeta meta, ParseCatalogRecord(meta_json));
  STRATA_ASSIGN_OR_RETURN(const BatchId id, BatchId::Parse(meta.id));
  if (id.node() != options_.node) {
    return absl::InvalidArgumentError(
        fmt::format("batch {} is another node's; only this node's batches are restored", meta.id));
  }
  STRATA_RETURN_IF_ERROR(CheckOwnStored(meta, id));
  return PublishStoredBatch(meta, id);
}

absl::Status Storage::CheckOwnStored(const BatchMeta& meta, const BatchId& id) {
  // Its meta.json, put last, stands for its objects: without it (or with
  // one of another batch) the store does not hold this batch, and a
  // restored stub would fail only later, at a query's read.
  objectstore::BatchStore& store = resolver_->store();
  const std::string key = BatchObjectKey(meta.day, id, kBatchMetaFileName);
  absl::StatusOr<objectstore::ObjectInfo> info = store.Head(key);
  if (absl::IsNotFound(info.status())) {
    return absl::NotFoundError(
        fmt::format("the store {} does not hold the batch: no {}", store.Describe(), key));
  }
  STRATA_RETURN_IF_ERROR(info.status());
  STRATA_ASSIGN_OR_RETURN(const std::string stored,
                          store.Get(key, 0, std::max<uint64_t>(info->size, 1)));
  if (absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(stored, key);
      !parsed.ok() || parsed->id != meta.id) {
    return absl::DataLossError(
        fmt::format("{} in {} is not the meta.json of batch {}{}", key, store.Describe(), meta.id,
                    parsed.ok() ? "" : ": " + std::string(parsed.status().message())));
  }
  // In the store already: the uploader must not take the local stub for
  // a batch to upload (marked before it is published, so it never sees it
  // pending).
  if (uploader_ != nullptr) uploader_->MarkUploaded(id, meta.day);
  return absl::OkStatus();
}

absl::Status Storage::ReplaceWithStoredBatches(const std::vector<std::string>& stored,
                                               const std::vector<BatchId>& drop) {
  struct Staged {
    BatchMeta meta;
    BatchId id;
    bool staged;
  };
  std::vector<Staged> batches;
  for (const std::string& meta_json : stored) {
    STRATA_ASSIGN_OR_RETURN(BatchMeta meta, ParseCatalogRecord(meta_json));
    STRATA_ASSIGN_OR_RETURN(const BatchId id, BatchId::Parse(meta.id));
    if (id.node() == options_.node) STRATA_RETURN_IF_ERROR(CheckOwnStored(meta, id));
    STRATA_ASSIGN_OR_RETURN(const bool staged, StageStoredBatch(meta, id));
    batches.push_back(Staged{.meta = std::move(meta), .id = id, .staged = staged});
  }
  MutexLock dir_lock(&data_dir_->batch_dir_mu());
  std::vector<BatchRecord> records;
  for (const Staged& batch : batches) {
    STRATA_ASSIGN_OR_RETURN(std::optional<BatchRecord> record,
                            InstallStoredBatch(batch.meta, batch.id, batch.staged));
    if (record.has_value()) records.push_back(*std::move(record));
  }
  const std::shared_ptr<const Snapshot> snapshot = Pin();
  std::vector<BatchId> live;
  for (const BatchId& id : drop) {
    if (snapshot->Find(id) != nullptr) live.push_back(id);
  }
  if (records.empty() && live.empty()) return absl::OkStatus();
  return data_dir_->catalog().Publish(std::move(records), live).status();
}

absl::Status Storage::ForgetRestoredBatch(const BatchId& id) {
  if (id.node() != options_.node) {
    return absl::InvalidArgumentError(
        fmt::format("batch {} is another node's; only this node's restored batches are forgotten",
                    id.ToString()));
  }
  std::string day;
  {
    const std::shared_ptr<const Snapshot> snapshot = Pin();
    const LiveBatch* batch = snapshot->Find(id);
    if (batch == nullptr) return absl::OkStatus();
    day = batch->day();
  }
  if (resolver_ == nullptr || !resolver_->IsEvicted(id)) {
    return absl::FailedPreconditionError(fmt::format(
        "batch {} has its files on this disk; only a batch read from the store is forgotten",
        id.ToString()));
  }
  absl::Status removed = data_dir_->catalog().Publish({}, {id}).status();
  // Retired by another caller since the check.
  if (absl::IsNotFound(removed)) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(removed);
  // Out of days/ durably now, not at maintenance's next step (which then
  // removes it from staging/, as boot would): a start that fails right
  // after this must not find the batch again. Maintenance may have moved
  // it first.
  FileSystem& fs = data_dir_->fs();
  const DataDirPaths& paths = data_dir_->paths();
  MutexLock dir_lock(&data_dir_->batch_dir_mu());
  // Published again since (its directory taken over): it stays.
  if (Pin()->Find(id) != nullptr) return absl::OkStatus();
  if (absl::Status renamed = fs.RenameFile(paths.Batch(day, id), paths.RetiredBatch(id));
      !renamed.ok()) {
    STRATA_ASSIGN_OR_RETURN(const bool left, fs.Exists(paths.Batch(day, id)));
    if (left) return renamed;
  }
  STRATA_RETURN_IF_ERROR(fs.SyncDir(paths.Day(day)));
  return fs.SyncDir(paths.Staging());
}

absl::StatusOr<bool> Storage::RestoreMarked() const {
  return data_dir_->fs().Exists(data_dir_->paths().RestoreMarker());
}

absl::Status Storage::SetRestoreMarked(bool marked) {
  FileSystem& fs = data_dir_->fs();
  const DataDirPaths& paths = data_dir_->paths();
  const std::string marker = paths.RestoreMarker();
  STRATA_ASSIGN_OR_RETURN(const bool present, fs.Exists(marker));
  if (present == marked) return absl::OkStatus();
  if (marked) {
    STRATA_RETURN_IF_ERROR(WriteDurably(fs, marker, ""));
  } else {
    STRATA_RETURN_IF_ERROR(fs.RemoveFile(marker));
  }
  return fs.SyncDir(paths.Telemetry());
}

absl::Status Storage::PublishStoredBatch(const BatchMeta& meta, const BatchId& id) {
  STRATA_ASSIGN_OR_RETURN(const bool staged, StageStoredBatch(meta, id));
  MutexLock dir_lock(&data_dir_->batch_dir_mu());
  STRATA_ASSIGN_OR_RETURN(std::optional<BatchRecord> record, InstallStoredBatch(meta, id, staged));
  if (!record.has_value()) return absl::OkStatus();
  return data_dir_->catalog().Publish({*std::move(record)}, {}).status();
}

absl::StatusOr<bool> Storage::StageStoredBatch(const BatchMeta& meta, const BatchId& id) {
  if (Pin()->Find(id) != nullptr) return false;
  // Its directory is there already: InstallStoredBatch takes it over.
  STRATA_ASSIGN_OR_RETURN(const bool present,
                          data_dir_->fs().Exists(data_dir_->paths().Batch(meta.day, id)));
  if (present) return false;
  STRATA_RETURN_IF_ERROR(WriteStoredBatch(meta, id));
  return true;
}

absl::Status Storage::WriteStoredBatch(const BatchMeta& meta, const BatchId& id) {
  FileSystem& fs = data_dir_->fs();
  const DataDirPaths& paths = data_dir_->paths();
  // Staged whole, then renamed into its day: boot removes a staging entry
  // a crash left, and reads a renamed one as any evicted batch.
  const std::string staging = paths.StagingBatch(id);
  if (absl::StatusOr<bool> left = fs.Exists(staging); left.ok() && *left) {
    STRATA_RETURN_IF_ERROR(fs.RemoveAll(staging));
  }
  STRATA_RETURN_IF_ERROR(fs.CreateDir(staging));
  STRATA_RETURN_IF_ERROR(
      WriteDurably(fs, JoinPath(staging, kBatchMetaFileName), SerializeBatchMeta(meta)));
  if (meta.spans_tidx.has_value()) {
    objectstore::BatchStore& store = resolver_->store();
    STRATA_ASSIGN_OR_RETURN(const std::string tidx,
                            store.Get(BatchObjectKey(meta.day, id, kTraceIndexFileName), 0,
                                      std::max<uint64_t>(meta.spans_tidx->bytes, 1)));
    STRATA_RETURN_IF_ERROR(WriteDurably(fs, JoinPath(staging, kTraceIndexFileName), tidx));
  }
  STRATA_RETURN_IF_ERROR(WriteEvictedMarker(fs, staging, meta.id));
  return fs.SyncDir(staging);
}

absl::StatusOr<std::optional<BatchRecord>> Storage::InstallStoredBatch(const BatchMeta& meta,
                                                                       const BatchId& id,
                                                                       bool staged) {
  FileSystem& fs = data_dir_->fs();
  const DataDirPaths& paths = data_dir_->paths();
  const std::string staging = paths.StagingBatch(id);
  if (Pin()->Find(id) != nullptr) {
    // Published by another caller since it was staged; boot removes what
    // is left in staging/ if this fails.
    if (staged) (void)fs.RemoveAll(staging);
    return std::nullopt;
  }
  STRATA_ASSIGN_OR_RETURN(const bool present, fs.Exists(paths.Batch(meta.day, id)));
  if (present) {
    // The directory of a retired record of this id that a reader still
    // holds, or that maintenance has not deleted yet, or one a failed call
    // renamed into its day and never published. Its files belong to this
    // id and never change, so the new record takes it over as it is (boot
    // would read it back the same way); maintenance deletes it only once
    // no record of the id is alive (Catalog::HoldsRecordOf), and this
    // lock keeps it from deciding meanwhile. Nothing on disk changes.
    if (staged) (void)fs.RemoveAll(staging);
  } else {
    if (!staged) STRATA_RETURN_IF_ERROR(WriteStoredBatch(meta, id));
    if (absl::Status day = fs.CreateDir(paths.Day(meta.day)); !day.ok()) {
      if (!absl::IsAlreadyExists(day)) return day;
    }
    STRATA_RETURN_IF_ERROR(fs.SyncDir(paths.Days()));
    STRATA_RETURN_IF_ERROR(fs.RenameFile(staging, paths.Batch(meta.day, id)));
    STRATA_RETURN_IF_ERROR(fs.SyncDir(paths.Day(meta.day)));
    STRATA_RETURN_IF_ERROR(fs.SyncDir(paths.Staging()));
  }
  // The checks boot makes (the EVICTED rules, spans.tidx's checksum, a
  // directory taken over with its data files: their footers) and the
  // trace filter.
  RecoveryOptions checks;
  checks.validate_batch = [](FileSystem& fs, const std::string& dir, const BatchMeta& meta) {
    return CheckBatchContents(fs, dir, meta);
  };
  checks.load_attachment = [budget = lookup_cache_](FileSystem& fs, const std::string& dir,
                                                    const BatchMeta& meta) {
    return LoadBatchLookupState(fs, dir, meta, budget);
  };
  STRATA_ASSIGN_OR_RETURN(BatchRecord record, ValidateBatchDir(fs, paths, meta.day, id, checks));
  // Read through the store, a directory taken over with its data files
  // included: those may be all a reader of the retired record reads, so
  // this record never resolves to them, and the evictor (which passes
  // over evicted ids) never removes them under that reader. They go with
  // the directory; after a restart, which finds no EVICTED marker, the
  // batch is read from them again. The store holds the batch: it is in
  // the shared catalog, and this node's own were checked there
  // (CheckOwnStored, which marked them uploaded).
  resolver_->MarkEvicted(id);
  return record;
}

absl::Status Storage::DropRemoteBatch(const BatchId& id) {
  if (id.node() == options_.node) {
    return absl::InvalidArgumentError(fmt::format(
        "batch {} is this node's own; only adopted batches are dropped", id.ToString()));
  }
  if (Pin()->Find(id) == nullptr) return absl::OkStatus();
  absl::Status removed = data_dir_->catalog().Publish({}, {id}).status();
  // Dropped by another caller since the check.
  if (absl::IsNotFound(removed)) return absl::OkStatus();
  return removed;
}

}  // namespace strata::storage
