#pragma once

// FileSystem: the only way strata's storage code touches files (LevelDB's
// Env, reduced to what strata needs). Production code uses PosixFileSystem;
// tests substitute FaultInjectionFileSystem to lose unsynced data, tear
// writes and inject EIO/ENOSPC deterministically.
//
// Durability contract (what every implementation promises and what storage
// code must assume, no more):
//   1. Bytes appended to a WritableFile survive a crash only once Sync() on
//      that file has returned OK.
//   2. A directory entry (a created file or directory, a rename, a removal)
//      survives a crash only once SyncDir() on the directory that holds the
//      new entry has returned OK. For RenameFile(from, to) that directory is
//      the parent of `to`.
//   3. RenameFile() is atomic: after a crash, `to` names either its old
//      target or the renamed entry, never a mixture.
//   4. After a failed Append() or Sync() a WritableFile is poisoned: every
//      later Append(), Flush() and Sync() returns the first error. Data that
//      failed to sync may be lost even if a later fsync would succeed
//      ("fsyncgate"), so callers rewrite the file instead of retrying.
//
// Errors. Every error names the operation and the path, carries the errno
// text, and records the errno as a payload (ErrnoOf() reads it back). Codes:
//   ENOENT, ENOTDIR                                   -> NotFound
//   EEXIST                                            -> AlreadyExists
//   EACCES, EPERM, EROFS                              -> PermissionDenied
//   ENOSPC, EDQUOT, EIO, EAGAIN, EBUSY, ENOMEM,
//   EMFILE, ENFILE, ETIMEDOUT, ESTALE                 -> Unavailable
//   ENOTEMPTY, EISDIR, EXDEV, ELOOP, EBADF            -> FailedPrecondition
//   EINVAL, ENAMETOOLONG                              -> InvalidArgument
//   anything else                                     -> Internal
// Unavailable marks operating faults that may clear on their own (a full
// disk, a flaky device); the ingest boundary hands them to OTLP exporters as
// UNAVAILABLE so they retry. A full disk is deliberately not
// ResourceExhausted: at ingest that code means "over the in-flight budget".
//
// Thread-safety: FileSystem implementations are safe for concurrent use.
// RandomAccessFile is safe for concurrent use. WritableFile and FileLock
// have a single owner.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata {

// A file being written sequentially. Appended bytes may be buffered in the
// process; they reach the OS on Flush(), Sync() or Close(), and the disk on
// Sync(). The destructor closes the file without flushing or syncing, so
// bytes not yet flushed are dropped: call Close() and check its status.
class WritableFile {
 public:
  virtual ~WritableFile() = default;

  [[nodiscard]] virtual absl::Status Append(std::string_view data) = 0;
  // Hands buffered bytes to the OS (visible to readers, not durable).
  [[nodiscard]] virtual absl::Status Flush() = 0;
  // Flushes, then makes the file's contents durable (fdatasync).
  [[nodiscard]] virtual absl::Status Sync() = 0;
  // Flushes and closes. Does not sync. Later calls return FailedPrecondition.
  [[nodiscard]] virtual absl::Status Close() = 0;

  // Bytes appended so far (flushed or not).
  virtual uint64_t size() const = 0;
  virtual const std::string& path() const = 0;
};

// A file read at arbitrary offsets (pread). Safe for concurrent use.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  // Reads up to `n` bytes at `offset` into `out` and returns how many were
  // read: fewer than `n` only at end of file.
  [[nodiscard]] virtual absl::StatusOr<size_t> Read(uint64_t offset, size_t n, char* out) const = 0;
  [[nodiscard]] virtual absl::StatusOr<uint64_t> Size() const = 0;
  virtual const std::string& path() const = 0;

  // Reads exactly `n` bytes at `offset`; OutOfRange (naming the path, offset
  // and length) if the file ends first.
  [[nodiscard]] absl::StatusOr<std::string> ReadExact(uint64_t offset, size_t n) const;
};

// An exclusive lock on a file (LockFile()), held until this handle is
// destroyed. The lock is advisory: it keeps out only other holders of
// LockFile() on the same path, which is how one process claims a data
// directory (docs/format/layout.md, "LOCK").
class FileLock {
 public:
  virtual ~FileLock() = default;
  virtual const std::string& path() const = 0;
};

enum class WriteMode {
  kCreateOrTruncate,  // O_CREAT | O_TRUNC
  kCreateExclusive,   // O_CREAT | O_EXCL: AlreadyExists if the path exists
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Opens `path` for writing from offset 0. The parent directory must exist.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, WriteMode mode) = 0;
  [[nodiscard]] absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) {
    return NewWritableFile(path, WriteMode::kCreateOrTruncate);
  }
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) = 0;
  // Reads a whole regular file.
  [[nodiscard]] virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;

  // rename(2): atomically replaces `to` (a file, or an empty directory when
  // `from` is a directory). Both paths must be on the same file system.
  [[nodiscard]] virtual absl::Status RenameFile(const std::string& from, const std::string& to) = 0;
  // link(2): gives the file `from` the second name `to`; AlreadyExists (and
  // nothing changed) if `to` exists. A create-only publish: write and sync a
  // file under a private name, then link it into place. Both paths must be
  // on the same file system; the new entry is durable after SyncDir() of
  // `to`'s directory. Implementations that cannot link return Unimplemented.
  [[nodiscard]] virtual absl::Status LinkFile(const std::string& from, const std::string& to);
  // fsync on the directory itself, making its entries durable.
  [[nodiscard]] virtual absl::Status SyncDir(const std::string& path) = 0;

  // Names in a directory, without "." and "..", sorted bytewise.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) = 0;
  // AlreadyExists if `path` exists.
  [[nodiscard]] virtual absl::Status CreateDir(const std::string& path) = 0;
  // Creates `path` and missing ancestors; OK if it is already a directory.
  [[nodiscard]] virtual absl::Status CreateDirs(const std::string& path) = 0;
  // Removes a file (not a directory).
  [[nodiscard]] virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Removes an empty directory.
  [[nodiscard]] virtual absl::Status RemoveDir(const std::string& path) = 0;
  // Removes a file, or a directory and everything under it, without
  // following symbolic links. NotFound if `path` does not exist.
  [[nodiscard]] virtual absl::Status RemoveAll(const std::string& path) = 0;

  [[nodiscard]] virtual absl::StatusOr<uint64_t> FileSize(const std::string& path) = 0;
  // False (not an error) when `path` or one of its ancestors does not exist.
  [[nodiscard]] virtual absl::StatusOr<bool> Exists(const std::string& path) = 0;
  // NotFound if `path` does not exist. Does not follow a final symbolic link.
  [[nodiscard]] virtual absl::StatusOr<bool> IsDirectory(const std::string& path) = 0;

  // Creates `path` as an empty file if it is missing (its directory entry is
  // not synced) and takes an exclusive lock on it without waiting. While the
  // returned handle lives, every other LockFile(path), from this process or
  // another, fails with Unavailable and errno EWOULDBLOCK (ErrnoOf()). The
  // lock ends with the handle or with the process, so a crash never leaves
  // a stale lock.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path) = 0;
};

// Creates (or truncates) `path`, writes `data`, syncs and closes it.
[[nodiscard]] absl::Status WriteFile(FileSystem& fs, const std::string& path,
                                     std::string_view data);

// The status for a failed system call: "<operation> <path>: <errno text>
// (<ERRNO NAME>)", with the code from the table above and the errno attached.
[[nodiscard]] absl::Status ErrnoToStatus(int error_number, std::string_view operation,
                                         std::string_view path);
// The errno recorded by ErrnoToStatus(), if any.
std::optional<int> ErrnoOf(const absl::Status& status);

}  // namespace strata
