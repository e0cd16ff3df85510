#pragma once

// Storage is strata's storage engine assembled: it opens (and recovers) a
// data directory, validates every batch at boot with the table and trace
// index checks, and runs the group-commit writer whose commit step turns a
// group of decoded requests into one durable, published batch:
//
//   group -> spans.parquet + spans.tidx, logs.parquet, metrics.parquet
//         -> staging/<id>/ -> fsync -> rename into days/<day>/ -> fsync
//         -> publish a Snapshot that includes the batch (with its trace
//            filter) -> every request of the group is acknowledged
//
// Every batch with log records is also appended to the LogFeed, in
// publish order, for live tails (log_feed.h).
//
// Readers Pin() a Snapshot and read the files it names; each batch with
// spans has a BatchLookupState as its attachment (BatchLookupStateOf()):
// its in-memory trace filter and its lookup cache, which all batches share
// a budget for (StorageOptions::lookup_cache_bytes).
//
// Thread-safety: safe for concurrent use. Errors: Open returns recovery's
// errors (FailedPrecondition / DataLoss naming the data directory, batch
// and runbook section); Write/Submit answer with the writer's codes
// (group_commit_writer.h): ResourceExhausted, Unavailable, InvalidArgument.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "objectstore/batch_store.h"
#include "storage/commit/catalog.h"
#include "storage/commit/data_dir.h"
#include "storage/commit/group_commit_writer.h"
#include "storage/commit/write_request.h"
#include "storage/format/batch_id.h"
#include "storage/index/batch_lookup_state.h"
#include "storage/index/trace_index.h"
#include "storage/log_feed.h"
#include "storage/maintenance/maintenance.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/offload/evictor.h"
#include "storage/offload/uploader.h"
#include "storage/table/table_file.h"

namespace strata::storage {

struct StorageOptions {
  GroupCommitWriter::Options writer;
  TableOptions tables;
  MicrosClock clock = SystemClockMicros;
  // The node field of the batch ids this server issues (DataDirOptions).
  int node = 0;
  // Compaction, retention and reclamation (maintenance.h). The clock and
  // the attachment loader are the storage engine's own.
  MaintenanceOptions maintenance;
  // Start the maintenance thread at Open (the server does; tests that
  // want maintenance usually drive RunStep instead).
  bool start_maintenance = false;
  // What trace lookups may keep in memory across all live batches beyond
  // their trace filters: each batch's parsed spans.parquet footer and
  // OffsetIndexes, and the decompressed dictionary pages its lookups read
  // (batch_lookup_state.h; docs/format/trace-index.md, "In memory"). 0
  // turns the cache off.
  size_t lookup_cache_bytes = kDefaultLookupCacheBytes;
  static constexpr size_t kDefaultLookupCacheBytes = size_t{64} << 20;
  // The feed of published log batches live tails read (log_feed.h).
  LogFeedOptions log_feed;
  // Write each batch's rollups.parquet (meta.json format 2). Off, batches
  // are written as format 1, without rollups, as before them: for
  // measuring what rollups cost at ingest (`strata bench rollups`) and for
  // testing data directories written before them.
  bool write_rollups = true;
  // Offload (docs/operations.md, "Offload to an object store"): when set,
  // every committed batch is also copied to this store in the background
  // (offload/uploader.h). Must outlive the Storage.
  objectstore::BatchStore* object_store = nullptr;
  UploaderOptions upload;
  // With an object store: a request is acknowledged only once its batch's
  // meta.json is in the store, or answered Unavailable after
  // `ack_upload_timeout` (its batch is committed locally all the same and
  // is uploaded later).
  bool ack_after_upload = false;
  std::chrono::nanoseconds ack_upload_timeout = std::chrono::seconds(30);
  // Eviction (docs/operations.md, "Evicting local copies"; offload/
  // evictor.h), with an object store only: the local Parquet files of
  // uploaded batches older than `evict_after` are removed, and readers get
  // them back through a ReadCache of `cache_bytes` under
  // <data>/query/cache/. 0 leaves every local file alone.
  std::chrono::microseconds evict_after{0};
  uint64_t cache_bytes = uint64_t{1} << 30;
  std::chrono::milliseconds evict_poll_interval{1000};
  std::function<void(const absl::Status&)> on_evict_error;
  // With an object store and no `evict_after`: readers still read the
  // batches an earlier server evicted back through the ReadCache, but
  // nothing more is evicted (`strata rollups rebuild --object-store`).
  bool read_evicted = false;
  // Several servers sharing a batch catalog (src/cluster/; docs/operations.md,
  // "Several servers on one store"), with an object store only: other
  // nodes' batches are adopted as evicted batches (AdoptRemoteBatch) and
  // read back through the ReadCache; the uploader copies only this node's
  // batches and deletes no remote copy (the cluster member deletes removed
  // batches' objects after a grace period, as other servers may read them).
  bool shared_catalog = false;
};

class Storage {
 public:
  // Opens `data_dir` (initialising a new one), recovers it and starts the
  // writer. `fs` must outlive the Storage.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Storage>> Open(FileSystem& fs,
                                                                     const std::string& data_dir,
                                                                     StorageOptions options = {});
  // Shutdown(options.writer.drain_timeout) unless it already ran.
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Asynchronous and blocking ingest (group_commit_writer.h).
  void Submit(WriteRequest request, GroupCommitWriter::Callback done) {
    writer_->Submit(std::move(request), std::move(done));
  }
  [[nodiscard]] absl::Status Write(WriteRequest request) {
    return writer_->Write(std::move(request));
  }

  // The current Snapshot; nothing it names is renamed or deleted while the
  // pin is held.
  std::shared_ptr<const Snapshot> Pin() const { return data_dir_->catalog().Pin(); }

  // Stops admitting, drains the writer until `timeout`, then fails what is
  // left with Unavailable. Later calls return at once.
  void Shutdown(std::chrono::nanoseconds timeout);

  GroupCommitWriterStats WriterStats() const { return writer_->GetStats(); }
  MaintenanceStats GetMaintenanceStats() const { return maintenance_->Stats(); }
  Maintenance& maintenance() { return *maintenance_; }
  const DataDir& data_dir() const { return *data_dir_; }
  // The offload uploader, or null without an object store.
  Uploader* uploader() const { return uploader_.get(); }
  // Eviction's parts, or null while it is off.
  const Evictor* evictor() const { return evictor_.get(); }
  const DataFileResolver* resolver() const { return resolver_.get(); }
  // The lookup cache's budget (its limit and the bytes in use).
  const LookupCacheBudget& lookup_cache() const { return *lookup_cache_; }
  // Several servers (options.shared_catalog): publishes another node's
  // batch, given its meta.json from the shared catalog, as an evicted batch
  // of this data directory (meta.json, spans.tidx fetched from the store,
  // the EVICTED marker; staged and renamed into its day durably, so boot
  // reads it back as any evicted batch; a directory of its id still in its
  // day, a retired record's, is taken over as it is, as
  // ReplaceWithStoredBatches says). OK when it is live already.
  // InvalidArgument for a batch of this node or a meta.json that does not
  // parse; FailedPrecondition without shared_catalog; the store's and the
  // file system's errors.
  [[nodiscard]] absl::Status AdoptRemoteBatch(std::string_view meta_json);
  // Publishes one of this node's own batches, given its meta.json from the
  // shared catalog, as an evicted batch read from the store, the way
  // AdoptRemoteBatch does, and tells the uploader the store holds it: for a
  // node whose data directory was lost or replaced. The batch's meta.json
  // must be in the store: NotFound without it (the store's error), DataLoss
  // for one that is not this batch's. InvalidArgument for another node's
  // batch; otherwise as AdoptRemoteBatch.
  [[nodiscard]] absl::Status RestoreOwnBatch(std::string_view meta_json);
  // Several servers: publishes the batches of `stored` (meta.json records
  // of the shared catalog, this node's or others'), each as RestoreOwnBatch
  // or AdoptRemoteBatch would, and retires this data directory's batches
  // `drop`, in one Snapshot: a reader sees either the dropped batches or
  // their replacements, never both. For a compaction output of this node
  // whose inputs another node compacted too (the cluster member puts back
  // the inputs still live and drops the output), and for this node's
  // batches another node's compaction replaced (`stored` empty). Batches
  // already live and dropped ids not live are passed over. A batch whose
  // directory is still in its day (a retired record of it that a reader
  // holds or maintenance has not deleted yet: a compaction input put back)
  // takes that directory over as it is, read through the store, and the
  // directory is deleted only once no record of the id is alive
  // (maintenance.h, invariant 1). Errors as RestoreOwnBatch's; a batch
  // renamed into its day before an error stays there and is published by
  // the next start or call.
  [[nodiscard]] absl::Status ReplaceWithStoredBatches(const std::vector<std::string>& stored,
                                                      const std::vector<BatchId>& drop);
  // Undoes RestoreOwnBatch, for a start that could not restore every batch
  // of this node: retires this node's batch `id` if it is evicted (its
  // files are in the store only, which keeps them: with shared_catalog
  // the uploader deletes no object), its directory moved out of days/
  // durably before it returns, so a restart does not find it. For a start,
  // before queries read the batch. OK when it is not live.
  // InvalidArgument for another node's batch; FailedPrecondition for one
  // whose files are on this disk; the file system's errors.
  [[nodiscard]] absl::Status ForgetRestoredBatch(const BatchId& id);
  // The restore marker (telemetry/RESTORING, layout.md): whether a restore
  // of this node's batches from the shared catalog began in this data
  // directory and has not finished, so that the batches here are not the
  // node's whole state. The file system's errors.
  [[nodiscard]] absl::StatusOr<bool> RestoreMarked() const;
  // Writes the restore marker (`marked`) or removes it, durably (the file
  // synced, then telemetry/) before it returns: before the first batch of
  // a restore is published, and after the last. OK when it is so already.
  // The file system's errors.
  [[nodiscard]] absl::Status SetRestoreMarked(bool marked);
  // Retires an adopted batch the shared catalog no longer lists (its local
  // directory is deleted once no reader holds it). OK when it is not live.
  // InvalidArgument for a batch of this node.
  [[nodiscard]] absl::Status DropRemoteBatch(const BatchId& id);

  // Batches with log records, in publish order, for live tails.
  LogFeed& log_feed() { return log_feed_; }
  // Registers a reader of log_feed() and sets `*last_sequence` to the
  // newest batch's sequence number in it: every log batch published after
  // this call is appended after that number, none before it (both happen
  // under the lock that orders the appends). With `pinned`, also pins the
  // Snapshot of that moment there: it holds every log record of the feed's
  // batches up to `*last_sequence` and none after, so a reader that reads
  // it and then the feed sees each record once (the Loki tail's history).
  std::unique_ptr<LogFeed::Subscription> SubscribeLogFeed(
      uint64_t* last_sequence, std::shared_ptr<const Snapshot>* pinned = nullptr)
      ABSL_LOCKS_EXCLUDED(feed_order_mu_);

 private:
  Storage(std::unique_ptr<DataDir> data_dir, std::unique_ptr<Uploader> uploader,
          std::shared_ptr<RetiredBatches> retired, std::shared_ptr<LookupCacheBudget> lookup_cache,
          StorageOptions options);
  // A shared catalog's record (remote_batches.cc): parsed, or
  // InvalidArgument; FailedPrecondition without shared_catalog.
  absl::StatusOr<BatchMeta> ParseCatalogRecord(std::string_view meta_json) const;
  // Publishes a batch whose files are in the store as an evicted one.
  absl::Status PublishStoredBatch(const BatchMeta& meta, const BatchId& id);
  // Writes it into staging/ as an evicted batch (meta.json, spans.tidx
  // from the store, the EVICTED marker) unless it is live or its directory
  // is in its day already; true when it did.
  absl::StatusOr<bool> StageStoredBatch(const BatchMeta& meta, const BatchId& id);
  // The writing alone: staging/<id>, synced.
  absl::Status WriteStoredBatch(const BatchMeta& meta, const BatchId& id);
  // Its record to publish under the same hold of batch_dir_mu: its
  // directory in its day (renamed there from staging/, staged now if
  // `staged` is false and it is missing, or taken over as found),
  // validated as boot does, and counted evicted by the resolver. nullopt
  // when it is live already.
  absl::StatusOr<std::optional<BatchRecord>> InstallStoredBatch(const BatchMeta& meta,
                                                                const BatchId& id, bool staged)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(data_dir_->batch_dir_mu());
  // This node's batch `id` has its meta.json in the store (NotFound,
  // DataLoss otherwise); marks it uploaded.
  absl::Status CheckOwnStored(const BatchMeta& meta, const BatchId& id);
  // The writer's commit step.
  [[nodiscard]] absl::Status CommitGroup(std::span<WriteRequest* const> group);

  const StorageOptions options_;
  // Shared with every batch's lookup state; declared before data_dir_ so
  // it outlives the catalog (the states hold it too).
  const std::shared_ptr<LookupCacheBudget> lookup_cache_;
  std::unique_ptr<DataDir> data_dir_;
  // Declared after data_dir_ (it reads the catalog) and before writer_
  // (commit workers may wait on it).
  std::unique_ptr<Uploader> uploader_;
  // Installed as the process's resolver while the Storage lives; the
  // evictor is stopped first.
  std::unique_ptr<DataFileResolver> resolver_;
  std::unique_ptr<Evictor> evictor_;
  std::unique_ptr<GroupCommitWriter> writer_;
  std::unique_ptr<Maintenance> maintenance_;
  LogFeed log_feed_;
  // Held around a log batch's Publish() and its LogFeed::Append(), so the
  // feed's order is the publish order (commit workers run concurrently)
  // and a new reader's starting point splits the publishes exactly. No I/O
  // happens under it; uncontended unless two log batches publish at once,
  // which Publish() serializes anyway.
  Mutex feed_order_mu_;
};

// The lookup state a live batch carries, or null when it has no spans.
const BatchLookupState* BatchLookupStateOf(const LiveBatch& batch);
// The trace filter a live batch carries, or null when it has no spans.
const TraceFilter* BatchTraceFilter(const LiveBatch& batch);

}  // namespace strata::storage
