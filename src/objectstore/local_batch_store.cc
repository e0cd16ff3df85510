#include "objectstore/local_batch_store.h"

#include <algorithm>
#include <random>

#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::objectstore {
namespace {

constexpr char kStagingDirName[] = ".staging";
// Directory depth List() descends; keys are at most kMaxKeyBytes long, so
// this bounds nothing a valid key needs.
constexpr int kMaxListDepth = 64;

std::string ParentOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

absl::StatusOr<std::unique_ptr<LocalBatchStore>> LocalBatchStore::Open(FileSystem& fs,
                                                                       std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  STRATA_RETURN_IF_ERROR(fs.CreateDirs(root + "/" + kStagingDirName));
  std::random_device random;
  std::string name_prefix = fmt::format("{:08x}{:08x}", random(), random());
  return std::unique_ptr<LocalBatchStore>(
      new LocalBatchStore(fs, std::move(root), std::move(name_prefix)));
}

LocalBatchStore::LocalBatchStore(FileSystem& fs, std::string root, std::string staging_name_prefix)
    : fs_(fs), root_(std::move(root)), staging_name_prefix_(std::move(staging_name_prefix)) {}

std::string LocalBatchStore::PathOf(std::string_view key) const {
  return fmt::format("{}/{}", root_, key);
}

absl::Status LocalBatchStore::PutIfAbsent(std::string_view key, std::string_view data) {
  return PutStaged(key, [&](WritableFile& file) { return file.Append(data); });
}

absl::Status LocalBatchStore::PutStreamIfAbsent(std::string_view key, uint64_t size,
                                                const PartReader& read) {
  return PutStaged(key, [&](WritableFile& file) -> absl::Status {
    for (uint64_t offset = 0; offset < size;) {
      const size_t length =
          static_cast<size_t>(std::min<uint64_t>(kLocalStreamChunkBytes, size - offset));
      STRATA_ASSIGN_OR_RETURN(std::string part, read(offset, length));
      if (part.size() != length) {
        return absl::InternalError(fmt::format("streamed put of {}: {} bytes read at {}, not {}",
                                               key, part.size(), offset, length));
      }
      STRATA_RETURN_IF_ERROR(file.Append(part));
      offset += length;
    }
    return absl::OkStatus();
  });
}

absl::Status LocalBatchStore::PutStaged(std::string_view key,
                                        const std::function<absl::Status(WritableFile&)>& write) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  std::string staged = fmt::format("{}/{}/{}-{}", root_, kStagingDirName, staging_name_prefix_,
                                   next_staging_number_.fetch_add(1));
  absl::Status status = [&]() -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(auto file, fs_.NewWritableFile(staged, WriteMode::kCreateExclusive));
    STRATA_RETURN_IF_ERROR(write(*file));
    STRATA_RETURN_IF_ERROR(file->Sync());
    STRATA_RETURN_IF_ERROR(file->Close());
    std::string path = PathOf(key);
    STRATA_RETURN_IF_ERROR(fs_.CreateDirs(ParentOf(path)));
    absl::Status linked = fs_.LinkFile(staged, path);
    if (absl::IsAlreadyExists(linked)) {
      return absl::AlreadyExistsError(
          fmt::format("object {} already exists in {}", key, Describe()));
    }
    STRATA_RETURN_IF_ERROR(linked);
    return fs_.SyncDir(ParentOf(path));
  }();
  absl::Status removed = fs_.RemoveFile(staged);
  if (status.ok() && !removed.ok() && !absl::IsNotFound(removed)) return removed;
  return status;
}

absl::StatusOr<std::string> LocalBatchStore::Get(std::string_view key, uint64_t offset,
                                                 uint64_t length) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  if (length == 0) return absl::InvalidArgumentError("object read of 0 bytes");
  std::string path = PathOf(key);
  STRATA_ASSIGN_OR_RETURN(auto file, fs_.NewRandomAccessFile(path));
  STRATA_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  if (offset >= size) return std::string();
  uint64_t n = std::min(length, size - offset);
  return file->ReadExact(offset, n);
}

absl::StatusOr<ObjectInfo> LocalBatchStore::Head(std::string_view key) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  std::string path = PathOf(key);
  absl::StatusOr<bool> directory = fs_.IsDirectory(path);
  if (directory.ok() && *directory) {
    return absl::NotFoundError(fmt::format("no object {} in {}", key, Describe()));
  }
  STRATA_ASSIGN_OR_RETURN(uint64_t size, fs_.FileSize(path));
  return ObjectInfo{std::string(key), size};
}

absl::Status LocalBatchStore::CollectKeys(const std::string& dir, std::string_view prefix,
                                          std::vector<std::string>& keys, int depth) {
  if (depth > kMaxListDepth) return absl::OkStatus();
  std::string path = dir.empty() ? root_ : PathOf(dir.substr(0, dir.size() - 1));
  absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(path);
  if (absl::IsNotFound(names.status())) return absl::OkStatus();  // deleted meanwhile
  STRATA_RETURN_IF_ERROR(names.status());
  for (const std::string& name : *names) {
    if (name.empty() || name[0] == '.') continue;  // .staging/ and anything not a key
    std::string key = dir + name;
    // Only names that can still lead to a key starting with `prefix`.
    size_t common = std::min(key.size(), prefix.size());
    if (key.compare(0, common, prefix.substr(0, common)) != 0) continue;
    absl::StatusOr<bool> is_dir = fs_.IsDirectory(PathOf(key));
    if (absl::IsNotFound(is_dir.status())) continue;
    STRATA_RETURN_IF_ERROR(is_dir.status());
    if (*is_dir) {
      STRATA_RETURN_IF_ERROR(CollectKeys(key + "/", prefix, keys, depth + 1));
    } else if (key.size() >= prefix.size()) {
      keys.push_back(std::move(key));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ListPage> LocalBatchStore::List(std::string_view prefix,
                                               std::string_view continuation, int max_keys) {
  if (max_keys < 1 || max_keys > kMaxKeysPerPage) {
    return absl::InvalidArgumentError(
        fmt::format("list page of {} keys (1 to {})", max_keys, kMaxKeysPerPage));
  }
  std::vector<std::string> keys;
  STRATA_RETURN_IF_ERROR(CollectKeys("", prefix, keys, 0));
  std::sort(keys.begin(), keys.end());
  auto first = continuation.empty()
                   ? keys.begin()
                   : std::upper_bound(keys.begin(), keys.end(), std::string(continuation));
  ListPage page;
  for (auto it = first; it != keys.end() && page.objects.size() < size_t(max_keys); ++it) {
    absl::StatusOr<uint64_t> size = fs_.FileSize(PathOf(*it));
    if (absl::IsNotFound(size.status())) continue;  // deleted since the walk
    STRATA_RETURN_IF_ERROR(size.status());
    page.objects.push_back(ObjectInfo{*it, *size});
  }
  if (!page.objects.empty() &&
      std::upper_bound(keys.begin(), keys.end(), page.objects.back().key) != keys.end()) {
    page.next = page.objects.back().key;
  }
  return page;
}

absl::Status LocalBatchStore::DeleteMany(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  for (const std::string& key : keys) {
    absl::Status removed = fs_.RemoveFile(PathOf(key));
    if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  }
  return absl::OkStatus();
}

}  // namespace strata::objectstore
