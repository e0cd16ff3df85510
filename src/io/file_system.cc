#include "io/file_system.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

#include "absl/strings/cord.h"
#include "fmt/format.h"

namespace strata {
namespace {

constexpr char kErrnoPayloadUrl[] = "type.strata.dev/io.errno";

absl::StatusCode CodeForErrno(int error_number) {
  switch (error_number) {
    case ENOENT:
    case ENOTDIR:
      return absl::StatusCode::kNotFound;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::StatusCode::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EAGAIN:
    case EBUSY:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case ETIMEDOUT:
    case ESTALE:
      return absl::StatusCode::kUnavailable;
    case ENOTEMPTY:
    case EISDIR:
    case EXDEV:
    case ELOOP:
    case EBADF:
      return absl::StatusCode::kFailedPrecondition;
    case EINVAL:
    case ENAMETOOLONG:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::StatusOr<std::string> RandomAccessFile::ReadExact(uint64_t offset, size_t n) const {
  std::string out(n, '\0');
  absl::StatusOr<size_t> got = Read(offset, n, out.data());
  if (!got.ok()) return got.status();
  if (*got != n) {
    return absl::OutOfRangeError(fmt::format("read {}: wanted {} bytes at offset {}, file has {}",
                                             path(), n, offset, offset + *got));
  }
  return out;
}

absl::Status FileSystem::LinkFile(const std::string& from, const std::string& to) {
  return absl::UnimplementedError(
      fmt::format("link {} to {}: this file system cannot link files", from, to));
}

absl::Status WriteFile(FileSystem& fs, const std::string& path, std::string_view data) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.NewWritableFile(path);
  if (!file.ok()) return file.status();
  absl::Status status = (*file)->Append(data);
  if (status.ok()) status = (*file)->Sync();
  absl::Status close_status = (*file)->Close();
  return status.ok() ? close_status : status;
}

absl::Status ErrnoToStatus(int error_number, std::string_view operation, std::string_view path) {
  const char* description = strerrordesc_np(error_number);
  const char* name = strerrorname_np(error_number);
  std::string message = fmt::format(
      "{} {}: {} ({})", operation, path, description != nullptr ? description : "unknown error",
      name != nullptr ? std::string(name) : fmt::format("errno {}", error_number));
  absl::Status status(CodeForErrno(error_number), message);
  status.SetPayload(kErrnoPayloadUrl, absl::Cord(std::to_string(error_number)));
  return status;
}

std::optional<int> ErrnoOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrnoPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  std::string text(*payload);
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace strata
