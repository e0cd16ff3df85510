#pragma once

// The points MetricsSeriesSource (prometheus_series.h) turns into series,
// read as typed columns (query/typed_result.h): the points, each carrying
// only its identity's hash, then, for hashes not seen before, the
// identities, each once with its text.
//
// An identity is what a point's series depend on besides the point
// itself: the OTLP metric (name, unit, type, monotonicity, temporality),
// the resource (service.name and the whole resource attribute list, of
// which service.namespace and service.instance.id become labels) and the
// point's attribute set. DuckDB hashes those columns per row (hash() of the
// raw columns); the points query returns the hash alone, and the identity
// query lists each hash once with the identity it stands for.
//
// Memo. The identity a hash stands for is a function of the raw values, so
// identities are kept by hash across queries (process-wide, at most
// 100,000, cleared when full): a query whose hashes are all known skips
// the identity query. Within one identity query, two identities with one
// hash are Internal; across queries such a collision (about n^2 / 2^65
// for n identities) would go unnoticed. Two
// identities that differ only where labels do not look (another resource
// attribute, a NULL unit and an empty one) stay apart here and meet again
// as one series by their labels.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "query/query_pool.h"
#include "query/typed_result.h"
#include "query/view_files.h"

namespace strata::api::internal {

struct MetricIdentity {
  std::string otlp_name;
  std::string unit;  // "" for none
  int64_t type = 0;  // metric_type
  bool monotonic = false;
  int64_t temporality = 0;  // 0 when not set
  std::string service;      // service.name, "" for none
  std::string service_namespace;
  std::string instance;    // service.instance.id
  std::string attributes;  // the point attributes as AttributeSetSql renders them
  std::string resource;    // the resource attributes as AttributeSetSql renders them
};

// Which point columns to read; those not wanted read NULL.
struct PointColumnsWanted {
  bool value = false;      // gauges and sums
  bool count = false;      // histograms and summaries
  bool sum = false;        // histograms and summaries
  bool buckets = false;    // explicit_bounds and bucket_counts
  bool quantiles = false;  // summary_quantile and summary_value
};

enum class PointRead {
  kSamples,    // every point in time order
  kLabels,     // one row per distinct (identity, bounds, bucket count,
               // quantiles, whether a sum is there); values 0, time 0
  kExemplars,  // the points with exemplars in time order, with their text
};

// The columns of MetricPoints::points, in this order.
enum PointColumn {
  kPointIdentity,        // kUInt64: index into MetricPoints::identities (rewritten from the hash)
  kPointTime,            // kUInt64: time_unix_nano
  kPointFlags,           // kInt64: point_flags, 0 for none
  kPointValue,           // kDouble: value_double, else value_int as double
  kPointCount,           // kUInt64
  kPointSum,             // kDouble
  kPointBounds,          // kDoubleList: explicit_bounds
  kPointBuckets,         // kUInt64List: bucket_counts
  kPointQuantiles,       // kDoubleList: summary_quantile
  kPointQuantileValues,  // kDoubleList: summary_value
  kPointExemplars,       // kString: internal::kExemplarsSql's text (kExemplars only)
  kPointDescription,     // kString: metric_description (never read: NULL)
  kPointColumns,
};

// Points with their identities resolved: one query's answer, or every
// point of one metrics file (PointCache).
struct DecodedMetricsFile {
  std::vector<MetricIdentity> identities;
  // Columns as PointColumn says; kPointIdentity indexes `identities`. In
  // a PointCache's decode kPointExemplars and kPointDescription hold no
  // values (not even `valid`): none are exemplars, descriptions are in the
  // file's FileCatalog.
  query::TypedResult points;
  // The rows in time order, ties in read order (for kLabels, read order).
  std::vector<uint32_t> by_time;
  size_t bytes = 0;  // EstimatedBytes() once complete
  // An estimate of the memory the above take.
  size_t EstimatedBytes() const;
};

// One point: row `row` of part `part`.
struct PointRow {
  uint32_t part = 0;
  uint32_t row = 0;
};

struct MetricPoints {
  std::vector<std::shared_ptr<const DecodedMetricsFile>> parts;
  // The points read, in time order (ties in read order: file order, then
  // row order); for kLabels, in read order.
  std::vector<PointRow> order;
};

// One metric variant with a point in a window, as the catalog lists it.
struct CatalogVariant {
  std::string otlp_name;
  std::string unit;  // "" for none
  int64_t type = 0;
  bool monotonic = false;
  int64_t temporality = 0;
  std::string description;  // the least of its points' in the window, "" for none
};

// What a metrics file holds of each metric variant, for the catalog of a
// window without decoding the points: per (variant, description) the
// distinct times of its points. Small: a variant's points share their
// times (one per collection interval), so the rows are about the variants
// times the file's intervals, not its points.
struct FileCatalog {
  struct Times {
    size_t variant = 0;           // index into `variants`
    int32_t description = 0;      // index into `descriptions`, -1 for NULL
    std::vector<uint64_t> times;  // time_unix_nano, ascending, each once
    // The file's rows at these times: its points (and a metric's one row
    // when it has none, at time 0), what decoding them reads.
    uint64_t rows = 0;
  };
  std::vector<CatalogVariant> variants;  // each once; `description` unused
  std::vector<std::string> descriptions;
  std::vector<Times> times;
  std::vector<std::string> names;  // the distinct metric names, ascending
  size_t bytes = 0;                // EstimatedBytes() once complete
  size_t EstimatedBytes() const;
};

class PointCache;  // prometheus_point_cache.h

// SQL for the value of resource attribute `key` (a literal of strata's
// own, not request text) in a metrics row, "" when the row has none.
std::string ResourceValueSql(std::string_view key);

// The points of the metrics named `otlp_names` with a time in [min_ms,
// max_ms] (inclusive, whole milliseconds): at most `max_rows` of them (0:
// the pool's default), else ResourceExhausted (as the text reads were).
// `deadline_call` bounds each query. Internal when two identities share a
// hash (never seen; 64-bit hashes) or the answer has an unexpected shape.
//
// With `cache` (kSamples and kLabels), each metrics file's catalog is read
// once (FileCatalog), and the points of each of `otlp_names` the file holds
// are decoded once per file and metric (every time, every column; the
// metrics of a file not decoded yet in one query when they hold at least
// half its rows, else one query each), kept in the cache, one entry per
// metric, and selected from there: the same points as the query would
// read, though columns not `wanted` may hold values, in the same order
// but for points of two metrics of one file at the same time (in name
// order rather than the file's).
// For kLabels the rows are the file's points of distinct identity, sum
// presence, bounds, bucket count and quantiles (one per file, not across
// files), with values, flags and times of no meaning (a caller reads only
// their shapes: a sum column's validity, not its value): for a metric
// whose points in the file all lie in the window, its label shapes, kept
// in the cache apart from its points and made from them when the cache
// holds them, else read with one kLabels query per file (no point
// decoded); for a metric with points outside the window too, its decoded
// points in the window. A metric of a
// file with more points than the cache could hold (PointCache::MostRows)
// is read by the query instead (the whole request), and remembered as such.
absl::StatusOr<MetricPoints> ReadMetricPoints(query::QueryPool& pool, const query::ViewFiles& files,
                                              const CallOptions& call,
                                              const std::vector<std::string>& otlp_names,
                                              int64_t min_ms, int64_t max_ms,
                                              const PointColumnsWanted& wanted, PointRead read,
                                              size_t max_rows, PointCache* cache = nullptr);

// The variants with a point in [min_ms, max_ms] from each metrics file's
// FileCatalog in `cache` (reading those it lacks), ordered by name, unit,
// type, monotonicity and temporality. Without `every_metric` no points are
// decoded. With it (the caller reads every metric with a point in the
// window next: a listing, target_info), a file the cache lacks whose
// points all lie in the window (meta.json's event_time,
// ViewFiles::metrics_meta) is decoded whole with one query, which gives
// both its catalog and each metric's points: the file is read once.
// Unimplemented when a file's catalog is too large to keep (then ask
// DuckDB).
absl::StatusOr<std::vector<CatalogVariant>> ReadCachedCatalog(query::QueryPool& pool,
                                                              const query::ViewFiles& files,
                                                              const CallOptions& call,
                                                              int64_t min_ms, int64_t max_ms,
                                                              bool every_metric, PointCache& cache);

// The resources with a point of any metric in [min_ms, max_ms], each with
// the milliseconds it has points in (target_info's samples), from the
// decoded points of every metric of each metrics file in `cache` (decoding
// those it lacks; a file the cache lacks whose points all lie in the
// window with its catalog in one query, as ReadCachedCatalog's
// `every_metric`). With `times_zero` (a listing), from the metrics' label
// shapes as ReadMetricPoints' kLabels reads them: no point decoded where
// the window holds all of a metric's.
struct ResourceTimes {
  // Indexes into `resources`: service, service.namespace,
  // service.instance.id and the resource attribute set, as MetricIdentity
  // holds them.
  std::vector<MetricIdentity> resources;  // only the resource's fields set
  // (index into resources, time in ms), each pair once, in time order;
  // with `times_zero`, every time 0 (one per resource).
  std::vector<std::pair<size_t, int64_t>> points;
};
// ResourceExhausted past `max_rows` pairs (0: the pool's default), as the
// query would be truncated; Unimplemented when a file is too large to
// decode (then ask DuckDB).
absl::StatusOr<ResourceTimes> ReadCachedResourceTimes(query::QueryPool& pool,
                                                      const query::ViewFiles& files,
                                                      const CallOptions& call, int64_t min_ms,
                                                      int64_t max_ms, bool times_zero,
                                                      size_t max_rows, PointCache& cache);

}  // namespace strata::api::internal
