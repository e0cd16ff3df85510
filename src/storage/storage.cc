#include "storage/storage.h"

#include <future>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "parquet/file_reader.h"
#include "rollups/rollup_rows.h"
#include "storage/check/batch_contents.h"
#include "storage/format/evicted_marker.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/rollups_table.h"
#include "storage/table/spans_table.h"

namespace strata::storage {
namespace {

// Rows from which a commit builds its rollups on a thread of their own.
constexpr size_t kRollupsThreadRows = 10'000;

// Row-group size of compaction output (the merge's writer buffers one).
constexpr size_t kMergeRowGroupBytes = size_t{64} << 20;

// The attachment loader of a Storage whose lookup cache is `budget`.
BatchAttachmentLoader LookupStateLoader(std::shared_ptr<LookupCacheBudget> budget) {
  return [budget = std::move(budget)](FileSystem& fs, const std::string& batch_dir,
                                      const BatchMeta& meta) {
    return LoadBatchLookupState(fs, batch_dir, meta, budget);
  };
}

}  // namespace

const BatchLookupState* BatchLookupStateOf(const LiveBatch& batch) {
  return static_cast<const BatchLookupState*>(batch.attachment().get());
}

const TraceFilter* BatchTraceFilter(const LiveBatch& batch) {
  const BatchLookupState* state = BatchLookupStateOf(batch);
  return state != nullptr ? &state->filter() : nullptr;
}

absl::StatusOr<std::unique_ptr<Storage>> Storage::Open(FileSystem& fs, const std::string& data_dir,
                                                       StorageOptions options) {
  DataDirOptions dir_options;
  dir_options.clock = options.clock;
  dir_options.node = options.node;
  dir_options.validate_batch = [](FileSystem& fs, const std::string& batch_dir,
                                  const BatchMeta& meta) -> absl::Status {
    return CheckBatchContents(fs, batch_dir, meta);
  };
  auto lookup_cache = std::make_shared<LookupCacheBudget>(options.lookup_cache_bytes);
  dir_options.load_attachment = LookupStateLoader(lookup_cache);
  auto retired = std::make_shared<RetiredBatches>();
  dir_options.on_retire = [retired](const LiveBatch& batch) { retired->Push(batch); };
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<DataDir> dir,
                          OpenDataDir(fs, data_dir, std::move(dir_options)));
  if (options.shared_catalog) {
    if (options.object_store == nullptr) {
      return absl::FailedPreconditionError("a shared catalog needs an object store");
    }
    options.upload.only_node = options.node;
    options.upload.delete_removed = false;
  }
  std::unique_ptr<DataFileResolver> resolver;
  if (options.object_store != nullptr &&
      (options.evict_after.count() > 0 || options.read_evicted || options.shared_catalog)) {
    const std::string cache_dir = DataDirPaths(data_dir).QueryCache();
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ReadCache> cache,
                            ReadCache::Open(fs, cache_dir, *options.object_store,
                                            ReadCacheOptions{.max_bytes = options.cache_bytes}));
    resolver = std::make_unique<DataFileResolver>(std::move(cache), *options.object_store);
  }
  if (resolver != nullptr) {
    // Installed before maintenance starts, with the batches boot found
    // evicted, so compaction never takes one as an input.
    for (const std::shared_ptr<const LiveBatch>& batch : dir->catalog().Pin()->batches()) {
      STRATA_ASSIGN_OR_RETURN(const bool evicted, HasEvictedMarker(fs, batch->dir()));
      if (evicted) resolver->MarkEvicted(batch->id());
    }
    // This engine's own resolver (it lives as long as the engine), not
    // the process's installed one: tests run several engines at once.
    const DataFileResolver* own = resolver.get();
    options.upload.in_store = [own](const BatchId& id) { return own->IsEvicted(id); };
    options.maintenance.input_file = InputFileResolver{
        .remote = [own](const LiveBatch& batch) { return own->IsEvicted(batch.id()); },
        .resolve = [own](const LiveBatch& batch,
                         std::string_view file) -> absl::StatusOr<InputFile> {
          STRATA_ASSIGN_OR_RETURN(ResolvedFile resolved, own->Resolve(batch, file));
          return InputFile{.path = std::move(resolved.path), .hold = std::move(resolved.hold)};
        }};
    // One server alone compacts only what it holds on its disk; several
    // servers compact what the shared catalog lists (the gate), evicted
    // batches and other nodes' included, read back through the cache.
    if (options.maintenance.gate == nullptr) {
      options.maintenance.policy.keep_out = [](const LiveBatch& batch) {
        const DataFileResolver* installed = InstalledDataFileResolver();
        return installed != nullptr && installed->IsEvicted(batch.id());
      };
    }
  }
  std::unique_ptr<Uploader> uploader;
  if (options.object_store != nullptr) {
    absl::StatusOr<std::unique_ptr<Uploader>> started =
        Uploader::Start(fs, dir->catalog(), *options.object_store, options.upload);
    if (!started.ok()) {
      return absl::Status(
          started.status().code(),
          fmt::format("the object store {} does not answer: {}", options.object_store->Describe(),
                      std::string(started.status().message())));
    }
    uploader = *std::move(started);
  }
  // Installed once nothing here can fail any more (the engine removes it
  // before destroying it).
  if (resolver != nullptr) InstallDataFileResolver(resolver.get());
  std::unique_ptr<Storage> storage(new Storage(std::move(dir), std::move(uploader),
                                               std::move(retired), std::move(lookup_cache),
                                               std::move(options)));
  if (resolver != nullptr) storage->resolver_ = std::move(resolver);
  if (storage->resolver_ != nullptr && storage->options_.evict_after.count() > 0) {
    storage->evictor_ =
        Evictor::Start(fs, storage->data_dir_->catalog(), *storage->uploader_, *storage->resolver_,
                       EvictorOptions{.evict_after = storage->options_.evict_after,
                                      .poll_interval = storage->options_.evict_poll_interval,
                                      .clock = storage->options_.clock,
                                      .on_error = storage->options_.on_evict_error});
  }
  return storage;
}

Storage::Storage(std::unique_ptr<DataDir> data_dir, std::unique_ptr<Uploader> uploader,
                 std::shared_ptr<RetiredBatches> retired,
                 std::shared_ptr<LookupCacheBudget> lookup_cache, StorageOptions options)
    : options_(std::move(options)),
      lookup_cache_(std::move(lookup_cache)),
      data_dir_(std::move(data_dir)),
      uploader_(std::move(uploader)),
      log_feed_(options_.log_feed) {
  writer_ = std::make_unique<GroupCommitWriter>(
      options_.writer, [this](std::span<WriteRequest* const> group) { return CommitGroup(group); });
  MaintenanceOptions maintenance = options_.maintenance;
  maintenance.clock = options_.clock;
  maintenance.load_attachment = LookupStateLoader(lookup_cache_);
  maintenance.merge.tables = options_.tables;
  // Merge output is cut into smaller row groups: the writer buffers one.
  maintenance.merge.tables.row_group_bytes =
      std::min<size_t>(options_.tables.row_group_bytes, kMergeRowGroupBytes);
  maintenance_ =
      std::make_unique<Maintenance>(*data_dir_, std::move(retired), std::move(maintenance));
  if (options_.start_maintenance) maintenance_->Start();
}

Storage::~Storage() {
  Shutdown(options_.writer.drain_timeout);
  if (resolver_ != nullptr && InstalledDataFileResolver() == resolver_.get()) {
    InstallDataFileResolver(nullptr);
  }
}

void Storage::Shutdown(std::chrono::nanoseconds timeout) {
  maintenance_->Stop();
  if (evictor_ != nullptr) evictor_->Stop();
  writer_->Shutdown(timeout);
  // Pending uploads stay pending: the next start lists the store and
  // uploads what is missing.
  if (uploader_ != nullptr) uploader_->Stop();
}

std::unique_ptr<LogFeed::Subscription> Storage::SubscribeLogFeed(
    uint64_t* last_sequence, std::shared_ptr<const Snapshot>* pinned) {
  MutexLock lock(&feed_order_mu_);
  std::unique_ptr<LogFeed::Subscription> subscription = log_feed_.Subscribe();
  *last_sequence = log_feed_.last_sequence();
  if (pinned != nullptr) *pinned = Pin();
  return subscription;
}

absl::Status Storage::CommitGroup(std::span<WriteRequest* const> group) {
  std::vector<const otlp::TraceBatch*> traces;
  std::vector<const otlp::LogBatch*> logs;
  std::vector<const otlp::MetricBatch*> metrics;
  for (const WriteRequest* request : group) {
    if (request->traces != nullptr) traces.push_back(request->traces.get());
    if (request->logs != nullptr) logs.push_back(request->logs.get());
    if (request->metrics != nullptr) metrics.push_back(request->metrics.get());
  }
  absl::StatusOr<BatchId> id = data_dir_->issuer().Issue(0);
  if (!id.ok()) {
    return absl::UnavailableError(
        fmt::format("cannot issue a batch id: {}", std::string(id.status().message())));
  }
  const std::string id_text = id->ToString();

  // The batch's RED rollups, from the same rows (rollups-parquet.md), on
  // a thread of their own while this one encodes the tables: the commit
  // waits for the longer of the two, not their sum. Empty when no signal
  // has data rows (the batch then has no rollups.parquet).
  std::future<absl::StatusOr<std::string>> rollups_file;
  if (options_.write_rollups) {
    // A small group builds them on this thread when they are needed: a
    // thread costs more than its rollups.
    size_t rows = 0;
    for (const otlp::TraceBatch* b : traces) rows += b->spans.size();
    for (const otlp::LogBatch* b : logs) rows += b->logs.size();
    for (const otlp::MetricBatch* b : metrics) rows += b->point_count();
    const auto policy = rows >= kRollupsThreadRows ? std::launch::async : std::launch::deferred;
    rollups_file = std::async(policy, [&]() -> absl::StatusOr<std::string> {
      const rollups::RollupRows rows = rollups::BuildRollups(traces, logs, metrics);
      if (rows.empty()) return std::string();
      return WriteRollupsTable(rows, id_text, options_.tables);
    });
  }
  EncodedBatch batch{.id = *id};
  batch.spans.traces = 0;  // meta.json always counts traces for spans
  if (!traces.empty()) {
    STRATA_ASSIGN_OR_RETURN(SpansTable spans, WriteSpansTable(traces, id_text, options_.tables));
    if (spans.meta.file_rows > 0) {
      if (spans.meta.rows > 0) {
        STRATA_ASSIGN_OR_RETURN(std::string tidx, BuildTraceIndex(spans.trace_runs, spans.meta.rows,
                                                                  spans.first_span_row));
        batch.files.push_back({kTraceIndexFileName, std::move(tidx)});
      }
      batch.files.push_back({kSpansFileName, std::move(spans.file)});
    }
    batch.spans = std::move(spans.meta);
  }
  if (!logs.empty()) {
    STRATA_ASSIGN_OR_RETURN(LogsTable table, WriteLogsTable(logs, id_text, options_.tables));
    if (table.meta.file_rows > 0) batch.files.push_back({kLogsFileName, std::move(table.file)});
    batch.logs = std::move(table.meta);
  }
  if (!metrics.empty()) {
    STRATA_ASSIGN_OR_RETURN(MetricsTable table,
                            WriteMetricsTable(metrics, id_text, options_.tables));
    if (table.meta.file_rows > 0) batch.files.push_back({kMetricsFileName, std::move(table.file)});
    batch.metrics = std::move(table.meta);
  }

  if (!options_.write_rollups) {
    batch.meta_format = 1;
  } else {
    STRATA_ASSIGN_OR_RETURN(std::string file, rollups_file.get());
    if (!file.empty()) batch.files.push_back({kRollupsFileName, std::move(file)});
  }

  STRATA_ASSIGN_OR_RETURN(CommittedBatch committed, data_dir_->committer().Commit(batch));
  absl::StatusOr<std::shared_ptr<const void>> filter =
      LoadBatchLookupState(data_dir_->fs(), committed.dir, committed.meta, lookup_cache_);
  if (!filter.ok()) {
    return absl::UnavailableError(
        fmt::format("batch {} committed but its trace index cannot be "
                    "loaded: {}",
                    committed.dir, std::string(filter.status().message())));
  }
  BatchRecord record{.id = *id,
                     .day = committed.meta.day,
                     .dir = committed.dir,
                     .meta = std::move(committed.meta),
                     .attachment = *std::move(filter)};
  std::vector<BatchRecord> add;
  add.push_back(std::move(record));
  const uint64_t log_rows = batch.logs.file_rows > 0 ? batch.logs.rows : 0;
  absl::StatusOr<std::shared_ptr<const Snapshot>> published;
  if (log_rows > 0) {
    MutexLock lock(&feed_order_mu_);
    published = data_dir_->catalog().Publish(std::move(add), {});
    if (published.ok() && log_feed_.recording()) log_feed_.Append(**published, *id, log_rows);
  } else {
    published = data_dir_->catalog().Publish(std::move(add), {});
  }
  if (!published.ok()) {
    return absl::UnavailableError(fmt::format("batch {} committed but not published: {}", id_text,
                                              std::string(published.status().message())));
  }
  if (uploader_ != nullptr) {
    uploader_->Notify();
    if (options_.ack_after_upload) {
      absl::Status uploaded = uploader_->WaitUploaded(*id, options_.ack_upload_timeout);
      if (!uploaded.ok()) {
        return CommittedButNotAcknowledged(fmt::format(
            "{} (--ack-after-upload); it is stored on this server's disk and will be uploaded, "
            "so a retry stores the rows twice",
            std::string(uploaded.message())));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::storage
