#pragma once

// The decoded points of batches' metrics files, kept across Prometheus
// queries (docs/prometheus.md, "Decoded batches"). A batch's files never
// change once committed: compaction and retention take a batch out of the
// catalog and compaction writes a new one under a new id, so a file's path
// (which names its batch's id) keys its decoded points for as long as
// anyone asks for it. The cache holds at most a bound of bytes (the
// estimate DecodedMetricsFile::bytes gives) and drops the least recently
// used files past it; a file larger than the whole bound is answered but
// not kept.
//
// Owner: the Api (api_server.h) makes one of ApiOptions::promql_cache_bytes
// (`strata serve --promql-cache-mb`) and hands it to every series source
// it makes; none when that bound is 0.
//
// Thread-safety: every method may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "api/prometheus_points.h"
#include "common/mutex.h"
#include "query/typed_result.h"

namespace strata::api::internal {

class PointCache {
 public:
  // The default bound (`strata serve --promql-cache-mb`): 256 MiB.
  static constexpr size_t kDefaultMaxBytes = size_t{256} << 20;

  explicit PointCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The decoded points of `path`, or null; a hit becomes the most recently
  // used.
  std::shared_ptr<const DecodedMetricsFile> Find(const std::string& path);
  // Keeps `file` as `path`'s (replacing any), then drops the least recently
  // used files until the bytes held are within the bound. A file larger
  // than the bound is not kept.
  void Add(const std::string& path, std::shared_ptr<const DecodedMetricsFile> file);

  // The most points of one file worth decoding: more than the bound could
  // hold at kLeastBytesPerPoint bytes each.
  static constexpr size_t kLeastBytesPerPoint = 64;
  size_t MostRows() const { return max_bytes_ / kLeastBytesPerPoint; }
  // Files found to hold more than MostRows() points, so that later queries
  // read them from DuckDB without trying to decode them again (at most
  // kMostTooLarge paths, forgotten all at once past that).
  static constexpr size_t kMostTooLarge = 10'000;
  void MarkTooLarge(const std::string& path);
  bool IsTooLarge(const std::string& path) const;

  size_t bytes() const;
  size_t files() const;
  size_t max_bytes() const { return max_bytes_; }

 private:
  struct Entry {
    std::string path;
    std::shared_ptr<const DecodedMetricsFile> file;
  };
  const size_t max_bytes_;
  mutable Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> by_path_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<std::string> too_large_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::api::internal
