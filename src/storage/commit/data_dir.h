#pragma once

// DataDir: an open data directory, as boot leaves it for the server (and
// later `strata verify` / `strata quarantine`). OpenDataDir():
//
//   1. takes LOCK (docs/format/layout.md, "LOCK"), refusing a directory
//      another process holds ("data directory in use");
//   2. checks or initialises FORMAT (CheckOrInitializeDataDir);
//   3. recovers telemetry/ (RecoverTelemetry: staging, compaction marker,
//      days/, every batch validated);
//   4. builds the first catalog Snapshot from the valid batches, seeds the
//      id issuer with every id seen, and makes a committer.
//
// A DataDir owns the lock, the catalog, the issuer and the committer; the
// lock is released when it is destroyed (or the process dies). It does not
// own the FileSystem.
//
// Creating LOCK writes into the directory, so a directory strata did not
// create is refused before LOCK is made whenever that can be told from its
// top-level names (it holds no FORMAT and something initialisation does not
// create).
//
// Thread-safety: the accessors are safe for concurrent use and return
// objects that are themselves safe for concurrent use.
//
// Errors: FailedPrecondition for a directory in use (runbook
// #data-directory-in-use) and for every refusal of CheckOrInitializeDataDir
// and RecoverTelemetry; DataLoss for a corrupt batch (#corrupt-batch);
// the FileSystem's codes, with the data directory named, when I/O fails.

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "storage/commit/batch_committer.h"
#include "storage/commit/catalog.h"
#include "storage/commit/recovery.h"
#include "storage/format/batch_id.h"

namespace strata::storage {

struct DataDirOptions {
  // The issuer's clock (Unix microseconds, UTC); also decides "today" for
  // removing empty past day directories.
  MicrosClock clock = SystemClockMicros;
  // Checks beyond meta.json and checksums (Parquet footers, spans.tidx);
  // empty: none.
  BatchValidator validate_batch;
  // Builds each batch's attachment (its trace filter) at boot; empty: none.
  BatchAttachmentLoader load_attachment;
  // The catalog's retire hook (catalog.h); empty: retired batches are not
  // deleted.
  Catalog::RetireCallback on_retire;
  // The node field of every id this directory issues (0..kMaxNode;
  // docs/format/layout.md, "Batch ids"). Ids of other nodes found in the
  // directory are read as any others.
  int node = 0;
};

class DataDir {
 public:
  DataDir(const DataDir&) = delete;
  DataDir& operator=(const DataDir&) = delete;

  const DataDirPaths& paths() const { return committer_->paths(); }
  FileSystem& fs() const { return fs_; }
  Catalog& catalog() const { return *catalog_; }
  BatchIdIssuer& issuer() const { return *issuer_; }
  BatchCommitter& committer() const { return *committer_; }
  // What boot found and did.
  const RecoveryReport& recovery() const { return report_; }
  // Held from deciding what becomes of a batch directory in days/ whose
  // id was removed to acting on it: by maintenance, from finding that no
  // record of the id is alive (Catalog::HoldsRecordOf) to the directory's
  // rename out of days/; by the storage engine, from finding a batch's
  // directory in days/ (or not) to publishing a record of it, which takes
  // that directory over (remote_batches.cc). So a directory is never
  // deleted under a record published meanwhile. Taken before the catalog's
  // locks; I/O happens under it, but no ingest path takes it.
  Mutex& batch_dir_mu() const ABSL_LOCK_RETURNED(batch_dir_mu_) { return batch_dir_mu_; }

 private:
  friend absl::StatusOr<std::unique_ptr<DataDir>> OpenDataDir(FileSystem&, const std::string&,
                                                              DataDirOptions);
  DataDir(FileSystem& fs, std::unique_ptr<FileLock> lock) : fs_(fs), lock_(std::move(lock)) {}

  FileSystem& fs_;
  // Declared first, so it is released last.
  std::unique_ptr<FileLock> lock_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<BatchIdIssuer> issuer_;
  std::unique_ptr<BatchCommitter> committer_;
  RecoveryReport report_;
  mutable Mutex batch_dir_mu_;
};

[[nodiscard]] absl::StatusOr<std::unique_ptr<DataDir>> OpenDataDir(FileSystem& fs,
                                                                   const std::string& path,
                                                                   DataDirOptions options = {});

// Step 1 alone: takes LOCK of the data directory `paths` names, creating
// the file when it is missing (the directory must exist), and holds it
// while the handle lives. FailedPrecondition naming the directory
// (#data-directory-in-use) when another process holds it. For commands
// that must own the directory without recovering it (`strata quarantine`).
[[nodiscard]] absl::StatusOr<std::unique_ptr<FileLock>> LockDataDir(FileSystem& fs,
                                                                    const DataDirPaths& paths);

}  // namespace strata::storage
