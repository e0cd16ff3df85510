#include "storage/commit/batch_committer.h"

#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/cord.h"
#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::storage {
namespace {

// Bytes handed to Append() and the hash at a time, so a large file is
// hashed as it goes out rather than in a second pass.
constexpr size_t kWriteChunkBytes = size_t{1} << 20;

// The meta.json member for a file name of kBatchFileNames, or nullptr.
std::optional<FileMeta>* FileMember(BatchMeta& meta, std::string_view name) {
  if (name == kSpansFileName) return &meta.spans_parquet;
  if (name == kTraceIndexFileName) return &meta.spans_tidx;
  if (name == kLogsFileName) return &meta.logs_parquet;
  if (name == kMetricsFileName) return &meta.metrics_parquet;
  if (name == kRollupsFileName) return &meta.rollups_parquet;
  return nullptr;
}

// An I/O failure during a commit: Unavailable (retryable), naming the batch
// and the step, keeping the underlying message and payloads (the errno).
absl::Status CommitError(const BatchId& id, std::string_view step, const absl::Status& cause) {
  absl::Status status(
      absl::StatusCode::kUnavailable,
      fmt::format("commit batch {}: {}: {}", id.ToString(), step, std::string(cause.message())));
  cause.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { status.SetPayload(url, payload); });
  return status;
}

// Writes `bytes` to a new file at `path` in chunks, hashing each chunk as it
// goes out, then syncs and closes it.
absl::StatusOr<FileMeta> WriteHashedFile(FileSystem& fs, const std::string& path,
                                         std::string_view bytes) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<HashingFileSink> sink, HashingFileSink::Create(fs, path));
  for (size_t offset = 0; offset < bytes.size(); offset += kWriteChunkBytes) {
    STRATA_RETURN_IF_ERROR(sink->Append(bytes.substr(offset, kWriteChunkBytes)));
  }
  return sink->Finish();
}

}  // namespace

// ---- HashingFileSink ----

absl::StatusOr<std::unique_ptr<HashingFileSink>> HashingFileSink::Create(FileSystem& fs,
                                                                         const std::string& path) {
  std::unique_ptr<XXH3_state_t, void (*)(XXH3_state_t*)> state(
      XXH3_createState(), [](XXH3_state_t* s) { (void)XXH3_freeState(s); });
  if (state == nullptr || XXH3_64bits_reset(state.get()) != XXH_OK) {
    return absl::InternalError(fmt::format("write {}: cannot allocate xxh3 state", path));
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                          fs.NewWritableFile(path, WriteMode::kCreateExclusive));
  return std::unique_ptr<HashingFileSink>(new HashingFileSink(std::move(file), std::move(state)));
}

HashingFileSink::HashingFileSink(std::unique_ptr<WritableFile> file,
                                 std::unique_ptr<XXH3_state_t, void (*)(XXH3_state_t*)> state)
    : file_(std::move(file)), state_(std::move(state)) {}

HashingFileSink::~HashingFileSink() = default;

absl::Status HashingFileSink::Append(std::string_view bytes) {
  if (before_append_) STRATA_RETURN_IF_ERROR(before_append_());
  STRATA_RETURN_IF_ERROR(file_->Append(bytes));
  if (XXH3_64bits_update(state_.get(), bytes.data(), bytes.size()) != XXH_OK) {
    return absl::InternalError(fmt::format("write {}: xxh3 update failed", file_->path()));
  }
  return absl::OkStatus();
}

absl::StatusOr<FileMeta> HashingFileSink::Finish() {
  STRATA_RETURN_IF_ERROR(file_->Sync());
  STRATA_RETURN_IF_ERROR(file_->Close());
  return FileMeta{.bytes = file_->size(), .xxh3_64 = XXH3_64bits_digest(state_.get())};
}

absl::Status InDataDir(const DataDirPaths& paths, std::string_view doing,
                       const absl::Status& cause) {
  absl::Status status(cause.code(), fmt::format("data directory {}: {}: {}", paths.data_dir(),
                                                doing, std::string(cause.message())));
  cause.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { status.SetPayload(url, payload); });
  return status;
}

// ---- Planning ----

absl::StatusOr<BatchMeta> PlanBatchMeta(const EncodedBatch& batch) {
  BatchMeta meta;
  meta.format = batch.meta_format;
  meta.id = batch.id.ToString();
  meta.generation = static_cast<uint64_t>(batch.id.generation());
  if (batch.ingest_time.has_value()) {
    meta.ingest_time = *batch.ingest_time;
  } else if (batch.id.generation() == 0) {
    meta.ingest_time = NanosRange{batch.id.stamp_nanos(), batch.id.stamp_nanos()};
  } else {
    return absl::InternalError(fmt::format(
        "commit batch {}: a compacted batch needs the ingest-time bounds of its inputs", meta.id));
  }
  meta.day = DayOfNanos(meta.ingest_time.min);
  meta.sources = batch.sources;
  meta.spans = batch.spans;
  meta.logs = batch.logs;
  meta.metrics = batch.metrics;
  for (const EncodedFile& file : batch.files) {
    std::optional<FileMeta>* member = FileMember(meta, file.name);
    if (member == nullptr) {
      return absl::InternalError(fmt::format("commit batch {}: {} is not a batch file name",
                                             meta.id, QuoteForError(file.name)));
    }
    if (member->has_value()) {
      return absl::InternalError(
          fmt::format("commit batch {}: file {} given twice", meta.id, file.name));
    }
    *member = FileMeta{};
  }
  if (absl::Status valid = ValidateBatchMeta(meta); !valid.ok()) {
    return absl::InternalError(
        fmt::format("commit batch {}: the batch does not make a valid "
                    "meta.json: {}",
                    meta.id, std::string(valid.message())));
  }
  return meta;
}

// ---- BatchCommitter ----

BatchCommitter::BatchCommitter(FileSystem& fs, std::string data_dir,
                               std::vector<std::string> durable_days)
    : fs_(fs), paths_(std::move(data_dir)) {
  MutexLock lock(&mu_);
  durable_days_.insert(durable_days.begin(), durable_days.end());
}

void BatchCommitter::ForgetDay(std::string_view day) {
  MutexLock lock(&mu_);
  auto it = durable_days_.find(day);
  if (it != durable_days_.end()) durable_days_.erase(it);
}

absl::StatusOr<CommittedBatch> BatchCommitter::Commit(const EncodedBatch& batch) {
  STRATA_ASSIGN_OR_RETURN(BatchMeta meta, PlanBatchMeta(batch));
  // Step 1. An existing staging/<id>/ belongs to someone else (a duplicate
  // id is a bug); it is left alone.
  const std::string staging = paths_.StagingBatch(batch.id);
  if (absl::Status created = fs_.CreateDir(staging); !created.ok()) {
    return CommitError(batch.id, "create the staging directory", created);
  }
  absl::StatusOr<CommittedBatch> committed = WriteAndPublishDir(batch, std::move(meta));
  if (!committed.ok()) {
    // Best effort (invariant 2); boot removes whatever remains.
    (void)fs_.RemoveAll(staging);
  }
  return committed;
}

absl::StatusOr<CommittedBatch> BatchCommitter::WriteAndPublishDir(const EncodedBatch& batch,
                                                                  BatchMeta meta) {
  const std::string staging = paths_.StagingBatch(batch.id);
  // Step 2.
  for (const EncodedFile& file : batch.files) {
    absl::StatusOr<FileMeta> written =
        WriteHashedFile(fs_, JoinPath(staging, file.name), file.bytes);
    if (!written.ok())
      return CommitError(batch.id, fmt::format("write {}", file.name), written.status());
    *FileMember(meta, file.name) = *written;
  }
  STRATA_RETURN_IF_ERROR(SealStaged(batch.id, meta));
  return PromoteStaged(batch.id, std::move(meta));
}

absl::Status BatchCommitter::SealStaged(const BatchId& id, const BatchMeta& meta) {
  const std::string staging = paths_.StagingBatch(id);
  // Step 3: validate what is about to be written, then write it last.
  if (absl::Status valid = ValidateBatchMeta(meta); !valid.ok()) {
    return absl::InternalError(fmt::format("commit batch {}: meta.json would be invalid: {}",
                                           meta.id, std::string(valid.message())));
  }
  absl::StatusOr<FileMeta> meta_written =
      WriteHashedFile(fs_, JoinPath(staging, kBatchMetaFileName), SerializeBatchMeta(meta));
  if (!meta_written.ok()) return CommitError(id, "write meta.json", meta_written.status());
  // Step 4.
  if (absl::Status synced = fs_.SyncDir(staging); !synced.ok()) {
    return CommitError(id, "sync the staging directory", synced);
  }
  return absl::OkStatus();
}

absl::StatusOr<CommittedBatch> BatchCommitter::PromoteStaged(const BatchId& id, BatchMeta meta) {
  const std::string staging = paths_.StagingBatch(id);
  // Step 5.
  if (absl::Status day = EnsureDurableDay(meta.day); !day.ok()) {
    return CommitError(id, fmt::format("create day directory {}", meta.day), day);
  }
  // Step 6: the commit point.
  const std::string dir = paths_.Batch(meta.day, id);
  if (absl::Status renamed = fs_.RenameFile(staging, dir); !renamed.ok()) {
    // A day removed behind the committer's back is created again next time.
    if (absl::IsNotFound(renamed)) ForgetDay(meta.day);
    return CommitError(id, "rename into days", renamed);
  }
  // Step 7. On failure, move the batch back out of days/ if the file system
  // lets us, so that days/ holds only batches the caller may publish; a
  // crash can still bring it back whole (commit.md).
  if (absl::Status synced = fs_.SyncDir(paths_.Day(meta.day)); !synced.ok()) {
    (void)DeleteBatch(fs_, paths_, meta.day, id);
    return CommitError(id, "sync the day directory", synced);
  }
  return CommittedBatch{.meta = std::move(meta), .dir = dir};
}

absl::Status BatchCommitter::EnsureDurableDay(const std::string& day) {
  {
    MutexLock lock(&mu_);
    if (durable_days_.count(day) != 0) return absl::OkStatus();
  }
  // A concurrent commit may have created the directory and not yet synced
  // days/; syncing it here as well keeps this commit from relying on that.
  absl::Status created = fs_.CreateDir(paths_.Day(day));
  if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
  STRATA_RETURN_IF_ERROR(fs_.SyncDir(paths_.Days()));
  MutexLock lock(&mu_);
  durable_days_.insert(day);
  return absl::OkStatus();
}

// ---- Deletion ----

absl::Status DeleteBatch(FileSystem& fs, const DataDirPaths& paths, std::string_view day,
                         const BatchId& id) {
  auto fail = [&](std::string_view step, const absl::Status& cause) {
    return absl::Status(cause.code(), fmt::format("delete batch {}: {}: {}", id.ToString(), step,
                                                  std::string(cause.message())));
  };
  const std::string retired = paths.RetiredBatch(id);
  if (absl::Status renamed = fs.RenameFile(paths.Batch(day, id), retired); !renamed.ok()) {
    return fail("rename into staging", renamed);
  }
  if (absl::Status synced = fs.SyncDir(paths.Day(day)); !synced.ok()) {
    return fail("sync the day directory", synced);
  }
  if (absl::Status synced = fs.SyncDir(paths.Staging()); !synced.ok()) {
    return fail("sync staging", synced);
  }
  if (absl::Status removed = fs.RemoveAll(retired); !removed.ok()) {
    return fail("remove the retired directory", removed);
  }
  return absl::OkStatus();
}

}  // namespace strata::storage
