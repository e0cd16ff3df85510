#include "io/fault_injection_file_system.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <utility>

#include "common/check.h"
#include "common/path.h"
#include "fmt/format.h"

namespace strata {
namespace {

// Bounds RemoveAll's recursion; deeper trees are a bug in the caller.
constexpr int kMaxRemoveDepth = 64;

std::string Normalize(const std::string& path) {
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal.empty() ? "." : normal;
}

bool IsAtOrUnder(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

// Moves the paths of `entry` that lie inside `from` (and a durable_in that
// is `from` itself) to the same place under `to`.
template <typename Entry>
void Rebase(Entry& entry, const std::string& from, const std::string& to) {
  for (std::string* path : {&entry.path, &entry.from}) {
    if (*path != from && IsAtOrUnder(*path, from)) *path = to + path->substr(from.size());
  }
  if (IsAtOrUnder(entry.durable_in, from))
    entry.durable_in = to + entry.durable_in.substr(from.size());
}

}  // namespace

std::string_view IoOperationName(IoOperation operation) {
  switch (operation) {
    case IoOperation::kOpenForWrite:
      return "open for writing";
    case IoOperation::kOpenForRead:
      return "open for reading";
    case IoOperation::kRead:
      return "read";
    case IoOperation::kAppend:
      return "append";
    case IoOperation::kSync:
      return "sync";
    case IoOperation::kClose:
      return "close";
    case IoOperation::kRename:
      return "rename";
    case IoOperation::kSyncDir:
      return "sync directory";
    case IoOperation::kCreateDir:
      return "mkdir";
    case IoOperation::kRemove:
      return "remove";
    case IoOperation::kList:
      return "list directory";
    case IoOperation::kStat:
      return "stat";
    case IoOperation::kLock:
      return "lock";
  }
  return "unknown operation";
}

// A WritableFile whose appends reach the wrapped file (and the OS) at once,
// so the disk always holds what the model says was written.
class FaultInjectionFileSystem::FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionFileSystem* fs, std::unique_ptr<WritableFile> base,
                    std::shared_ptr<FileState> state, uint64_t epoch)
      : fs_(fs), base_(std::move(base)), state_(std::move(state)), epoch_(epoch) {}

  absl::Status Append(std::string_view data) override {
    MutexLock lock(&fs_->mu_);
    if (absl::Status usable = Usable(IoOperation::kAppend); !usable.ok()) return usable;
    absl::Status status = base_->Append(data);
    if (status.ok()) status = base_->Flush();
    return status;
  }

  absl::Status Flush() override {
    MutexLock lock(&fs_->mu_);
    // Appends are flushed already; only report whether the handle is usable.
    if (absl::Status status = fs_->CheckHandle(epoch_, "flush", path()); !status.ok()) {
      return status;
    }
    return fs_->CheckAlive("flush", path());
  }

  absl::Status Sync() override {
    MutexLock lock(&fs_->mu_);
    if (absl::Status usable = Usable(IoOperation::kSync); !usable.ok()) return usable;
    if (absl::Status synced = base_->Sync(); !synced.ok()) return synced;
    state_->synced_size = base_->size();
    state_->durable_content.reset();
    fs_->CountSync();
    return absl::OkStatus();
  }

  absl::Status Close() override {
    MutexLock lock(&fs_->mu_);
    if (absl::Status usable = Usable(IoOperation::kClose); !usable.ok()) return usable;
    return base_->Close();
  }

  uint64_t size() const override { return base_->size(); }
  const std::string& path() const override { return base_->path(); }

 private:
  absl::Status Usable(IoOperation operation) ABSL_EXCLUSIVE_LOCKS_REQUIRED(fs_->mu_) {
    if (absl::Status status = fs_->CheckHandle(epoch_, IoOperationName(operation), path());
        !status.ok()) {
      return status;
    }
    return fs_->CheckFault(operation, path());
  }

  FaultInjectionFileSystem* const fs_;
  const std::unique_ptr<WritableFile> base_;
  const std::shared_ptr<FileState> state_;
  const uint64_t epoch_;
};

class FaultInjectionFileSystem::FaultRandomAccessFile final : public RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultInjectionFileSystem* fs, std::unique_ptr<RandomAccessFile> base,
                        uint64_t epoch)
      : fs_(fs), base_(std::move(base)), epoch_(epoch) {}

  absl::StatusOr<size_t> Read(uint64_t offset, size_t n, char* out) const override {
    MutexLock lock(&fs_->mu_);
    if (absl::Status status = Usable(IoOperation::kRead); !status.ok()) return status;
    return base_->Read(offset, n, out);
  }

  absl::StatusOr<uint64_t> Size() const override {
    MutexLock lock(&fs_->mu_);
    if (absl::Status status = Usable(IoOperation::kStat); !status.ok()) return status;
    return base_->Size();
  }

  const std::string& path() const override { return base_->path(); }

 private:
  absl::Status Usable(IoOperation operation) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(fs_->mu_) {
    if (absl::Status status = fs_->CheckHandle(epoch_, IoOperationName(operation), path());
        !status.ok()) {
      return status;
    }
    return fs_->CheckFault(operation, path());
  }

  FaultInjectionFileSystem* const fs_;
  const std::unique_ptr<RandomAccessFile> base_;
  const uint64_t epoch_;
};

// A lock in the model (invariant 8). A handle from before a crash releases
// nothing: the crash released its lock already, and the path may have been
// locked again since.
class FaultInjectionFileSystem::FaultFileLock final : public FileLock {
 public:
  FaultFileLock(FaultInjectionFileSystem* fs, std::string path, std::string key, uint64_t epoch)
      : fs_(fs), path_(std::move(path)), key_(std::move(key)), epoch_(epoch) {}
  ~FaultFileLock() override {
    MutexLock lock(&fs_->mu_);
    if (epoch_ == fs_->epoch_) fs_->locks_.erase(key_);
  }
  FaultFileLock(const FaultFileLock&) = delete;
  FaultFileLock& operator=(const FaultFileLock&) = delete;

  const std::string& path() const override { return path_; }

 private:
  FaultInjectionFileSystem* const fs_;
  const std::string path_;
  const std::string key_;
  const uint64_t epoch_;
};

FaultInjectionFileSystem::FaultInjectionFileSystem(FileSystem* base, uint64_t seed)
    : base_(base), rng_(seed) {
  STRATA_CHECK(base != nullptr, "FaultInjectionFileSystem needs a FileSystem to wrap");
}

FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

// ---- Fault control ----

void FaultInjectionFileSystem::InjectFaults(IoOperation operation, uint32_t one_in,
                                            int error_number) {
  MutexLock lock(&mu_);
  rules_[static_cast<size_t>(operation)] = FaultRule{one_in, error_number};
}

void FaultInjectionFileSystem::SetDiskGone(bool gone) {
  MutexLock lock(&mu_);
  disk_gone_ = gone;
}

void FaultInjectionFileSystem::ClearFaults() {
  MutexLock lock(&mu_);
  rules_.fill(FaultRule{});
  disk_gone_ = false;
  sync_limit_.reset();
  crash_point_reached_ = false;
}

void FaultInjectionFileSystem::CrashAfterSyncs(uint64_t count) {
  MutexLock lock(&mu_);
  sync_limit_ = sync_count_ + count;
  crash_point_reached_ = count == 0;
}

bool FaultInjectionFileSystem::crash_point_reached() const {
  MutexLock lock(&mu_);
  return crash_point_reached_;
}

uint64_t FaultInjectionFileSystem::sync_count() const {
  MutexLock lock(&mu_);
  return sync_count_;
}

uint64_t FaultInjectionFileSystem::injected_fault_count() const {
  MutexLock lock(&mu_);
  return injected_fault_count_;
}

absl::Status FaultInjectionFileSystem::CheckFault(IoOperation operation, std::string_view path) {
  std::string_view name = IoOperationName(operation);
  if (absl::Status alive = CheckAlive(name, path); !alive.ok()) return alive;
  const FaultRule& rule = rules_[static_cast<size_t>(operation)];
  if (rule.one_in != 0 && rng_() % rule.one_in == 0) {
    ++injected_fault_count_;
    return ErrnoToStatus(rule.error_number, fmt::format("{} (injected fault)", name), path);
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::CheckAlive(std::string_view operation,
                                                  std::string_view path) const {
  if (crash_point_reached_) {
    return ErrnoToStatus(EIO, fmt::format("{} (after the simulated crash point)", operation), path);
  }
  if (disk_gone_) return ErrnoToStatus(EIO, fmt::format("{} (disk gone)", operation), path);
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::CheckHandle(uint64_t epoch, std::string_view operation,
                                                   std::string_view path) const {
  if (epoch != epoch_) {
    return absl::FailedPreconditionError(
        fmt::format("{} {}: handle was opened before a simulated crash", operation, path));
  }
  return absl::OkStatus();
}

void FaultInjectionFileSystem::CountSync() {
  ++sync_count_;
  if (sync_limit_.has_value() && sync_count_ >= *sync_limit_) crash_point_reached_ = true;
}

// ---- FileSystem ----

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::NewWritableFile(
    const std::string& path, WriteMode mode) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kOpenForWrite, path); !fault.ok()) return fault;
  const std::string key = Normalize(path);
  absl::StatusOr<bool> existed = base_->Exists(path);
  if (!existed.ok()) return existed.status();
  auto state = std::make_shared<FileState>();
  if (*existed && mode == WriteMode::kCreateOrTruncate) {
    absl::StatusOr<bool> is_dir = base_->IsDirectory(path);
    if (!is_dir.ok()) return is_dir.status();
    if (!*is_dir) {
      absl::StatusOr<std::string> durable = DurableContentLocked(key);
      if (!durable.ok()) return durable.status();
      state->durable_content = *std::move(durable);
    }
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> file = base_->NewWritableFile(path, mode);
  if (!file.ok()) return file.status();
  if (!*existed) {
    pending_.push_back(PendingEntry{
        .kind = PendingEntry::Kind::kCreateFile, .path = key, .durable_in = ParentPath(key)});
  }
  files_[key] = state;
  return std::make_unique<FaultWritableFile>(this, *std::move(file), std::move(state), epoch_);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> FaultInjectionFileSystem::NewRandomAccessFile(
    const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kOpenForRead, path); !fault.ok()) return fault;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file = base_->NewRandomAccessFile(path);
  if (!file.ok()) return file.status();
  return std::make_unique<FaultRandomAccessFile>(this, *std::move(file), epoch_);
}

absl::StatusOr<std::string> FaultInjectionFileSystem::ReadFile(const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kRead, path); !fault.ok()) return fault;
  return base_->ReadFile(path);
}

absl::Status FaultInjectionFileSystem::RenameFile(const std::string& from, const std::string& to) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kRename, fmt::format("{} to {}", from, to));
      !fault.ok()) {
    return fault;
  }
  const std::string from_key = Normalize(from);
  const std::string to_key = Normalize(to);
  PendingEntry entry{.kind = PendingEntry::Kind::kRename,
                     .path = to_key,
                     .from = from_key,
                     .durable_in = ParentPath(to_key)};
  absl::StatusOr<bool> source_exists = base_->Exists(from);
  if (!source_exists.ok()) return source_exists.status();
  // Capture the target only when the rename can happen; a missing source
  // makes the wrapped rename fail with the right error below.
  if (*source_exists && from_key != to_key) {
    if (absl::Status captured = CapturePreviousLocked(to_key, entry); !captured.ok()) {
      return captured;
    }
  }
  if (absl::Status renamed = base_->RenameFile(from, to); !renamed.ok()) return renamed;
  if (from_key == to_key) return absl::OkStatus();
  EraseFileStatesLocked(to_key);
  MoveFileStatesLocked(from_key, to_key);
  pending_.push_back(std::move(entry));
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::SyncDir(const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kSyncDir, path); !fault.ok()) return fault;
  if (absl::Status synced = base_->SyncDir(path); !synced.ok()) return synced;
  const std::string key = Normalize(path);
  // A rename made durable here settles where the renamed entry lives: its
  // own creation (or an older rename to its source) is durable with it, and
  // older pending changes inside it stay pending at its new place. A
  // directory whose removal is made durable here takes the pending changes
  // inside it along: it could only be removed empty, so a crash cannot
  // bring back what it held.
  std::vector<std::string> removed_dirs;
  std::vector<bool> settled(pending_.size(), false);
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].durable_in != key) continue;
    settled[i] = true;
    if (pending_[i].kind == PendingEntry::Kind::kRemoveDir)
      removed_dirs.push_back(pending_[i].path);
    if (pending_[i].kind != PendingEntry::Kind::kRename) continue;
    const PendingEntry rename = pending_[i];
    for (size_t older = 0; older < i; ++older) {
      PendingEntry& entry = pending_[older];
      if (entry.path == rename.from && entry.kind != PendingEntry::Kind::kRemoveFile &&
          entry.kind != PendingEntry::Kind::kRemoveDir) {
        settled[older] = true;
      } else {
        Rebase(entry, rename.from, rename.path);
      }
    }
  }
  std::vector<PendingEntry> still_pending;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const std::string& durable_in = pending_[i].durable_in;
    const bool removed_with_dir =
        std::any_of(removed_dirs.begin(), removed_dirs.end(),
                    [&](const std::string& dir) { return IsAtOrUnder(durable_in, dir); });
    if (!settled[i] && !removed_with_dir) still_pending.push_back(std::move(pending_[i]));
  }
  pending_ = std::move(still_pending);
  CountSync();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FaultInjectionFileSystem::ListDir(
    const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kList, path); !fault.ok()) return fault;
  return base_->ListDir(path);
}

absl::Status FaultInjectionFileSystem::CreateDir(const std::string& path) {
  MutexLock lock(&mu_);
  return CreateDirLocked(path);
}

absl::Status FaultInjectionFileSystem::CreateDirs(const std::string& path) {
  MutexLock lock(&mu_);
  // Create each missing ancestor on its own so each is a pending entry.
  std::vector<std::string> missing;
  for (std::string dir = Normalize(path);; dir = ParentPath(dir)) {
    if (absl::Status fault = CheckFault(IoOperation::kStat, dir); !fault.ok()) return fault;
    absl::StatusOr<bool> exists = base_->Exists(dir);
    if (!exists.ok()) return exists.status();
    if (*exists) {
      absl::StatusOr<bool> is_dir = base_->IsDirectory(dir);
      if (!is_dir.ok()) return is_dir.status();
      if (!*is_dir) return ErrnoToStatus(ENOTDIR, "mkdir", dir);
      break;
    }
    missing.push_back(dir);
    if (ParentPath(dir) == dir || ParentPath(dir) == ".") break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (absl::Status created = CreateDirLocked(*it); !created.ok()) return created;
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::RemoveFile(const std::string& path) {
  MutexLock lock(&mu_);
  return RemoveFileLocked(path);
}

absl::Status FaultInjectionFileSystem::RemoveDir(const std::string& path) {
  MutexLock lock(&mu_);
  return RemoveDirLocked(path);
}

absl::Status FaultInjectionFileSystem::RemoveAll(const std::string& path) {
  MutexLock lock(&mu_);
  return RemoveAllLocked(path, 0);
}

absl::StatusOr<uint64_t> FaultInjectionFileSystem::FileSize(const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kStat, path); !fault.ok()) return fault;
  return base_->FileSize(path);
}

absl::StatusOr<bool> FaultInjectionFileSystem::Exists(const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kStat, path); !fault.ok()) return fault;
  return base_->Exists(path);
}

absl::StatusOr<bool> FaultInjectionFileSystem::IsDirectory(const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kStat, path); !fault.ok()) return fault;
  return base_->IsDirectory(path);
}

absl::StatusOr<std::unique_ptr<FileLock>> FaultInjectionFileSystem::LockFile(
    const std::string& path) {
  MutexLock lock(&mu_);
  if (absl::Status fault = CheckFault(IoOperation::kLock, path); !fault.ok()) return fault;
  const std::string key = Normalize(path);
  if (locks_.count(key) != 0) return ErrnoToStatus(EWOULDBLOCK, "lock", path);
  absl::StatusOr<bool> exists = base_->Exists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        base_->NewWritableFile(path, WriteMode::kCreateExclusive);
    if (!file.ok()) return file.status();
    if (absl::Status closed = (*file)->Close(); !closed.ok()) return closed;
    pending_.push_back(PendingEntry{
        .kind = PendingEntry::Kind::kCreateFile, .path = key, .durable_in = ParentPath(key)});
  } else {
    absl::StatusOr<bool> is_dir = base_->IsDirectory(path);
    if (!is_dir.ok()) return is_dir.status();
    if (*is_dir) return ErrnoToStatus(EISDIR, "open for locking", path);
  }
  locks_.insert(key);
  return std::make_unique<FaultFileLock>(this, path, key, epoch_);
}

// ---- Model helpers ----

absl::StatusOr<std::string> FaultInjectionFileSystem::DurableContentLocked(
    const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end() && it->second->durable_content.has_value()) {
    return *it->second->durable_content;
  }
  absl::StatusOr<std::string> content = base_->ReadFile(path);
  if (!content.ok()) return content.status();
  if (it != files_.end() && content->size() > it->second->synced_size) {
    content->resize(it->second->synced_size);
  }
  return content;
}

absl::Status FaultInjectionFileSystem::CapturePreviousLocked(const std::string& path,
                                                             PendingEntry& entry) {
  absl::StatusOr<bool> exists = base_->Exists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return absl::OkStatus();
  absl::StatusOr<bool> is_dir = base_->IsDirectory(path);
  if (!is_dir.ok()) return is_dir.status();
  entry.restore_previous = true;
  entry.previous_is_dir = *is_dir;
  if (*is_dir) return absl::OkStatus();
  absl::StatusOr<std::string> content = DurableContentLocked(path);
  if (!content.ok()) return content.status();
  entry.previous_content = *std::move(content);
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::CreateDirLocked(const std::string& path) {
  if (absl::Status fault = CheckFault(IoOperation::kCreateDir, path); !fault.ok()) return fault;
  if (absl::Status created = base_->CreateDir(path); !created.ok()) return created;
  const std::string key = Normalize(path);
  pending_.push_back(PendingEntry{
      .kind = PendingEntry::Kind::kCreateDir, .path = key, .durable_in = ParentPath(key)});
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::RemoveFileLocked(const std::string& path) {
  if (absl::Status fault = CheckFault(IoOperation::kRemove, path); !fault.ok()) return fault;
  const std::string key = Normalize(path);
  PendingEntry entry{
      .kind = PendingEntry::Kind::kRemoveFile, .path = key, .durable_in = ParentPath(key)};
  // Only a regular file can be removed; let the wrapped call report anything
  // else (NotFound, EISDIR) before capturing content.
  absl::StatusOr<bool> is_dir = base_->IsDirectory(path);
  if (is_dir.ok() && !*is_dir) {
    if (absl::Status captured = CapturePreviousLocked(key, entry); !captured.ok()) return captured;
  }
  if (absl::Status removed = base_->RemoveFile(path); !removed.ok()) return removed;
  EraseFileStatesLocked(key);
  pending_.push_back(std::move(entry));
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::RemoveDirLocked(const std::string& path) {
  if (absl::Status fault = CheckFault(IoOperation::kRemove, path); !fault.ok()) return fault;
  if (absl::Status removed = base_->RemoveDir(path); !removed.ok()) return removed;
  const std::string key = Normalize(path);
  pending_.push_back(PendingEntry{.kind = PendingEntry::Kind::kRemoveDir,
                                  .path = key,
                                  .durable_in = ParentPath(key),
                                  .restore_previous = true,
                                  .previous_is_dir = true});
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::RemoveAllLocked(const std::string& path, int depth) {
  if (depth > kMaxRemoveDepth) {
    return absl::FailedPreconditionError(
        fmt::format("remove {}: more than {} levels of directories", path, kMaxRemoveDepth));
  }
  if (absl::Status fault = CheckFault(IoOperation::kStat, path); !fault.ok()) return fault;
  absl::StatusOr<bool> is_dir = base_->IsDirectory(path);
  if (!is_dir.ok()) return is_dir.status();
  if (!*is_dir) return RemoveFileLocked(path);
  if (absl::Status fault = CheckFault(IoOperation::kList, path); !fault.ok()) return fault;
  absl::StatusOr<std::vector<std::string>> names = base_->ListDir(path);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (absl::Status removed = RemoveAllLocked(JoinPath(path, name), depth + 1);
        !removed.ok()) {
      return removed;
    }
  }
  return RemoveDirLocked(path);
}

std::vector<std::string> FaultInjectionFileSystem::TrackedAtOrUnderLocked(
    const std::string& path) const {
  std::vector<std::string> found;
  // Everything at or under `path` starts with `path`, and all such keys are
  // contiguous in the map; siblings like "path.tmp" sort among them.
  for (auto it = files_.lower_bound(path);
       it != files_.end() && it->first.compare(0, path.size(), path) == 0; ++it) {
    if (IsAtOrUnder(it->first, path)) found.push_back(it->first);
  }
  return found;
}

void FaultInjectionFileSystem::MoveFileStatesLocked(const std::string& from,
                                                    const std::string& to) {
  std::vector<std::pair<std::string, std::shared_ptr<FileState>>> moved;
  for (const std::string& path : TrackedAtOrUnderLocked(from)) {
    auto it = files_.find(path);
    moved.emplace_back(to + path.substr(from.size()), std::move(it->second));
    files_.erase(it);
  }
  for (auto& [path, state] : moved) files_[path] = std::move(state);
}

void FaultInjectionFileSystem::EraseFileStatesLocked(const std::string& path) {
  for (const std::string& tracked : TrackedAtOrUnderLocked(path)) files_.erase(tracked);
}

// ---- Crash ----

absl::Status FaultInjectionFileSystem::SimulateCrash(CrashOptions options) {
  MutexLock lock(&mu_);
  // Data first, while the model's paths still match the disk; then the
  // directory entries, newest first, so each undo sees the state it left.
  absl::Status status = DropUnsyncedDataLocked(options);
  for (auto it = pending_.rbegin(); status.ok() && it != pending_.rend(); ++it) {
    status = UndoLocked(*it);
  }
  files_.clear();
  pending_.clear();
  locks_.clear();
  ++epoch_;
  sync_limit_.reset();
  crash_point_reached_ = false;
  return status;
}

absl::Status FaultInjectionFileSystem::DropUnsyncedDataLocked(const CrashOptions& options) {
  for (const auto& [path, state] : files_) {
    if (state->durable_content.has_value()) {
      if (absl::Status written = OverwriteLocked(path, *state->durable_content); !written.ok()) {
        return written;
      }
      continue;
    }
    absl::StatusOr<std::string> content = base_->ReadFile(path);
    if (absl::IsNotFound(content.status())) continue;  // removed behind our back
    if (!content.ok()) return content.status();
    if (content->size() <= state->synced_size) continue;
    uint64_t unsynced = content->size() - state->synced_size;
    uint64_t kept = options.tear_unsynced_writes ? rng_() % (unsynced + 1) : 0;
    if (kept == unsynced) continue;
    content->resize(state->synced_size + kept);
    if (absl::Status written = OverwriteLocked(path, *content); !written.ok()) return written;
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::UndoLocked(const PendingEntry& entry) {
  auto ignore_not_found = [](const absl::Status& status) {
    return absl::IsNotFound(status) ? absl::OkStatus() : status;
  };
  switch (entry.kind) {
    case PendingEntry::Kind::kCreateFile:
      return ignore_not_found(base_->RemoveFile(entry.path));
    case PendingEntry::Kind::kCreateDir:
      return ignore_not_found(base_->RemoveAll(entry.path));
    case PendingEntry::Kind::kRemoveFile:
      return OverwriteLocked(entry.path, entry.previous_content);
    case PendingEntry::Kind::kRemoveDir: {
      absl::Status created = base_->CreateDir(entry.path);
      return absl::IsAlreadyExists(created) ? absl::OkStatus() : created;
    }
    case PendingEntry::Kind::kRename: {
      absl::StatusOr<bool> exists = base_->Exists(entry.path);
      if (!exists.ok()) return exists.status();
      if (*exists) {
        if (absl::Status moved = base_->RenameFile(entry.path, entry.from); !moved.ok()) {
          return moved;
        }
      }
      if (!entry.restore_previous) return absl::OkStatus();
      if (entry.previous_is_dir) return base_->CreateDir(entry.path);
      return OverwriteLocked(entry.path, entry.previous_content);
    }
  }
  return absl::InternalError("unknown pending entry kind");
}

absl::Status FaultInjectionFileSystem::OverwriteLocked(const std::string& path,
                                                       std::string_view content) {
  return WriteFile(*base_, path, content);
}

}  // namespace strata
