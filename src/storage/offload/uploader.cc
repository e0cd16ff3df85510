#include "storage/offload/uploader.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"

namespace strata::storage {
namespace {

// The data files meta.json lists, by their names in the batch directory.
std::vector<std::pair<std::string, FileMeta>> DataFilesOf(const BatchMeta& meta) {
  std::vector<std::pair<std::string, FileMeta>> files;
  const std::pair<const char*, const std::optional<FileMeta>*> all[] = {
      {kSpansFileName, &meta.spans_parquet},     {kTraceIndexFileName, &meta.spans_tidx},
      {kLogsFileName, &meta.logs_parquet},       {kMetricsFileName, &meta.metrics_parquet},
      {kRollupsFileName, &meta.rollups_parquet},
  };
  for (const auto& [name, file] : all) {
    if (file->has_value()) files.emplace_back(name, **file);
  }
  return files;
}

uint64_t DataBytesOf(const BatchMeta& meta) {
  uint64_t bytes = 0;
  for (const auto& [name, file] : DataFilesOf(meta)) bytes += file.bytes;
  return bytes;
}

// The ids of the batches under `day_prefix` whose meta.json is in `store`.
absl::StatusOr<std::set<std::string>> ListUploadedIds(objectstore::BatchStore& store,
                                                      const std::string& day_prefix) {
  std::set<std::string> ids;
  const std::string suffix = std::string(kBatchDirSuffix) + "/" + kBatchMetaFileName;
  std::string continuation;
  do {
    STRATA_ASSIGN_OR_RETURN(objectstore::ListPage page,
                            store.List(day_prefix, continuation, objectstore::kMaxKeysPerPage));
    for (const objectstore::ObjectInfo& object : page.objects) {
      std::string_view rest = std::string_view(object.key).substr(day_prefix.size());
      // "<id>.batch/meta.json", nothing deeper.
      if (rest.size() > suffix.size() && rest.ends_with(suffix) &&
          rest.find('/') == rest.size() - suffix.size() + std::strlen(kBatchDirSuffix)) {
        ids.insert(std::string(rest.substr(0, rest.size() - suffix.size())));
      }
    }
    continuation = std::move(page.next);
  } while (!continuation.empty());
  return ids;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Uploader>> Uploader::Start(FileSystem& fs, const Catalog& catalog,
                                                          objectstore::BatchStore& store,
                                                          UploaderOptions options) {
  std::unique_ptr<Uploader> uploader(new Uploader(fs, catalog, store, std::move(options)));
  // Progress: which live batches the store already holds.
  const std::shared_ptr<const Snapshot> snapshot = catalog.Pin();
  std::set<std::string> days;
  for (const auto& batch : snapshot->batches()) {
    if (uploader->Owns(*batch)) days.insert(batch->day());
  }
  // Even with no batch, one listing proves the store answers (credentials,
  // bucket, endpoint) before the server says it is ready.
  if (days.empty()) {
    absl::StatusOr<objectstore::ListPage> page =
        store.List(std::string(kTelemetryDirName) + "/", "", 1);
    if (!page.ok()) return page.status();
  }
  std::map<std::string, std::set<std::string>> uploaded_by_day;
  for (const std::string& day : days) {
    STRATA_ASSIGN_OR_RETURN(uploaded_by_day[day], ListUploadedIds(store, DayObjectPrefix(day)));
  }
  {
    MutexLock lock(&uploader->mu_);
    for (const auto& batch : snapshot->batches()) {
      if (uploader->Owns(*batch) &&
          uploaded_by_day[batch->day()].contains(batch->id().ToString())) {
        uploader->uploaded_.emplace(batch->id(), batch->day());
      }
    }
    uploader->stats_.found_at_start = uploader->uploaded_.size();
    uploader->UpdatePendingLocked(*snapshot);
  }
  uploader->thread_ = std::thread([u = uploader.get()] { u->Run(); });
  return uploader;
}

Uploader::Uploader(FileSystem& fs, const Catalog& catalog, objectstore::BatchStore& store,
                   UploaderOptions options)
    : fs_(fs), catalog_(catalog), store_(store), options_(std::move(options)) {}

Uploader::~Uploader() { Stop(); }

void Uploader::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    wake_cv_.SignalAll();
    uploaded_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void Uploader::Notify() {
  MutexLock lock(&mu_);
  notified_ = true;
  wake_cv_.SignalAll();
}

absl::Status Uploader::WaitUploaded(const BatchId& id, std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!uploaded_.contains(id)) {
    if (stopping_) return absl::UnavailableError("the uploader stopped");
    if (!uploaded_cv_.WaitUntil(&mu_, deadline) && !uploaded_.contains(id)) {
      return absl::DeadlineExceededError(fmt::format(
          "batch {} is committed locally but not yet in the object store", id.ToString()));
    }
  }
  return absl::OkStatus();
}

bool Uploader::IsUploaded(const BatchId& id) const {
  MutexLock lock(&mu_);
  return uploaded_.contains(id);
}

void Uploader::MarkUploaded(const BatchId& id, const std::string& day) {
  MutexLock lock(&mu_);
  uploaded_.emplace(id, day);
  uploaded_cv_.SignalAll();
}

UploadStats Uploader::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void Uploader::UpdatePendingLocked(const Snapshot& snapshot) {
  stats_.batches_pending = 0;
  stats_.bytes_pending = 0;
  stats_.oldest_pending_age_seconds = 0;
  const int64_t now = options_.clock();
  for (const auto& batch : snapshot.batches()) {
    if (!Owns(*batch) || uploaded_.contains(batch->id())) continue;
    if (stats_.batches_pending == 0) {
      // Batches are sorted by id, and an id's stamp is its commit time.
      stats_.oldest_pending_age_seconds =
          std::max<int64_t>(0, now - batch->id().stamp_micros()) / 1e6;
    }
    ++stats_.batches_pending;
    stats_.bytes_pending += DataBytesOf(batch->meta());
  }
}

bool Uploader::Sleep(std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!stopping_ && !notified_) {
    if (!wake_cv_.WaitUntil(&mu_, deadline)) break;
  }
  notified_ = false;
  return !stopping_;
}

void Uploader::Run() {
  std::chrono::milliseconds backoff = options_.retry_initial;
  for (;;) {
    std::shared_ptr<const Snapshot> snapshot = catalog_.Pin();
    const LiveBatch* next = nullptr;
    std::vector<std::pair<BatchId, std::string>> gone;
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      for (const auto& [id, day] : uploaded_) {
        if (snapshot->Find(id) == nullptr) gone.emplace_back(id, day);
      }
      bool marked = false;
      for (const auto& batch : snapshot->batches()) {
        if (!Owns(*batch) || uploaded_.contains(batch->id())) continue;
        if (options_.in_store && options_.in_store(batch->id())) {
          uploaded_.emplace(batch->id(), batch->day());
          marked = true;
          continue;
        }
        next = batch.get();
        break;
      }
      if (marked) uploaded_cv_.SignalAll();
      UpdatePendingLocked(*snapshot);
    }
    for (const auto& [id, day] : gone) {
      absl::Status deleted =
          options_.delete_removed ? DeleteBatchObjects(store_, id, day) : absl::OkStatus();
      MutexLock lock(&mu_);
      if (deleted.ok()) {
        uploaded_.erase(id);
        if (options_.delete_removed) ++stats_.batches_deleted;
      } else {
        ++stats_.failures;
      }
      if (!deleted.ok() && options_.on_error) options_.on_error(deleted);
    }
    if (next == nullptr) {
      snapshot.reset();
      if (!Sleep(options_.poll_interval)) return;
      continue;
    }
    uint64_t bytes = 0;
    const absl::Status status = UploadBatch(*next, &bytes);
    if (status.ok()) {
      MutexLock lock(&mu_);
      uploaded_.emplace(next->id(), next->day());
      ++stats_.batches_uploaded;
      stats_.bytes_uploaded += bytes;
      UpdatePendingLocked(*snapshot);
      uploaded_cv_.SignalAll();
      backoff = options_.retry_initial;
      continue;
    }
    {
      MutexLock lock(&mu_);
      ++stats_.failures;
    }
    if (options_.on_error) {
      options_.on_error(absl::Status(
          status.code(), fmt::format("uploading batch {} to {}: {}", next->id().ToString(),
                                     store_.Describe(), std::string(status.message()))));
    }
    snapshot.reset();
    if (!Sleep(backoff)) return;
    backoff = std::min(backoff * 2, options_.retry_max);
  }
}

absl::Status Uploader::UploadBatch(const LiveBatch& batch, uint64_t* bytes_put) {
  for (const auto& [name, file] : DataFilesOf(batch.meta())) {
    {
      MutexLock lock(&mu_);
      if (stopping_) return absl::CancelledError("stopping");
    }
    bool put = false;
    STRATA_RETURN_IF_ERROR(
        PutFile(JoinPath(batch.dir(), name), BatchObjectKey(batch.day(), batch.id(), name), &put));
    if (put) *bytes_put += file.bytes;
  }
  // Last: the batch exists in the store from here on.
  bool put = false;
  const std::string meta_path = JoinPath(batch.dir(), kBatchMetaFileName);
  STRATA_RETURN_IF_ERROR(
      PutFile(meta_path, BatchObjectKey(batch.day(), batch.id(), kBatchMetaFileName), &put));
  if (put) {
    absl::StatusOr<uint64_t> size = fs_.FileSize(meta_path);
    if (size.ok()) *bytes_put += *size;
  }
  return absl::OkStatus();
}

absl::Status Uploader::PutFile(const std::string& path, const std::string& key, bool* put) {
  // Read a part at a time: a compaction output may be a GiB.
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs_.NewRandomAccessFile(path));
  STRATA_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
  absl::Status status = store_.PutStreamIfAbsent(
      key, size, [&](uint64_t offset, size_t length) { return file->ReadExact(offset, length); });
  if (status.ok()) {
    *put = true;
    return status;
  }
  if (!absl::IsAlreadyExists(status)) return status;
  // Put before (a crash after the put, or a lost answer): objects are whole
  // or absent, so the same size means the same immutable file.
  STRATA_ASSIGN_OR_RETURN(objectstore::ObjectInfo info, store_.Head(key));
  if (info.size != size) {
    return absl::DataLossError(
        fmt::format("{} in {} has {} bytes, but the local file {} has {}: another writer "
                    "uses this prefix",
                    key, store_.Describe(), info.size, path, size));
  }
  return absl::OkStatus();
}

absl::Status DeleteBatchObjects(objectstore::BatchStore& store, const BatchId& id,
                                const std::string& day) {
  // meta.json first: the batch stops existing, then its data files go.
  STRATA_RETURN_IF_ERROR(store.DeleteMany({BatchObjectKey(day, id, kBatchMetaFileName)}));
  const std::string prefix = BatchObjectPrefix(day, id);
  std::vector<std::string> keys;
  std::string continuation;
  do {
    STRATA_ASSIGN_OR_RETURN(objectstore::ListPage page,
                            store.List(prefix, continuation, objectstore::kMaxKeysPerPage));
    for (objectstore::ObjectInfo& object : page.objects) keys.push_back(std::move(object.key));
    continuation = std::move(page.next);
  } while (!continuation.empty());
  if (keys.empty()) return absl::OkStatus();
  return store.DeleteMany(keys);
}

absl::StatusOr<std::map<BatchId, std::string>> ListStoredBatches(objectstore::BatchStore& store) {
  std::map<BatchId, std::string> batches;
  const std::string prefix = std::string(kTelemetryDirName) + "/";
  std::string continuation;
  do {
    STRATA_ASSIGN_OR_RETURN(objectstore::ListPage page,
                            store.List(prefix, continuation, objectstore::kMaxKeysPerPage));
    for (const objectstore::ObjectInfo& object : page.objects) {
      if (std::optional<BatchObjectName> name = ParseBatchObjectKey(object.key)) {
        batches.emplace(name->id, std::move(name->day));
      }
    }
    continuation = std::move(page.next);
  } while (!continuation.empty());
  return batches;
}

}  // namespace strata::storage
