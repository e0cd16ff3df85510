#include "io/posix_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "common/path.h"
#include "fmt/format.h"

namespace strata {
namespace {

// Retries a system call that returns -1 with errno == EINTR.
template <typename Call>
auto RetryOnEintr(Call call) {
  while (true) {
    auto result = call();
    if (!(result == -1 && errno == EINTR)) return result;
  }
}

absl::Status CloseFd(int fd, const std::string& path) {
  // close(2) must not be retried on EINTR on Linux: the descriptor is
  // already released, and a retry could close a descriptor another thread
  // just opened.
  if (::close(fd) != 0 && errno != EINTR) return ErrnoToStatus(errno, "close", path);
  return absl::OkStatus();
}

// Writes all of `data` at the descriptor's offset, looping over short writes.
absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t written = RetryOnEintr([&] { return ::write(fd, data.data(), data.size()); });
    if (written < 0) return ErrnoToStatus(errno, "write", path);
    if (written == 0) return ErrnoToStatus(EIO, "write (no progress)", path);
    data.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> PreadAll(int fd, uint64_t offset, size_t n, char* out,
                                const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = RetryOnEintr(
        [&] { return ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done)); });
    if (got < 0)
      return ErrnoToStatus(errno, fmt::format("pread at offset {}", offset + done), path);
    if (got == 0) break;  // end of file
    done += static_cast<size_t>(got);
  }
  return done;
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
    buffer_.reserve(PosixFileSystem::kWriteBufferBytes);
  }
  ~PosixWritableFile() override {
    if (fd_ >= 0) (void)CloseFd(fd_, path_);
  }
  PosixWritableFile(const PosixWritableFile&) = delete;
  PosixWritableFile& operator=(const PosixWritableFile&) = delete;

  absl::Status Append(std::string_view data) override {
    if (absl::Status usable = CheckUsable("append"); !usable.ok()) return usable;
    if (buffer_.size() + data.size() > PosixFileSystem::kWriteBufferBytes) {
      if (absl::Status flushed = FlushBuffer(); !flushed.ok()) return flushed;
    }
    if (data.size() <= PosixFileSystem::kWriteBufferBytes) {
      buffer_.append(data.data(), data.size());
    } else if (absl::Status written = Remember(WriteAll(fd_, data, path_)); !written.ok()) {
      return written;
    }
    size_ += data.size();
    return absl::OkStatus();
  }

  absl::Status Flush() override {
    if (absl::Status usable = CheckUsable("flush"); !usable.ok()) return usable;
    return FlushBuffer();
  }

  absl::Status Sync() override {
    if (absl::Status usable = CheckUsable("sync"); !usable.ok()) return usable;
    if (absl::Status flushed = FlushBuffer(); !flushed.ok()) return flushed;
    if (RetryOnEintr([&] { return ::fdatasync(fd_); }) != 0) {
      return Remember(ErrnoToStatus(errno, "fdatasync", path_));
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0)
      return absl::FailedPreconditionError(fmt::format("close {}: already closed", path_));
    absl::Status status = first_error_.ok() ? FlushBuffer() : absl::OkStatus();
    absl::Status closed = CloseFd(fd_, path_);
    fd_ = -1;
    return status.ok() ? closed : status;
  }

  uint64_t size() const override { return size_; }
  const std::string& path() const override { return path_; }

 private:
  absl::Status CheckUsable(std::string_view operation) const {
    if (fd_ < 0) {
      return absl::FailedPreconditionError(fmt::format("{} {}: file is closed", operation, path_));
    }
    return first_error_;
  }

  absl::Status FlushBuffer() {
    if (buffer_.empty()) return absl::OkStatus();
    absl::Status status = WriteAll(fd_, buffer_, path_);
    buffer_.clear();
    return Remember(std::move(status));
  }

  // Poisons the file on the first failure (see file_system.h, invariant 4).
  absl::Status Remember(absl::Status status) {
    if (!status.ok() && first_error_.ok()) first_error_ = status;
    return status;
  }

  const std::string path_;
  int fd_;
  std::string buffer_;
  uint64_t size_ = 0;
  absl::Status first_error_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixRandomAccessFile() override { (void)CloseFd(fd_, path_); }
  PosixRandomAccessFile(const PosixRandomAccessFile&) = delete;
  PosixRandomAccessFile& operator=(const PosixRandomAccessFile&) = delete;

  absl::StatusOr<size_t> Read(uint64_t offset, size_t n, char* out) const override {
    return PreadAll(fd_, offset, n, out, path_);
  }

  absl::StatusOr<uint64_t> Size() const override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return ErrnoToStatus(errno, "fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const int fd_;
};

// Holds flock(LOCK_EX) on its own descriptor; closing it releases the lock.
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixFileLock() override { (void)CloseFd(fd_, path_); }
  PosixFileLock(const PosixFileLock&) = delete;
  PosixFileLock& operator=(const PosixFileLock&) = delete;

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const int fd_;
};

absl::StatusOr<int> OpenForRead(const std::string& path) {
  int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
  if (fd < 0) return ErrnoToStatus(errno, "open for reading", path);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WritableFile>> PosixFileSystem::NewWritableFile(
    const std::string& path, WriteMode mode) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
  flags |= mode == WriteMode::kCreateExclusive ? O_EXCL : O_TRUNC;
  int fd = RetryOnEintr([&] { return ::open(path.c_str(), flags, 0644); });
  if (fd < 0) return ErrnoToStatus(errno, "open for writing", path);
  return std::make_unique<PosixWritableFile>(path, fd);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> PosixFileSystem::NewRandomAccessFile(
    const std::string& path) {
  absl::StatusOr<int> fd = OpenForRead(path);
  if (!fd.ok()) return fd.status();
  return std::make_unique<PosixRandomAccessFile>(path, *fd);
}

absl::StatusOr<std::string> PosixFileSystem::ReadFile(const std::string& path) {
  absl::StatusOr<int> fd = OpenForRead(path);
  if (!fd.ok()) return fd.status();
  std::string contents;
  absl::Status status;
  struct stat st;
  if (::fstat(*fd, &st) != 0) {
    status = ErrnoToStatus(errno, "fstat", path);
  } else if (S_ISDIR(st.st_mode)) {
    status = ErrnoToStatus(EISDIR, "read", path);
  } else {
    // Read until end of file rather than trusting st_size: the file may grow.
    contents.resize(std::max<size_t>(static_cast<size_t>(st.st_size), 4096));
    size_t done = 0;
    while (true) {
      absl::StatusOr<size_t> got =
          PreadAll(*fd, done, contents.size() - done, contents.data() + done, path);
      if (!got.ok()) {
        status = got.status();
        break;
      }
      done += *got;
      if (done < contents.size()) break;
      contents.resize(contents.size() * 2);
    }
    contents.resize(done);
  }
  absl::Status closed = CloseFd(*fd, path);
  if (!status.ok()) return status;
  if (!closed.ok()) return closed;
  return contents;
}

absl::Status PosixFileSystem::RenameFile(const std::string& from, const std::string& to) {
  if (RetryOnEintr([&] { return ::rename(from.c_str(), to.c_str()); }) != 0) {
    return ErrnoToStatus(errno, "rename", fmt::format("{} to {}", from, to));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::LinkFile(const std::string& from, const std::string& to) {
  if (RetryOnEintr([&] { return ::link(from.c_str(), to.c_str()); }) != 0) {
    return ErrnoToStatus(errno, "link", fmt::format("{} to {}", from, to));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::SyncDir(const std::string& path) {
  int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) return ErrnoToStatus(errno, "open directory", path);
  absl::Status status;
  if (RetryOnEintr([&] { return ::fsync(fd); }) != 0) {
    status = ErrnoToStatus(errno, "fsync directory", path);
  }
  absl::Status closed = CloseFd(fd, path);
  return status.ok() ? closed : status;
}

absl::StatusOr<std::vector<std::string>> PosixFileSystem::ListDir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoToStatus(errno, "opendir", path);
  std::vector<std::string> names;
  absl::Status status;
  while (true) {
    errno = 0;
    struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) status = ErrnoToStatus(errno, "readdir", path);
      break;
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  if (!status.ok()) return status;
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status PosixFileSystem::CreateDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0) return ErrnoToStatus(errno, "mkdir", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::CreateDirs(const std::string& path) {
  // Walk the prefixes "a", "a/b", "a/b/c", creating what is missing.
  size_t end = 0;
  while (end != std::string::npos) {
    end = path.find('/', end + 1);
    std::string prefix = path.substr(0, end);
    if (prefix.empty() || prefix.back() == '/') continue;
    if (::mkdir(prefix.c_str(), 0755) == 0) continue;
    int error_number = errno;
    if (error_number != EEXIST) return ErrnoToStatus(error_number, "mkdir", prefix);
    struct stat st;
    if (::stat(prefix.c_str(), &st) != 0) return ErrnoToStatus(errno, "stat", prefix);
    if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "mkdir", prefix);
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return ErrnoToStatus(errno, "unlink", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::RemoveDir(const std::string& path) {
  if (::rmdir(path.c_str()) != 0) return ErrnoToStatus(errno, "rmdir", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::RemoveAll(const std::string& path) {
  absl::StatusOr<bool> is_dir = IsDirectory(path);
  if (!is_dir.ok()) return is_dir.status();
  if (!*is_dir) return RemoveFile(path);
  absl::StatusOr<std::vector<std::string>> names = ListDir(path);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    absl::Status removed = RemoveAll(JoinPath(path, name));
    // Something else may have removed the entry since ListDir; that is fine.
    if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  }
  return RemoveDir(path);
}

absl::StatusOr<uint64_t> PosixFileSystem::FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoToStatus(errno, "stat", path);
  if (S_ISDIR(st.st_mode)) return ErrnoToStatus(EISDIR, "file size of", path);
  return static_cast<uint64_t>(st.st_size);
}

absl::StatusOr<bool> PosixFileSystem::Exists(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return ErrnoToStatus(errno, "lstat", path);
}

absl::StatusOr<bool> PosixFileSystem::IsDirectory(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return ErrnoToStatus(errno, "lstat", path);
  return S_ISDIR(st.st_mode);
}

absl::StatusOr<std::unique_ptr<FileLock>> PosixFileSystem::LockFile(const std::string& path) {
  int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644); });
  if (fd < 0) return ErrnoToStatus(errno, "open for locking", path);
  if (RetryOnEintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
    absl::Status status = ErrnoToStatus(errno, "lock", path);
    (void)CloseFd(fd, path);
    return status;
  }
  return std::make_unique<PosixFileLock>(path, fd);
}

}  // namespace strata
