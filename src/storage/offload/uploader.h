#pragma once

// Uploader: offload's background copier (docs/operations.md, "Offload to
// an object store"). It copies every live batch of the catalog to a
// BatchStore by the object layout (docs/format/object-layout.md): the
// batch's data files first, meta.json last, every object create-only. A
// batch exists in the store once its meta.json does.
//
// One thread walks the live batches in id order (oldest first) and uploads
// the first one not yet uploaded; a batch that fails is retried, with
// backoff, before any later one, so "uploaded" is always a prefix of the
// live batches as they were committed, apart from compaction outputs that
// appear later with older ids. It wakes when Notify() is called (a new
// batch was published) and every `poll_interval` otherwise (maintenance
// publishes without telling it).
//
// Progress lives in the store itself: Start() lists the store's day
// partitions of the live batches and counts a batch as uploaded when its
// meta.json is there, so a restart uploads nothing twice. A crash in the
// middle of a batch leaves data files without a meta.json; the next
// attempt puts them again, takes AlreadyExists of an object of the same
// size as done (objects are whole or absent, and a batch's files never
// change), then puts meta.json.
//
// Deletion: a batch this process saw uploaded and live that leaves the
// catalog (compaction, retention) is deleted from the store, meta.json
// first, then its data files. Objects of batches retired before this
// process started are left alone (boot cannot tell them from another
// copy's batches, and deleting them would be wrong after a lost disk).
// With a shared catalog (options.delete_removed false) nothing is deleted
// here, and only this node's batches are uploaded (options.only_node).
//
// Invariants:
//   1. meta.json of a batch is put only after every data file its meta.json
//      lists is in the store with the local file's size.
//   2. A batch is uploaded at most once per process (IsUploaded() stays
//      true while it is live).
//   3. No local file is read unless a pinned Snapshot names its batch.
//
// Thread-safety: every public method is safe for concurrent use. Errors:
// Start() returns the store's error when the first listing fails (it names
// what to fix: credentials, bucket, endpoint); later failures are counted,
// reported through on_error and retried.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "objectstore/batch_store.h"
#include "storage/commit/catalog.h"
#include "storage/format/batch_id.h"

namespace strata::storage {

struct UploaderOptions {
  // Backoff after a failed batch: doubles from `retry_initial` up to
  // `retry_max` and resets after a success. (The store retries each
  // request itself first; this spaces out whole attempts.)
  std::chrono::milliseconds retry_initial{200};
  std::chrono::milliseconds retry_max{10000};
  // How often the thread looks at the catalog when nobody calls Notify().
  std::chrono::milliseconds poll_interval{1000};
  MicrosClock clock = SystemClockMicros;
  // Several servers sharing a catalog: only the batches whose ids carry
  // this node are uploaded (the others are other nodes' batches, adopted
  // from the store; nullopt: every batch).
  std::optional<int> only_node;
  // Whether the remote copy of a batch that leaves the catalog is deleted
  // at once (a single server). With a shared catalog other servers may
  // still read it: the cluster member deletes it after a grace period.
  bool delete_removed = true;
  // Whether a batch's data files are in the store only (evicted, or read
  // back from it: the data file resolver's IsEvicted). Such a batch is
  // counted as uploaded and never read here: it has no local files, and
  // it cannot be pending, whatever the order in which it was marked
  // uploaded and published. Null: none is.
  std::function<bool(const BatchId&)> in_store;
  // Called (on the uploader's thread) with every failed attempt.
  std::function<void(const absl::Status&)> on_error;
};

struct UploadStats {
  uint64_t batches_uploaded = 0;  // by this process
  uint64_t bytes_uploaded = 0;    // by this process, meta.json included
  // Live batches not yet in the store, their bytes (the files meta.json
  // lists) and the age of the oldest, by its id's stamp (0 when none).
  uint64_t batches_pending = 0;
  uint64_t bytes_pending = 0;
  double oldest_pending_age_seconds = 0;
  uint64_t failures = 0;         // failed attempts (each retried)
  uint64_t batches_deleted = 0;  // remote copies deleted after their batch left the catalog
  // Live batches found in the store at Start().
  uint64_t found_at_start = 0;
};

class Uploader {
 public:
  // Lists the store for the live batches' days and starts the thread.
  // `fs`, `catalog` and `store` must outlive the Uploader.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Uploader>> Start(
      FileSystem& fs, const Catalog& catalog, objectstore::BatchStore& store,
      UploaderOptions options);
  // Stop().
  ~Uploader();
  Uploader(const Uploader&) = delete;
  Uploader& operator=(const Uploader&) = delete;

  // A batch was published: look now rather than at the next poll.
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until `id`'s meta.json is in the store (OK), the uploader stops
  // (Unavailable) or `timeout` passes (DeadlineExceeded).
  [[nodiscard]] absl::Status WaitUploaded(const BatchId& id, std::chrono::nanoseconds timeout)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool IsUploaded(const BatchId& id) const ABSL_LOCKS_EXCLUDED(mu_);
  // The store holds batch `id` of `day` already (a batch restored from a
  // shared catalog): it is not uploaded again.
  void MarkUploaded(const BatchId& id, const std::string& day) ABSL_LOCKS_EXCLUDED(mu_);
  UploadStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the thread after the object it is putting; pending batches stay
  // pending (the next start uploads them). Later calls return at once.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Uploader(FileSystem& fs, const Catalog& catalog, objectstore::BatchStore& store,
           UploaderOptions options);
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // Copies one batch: data files, then meta.json. Adds the bytes put.
  absl::Status UploadBatch(const LiveBatch& batch, uint64_t* bytes_put);
  // Puts one local file under `key`; AlreadyExists of an object of the same
  // size counts as done (*put stays false then).
  absl::Status PutFile(const std::string& path, const std::string& key, bool* put);
  // Whether this uploader copies `batch` (options_.only_node).
  bool Owns(const LiveBatch& batch) const {
    return !options_.only_node.has_value() || batch.id().node() == *options_.only_node;
  }
  // Pending counts from `snapshot`, under mu_.
  void UpdatePendingLocked(const Snapshot& snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sleeps until `timeout`, Notify() or Stop(); false once stopping.
  bool Sleep(std::chrono::nanoseconds timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // Constant after construction.
  FileSystem& fs_;
  const Catalog& catalog_;
  objectstore::BatchStore& store_;
  const UploaderOptions options_;

  mutable Mutex mu_;
  CondVar wake_cv_;      // Notify(), Stop()
  CondVar uploaded_cv_;  // a batch was uploaded, or Stop()
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  // Uploaded batches that were live when last looked at: id -> day.
  std::map<BatchId, std::string> uploaded_ ABSL_GUARDED_BY(mu_);
  UploadStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started once the fields above exist
};

// Deletes batch `id` of `day` from `store`: meta.json first (the batch
// stops existing), then every other object under its prefix. Deleting a
// batch that is gone is OK.
[[nodiscard]] absl::Status DeleteBatchObjects(objectstore::BatchStore& store, const BatchId& id,
                                              const std::string& day);
// Every batch with at least one object in `store` (meta.json or not: an
// upload a crash cut short counts), by id, with its day.
[[nodiscard]] absl::StatusOr<std::map<BatchId, std::string>> ListStoredBatches(
    objectstore::BatchStore& store);

}  // namespace strata::storage
