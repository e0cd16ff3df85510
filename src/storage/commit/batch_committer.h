#pragma once

// BatchCommitter: makes an encoded batch durable and visible in the data
// directory, by the commit protocol of docs/format/commit.md, steps 1-7:
//
//   1. create telemetry/staging/<id>/
//   2. write each data file, computing its size and xxh3-64 as the bytes go
//      out, and fsync it
//   3. build meta.json, validate it (ValidateBatchMeta), write it last and
//      fsync it
//   4. fsync staging/<id>/
//   5. create days/<day>/ if it is not known to be durable, and fsync days/
//   6. rename staging/<id>/ to days/<day>/<id>.batch/ (the commit point)
//   7. fsync days/<day>/
//
// Steps 8 and 9 (publish a Snapshot, acknowledge) belong to the caller, which
// may do them only after Commit() returned OK.
//
// Invariants:
//   1. Nothing half-written is ever under days/: a batch appears there only
//      by the rename of a complete, fsynced staging directory.
//   2. On failure the committer removes what it wrote (staging/<id>/, or the
//      renamed batch when step 7 failed) as far as the file system lets it;
//      whatever it cannot remove lies in staging/, which boot empties.
//   3. A returned OK means the batch survives a crash (every file, the
//      staging directory, the day directory and the rename were synced).
//
// Thread-safety: safe for concurrent use, provided concurrent commits carry
// distinct batch ids (the BatchIdIssuer guarantees it).
//
// Errors: Unavailable (retryable, so an OTLP client retries) for every I/O
// failure, naming the batch, the step and the underlying error (whose errno
// payload is kept); Internal for a batch the caller built wrongly (unknown or
// repeated file names, files that disagree with the signals' row counts), a
// bug that no retry fixes. Nothing is written for an Internal error.

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "parquet/column_writer.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"
#include "storage/format/layout.h"

struct XXH3_state_s;
typedef struct XXH3_state_s XXH3_state_t;

namespace strata::storage {

// `cause` with the data directory and what was being done put before its
// message ("data directory <dir>: <doing>: <message>"), keeping its code
// and its payloads (the errno, ErrnoOf): the errors of boot, `strata
// verify` and `strata quarantine`.
[[nodiscard]] absl::Status InDataDir(const DataDirPaths& paths, std::string_view doing,
                                     const absl::Status& cause);

// A new file written through the Parquet writer's sink interface, hashed
// (xxh3-64) as the bytes go out; Finish() syncs and closes it and returns
// its size and hash for meta.json. A hook run before every append lets a
// caller stop a long write (compaction checks for shutdown there). Single
// owner. Errors: the FileSystem's, or the hook's.
class HashingFileSink : public parquet::ByteSink {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HashingFileSink>> Create(
      FileSystem& fs, const std::string& path);
  ~HashingFileSink() override;
  void set_before_append(std::function<absl::Status()> hook) { before_append_ = std::move(hook); }
  [[nodiscard]] absl::Status Append(std::string_view bytes) override;
  [[nodiscard]] absl::StatusOr<FileMeta> Finish();

 private:
  HashingFileSink(std::unique_ptr<WritableFile> file,
                  std::unique_ptr<XXH3_state_t, void (*)(XXH3_state_t*)> state);
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<XXH3_state_t, void (*)(XXH3_state_t*)> state_;
  std::function<absl::Status()> before_append_;
};

// One data file of a batch, already encoded. `name` is one of
// kBatchFileNames.
struct EncodedFile {
  std::string name;
  std::string bytes;
};

// Everything the committer needs to write one batch.
struct EncodedBatch {
  BatchId id;
  SignalMeta spans;
  SignalMeta logs;
  SignalMeta metrics;
  // The files of the signals that have rows, in any order; a signal with
  // file_rows 0 has none (meta-json.md rule 8).
  std::vector<EncodedFile> files;
  // Compaction output only (generation above 0): the input ids, sorted, and
  // the ingest-time bounds over the inputs, which also decide the day. For
  // generation 0 both stay empty: the ingest time is the id's stamp.
  std::vector<std::string> sources;
  std::optional<NanosRange> ingest_time;
  // meta.json's `format`: 1 only for a batch written without
  // rollups.parquet (StorageOptions::write_rollups off).
  uint64_t meta_format = kBatchMetaFormat;
};

// A batch that Commit() made durable.
struct CommittedBatch {
  BatchMeta meta;   // as written to meta.json
  std::string dir;  // DataDirPaths::Batch(): <data dir>/telemetry/days/<day>/<id>.batch
};

class BatchCommitter {
 public:
  // `fs` must outlive the committer. `durable_days` names day directories
  // known to exist durably (boot synced days/ after listing them), which
  // step 5 may skip.
  BatchCommitter(FileSystem& fs, std::string data_dir, std::vector<std::string> durable_days = {});
  BatchCommitter(const BatchCommitter&) = delete;
  BatchCommitter& operator=(const BatchCommitter&) = delete;

  // Runs steps 1-7 for `batch`. On OK the batch is durable at the returned
  // dir; on error nothing new is visible under days/ (invariant 2).
  [[nodiscard]] absl::StatusOr<CommittedBatch> Commit(const EncodedBatch& batch)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A batch whose files were streamed into staging/<id>/ (compaction
  // output), in two halves so the caller can write COMPACTION.json between
  // them. SealStaged: steps 3-4 (`meta` holds every file's size and xxh3;
  // it is validated, written as meta.json, and the directory synced).
  // PromoteStaged: steps 5-7, as Commit(). Neither removes staging/<id>/ on
  // failure; the caller does (or boot).
  [[nodiscard]] absl::Status SealStaged(const BatchId& id, const BatchMeta& meta);
  [[nodiscard]] absl::StatusOr<CommittedBatch> PromoteStaged(const BatchId& id, BatchMeta meta)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Tells the committer that `day` was removed (retention), so the next
  // commit into it creates and syncs it again.
  void ForgetDay(std::string_view day) ABSL_LOCKS_EXCLUDED(mu_);

  const DataDirPaths& paths() const { return paths_; }

 private:
  // Steps 2-7 after staging/<id>/ exists; `meta` holds everything but the
  // file sizes and checksums.
  absl::StatusOr<CommittedBatch> WriteAndPublishDir(const EncodedBatch& batch, BatchMeta meta)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Step 5.
  absl::Status EnsureDurableDay(const std::string& day) ABSL_LOCKS_EXCLUDED(mu_);

  // Constant after construction.
  FileSystem& fs_;
  const DataDirPaths paths_;

  Mutex mu_;
  // Day directories whose entry in days/ is known to be durable.
  std::set<std::string, std::less<>> durable_days_ ABSL_GUARDED_BY(mu_);
};

// Builds the meta.json of `batch` without file sizes and checksums (every
// present file gets bytes 0, xxh3 0) and validates it (rules 2-8). Internal
// for a batch that breaks a rule or names an unknown or repeated file.
[[nodiscard]] absl::StatusOr<BatchMeta> PlanBatchMeta(const EncodedBatch& batch);

// Deletes a live batch by commit.md "Deleting a batch": renames
// days/<day>/<id>.batch/ to staging/<id>.retired/, syncs days/<day>/ and
// staging/, then removes the retired directory. The caller guarantees that
// no Snapshot names the batch any more. Errors: those of the file system,
// naming the batch; after a failure the batch is either still whole in
// days/ or in staging/, which boot empties.
[[nodiscard]] absl::Status DeleteBatch(FileSystem& fs, const DataDirPaths& paths,
                                       std::string_view day, const BatchId& id);

}  // namespace strata::storage
