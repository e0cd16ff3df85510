// PointCache (prometheus_point_cache.h): an LRU list of decoded metrics
// files' catalogs and metrics, bounded by their estimated bytes.

#include "api/prometheus_point_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace strata::api::internal {

std::string PointCache::CatalogKey(std::string_view path) {
  return absl::StrCat("c\x1f", std::string(path));
}

std::string PointCache::PointsKey(std::string_view path, std::string_view otlp_name) {
  // A path holds no \x1f: the name after it cannot make another key.
  return absl::StrCat("p\x1f", std::string(path), "\x1f", std::string(otlp_name));
}

std::string PointCache::LabelShapesKey(std::string_view path, std::string_view otlp_name) {
  return absl::StrCat("l\x1f", std::string(path), "\x1f", std::string(otlp_name));
}

const PointCache::Entry* PointCache::Touch(const std::string& key) {
  const auto found = by_key_.find(key);
  if (found == by_key_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, found->second);
  return &*found->second;
}

std::shared_ptr<const DecodedMetricsFile> PointCache::Find(const std::string& key) {
  MutexLock lock(&mu_);
  const Entry* entry = Touch(key);
  return entry == nullptr ? nullptr : entry->file;
}

std::shared_ptr<const FileCatalog> PointCache::FindCatalog(const std::string& key) {
  MutexLock lock(&mu_);
  const Entry* entry = Touch(key);
  return entry == nullptr ? nullptr : entry->catalog;
}

void PointCache::Add(const std::string& key, std::shared_ptr<const DecodedMetricsFile> file) {
  MutexLock lock(&mu_);
  points_added_ += file->points.rows;
  const size_t bytes = file->bytes;
  Keep({.key = key, .file = std::move(file), .catalog = nullptr, .bytes = bytes});
}

void PointCache::AddLabelShapes(const std::string& key,
                                std::shared_ptr<const DecodedMetricsFile> shapes) {
  MutexLock lock(&mu_);
  const size_t bytes = shapes->bytes;
  Keep({.key = key, .file = std::move(shapes), .catalog = nullptr, .bytes = bytes});
}

void PointCache::AddCatalog(const std::string& key, std::shared_ptr<const FileCatalog> catalog) {
  MutexLock lock(&mu_);
  const size_t bytes = catalog->bytes;
  Keep({.key = key, .file = nullptr, .catalog = std::move(catalog), .bytes = bytes});
}

void PointCache::Keep(Entry entry) {
  if (const auto found = by_key_.find(entry.key); found != by_key_.end()) {
    bytes_ -= found->second->bytes;
    lru_.erase(found->second);
    by_key_.erase(found);
  }
  if (entry.bytes > max_bytes_) return;
  bytes_ += entry.bytes;
  const std::string key = entry.key;
  lru_.push_front(std::move(entry));
  by_key_[key] = lru_.begin();
  while (bytes_ > max_bytes_) {
    const Entry& last = lru_.back();
    bytes_ -= last.bytes;
    by_key_.erase(last.key);
    lru_.pop_back();
  }
}

void PointCache::MarkTooLarge(const std::string& key) {
  MutexLock lock(&mu_);
  if (too_large_.size() >= kMostTooLarge) too_large_.clear();
  too_large_.insert(key);
}

bool PointCache::IsTooLarge(const std::string& key) const {
  MutexLock lock(&mu_);
  return too_large_.contains(key);
}

size_t PointCache::bytes() const {
  MutexLock lock(&mu_);
  return bytes_;
}

size_t PointCache::entries() const {
  MutexLock lock(&mu_);
  return lru_.size();
}

size_t PointCache::points_added() const {
  MutexLock lock(&mu_);
  return points_added_;
}

void PointCache::CountDecodeQuery() {
  MutexLock lock(&mu_);
  ++decode_queries_;
}

size_t PointCache::decode_queries() const {
  MutexLock lock(&mu_);
  return decode_queries_;
}

void PointCache::CountCatalogQuery() {
  MutexLock lock(&mu_);
  ++catalog_queries_;
}

size_t PointCache::catalog_queries() const {
  MutexLock lock(&mu_);
  return catalog_queries_;
}

void PointCache::CountLabelQuery() {
  MutexLock lock(&mu_);
  ++label_queries_;
}

size_t PointCache::label_queries() const {
  MutexLock lock(&mu_);
  return label_queries_;
}

}  // namespace strata::api::internal
