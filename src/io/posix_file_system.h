#pragma once

// PosixFileSystem: the FileSystem over POSIX system calls, and the only code
// in strata that calls POSIX file APIs directly. It is stateless; one
// instance may be shared by every thread (safe for concurrent use).
//
// Behaviour beyond the FileSystem contract:
//   - Every call retries on EINTR; writes loop over short writes and reads
//     over short reads, so a partial transfer is never reported as success.
//   - WritableFile buffers up to kWriteBufferBytes in the process; larger
//     appends go straight to write(2). Sync() is fdatasync(2), which also
//     persists the file size.
//   - LockFile() is flock(LOCK_EX | LOCK_NB) on a descriptor of its own, so
//     two LockFile() calls on one path conflict even within one process;
//     the lock ends when the handle closes that descriptor.
//   - Files are created 0644 and directories 0755 (before umask), all with
//     O_CLOEXEC.
//   - Errors follow the errno table in file_system.h.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "io/file_system.h"

namespace strata {

class PosixFileSystem final : public FileSystem {
 public:
  static constexpr size_t kWriteBufferBytes = size_t{64} * 1024;

  PosixFileSystem() = default;

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                WriteMode mode) override;
  using FileSystem::NewWritableFile;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status RenameFile(const std::string& from, const std::string& to) override;
  absl::Status LinkFile(const std::string& from, const std::string& to) override;
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
};

}  // namespace strata
