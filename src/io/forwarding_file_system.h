#pragma once

// ForwardingFileSystem passes every call to another FileSystem. Test file
// systems that change one or two operations (fail a chosen step, hold a
// rename) derive from it and override only those, so the rest of the
// interface is written once.
//
// Thread-safety: as the base. Errors: the base's.

#include <memory>
#include <string>
#include <vector>

#include "io/file_system.h"

namespace strata {

class ForwardingFileSystem : public FileSystem {
 public:
  // `base` must outlive this file system.
  explicit ForwardingFileSystem(FileSystem& base) : base_(base) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                WriteMode mode) override {
    return base_.NewWritableFile(path, mode);
  }
  using FileSystem::NewWritableFile;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    return base_.NewRandomAccessFile(path);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return base_.ReadFile(path);
  }
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    return base_.RenameFile(from, to);
  }
  absl::Status LinkFile(const std::string& from, const std::string& to) override {
    return base_.LinkFile(from, to);
  }
  absl::Status SyncDir(const std::string& path) override { return base_.SyncDir(path); }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) override {
    return base_.ListDir(path);
  }
  absl::Status CreateDir(const std::string& path) override { return base_.CreateDir(path); }
  absl::Status CreateDirs(const std::string& path) override { return base_.CreateDirs(path); }
  absl::Status RemoveFile(const std::string& path) override { return base_.RemoveFile(path); }
  absl::Status RemoveDir(const std::string& path) override { return base_.RemoveDir(path); }
  absl::Status RemoveAll(const std::string& path) override { return base_.RemoveAll(path); }
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    return base_.FileSize(path);
  }
  absl::StatusOr<bool> Exists(const std::string& path) override { return base_.Exists(path); }
  absl::StatusOr<bool> IsDirectory(const std::string& path) override {
    return base_.IsDirectory(path);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return base_.LockFile(path);
  }

 protected:
  FileSystem& base() { return base_; }

 private:
  FileSystem& base_;
};

}  // namespace strata
