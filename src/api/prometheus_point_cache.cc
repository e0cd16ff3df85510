// PointCache (prometheus_point_cache.h): an LRU list of decoded metrics
// files bounded by their estimated bytes.

#include "api/prometheus_point_cache.h"

#include <utility>

namespace strata::api::internal {

std::shared_ptr<const DecodedMetricsFile> PointCache::Find(const std::string& path) {
  MutexLock lock(&mu_);
  const auto found = by_path_.find(path);
  if (found == by_path_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, found->second);
  return found->second->file;
}

void PointCache::Add(const std::string& path, std::shared_ptr<const DecodedMetricsFile> file) {
  MutexLock lock(&mu_);
  if (const auto found = by_path_.find(path); found != by_path_.end()) {
    bytes_ -= found->second->file->bytes;
    lru_.erase(found->second);
    by_path_.erase(found);
  }
  if (file->bytes > max_bytes_) return;
  bytes_ += file->bytes;
  lru_.push_front({path, std::move(file)});
  by_path_[path] = lru_.begin();
  while (bytes_ > max_bytes_) {
    const Entry& last = lru_.back();
    bytes_ -= last.file->bytes;
    by_path_.erase(last.path);
    lru_.pop_back();
  }
}

void PointCache::MarkTooLarge(const std::string& path) {
  MutexLock lock(&mu_);
  if (too_large_.size() >= kMostTooLarge) too_large_.clear();
  too_large_.insert(path);
}

bool PointCache::IsTooLarge(const std::string& path) const {
  MutexLock lock(&mu_);
  return too_large_.contains(path);
}

size_t PointCache::bytes() const {
  MutexLock lock(&mu_);
  return bytes_;
}

size_t PointCache::files() const {
  MutexLock lock(&mu_);
  return lru_.size();
}

}  // namespace strata::api::internal
