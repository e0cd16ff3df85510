#include "storage/offload/read_cache.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::storage {

CachedFile::~CachedFile() { cache_->Release(name_); }

std::string ReadCache::NameOf(const std::string& key) {
  std::string name = key;
  std::replace(name.begin(), name.end(), '/', '+');
  return name;
}

absl::StatusOr<std::unique_ptr<ReadCache>> ReadCache::Open(FileSystem& fs, std::string dir,
                                                           objectstore::BatchStore& store,
                                                           ReadCacheOptions options) {
  if (options.max_bytes == 0 || options.fetch_chunk_bytes == 0) {
    return absl::InvalidArgumentError("the read cache needs a positive size and chunk");
  }
  STRATA_RETURN_IF_ERROR(fs.CreateDirs(dir));
  std::unique_ptr<ReadCache> cache(new ReadCache(fs, std::move(dir), store, options));
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.ListDir(cache->dir_));
  MutexLock lock(&cache->mu_);
  for (const std::string& name : names) {
    const std::string path = cache->PathOf(name);
    STRATA_ASSIGN_OR_RETURN(const bool is_dir, fs.IsDirectory(path));
    if (is_dir) continue;  // never written by the cache; left alone
    if (name.front() == '~') {
      // A download a crash interrupted.
      STRATA_RETURN_IF_ERROR(fs.RemoveFile(path));
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(const uint64_t size, fs.FileSize(path));
    Entry& entry = cache->entries_[name];
    entry.state = State::kReady;
    entry.size = size;
    entry.lru_position = cache->lru_.insert(cache->lru_.end(), name);
    cache->stats_.bytes_cached += size;
    ++cache->stats_.files_cached;
  }
  cache->TrimLocked();
  return cache;
}

absl::StatusOr<std::unique_ptr<CachedFile>> ReadCache::Fetch(const std::string& key,
                                                             uint64_t size) {
  const std::string name = NameOf(key);
  const std::string path = PathOf(name);
  {
    MutexLock lock(&mu_);
    bool counted = false;
    while (true) {
      auto it = entries_.find(name);
      if (it == entries_.end()) break;  // nobody has it: download below
      Entry& entry = it->second;
      if (entry.state == State::kDownloading) {
        if (!counted) ++stats_.misses;
        counted = true;
        // The downloader always ends by marking the entry ready or erasing
        // it, and signals; the wait has no other end.
        downloaded_cv_.Wait(&mu_);
        continue;
      }
      if (entry.size == size) {
        if (!counted) ++stats_.hits;
        ++entry.handles;
        lru_.splice(lru_.end(), lru_, entry.lru_position);
        return std::unique_ptr<CachedFile>(new CachedFile(this, name, path));
      }
      // A file of another length (adopted at start, or an object that
      // changed): fetch again once nobody holds it.
      if (entry.handles > 0) {
        return absl::FailedPreconditionError(fmt::format(
            "{}: the cached file holds {} bytes, not {}, and is in use", path, entry.size, size));
      }
      stats_.bytes_cached -= entry.size;
      --stats_.files_cached;
      lru_.erase(entry.lru_position);
      entries_.erase(it);
      break;
    }
    if (!counted) ++stats_.misses;
    Entry& entry = entries_[name];
    entry.state = State::kDownloading;
    entry.size = size;
  }
  absl::Status downloaded = Download(key, size, path);
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  downloaded_cv_.SignalAll();
  if (!downloaded.ok()) {
    entries_.erase(it);
    return downloaded;
  }
  Entry& entry = it->second;
  entry.state = State::kReady;
  entry.handles = 1;
  entry.lru_position = lru_.insert(lru_.end(), name);
  stats_.bytes_fetched += size;
  stats_.bytes_cached += size;
  ++stats_.files_cached;
  TrimLocked();
  return std::unique_ptr<CachedFile>(new CachedFile(this, name, path));
}

absl::Status ReadCache::Download(const std::string& key, uint64_t size, const std::string& path) {
  const std::string temp = PathOf(fmt::format("~{}.tmp", next_temp_.fetch_add(1)));
  absl::Status status = [&]() -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                            fs_.NewWritableFile(temp, WriteMode::kCreateExclusive));
    uint64_t offset = 0;
    while (offset < size) {
      const uint64_t want = std::min(options_.fetch_chunk_bytes, size - offset);
      STRATA_ASSIGN_OR_RETURN(std::string chunk, store_.Get(key, offset, want));
      if (chunk.empty()) break;  // the object ends early
      STRATA_RETURN_IF_ERROR(file->Append(chunk));
      offset += chunk.size();
    }
    if (offset == size) {
      // The object must also end here.
      STRATA_ASSIGN_OR_RETURN(std::string more, store_.Get(key, size, 1));
      offset += more.size();
    }
    if (offset != size) {
      return absl::DataLossError(fmt::format("object {}: {} bytes, not the {} meta.json lists{}",
                                             key, offset, size, offset > size ? " or more" : ""));
    }
    STRATA_RETURN_IF_ERROR(file->Sync());
    STRATA_RETURN_IF_ERROR(file->Close());
    return fs_.RenameFile(temp, path);
  }();
  if (!status.ok()) {
    absl::Status removed = fs_.RemoveFile(temp);
    (void)removed;  // a leftover temporary is removed at the next start
  }
  return status;
}

void ReadCache::Release(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return;
  --it->second.handles;
  TrimLocked();
}

void ReadCache::TrimLocked() {
  auto it = lru_.begin();
  while (stats_.bytes_cached > options_.max_bytes && it != lru_.end()) {
    auto entry = entries_.find(*it);
    if (entry->second.handles > 0) {
      ++it;
      continue;
    }
    // A failed removal keeps the entry: its bytes still take disk space.
    if (!fs_.RemoveFile(PathOf(*it)).ok()) {
      ++it;
      continue;
    }
    stats_.bytes_cached -= entry->second.size;
    --stats_.files_cached;
    ++stats_.files_removed;
    entries_.erase(entry);
    it = lru_.erase(it);
  }
}

ReadCacheStats ReadCache::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace strata::storage
