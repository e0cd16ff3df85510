#pragma once

// FaultInjectionFileSystem: a FileSystem for tests that wraps another one
// (normally PosixFileSystem over a temporary directory), remembers what has
// been made durable, and can then (a) simulate a crash by putting the disk
// back into the state a power cut would leave, and (b) fail operations with
// EIO or ENOSPC one time in N on a seed, so a failure replays exactly.
// Modelled on RocksDB's FaultInjectionTestFS and SQLite's crash VFS.
//
// The fault model (numbered invariants):
//   1. File data. The bytes of a file written through this FileSystem
//      survive a crash only up to its last successful Sync(). A file opened
//      with kCreateOrTruncate over existing content keeps that old, durable
//      content across a crash until the new handle's first Sync().
//   2. Directory entries. Creating a file or directory, removing one, and
//      renaming are "pending" until SyncDir() on the directory that holds
//      the new entry (the parent of the created or removed path, the parent
//      of the rename's target). A crash undoes pending entries newest
//      first: created entries disappear (a directory with everything in
//      it), removed ones come back with their durable content, renamed ones
//      move back and any target they replaced is restored. A rename is
//      durable once the target's parent is synced even across directories:
//      the journaling file systems strata runs on commit both halves of a
//      rename in one transaction.
//      Once the removal of a directory is durable, so are the pending
//      changes inside it (it could only be removed empty). Once a rename of
//      a directory is durable, the older pending changes inside it stay
//      pending at its new place: creating files in a directory, renaming
//      the directory and syncing only the rename's target parent does not
//      make the files' entries durable.
//   3. Files and directories that were not created or written through this
//      FileSystem (the state found at construction or after a crash) are
//      taken as durable as found.
//   4. Torn writes. With CrashOptions::tear_unsynced_writes, each file keeps
//      its synced bytes plus a seeded random prefix (possibly empty, possibly
//      all) of the bytes appended since, as when the kernel had written back
//      part of the page cache.
//   5. Injected faults. InjectFaults(op, one_in, errno) fails each operation
//      of that kind with probability 1/one_in, drawn from one seeded
//      generator before the operation reaches the wrapped FileSystem, so a
//      failed operation changes nothing. The same seed and the same sequence
//      of calls give the same faults. SetDiskGone(true) fails everything with
//      EIO. Errors use ErrnoToStatus(), so injected ENOSPC and EIO look
//      exactly like real ones (Unavailable, errno payload).
//   6. Crash points. CrashAfterSyncs(k) lets k more syncs (Sync() and
//      SyncDir() both count) succeed; from then on every operation fails with
//      EIO as though the process had died right after the k-th sync. The
//      test then calls SimulateCrash() and reopens.
//   7. After SimulateCrash() every handle opened before it fails with
//      FailedPrecondition, nothing is pending, all files on disk count as
//      durable, every lock is released (the process died), and the crash
//      point is cleared. One-in-N rules and the
//      disk-gone switch stay until ClearFaults().
//
//   8. Locks. LockFile() keeps its locks in memory, per instance: a second
//      LockFile() on a held path fails with EWOULDBLOCK until the first
//      handle is destroyed or SimulateCrash() runs. Creating a missing lock
//      file is a pending entry like any other.
//
// Paths are compared lexically after normalisation ("a/./b/" is "a/b"), so a
// test must spell each path the same way (absolute paths are simplest).
// Symbolic links are not modelled.
//
// Thread-safety: safe for concurrent use. Every operation, including the
// call into the wrapped FileSystem, runs under one mutex so that the
// recorded model always matches the disk; this serialises I/O, which is
// acceptable in tests and the reason this class is not for benchmarks.
//
// Errors: those of the wrapped FileSystem, injected ones as above, and
// FailedPrecondition for a handle used after SimulateCrash(). SimulateCrash()
// returns an error only if the wrapped FileSystem fails while restoring.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "io/file_system.h"

namespace strata {

// The kinds of operation a fault can be injected into.
enum class IoOperation {
  kOpenForWrite,  // NewWritableFile
  kOpenForRead,   // NewRandomAccessFile
  kRead,          // RandomAccessFile::Read, ReadFile
  kAppend,        // WritableFile::Append
  kSync,          // WritableFile::Sync
  kClose,         // WritableFile::Close
  kRename,        // RenameFile
  kSyncDir,       // SyncDir
  kCreateDir,     // CreateDir, and each directory CreateDirs creates
  kRemove,        // RemoveFile, RemoveDir, and each removal RemoveAll makes
  kList,          // ListDir
  kStat,          // FileSize, Exists, IsDirectory
  kLock,          // LockFile
};
inline constexpr size_t kIoOperationCount = 13;

std::string_view IoOperationName(IoOperation operation);

struct CrashOptions {
  // Keep a seeded random prefix of each file's unsynced bytes (invariant 4)
  // instead of dropping them all.
  bool tear_unsynced_writes = false;
};

class FaultInjectionFileSystem final : public FileSystem {
 public:
  // `base` must outlive this object, and this object must outlive every
  // handle it returns. `seed` drives every random choice.
  FaultInjectionFileSystem(FileSystem* base, uint64_t seed);
  ~FaultInjectionFileSystem() override;
  FaultInjectionFileSystem(const FaultInjectionFileSystem&) = delete;
  FaultInjectionFileSystem& operator=(const FaultInjectionFileSystem&) = delete;

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                WriteMode mode) override;
  using FileSystem::NewWritableFile;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status RenameFile(const std::string& from, const std::string& to) override;
  absl::Status SyncDir(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) override;
  absl::Status CreateDir(const std::string& path) override;
  absl::Status CreateDirs(const std::string& path) override;
  absl::Status RemoveFile(const std::string& path) override;
  absl::Status RemoveDir(const std::string& path) override;
  absl::Status RemoveAll(const std::string& path) override;
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override;
  absl::StatusOr<bool> Exists(const std::string& path) override;
  absl::StatusOr<bool> IsDirectory(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override;

  // Fails each `operation` with `error_number` (EIO, ENOSPC, ...) one time in
  // `one_in`; one_in == 0 removes the rule, one_in == 1 fails every time.
  void InjectFaults(IoOperation operation, uint32_t one_in, int error_number)
      ABSL_LOCKS_EXCLUDED(mu_);
  // While set, every operation fails with EIO (the disk is gone).
  void SetDiskGone(bool gone) ABSL_LOCKS_EXCLUDED(mu_);
  // Removes every one-in-N rule, the disk-gone switch and the crash point.
  void ClearFaults() ABSL_LOCKS_EXCLUDED(mu_);
  // Invariant 6: `count` more syncs succeed, then everything fails.
  void CrashAfterSyncs(uint64_t count) ABSL_LOCKS_EXCLUDED(mu_);

  // Puts the disk into the state a crash now would leave (invariants 1-4, 7).
  [[nodiscard]] absl::Status SimulateCrash(CrashOptions options = {}) ABSL_LOCKS_EXCLUDED(mu_);

  // True once the crash point has been reached (until SimulateCrash()).
  bool crash_point_reached() const ABSL_LOCKS_EXCLUDED(mu_);
  // Successful Sync() and SyncDir() calls since construction.
  uint64_t sync_count() const ABSL_LOCKS_EXCLUDED(mu_);
  // Operations failed by one-in-N rules since construction.
  uint64_t injected_fault_count() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class FaultWritableFile;
  class FaultRandomAccessFile;
  class FaultFileLock;
  friend class FaultWritableFile;
  friend class FaultRandomAccessFile;
  friend class FaultFileLock;

  // What is known about a file written through this FileSystem. Accessed
  // only with mu_ held.
  struct FileState {
    uint64_t synced_size = 0;
    // Set while a truncated-on-open file has not been synced: the content a
    // crash restores (invariant 1).
    std::optional<std::string> durable_content;
  };

  // A directory entry change not yet made durable (invariant 2).
  struct PendingEntry {
    enum class Kind { kCreateFile, kCreateDir, kRemoveFile, kRemoveDir, kRename };
    Kind kind;
    std::string path;        // the created or removed path, or the rename target
    std::string from;        // the rename source
    std::string durable_in;  // the directory whose SyncDir() makes this durable
    // For removals and renames over an existing entry: what a crash restores.
    bool restore_previous = false;
    bool previous_is_dir = false;
    std::string previous_content;
  };

  struct FaultRule {
    uint32_t one_in = 0;
    int error_number = 0;
  };

  // EIO while the disk is gone or the crash point has been reached.
  absl::Status CheckAlive(std::string_view operation, std::string_view path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns the error `operation` on `path` must fail with, or OK: CheckAlive,
  // then the one-in-N rule for `operation`.
  absl::Status CheckFault(IoOperation operation, std::string_view path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckHandle(uint64_t epoch, std::string_view operation, std::string_view path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountSync() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The content `path` would have after a crash now (invariants 1 and 3).
  absl::StatusOr<std::string> DurableContentLocked(const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records what a crash must restore if the existing entry at `path` goes.
  absl::Status CapturePreviousLocked(const std::string& path, PendingEntry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CreateDirLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RemoveFileLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RemoveDirLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RemoveAllLocked(const std::string& path, int depth)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tracked paths equal to `path` or inside the directory `path`.
  std::vector<std::string> TrackedAtOrUnderLocked(const std::string& path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the model of every file at or under `from` to `to`.
  void MoveFileStatesLocked(const std::string& from, const std::string& to)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseFileStatesLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Status DropUnsyncedDataLocked(const CrashOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status UndoLocked(const PendingEntry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replaces the content of `path` on the wrapped FileSystem, durably.
  absl::Status OverwriteLocked(const std::string& path, std::string_view content)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  FileSystem* const base_;

  mutable Mutex mu_;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  std::array<FaultRule, kIoOperationCount> rules_ ABSL_GUARDED_BY(mu_);
  bool disk_gone_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<uint64_t> sync_limit_ ABSL_GUARDED_BY(mu_);
  bool crash_point_reached_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t sync_count_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t injected_fault_count_ ABSL_GUARDED_BY(mu_) = 0;
  // Incremented by SimulateCrash(); handles remember the epoch they were
  // opened in.
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // Files written through this FileSystem since the last crash, by
  // normalised path; open handles share the state.
  std::map<std::string, std::shared_ptr<FileState>> files_ ABSL_GUARDED_BY(mu_);
  // Oldest first.
  std::vector<PendingEntry> pending_ ABSL_GUARDED_BY(mu_);
  // Normalised paths locked by a live FileLock of the current epoch.
  std::set<std::string> locks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata
