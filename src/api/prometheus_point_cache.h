#pragma once

// The decoded points of batches' metrics files, kept across Prometheus
// queries (docs/prometheus.md, "Decoded batches"). A batch's files never
// change once committed: compaction and retention take a batch out of the
// catalog and compaction writes a new one under a new id, so a file's path
// (which names its batch's id) keys what was decoded from it for as long
// as anyone asks for it. Two kinds of entries, each under its own key:
// a file's catalog (FileCatalog: its metric variants and their times,
// CatalogKey) and the points of one metric of a file (DecodedMetricsFile,
// PointsKey), so that a query decodes only the metrics it selects (a
// query that needs most of a file's metrics decodes them in one read and
// keeps each metric under its own key all the same). A third kind serves
// the listings (series, labels, label values): the label shapes of one
// metric of a file (a DecodedMetricsFile of one row per distinct identity,
// sum presence, bounds, bucket count and quantiles, LabelShapesKey), small
// beside its points, so that a listing never decodes or keeps points and
// a warm listing reads no file even when the points of its files are more
// than the bound holds. The
// cache holds at most a bound of bytes (the estimates the entries' `bytes`
// give) and drops the least recently used entries past it; an entry larger
// than the whole bound is answered but not kept.
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
#include <string_view>
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

  // The keys of a file's catalog and of one metric's points in it.
  static std::string CatalogKey(std::string_view path);
  static std::string PointsKey(std::string_view path, std::string_view otlp_name);
  static std::string LabelShapesKey(std::string_view path, std::string_view otlp_name);

  // The decoded points kept under `key`, or null; a hit becomes the most
  // recently used.
  std::shared_ptr<const DecodedMetricsFile> Find(const std::string& key);
  // Keeps `file` under `key` (replacing any entry), then drops the least
  // recently used entries until the bytes held are within the bound. An
  // entry larger than the bound is not kept. Counts its rows in
  // points_added().
  void Add(const std::string& key, std::shared_ptr<const DecodedMetricsFile> file);
  // The same for a metric's label shapes (found with Find), not counted in
  // points_added().
  void AddLabelShapes(const std::string& key, std::shared_ptr<const DecodedMetricsFile> shapes);
  // The same for a file's catalog.
  std::shared_ptr<const FileCatalog> FindCatalog(const std::string& key);
  void AddCatalog(const std::string& key, std::shared_ptr<const FileCatalog> catalog);

  // The most points of one metric of a file (or rows of a file's catalog)
  // worth decoding: more than the bound could hold at kLeastBytesPerPoint
  // bytes each.
  static constexpr size_t kLeastBytesPerPoint = 64;
  size_t MostRows() const { return max_bytes_ / kLeastBytesPerPoint; }
  // Keys found to hold more than MostRows() rows, so that later queries
  // read them from DuckDB without trying to decode them again (at most
  // kMostTooLarge keys, forgotten all at once past that).
  static constexpr size_t kMostTooLarge = 10'000;
  void MarkTooLarge(const std::string& key);
  bool IsTooLarge(const std::string& key) const;

  size_t bytes() const;
  size_t entries() const;
  // The rows of every points entry ever given to Add (kept or not): what
  // this cache has had decoded.
  size_t points_added() const;
  // The point queries run to fill this cache (one per metric of a file,
  // or one for several or all metrics of a file, the last with its
  // catalog; prometheus_points.cc counts them with CountDecodeQuery).
  // Identity queries are not counted.
  void CountDecodeQuery();
  size_t decode_queries() const;
  // The grouped queries run for a file's catalog alone (not counted in
  // decode_queries): a file decoded whole has none.
  void CountCatalogQuery();
  size_t catalog_queries() const;
  // The queries run for label shapes alone (one per file, for the metrics
  // of it a listing needs whose shapes and points the cache lacks).
  void CountLabelQuery();
  size_t label_queries() const;
  size_t max_bytes() const { return max_bytes_; }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const DecodedMetricsFile> file;  // a points entry, else null
    std::shared_ptr<const FileCatalog> catalog;      // a catalog entry, else null
    size_t bytes = 0;
  };
  // Keeps `entry` (replacing any of its key) and evicts past the bound.
  void Keep(Entry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The entry of `key` made the most recently used, or null.
  const Entry* Touch(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_bytes_;
  mutable Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> by_key_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t points_added_ ABSL_GUARDED_BY(mu_) = 0;
  size_t decode_queries_ ABSL_GUARDED_BY(mu_) = 0;
  size_t catalog_queries_ ABSL_GUARDED_BY(mu_) = 0;
  size_t label_queries_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<std::string> too_large_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::api::internal
