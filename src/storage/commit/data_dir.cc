#include "storage/commit/data_dir.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/path.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/format_file.h"

namespace strata::storage {
namespace {

// True when `dir` (which exists) holds no FORMAT and no LOCK but something
// initialisation does not create: a directory strata did not make, where
// creating LOCK would already be writing into it.
absl::StatusOr<bool> LooksForeign(FileSystem& fs, const DataDirPaths& paths) {
  STRATA_ASSIGN_OR_RETURN(const bool has_format, fs.Exists(paths.Format()));
  STRATA_ASSIGN_OR_RETURN(const bool has_lock, fs.Exists(paths.Lock()));
  if (has_format || has_lock) return false;
  STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> names, fs.ListDir(paths.data_dir()));
  // What initialisation creates at the top besides LOCK and FORMAT.
  return std::any_of(names.begin(), names.end(), [](const std::string& name) {
    return name != kFormatTempFileName &&
           std::find(kTopLevelDirNames.begin(), kTopLevelDirNames.end(), name) ==
               kTopLevelDirNames.end();
  });
}

// Makes sure there is a directory to lock, without writing into one that
// CheckOrInitializeDataDir() would refuse. OK when LOCK may be taken.
absl::Status PrepareToLock(FileSystem& fs, const DataDirPaths& paths) {
  const std::string& dir = paths.data_dir();
  STRATA_ASSIGN_OR_RETURN(const bool exists, fs.Exists(dir));
  if (!exists) {
    STRATA_RETURN_IF_ERROR(fs.CreateDirs(dir));
    return fs.SyncDir(ParentPath(dir));
  }
  STRATA_ASSIGN_OR_RETURN(const bool is_dir, fs.IsDirectory(dir));
  STRATA_ASSIGN_OR_RETURN(const bool foreign, is_dir ? LooksForeign(fs, paths) : true);
  if (!foreign) return absl::OkStatus();
  // Read-only: this refuses (naming what it found) without writing.
  absl::StatusOr<DataDirState> state = CheckOrInitializeDataDir(fs, dir);
  return state.ok() ? absl::OkStatus() : state.status();
}

std::string Today(const MicrosClock& clock) {
  const int64_t micros = std::clamp<int64_t>(clock(), kMinStampMicros, kMaxStampMicros);
  return DayOfNanos(static_cast<uint64_t>(micros) * 1000);
}

}  // namespace

absl::StatusOr<std::unique_ptr<FileLock>> LockDataDir(FileSystem& fs, const DataDirPaths& paths) {
  absl::StatusOr<std::unique_ptr<FileLock>> lock = fs.LockFile(paths.Lock());
  if (lock.ok()) return lock;
  if (ErrnoOf(lock.status()) == EWOULDBLOCK) {
    return absl::FailedPreconditionError(
        fmt::format("data directory {} is in use: another strata process holds {}; {}",
                    paths.data_dir(), paths.Lock(), RunbookRef("data-directory-in-use")));
  }
  return InDataDir(paths, "take LOCK", lock.status());
}

absl::StatusOr<std::unique_ptr<DataDir>> OpenDataDir(FileSystem& fs, const std::string& path,
                                                     DataDirOptions options) {
  if (options.node < 0 || options.node > kMaxNode) {
    return absl::InvalidArgumentError(
        fmt::format("batch id node {} is outside 0..{}", options.node, kMaxNode));
  }
  DataDirPaths paths(path);
  if (absl::Status prepared = PrepareToLock(fs, paths); !prepared.ok()) {
    if (absl::IsFailedPrecondition(prepared)) return prepared;  // a refusal, already in context
    return InDataDir(paths, "open", prepared);
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock, LockDataDir(fs, paths));
  if (absl::Status format = CheckOrInitializeDataDir(fs, paths.data_dir()).status(); !format.ok()) {
    if (absl::IsFailedPrecondition(format)) return format;  // a refusal, already in context
    return InDataDir(paths, "check FORMAT", format);
  }

  RecoveryOptions recovery_options{.today = Today(options.clock),
                                   .validate_batch = std::move(options.validate_batch),
                                   .load_attachment = std::move(options.load_attachment)};
  STRATA_ASSIGN_OR_RETURN(RecoveredTelemetry recovered,
                          RecoverTelemetry(fs, paths, recovery_options));

  std::unique_ptr<DataDir> data_dir(new DataDir(fs, std::move(lock)));
  data_dir->issuer_ = std::make_unique<BatchIdIssuer>(std::move(options.clock), options.node);
  for (const BatchId& id : recovered.seen_ids) data_dir->issuer_->Observe(id);
  STRATA_ASSIGN_OR_RETURN(data_dir->catalog_, Catalog::Create(std::move(recovered.batches),
                                                              std::move(options.on_retire)));
  data_dir->committer_ =
      std::make_unique<BatchCommitter>(fs, paths.data_dir(), std::move(recovered.days));
  data_dir->report_ = std::move(recovered.report);
  return data_dir;
}

}  // namespace strata::storage
