// ReadMetricPoints (prometheus_points.h): the identity query, then the
// points query, both answered as typed columns.

#include "api/prometheus_points.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/prometheus_point_cache.h"
#include "common/mutex.h"
#include "common/status_macros.h"

namespace strata::api::internal {
namespace {

// The identity hash of a metrics row: every column an identity is made of,
// raw, so that each query computes the same value for the same row.
constexpr char kIdentityHash[] =
    "hash(metric_name, metric_unit, metric_type, is_monotonic, aggregation_temporality,"
    " service_name, resource_attr_keys, resource_attr_str, resource_attr_int,"
    " resource_attr_double, resource_attr_bool, attr_keys, attr_str, attr_int, attr_double,"
    " attr_bool)";

// The columns of the identity query, in MetricIdentity's order after the hash.
enum IdentityColumn {
  kIdHash,
  kIdName,
  kIdUnit,
  kIdType,
  kIdMonotonic,
  kIdTemporality,
  kIdService,
  kIdNamespace,
  kIdInstance,
  kIdAttributes,
  kIdResource,
  kIdColumns,
};

absl::Status CheckKinds(const query::TypedResult& result,
                        std::initializer_list<query::TypedKind> kinds, std::string_view what) {
  bool same = result.columns.size() == kinds.size();
  for (size_t c = 0; same && c < kinds.size(); ++c) {
    same = result.columns[c].kind == *(kinds.begin() + c);
  }
  if (!same) {
    return absl::InternalError(
        absl::StrCat("metric ", std::string(what), ": the answer's columns are not as expected"));
  }
  return absl::OkStatus();
}

// The value SQL of a point column: `sql` when `wanted`, else a NULL of `type`.
std::string Wanted(bool wanted, std::string_view sql, std::string_view type) {
  return wanted ? std::string(sql) : absl::StrCat("CAST(NULL AS ", std::string(type), ")");
}

// At most this many hashes are named in the identity query's filter; with
// more, it reads every identity of the window.
constexpr size_t kMostHashesNamed = 2000;

// Identities by hash across queries (prometheus_points.h, "memo"). Cleared
// when it reaches kMemoSize entries.
class IdentityMemo {
 public:
  static constexpr size_t kMemoSize = 100'000;
  std::optional<MetricIdentity> Find(uint64_t hash) {
    MutexLock lock(&mu_);
    const auto found = by_hash_.find(hash);
    if (found == by_hash_.end()) return std::nullopt;
    return found->second;
  }
  void Add(uint64_t hash, const MetricIdentity& identity) {
    MutexLock lock(&mu_);
    if (by_hash_.size() >= kMemoSize) by_hash_.clear();
    by_hash_.emplace(hash, identity);
  }

 private:
  Mutex mu_;
  absl::flat_hash_map<uint64_t, MetricIdentity> by_hash_ ABSL_GUARDED_BY(mu_);
};

IdentityMemo& Memo() {
  static IdentityMemo* const memo = new IdentityMemo;
  return *memo;
}

constexpr char kTooManyPoints[] =
    "the query reads more points than its sample budget allows; narrow its range or matchers";

// The first and last time_unix_nano of [min_ms, max_ms] (whole
// milliseconds, inclusive; negative times read as 0).
uint64_t TimeFrom(int64_t min_ms) {
  return static_cast<uint64_t>(std::max<int64_t>(0, min_ms) * 1'000'000);
}
uint64_t TimeTo(int64_t max_ms) {
  return static_cast<uint64_t>(std::max<int64_t>(0, max_ms) * 1'000'000 + 999'999);
}

}  // namespace

std::string ResourceValueSql(std::string_view key) {
  return absl::StrCat(
      "coalesce(list_extract(resource_attr_str, list_position(resource_attr_keys, '",
      std::string(key), "')), '')");
}

namespace {

// Sets `file.by_time` to its rows in time order, ties in read order
// (sorted here rather than by DuckDB), or without `sort` in read order.
void SetReadOrder(DecodedMetricsFile& file, bool sort) {
  const std::vector<uint64_t>& times = file.points.columns[kPointTime].uint64s;
  file.by_time.resize(file.points.rows);
  for (size_t r = 0; r < file.by_time.size(); ++r) file.by_time[r] = static_cast<uint32_t>(r);
  if (sort) {
    std::stable_sort(file.by_time.begin(), file.by_time.end(),
                     [&](uint32_t a, uint32_t b) { return times[a] < times[b]; });
  }
}

// The points of `otlp_names` (null: every named metric) with a time in
// `window` (none: every time), as ReadMetricPoints reads them without a
// cache, in one part.

absl::StatusOr<DecodedMetricsFile> QueryPoints(
    query::QueryPool& pool, const query::ViewFiles& files, const CallOptions& call,
    const std::vector<std::string>* otlp_names, std::optional<std::pair<int64_t, int64_t>> window,
    const PointColumnsWanted& wanted, PointRead read, size_t max_rows) {
  using query::TypedKind;
  const auto began = std::chrono::steady_clock::now();
  DecodedMetricsFile out;
  std::vector<query::QueryParam> params;
  std::vector<std::string> conditions;
  if (window.has_value()) {
    params.emplace_back(TimeFrom(window->first));
    params.emplace_back(TimeTo(window->second));
    conditions.push_back("time_unix_nano >= $1 AND time_unix_nano <= $2");
  }
  if (read == PointRead::kExemplars) conditions.push_back("len(exemplar_time_unix_nano) > 0");
  if (otlp_names != nullptr) {
    std::vector<std::string> placeholders;
    for (const std::string& name : *otlp_names) {
      placeholders.push_back(NextParam(params));
      params.emplace_back(name);
    }
    conditions.push_back(absl::StrCat("metric_name IN (", absl::StrJoin(placeholders, ", "), ")"));
  } else {
    conditions.push_back("metric_name IS NOT NULL");
  }
  const std::string where =
      absl::StrCat(" FROM metrics_stored WHERE ", absl::StrJoin(conditions, " AND "));

  const bool labels = read == PointRead::kLabels;
  const std::string columns = absl::StrCat(
      labels ? "SELECT DISTINCT " : "SELECT ", kIdentityHash, " AS id, ",
      labels ? "CAST(0 AS UBIGINT), 0, CAST(0 AS DOUBLE), CAST(0 AS UBIGINT)"
             : absl::StrCat("time_unix_nano, coalesce(point_flags, 0), ",
                            Wanted(wanted.value,
                                   "coalesce(value_double, CAST(value_int AS DOUBLE))", "DOUBLE"),
                            ", ", Wanted(wanted.count, "\"count\"", "UBIGINT")),
      ", ",
      Wanted(wanted.sum,
             labels ? "CASE WHEN \"sum\" IS NULL THEN NULL ELSE CAST(0 AS DOUBLE) END" : "\"sum\"",
             "DOUBLE"),
      ", ", Wanted(wanted.buckets, "explicit_bounds", "DOUBLE[]"), ", ",
      Wanted(
          wanted.buckets,
          labels ? "list_transform(bucket_counts, lambda x: CAST(0 AS UBIGINT))" : "bucket_counts",
          "UBIGINT[]"),
      ", ", Wanted(wanted.quantiles, "summary_quantile", "DOUBLE[]"), ", ",
      Wanted(
          wanted.quantiles,
          labels ? "list_transform(summary_value, lambda x: CAST(0 AS DOUBLE))" : "summary_value",
          "DOUBLE[]"),
      ", ", Wanted(read == PointRead::kExemplars, kExemplarsSql, "VARCHAR"), ", ",
      Wanted(otlp_names == nullptr, "metric_description", "VARCHAR"));
  const std::string points_sql = absl::StrCat(columns, where);
  query::QueryOptions options = Options(call, params, max_rows);
  STRATA_ASSIGN_OR_RETURN(out.points, pool.RunTyped(files, points_sql, options));
  if (out.points.truncated) {
    return absl::ResourceExhaustedError(kTooManyPoints);
  }
  STRATA_RETURN_IF_ERROR(CheckKinds(
      out.points,
      {TypedKind::kUInt64, TypedKind::kUInt64, TypedKind::kInt64, TypedKind::kDouble,
       TypedKind::kUInt64, TypedKind::kDouble, TypedKind::kDoubleList, TypedKind::kUInt64List,
       TypedKind::kDoubleList, TypedKind::kDoubleList, TypedKind::kString, TypedKind::kString},
      "points"));

  // Each hash's identity: from the memo, else from the identity query
  // (over the same rows, only the hashes the memo lacks).
  absl::flat_hash_map<uint64_t, uint64_t> index_of;
  std::vector<uint64_t> unknown;
  for (const uint64_t hash : out.points.columns[kPointIdentity].uint64s) {
    const auto [it, fresh] = index_of.emplace(hash, out.identities.size());
    if (!fresh) continue;
    std::optional<MetricIdentity> known = Memo().Find(hash);
    if (!known.has_value()) unknown.push_back(hash);
    out.identities.push_back(known.has_value() ? *std::move(known) : MetricIdentity());
  }
  if (!unknown.empty()) {
    std::string only;  // our own numbers, not request text
    if (unknown.size() <= kMostHashesNamed) {
      only = absl::StrCat(" AND ", kIdentityHash, " IN (", absl::StrJoin(unknown, ", "), ")");
    }
    const std::string identity_sql = absl::StrCat(
        "SELECT id, metric_name, coalesce(metric_unit, ''), metric_type,"
        " coalesce(is_monotonic, false), coalesce(aggregation_temporality, 0),"
        " coalesce(service_name, ''), ",
        ResourceValueSql("service.namespace"), ", ", ResourceValueSql("service.instance.id"), ", ",
        AttributeSetSql("attr"), ", ", AttributeSetSql("resource_attr"), " FROM (SELECT DISTINCT ",
        kIdentityHash,
        " AS id, metric_name, metric_unit, metric_type, is_monotonic, aggregation_temporality,"
        " service_name, resource_attr_keys, resource_attr_str, resource_attr_int,"
        " resource_attr_double, resource_attr_bool, attr_keys, attr_str, attr_int, attr_double,"
        " attr_bool",
        where, only, ")");
    options = Options(RemainingCall(call, began), std::move(params), max_rows);
    STRATA_ASSIGN_OR_RETURN(query::TypedResult ids, pool.RunTyped(files, identity_sql, options));
    if (ids.truncated) {
      return absl::ResourceExhaustedError(
          "the query reads more series than its sample budget allows; narrow its range or "
          "matchers");
    }
    STRATA_RETURN_IF_ERROR(
        CheckKinds(ids,
                   {TypedKind::kUInt64, TypedKind::kString, TypedKind::kString, TypedKind::kInt64,
                    TypedKind::kBool, TypedKind::kInt64, TypedKind::kString, TypedKind::kString,
                    TypedKind::kString, TypedKind::kString, TypedKind::kString},
                   "identities"));
    std::vector<bool> answered(out.identities.size());
    for (size_t r = 0; r < ids.rows; ++r) {
      MetricIdentity identity;
      identity.otlp_name = std::move(ids.columns[kIdName].strings[r]);
      identity.unit = std::move(ids.columns[kIdUnit].strings[r]);
      identity.type = ids.columns[kIdType].int64s[r];
      identity.monotonic = ids.columns[kIdMonotonic].int64s[r] != 0;
      identity.temporality = ids.columns[kIdTemporality].int64s[r];
      identity.service = std::move(ids.columns[kIdService].strings[r]);
      identity.service_namespace = std::move(ids.columns[kIdNamespace].strings[r]);
      identity.instance = std::move(ids.columns[kIdInstance].strings[r]);
      identity.attributes = std::move(ids.columns[kIdAttributes].strings[r]);
      identity.resource = std::move(ids.columns[kIdResource].strings[r]);
      const uint64_t hash = ids.columns[kIdHash].uint64s[r];
      const auto it = index_of.find(hash);
      if (it == index_of.end()) continue;  // not among the points (no filter)
      if (answered[it->second]) {
        const MetricIdentity& other = out.identities[it->second];
        // Rows whose raw columns differ where the text does not (a NULL unit
        // and an empty one) may hash alike: the same identity, kept once.
        if (std::tie(other.otlp_name, other.unit, other.type, other.monotonic, other.temporality,
                     other.service, other.service_namespace, other.instance, other.attributes,
                     other.resource) ==
            std::tie(identity.otlp_name, identity.unit, identity.type, identity.monotonic,
                     identity.temporality, identity.service, identity.service_namespace,
                     identity.instance, identity.attributes, identity.resource)) {
          continue;
        }
        return absl::InternalError("metric points: two series identities share a hash");
      }
      answered[it->second] = true;
      Memo().Add(hash, identity);
      out.identities[it->second] = std::move(identity);
    }
    for (const uint64_t hash : unknown) {
      if (!answered[index_of[hash]]) {
        return absl::InternalError("metric points: a point's identity is not among the window's");
      }
    }
  }
  for (uint64_t& id : out.points.columns[kPointIdentity].uint64s) id = index_of[id];
  SetReadOrder(out, read != PointRead::kLabels);
  out.bytes = out.EstimatedBytes();
  return out;
}

// Every point of the metrics `otlp_names` of metrics file `path` (one of
// files.metrics), every column and time, as QueryPoints reads them: one
// query, counted in `cache`'s decode_queries. ResourceExhausted past the
// points the cache would decode (PointCache::MostRows).
absl::StatusOr<DecodedMetricsFile> QueryMetricsOfFile(query::QueryPool& pool,
                                                      const query::ViewFiles& files,
                                                      const std::string& path,
                                                      const std::vector<std::string>& otlp_names,
                                                      const CallOptions& call, PointCache& cache) {
  query::ViewFiles one = files;
  one.metrics = {path};
  const PointColumnsWanted every{
      .value = true, .count = true, .sum = true, .buckets = true, .quantiles = true};
  cache.CountDecodeQuery();
  return QueryPoints(pool, one, call, &otlp_names, std::nullopt, every, PointRead::kSamples,
                     std::max<size_t>(1, cache.MostRows()));
}

// Keeps `decoded`, the points of one metric of a file (or, with
// `label_shapes`, its label shapes), in `cache` under `key` and returns it.
std::shared_ptr<const DecodedMetricsFile> KeepDecoded(const std::string& key,
                                                      DecodedMetricsFile decoded, PointCache& cache,
                                                      bool label_shapes = false) {
  auto made = std::make_shared<DecodedMetricsFile>(std::move(decoded));
  // Samples and listings never read exemplars or descriptions: those
  // columns are all NULL here.
  for (const PointColumn c : {kPointExemplars, kPointDescription}) {
    made->points.columns[c].strings = {};
    made->points.columns[c].valid = {};
  }
  made->bytes = made->EstimatedBytes();
  if (label_shapes) {
    cache.AddLabelShapes(key, made);
  } else {
    cache.Add(key, made);
  }
  return made;
}

// The decoded points of metric `otlp_name` in metrics file `path` (one of
// files.metrics): from `cache`, else read (one query) and kept there.
// Unimplemented when it has too many points to decode.
absl::StatusOr<std::shared_ptr<const DecodedMetricsFile>> Decoded(
    query::QueryPool& pool, const query::ViewFiles& files, const std::string& path,
    const std::string& otlp_name, const CallOptions& call, PointCache& cache) {
  const std::string key = PointCache::PointsKey(path, otlp_name);
  if (std::shared_ptr<const DecodedMetricsFile> found = cache.Find(key); found != nullptr) {
    return found;
  }
  if (cache.IsTooLarge(key)) return absl::UnimplementedError("a metric too large to decode");
  absl::StatusOr<DecodedMetricsFile> decoded =
      QueryMetricsOfFile(pool, files, path, {otlp_name}, call, cache);
  if (absl::IsResourceExhausted(decoded.status())) {
    cache.MarkTooLarge(key);
    return absl::UnimplementedError("a metric too large to decode");
  }
  if (!decoded.ok()) return decoded.status();
  return KeepDecoded(key, *std::move(decoded), cache);
}

// Appends row `r` of `from` to `to` (a column of the same kind).
void AppendRow(const query::TypedColumn& from, size_t r, query::TypedColumn& to) {
  using query::TypedKind;
  to.valid.push_back(from.valid[r]);
  switch (from.kind) {
    case TypedKind::kBool:
    case TypedKind::kInt64:
      to.int64s.push_back(from.int64s[r]);
      break;
    case TypedKind::kUInt64:
      to.uint64s.push_back(from.uint64s[r]);
      break;
    case TypedKind::kDouble:
      to.doubles.push_back(from.doubles[r]);
      break;
    case TypedKind::kString:
      to.strings.push_back(from.strings[r]);
      break;
    case TypedKind::kDoubleList:
      to.doubles.insert(to.doubles.end(), from.doubles.begin() + from.offsets[r],
                        from.doubles.begin() + from.offsets[r + 1]);
      to.offsets.push_back(to.doubles.size());
      break;
    case TypedKind::kUInt64List:
      to.uint64s.insert(to.uint64s.end(), from.uint64s.begin() + from.offsets[r],
                        from.uint64s.begin() + from.offsets[r + 1]);
      to.offsets.push_back(to.uint64s.size());
      break;
  }
}

// `all` (one query of `otlp_names` of a file, in the file's row order:
// QueryMetricsOfFile, or DecodeWholeFile's of every name)
// split into one DecodedMetricsFile per name, in `otlp_names`' order, each
// as QueryMetricsOfFile of that name alone reads it: its rows in the
// file's order, its identities numbered in the order of their first row,
// its by_time. Internal when a row's metric is not among `otlp_names`.
absl::StatusOr<std::vector<DecodedMetricsFile>> SplitByMetric(
    const DecodedMetricsFile& all, const std::vector<std::string>& otlp_names) {
  using query::TypedKind;
  absl::flat_hash_map<std::string_view, size_t> part_of_name;
  for (size_t n = 0; n < otlp_names.size(); ++n) part_of_name.emplace(otlp_names[n], n);
  std::vector<DecodedMetricsFile> parts(otlp_names.size());
  for (DecodedMetricsFile& part : parts) {
    part.points.columns.resize(all.points.columns.size());
    for (size_t c = 0; c < all.points.columns.size(); ++c) {
      query::TypedColumn& column = part.points.columns[c];
      column.name = all.points.columns[c].name;
      column.kind = all.points.columns[c].kind;
      if (column.kind == TypedKind::kDoubleList || column.kind == TypedKind::kUInt64List) {
        column.offsets = {0};
      }
    }
  }
  // all's identity -> (its part, its number there), numbered on first use.
  constexpr size_t kUnnumbered = ~size_t{0};
  std::vector<size_t> part_of_identity(all.identities.size());
  std::vector<size_t> number_of_identity(all.identities.size(), kUnnumbered);
  for (size_t i = 0; i < all.identities.size(); ++i) {
    const auto found = part_of_name.find(all.identities[i].otlp_name);
    if (found == part_of_name.end()) {
      return absl::InternalError("metric points: a point of a metric not asked for");
    }
    part_of_identity[i] = found->second;
  }
  const std::vector<uint64_t>& ids = all.points.columns[kPointIdentity].uint64s;
  for (size_t r = 0; r < all.points.rows; ++r) {
    const size_t identity = ids[r];
    DecodedMetricsFile& part = parts[part_of_identity[identity]];
    if (number_of_identity[identity] == kUnnumbered) {
      number_of_identity[identity] = part.identities.size();
      part.identities.push_back(all.identities[identity]);
    }
    for (size_t c = 0; c < all.points.columns.size(); ++c) {
      // A column dropped already (no `valid`) stays empty in the parts.
      if (all.points.columns[c].valid.empty()) continue;
      AppendRow(all.points.columns[c], r, part.points.columns[c]);
    }
    part.points.columns[kPointIdentity].uint64s.back() = number_of_identity[identity];
    ++part.points.rows;
  }
  for (DecodedMetricsFile& part : parts) SetReadOrder(part, /*sort=*/true);
  return parts;
}

// Builds a FileCatalog from groups of a file's named rows, each a
// (variant, description, time) and its count of rows: the groups of
// CatalogOf's grouped query, or one row at a time (count 1) from the
// file's decoded points, with the same catalog either way.
class CatalogBuilder {
 public:
  using Variant = std::tuple<std::string, std::string, int64_t, bool, int64_t>;

  CatalogBuilder() : made_(std::make_shared<FileCatalog>()) {}

  size_t VariantIndex(const Variant& variant) {
    const auto [v, fresh] = variant_index_.emplace(variant, made_->variants.size());
    if (fresh) {
      made_->variants.push_back({std::get<0>(variant), std::get<1>(variant), std::get<2>(variant),
                                 std::get<3>(variant), std::get<4>(variant), ""});
    }
    return v->second;
  }
  int32_t DescriptionIndex(const std::string& description) {
    const auto [d, fresh] =
        description_index_.emplace(description, static_cast<int32_t>(made_->descriptions.size()));
    if (fresh) made_->descriptions.push_back(description);
    return d->second;
  }
  // `rows` rows of variant `variant` with description `description` (-1:
  // NULL) at `time` (`time_valid` false: a NULL time, which reads 0 and is
  // a group apart from time 0, as in SQL's GROUP BY).
  void Add(size_t variant, int32_t description, bool time_valid, uint64_t time, uint64_t rows) {
    const auto [t, fresh_times] =
        times_index_.emplace(std::make_pair(variant, description), made_->times.size());
    if (fresh_times) made_->times.push_back({variant, description, {}});
    FileCatalog::Times& times = made_->times[t->second];
    if (groups_.emplace(t->second, time_valid, time).second) times.times.push_back(time);
    times.rows += rows;
  }
  std::shared_ptr<FileCatalog> Finish() && {
    for (FileCatalog::Times& t : made_->times) std::sort(t.times.begin(), t.times.end());
    for (const CatalogVariant& v : made_->variants) made_->names.push_back(v.otlp_name);
    std::sort(made_->names.begin(), made_->names.end());
    made_->names.erase(std::unique(made_->names.begin(), made_->names.end()), made_->names.end());
    made_->bytes = made_->EstimatedBytes();
    return std::move(made_);
  }

 private:
  std::shared_ptr<FileCatalog> made_;
  absl::flat_hash_map<Variant, size_t> variant_index_;
  absl::flat_hash_map<std::string, int32_t> description_index_;
  absl::flat_hash_map<std::pair<size_t, int32_t>, size_t> times_index_;
  // (index into times, whether the time is valid, the time): each once.
  absl::flat_hash_set<std::tuple<size_t, bool, uint64_t>> groups_;
};

// Decodes every named row of metrics file `files.metrics[f]` with one
// query (counted in `cache`'s decode_queries) and keeps, in `cache`, each
// of its metrics' points (as QueryMetricsOfFile of that metric alone reads
// them) and the file's catalog, built from the same rows (as CatalogOf's
// grouped query would give it): the file is read once. Returns the
// catalog, or null when the file has more rows than the cache would
// decode (nothing kept).
absl::StatusOr<std::shared_ptr<const FileCatalog>> DecodeWholeFile(query::QueryPool& pool,
                                                                   const query::ViewFiles& files,
                                                                   size_t f,
                                                                   const CallOptions& call,
                                                                   PointCache& cache) {
  const std::string& path = files.metrics[f];
  query::ViewFiles one = files;
  one.metrics = {path};
  const PointColumnsWanted every{
      .value = true, .count = true, .sum = true, .buckets = true, .quantiles = true};
  cache.CountDecodeQuery();
  // No names: every named row, with its description (QueryPoints).
  absl::StatusOr<DecodedMetricsFile> all =
      QueryPoints(pool, one, call, nullptr, std::nullopt, every, PointRead::kSamples,
                  std::max<size_t>(1, cache.MostRows()));
  if (absl::IsResourceExhausted(all.status())) return nullptr;
  if (!all.ok()) return all.status();
  CatalogBuilder builder;
  std::vector<size_t> variant_of(all->identities.size());
  for (size_t i = 0; i < all->identities.size(); ++i) {
    const MetricIdentity& m = all->identities[i];
    variant_of[i] = builder.VariantIndex({m.otlp_name, m.unit, m.type, m.monotonic, m.temporality});
  }
  const query::TypedColumn& ids = all->points.columns[kPointIdentity];
  const query::TypedColumn& times = all->points.columns[kPointTime];
  const query::TypedColumn& descriptions = all->points.columns[kPointDescription];
  for (size_t r = 0; r < all->points.rows; ++r) {
    const int32_t description =
        descriptions.is_valid(r) ? builder.DescriptionIndex(descriptions.strings[r]) : -1;
    builder.Add(variant_of[ids.uint64s[r]], description, times.is_valid(r), times.uint64s[r], 1);
  }
  std::shared_ptr<const FileCatalog> catalog = std::move(builder).Finish();
  // The entries keep neither (KeepDecoded): not copied into the parts.
  for (const PointColumn c : {kPointExemplars, kPointDescription}) {
    all->points.columns[c].strings = {};
    all->points.columns[c].valid = {};
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<DecodedMetricsFile> parts,
                          SplitByMetric(*all, catalog->names));
  for (size_t m = 0; m < parts.size(); ++m) {
    KeepDecoded(PointCache::PointsKey(path, catalog->names[m]), std::move(parts[m]), cache);
  }
  cache.AddCatalog(PointCache::CatalogKey(path), catalog);
  return catalog;
}

// Whether a request that reads every metric with a point in [from, to]
// reads every metric of file `files.metrics[f]`: meta.json's event_time
// of the file lies within the window (its placeholder rows, at no time,
// are read with their metric either way), and its rows are few enough
// for the cache to decode. False when the meta is not known.
bool WindowHoldsFile(const query::ViewFiles& files, size_t f, uint64_t from, uint64_t to,
                     const PointCache& cache) {
  if (files.metrics_meta.size() != files.metrics.size()) return false;
  const query::MetricsFileMeta& meta = files.metrics_meta[f];
  return meta.event_time.has_value() && meta.event_time->first >= from &&
         meta.event_time->second <= to && meta.file_rows <= cache.MostRows();
}

// The catalog of metrics file `files.metrics[f]`: from `cache`, else,
// with `whole_file`, from DecodeWholeFile (the file's catalog and every
// metric's points from one query; a file too large for it goes on as
// without), else read (one grouped query over its name, variant,
// description and time columns, counting the rows of each group, counted
// in `cache`'s catalog_queries) and kept there. Unimplemented when it has
// more rows than the cache would decode.
absl::StatusOr<std::shared_ptr<const FileCatalog>> CatalogOf(query::QueryPool& pool,
                                                             const query::ViewFiles& files,
                                                             size_t f, bool whole_file,
                                                             const CallOptions& call,
                                                             PointCache& cache) {
  using query::TypedKind;
  const auto began = std::chrono::steady_clock::now();
  const std::string& path = files.metrics[f];
  const std::string key = PointCache::CatalogKey(path);
  if (std::shared_ptr<const FileCatalog> found = cache.FindCatalog(key); found != nullptr) {
    return found;
  }
  if (cache.IsTooLarge(key)) return absl::UnimplementedError("a metrics catalog too large");
  if (whole_file) {
    STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const FileCatalog> decoded,
                            DecodeWholeFile(pool, files, f, call, cache));
    if (decoded != nullptr) return decoded;
  }
  query::ViewFiles one = files;
  one.metrics = {path};
  constexpr char kSql[] =
      "SELECT metric_name, coalesce(metric_unit, ''), metric_type,"
      " coalesce(is_monotonic, false), coalesce(aggregation_temporality, 0), metric_description,"
      " time_unix_nano, count(*) FROM metrics_stored WHERE metric_name IS NOT NULL GROUP BY ALL";
  cache.CountCatalogQuery();
  STRATA_ASSIGN_OR_RETURN(query::TypedResult rows,
                          pool.RunTyped(one, kSql,
                                        Options(RemainingCall(call, began), {},
                                                std::max<size_t>(1, cache.MostRows()))));
  if (rows.truncated) {
    cache.MarkTooLarge(key);
    return absl::UnimplementedError("a metrics catalog too large");
  }
  STRATA_RETURN_IF_ERROR(
      CheckKinds(rows,
                 {TypedKind::kString, TypedKind::kString, TypedKind::kInt64, TypedKind::kBool,
                  TypedKind::kInt64, TypedKind::kString, TypedKind::kUInt64, TypedKind::kInt64},
                 "catalog"));
  CatalogBuilder builder;
  std::vector<query::TypedColumn>& col = rows.columns;
  for (size_t r = 0; r < rows.rows; ++r) {
    const size_t variant =
        builder.VariantIndex({col[0].strings[r], col[1].strings[r], col[2].int64s[r],
                              col[3].int64s[r] != 0, col[4].int64s[r]});
    const int32_t description =
        col[5].is_valid(r) ? builder.DescriptionIndex(col[5].strings[r]) : -1;
    builder.Add(variant, description, col[6].is_valid(r), col[6].uint64s[r],
                static_cast<uint64_t>(col[7].int64s[r]));
  }
  std::shared_ptr<const FileCatalog> made = std::move(builder).Finish();
  cache.AddCatalog(key, made);
  return made;
}

// Whether ascending `times` holds one in [from, to].
bool AnyTimeIn(const std::vector<uint64_t>& times, uint64_t from, uint64_t to) {
  const auto first = std::lower_bound(times.begin(), times.end(), from);
  return first != times.end() && *first <= to;
}

// Whether `catalog`'s metric `otlp_name` has a point in [from, to].
bool HasPointIn(const FileCatalog& catalog, std::string_view otlp_name, uint64_t from,
                uint64_t to) {
  for (const FileCatalog::Times& t : catalog.times) {
    if (catalog.variants[t.variant].otlp_name == otlp_name && AnyTimeIn(t.times, from, to)) {
      return true;
    }
  }
  return false;
}

// A request that needs at least kLeastMetricsInOneQuery metrics of a file
// not yet decoded, holding at least 1 / kMostRowsPerNeededRow of the file's
// rows (FileCatalog::Times::rows), decodes them in one query rather than
// one query per metric (docs/prometheus.md, "Decoded batches"). The file
// is sorted by metric name: a query of one name reads only that name's
// row groups, while one query of several names may read every row of the
// file, at worst twice the rows needed here, in exchange for one scan
// (and one identity query) instead of one per metric.
constexpr size_t kLeastMetricsInOneQuery = 2;
constexpr uint64_t kMostRowsPerNeededRow = 2;

// The decoded points of each of `otlp_names` (metrics of file `path`, one
// of files.metrics, whose catalog is `catalog`), in that order: from
// `cache`, else read and kept there; the metrics not decoded yet in one
// query when they are enough of the file (above), else one query each.
// Unimplemented when a metric has too many points to decode.
absl::StatusOr<std::vector<std::shared_ptr<const DecodedMetricsFile>>> DecodedMetrics(
    query::QueryPool& pool, const query::ViewFiles& files, const std::string& path,
    const FileCatalog& catalog, const std::vector<std::string>& otlp_names, const CallOptions& call,
    PointCache& cache) {
  const auto began = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<const DecodedMetricsFile>> out(otlp_names.size());
  std::vector<size_t> missing;  // indexes into otlp_names
  for (size_t n = 0; n < otlp_names.size(); ++n) {
    const std::string key = PointCache::PointsKey(path, otlp_names[n]);
    out[n] = cache.Find(key);
    if (out[n] != nullptr) continue;
    if (cache.IsTooLarge(key)) return absl::UnimplementedError("a metric too large to decode");
    missing.push_back(n);
  }
  if (missing.size() >= kLeastMetricsInOneQuery) {
    absl::flat_hash_map<std::string_view, uint64_t> rows_of_name;
    uint64_t file_rows = 0;
    for (const FileCatalog::Times& t : catalog.times) {
      rows_of_name[catalog.variants[t.variant].otlp_name] += t.rows;
      file_rows += t.rows;
    }
    std::vector<std::string> missing_names;
    uint64_t missing_rows = 0;
    for (const size_t n : missing) {
      missing_names.push_back(otlp_names[n]);
      missing_rows += rows_of_name[otlp_names[n]];
    }
    if (missing_rows * kMostRowsPerNeededRow >= file_rows && missing_rows <= cache.MostRows()) {
      absl::StatusOr<DecodedMetricsFile> decoded =
          QueryMetricsOfFile(pool, files, path, missing_names, RemainingCall(call, began), cache);
      // Past the bound (the catalog's count notwithstanding): one query each.
      if (!decoded.ok() && !absl::IsResourceExhausted(decoded.status())) return decoded.status();
      if (decoded.ok()) {
        STRATA_ASSIGN_OR_RETURN(std::vector<DecodedMetricsFile> parts,
                                SplitByMetric(*decoded, missing_names));
        for (size_t m = 0; m < missing.size(); ++m) {
          out[missing[m]] = KeepDecoded(PointCache::PointsKey(path, missing_names[m]),
                                        std::move(parts[m]), cache);
        }
        return out;
      }
    }
  }
  for (const size_t n : missing) {
    STRATA_ASSIGN_OR_RETURN(
        out[n], Decoded(pool, files, path, otlp_names[n], RemainingCall(call, began), cache));
  }
  return out;
}

// The rows of `file` with a time in [from, to], as a range of its by_time.
std::pair<std::vector<uint32_t>::const_iterator, std::vector<uint32_t>::const_iterator> RowsIn(
    const DecodedMetricsFile& file, uint64_t from, uint64_t to) {
  const std::vector<uint64_t>& times = file.points.columns[kPointTime].uint64s;
  const auto first = std::lower_bound(file.by_time.begin(), file.by_time.end(), from,
                                      [&](uint32_t r, uint64_t t) { return times[r] < t; });
  const auto last = std::upper_bound(first, file.by_time.end(), to,
                                     [&](uint64_t t, uint32_t r) { return t < times[r]; });
  return {first, last};
}

// What a kLabels row of point `r` of `points` holds besides its values:
// its identity, whether it has a sum, its bounds, how many bucket counts,
// its quantiles (as the kLabels query's DISTINCT tells rows apart).
std::string LabelShapeOf(const query::TypedResult& points, uint32_t r) {
  const std::vector<query::TypedColumn>& col = points.columns;
  std::string key;
  auto append = [&](const void* data, size_t size) {
    key.append(static_cast<const char*>(data), size);
  };
  const uint64_t id = col[kPointIdentity].uint64s[r];
  append(&id, sizeof(id));
  key.push_back(col[kPointSum].is_valid(r) ? 's' : '-');
  for (const PointColumn c : {kPointBounds, kPointQuantiles}) {
    const size_t n = col[c].list_size(r);
    append(&n, sizeof(n));
    append(col[c].double_list(r), n * sizeof(double));
  }
  const size_t buckets = col[kPointBuckets].list_size(r);
  append(&buckets, sizeof(buckets));
  return key;
}

// Whether every time `catalog` holds of metric `otlp_name` lies in [from,
// to] (its rows without a time read 0, as RowsIn reads them).
bool AllPointsIn(const FileCatalog& catalog, std::string_view otlp_name, uint64_t from,
                 uint64_t to) {
  for (const FileCatalog::Times& t : catalog.times) {
    if (catalog.variants[t.variant].otlp_name != otlp_name || t.times.empty()) continue;
    if (t.times.front() < from || t.times.back() > to) return false;
  }
  return true;
}

// The label shapes of `points` (a metric's decoded points): one row of
// each distinct LabelShapeOf, in read order, as the kLabels query reads
// them but with the points' own values.
DecodedMetricsFile LabelShapesOf(const DecodedMetricsFile& points) {
  DecodedMetricsFile out;
  out.identities = points.identities;
  out.points.columns.resize(points.points.columns.size());
  for (size_t c = 0; c < points.points.columns.size(); ++c) {
    query::TypedColumn& column = out.points.columns[c];
    column.name = points.points.columns[c].name;
    column.kind = points.points.columns[c].kind;
    if (column.kind == query::TypedKind::kDoubleList ||
        column.kind == query::TypedKind::kUInt64List) {
      column.offsets = {0};
    }
  }
  absl::flat_hash_set<std::string> shapes;
  for (uint32_t r = 0; r < points.points.rows; ++r) {
    if (!shapes.insert(LabelShapeOf(points.points, r)).second) continue;
    for (size_t c = 0; c < points.points.columns.size(); ++c) {
      // A column dropped already (no `valid`) stays empty.
      if (points.points.columns[c].valid.empty()) continue;
      AppendRow(points.points.columns[c], r, out.points.columns[c]);
    }
    ++out.points.rows;
  }
  SetReadOrder(out, /*sort=*/false);
  return out;
}

// What a listing reads of one metric of a file: its label shapes (every
// row counts), or its decoded points (only the rows in the window count).
struct ListedMetric {
  std::shared_ptr<const DecodedMetricsFile> file;
  bool shapes = false;
};

// The rows a listing (kLabels) reads of each of `otlp_names` (metrics of
// file `path`, whose catalog is `catalog`) with a point in [from, to], in
// that order. A metric whose every point lies in the window reads its
// label shapes: from `cache`, else made from its points when the cache
// holds them, else read with one kLabels query for all such metrics of
// the file (counted in label_queries) and kept; no point is decoded. A
// metric with points outside the window reads its points (DecodedMetrics).
// Unimplemented when a metric has too many points to decode, or the
// metrics of the file read for their shapes more shapes than the cache
// would decode (PointCache::MostRows: together they would fill its whole
// bound), which are then remembered as too large, each.
absl::StatusOr<std::vector<ListedMetric>> ListedMetrics(
    query::QueryPool& pool, const query::ViewFiles& files, const std::string& path,
    const FileCatalog& catalog, const std::vector<std::string>& otlp_names, uint64_t from,
    uint64_t to, const CallOptions& call, PointCache& cache) {
  const auto began = std::chrono::steady_clock::now();
  std::vector<ListedMetric> out(otlp_names.size());
  std::vector<size_t> windowed, missing;  // indexes into otlp_names
  for (size_t n = 0; n < otlp_names.size(); ++n) {
    if (!AllPointsIn(catalog, otlp_names[n], from, to)) {
      windowed.push_back(n);
      continue;
    }
    out[n].shapes = true;
    const std::string key = PointCache::LabelShapesKey(path, otlp_names[n]);
    out[n].file = cache.Find(key);
    if (out[n].file != nullptr) continue;
    if (cache.IsTooLarge(key)) return absl::UnimplementedError("label shapes too large to decode");
    if (const std::shared_ptr<const DecodedMetricsFile> points =
            cache.Find(PointCache::PointsKey(path, otlp_names[n]));
        points != nullptr) {
      out[n].file = KeepDecoded(key, LabelShapesOf(*points), cache, /*label_shapes=*/true);
      continue;
    }
    missing.push_back(n);
  }
  if (!missing.empty()) {
    std::vector<std::string> missing_names;
    for (const size_t n : missing) missing_names.push_back(otlp_names[n]);
    query::ViewFiles one = files;
    one.metrics = {path};
    const PointColumnsWanted every{
        .value = true, .count = true, .sum = true, .buckets = true, .quantiles = true};
    cache.CountLabelQuery();
    absl::StatusOr<DecodedMetricsFile> read =
        QueryPoints(pool, one, RemainingCall(call, began), &missing_names, std::nullopt, every,
                    PointRead::kLabels, std::max<size_t>(1, cache.MostRows()));
    if (absl::IsResourceExhausted(read.status())) {
      for (const std::string& name : missing_names) {
        cache.MarkTooLarge(PointCache::LabelShapesKey(path, name));
      }
      return absl::UnimplementedError("label shapes too large to decode");
    }
    if (!read.ok()) return read.status();
    STRATA_ASSIGN_OR_RETURN(std::vector<DecodedMetricsFile> parts,
                            SplitByMetric(*read, missing_names));
    for (size_t m = 0; m < missing.size(); ++m) {
      SetReadOrder(parts[m], /*sort=*/false);
      out[missing[m]].file = KeepDecoded(PointCache::LabelShapesKey(path, missing_names[m]),
                                         std::move(parts[m]), cache, /*label_shapes=*/true);
    }
  }
  if (!windowed.empty()) {
    std::vector<std::string> windowed_names;
    for (const size_t n : windowed) windowed_names.push_back(otlp_names[n]);
    STRATA_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<const DecodedMetricsFile>> metrics,
                            DecodedMetrics(pool, files, path, catalog, windowed_names,
                                           RemainingCall(call, began), cache));
    for (size_t m = 0; m < windowed.size(); ++m) out[windowed[m]].file = std::move(metrics[m]);
  }
  return out;
}

// The points of `otlp_names` in [min_ms, max_ms] from each metrics file's
// decoded metrics (kSamples and kLabels; see ReadMetricPoints). For
// kLabels, one point of each distinct LabelShapeOf per file and metric, in
// no particular order, from the metrics' label shapes where the window
// holds all their points (ListedMetrics). Unimplemented when a file's catalog or a metric of
// a file is too large to decode.
absl::StatusOr<MetricPoints> SelectCachedPoints(query::QueryPool& pool,
                                                const query::ViewFiles& files,
                                                const CallOptions& call,
                                                const std::vector<std::string>& otlp_names,
                                                int64_t min_ms, int64_t max_ms, PointRead read,
                                                size_t max_rows, PointCache& cache) {
  const auto began = std::chrono::steady_clock::now();
  const uint64_t from = TimeFrom(min_ms), to = TimeTo(max_ms);
  const absl::flat_hash_set<std::string_view> names(otlp_names.begin(), otlp_names.end());
  const size_t most_rows = max_rows > 0 ? max_rows : pool.options().default_max_rows;
  MetricPoints out;
  auto time_of = [&](const PointRow& p) {
    return out.parts[p.part]->points.columns[kPointTime].uint64s[p.row];
  };
  auto by_time = [&](const PointRow& a, const PointRow& b) { return time_of(a) < time_of(b); };
  for (size_t f = 0; f < files.metrics.size(); ++f) {
    const std::string& path = files.metrics[f];
    // The catalog is there already when ReadCachedCatalog read it first.
    STRATA_ASSIGN_OR_RETURN(
        std::shared_ptr<const FileCatalog> catalog,
        CatalogOf(pool, files, f, /*whole_file=*/false, RemainingCall(call, began), cache));
    const size_t file_run = out.order.size();
    std::vector<std::string> selected;  // ascending
    for (const std::string& name : catalog->names) {
      if (names.contains(name) && HasPointIn(*catalog, name, from, to)) selected.push_back(name);
    }
    if (read == PointRead::kLabels) {
      STRATA_ASSIGN_OR_RETURN(std::vector<ListedMetric> metrics,
                              ListedMetrics(pool, files, path, *catalog, selected, from, to,
                                            RemainingCall(call, began), cache));
      for (ListedMetric& metric : metrics) {
        const uint32_t part = static_cast<uint32_t>(out.parts.size());
        if (metric.shapes) {
          if (metric.file->points.rows == 0) continue;
          out.parts.push_back(std::move(metric.file));
          for (uint32_t r = 0; r < out.parts[part]->points.rows; ++r)
            out.order.push_back({part, r});
        } else {
          const auto [first, last] = RowsIn(*metric.file, from, to);
          if (first == last) continue;
          out.parts.push_back(std::move(metric.file));
          absl::flat_hash_set<std::string> shapes;
          const query::TypedResult& points = out.parts[part]->points;
          for (auto it = first; it != last; ++it) {
            if (shapes.insert(LabelShapeOf(points, *it)).second) out.order.push_back({part, *it});
          }
        }
        if (out.order.size() > most_rows) return absl::ResourceExhaustedError(kTooManyPoints);
      }
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(
        std::vector<std::shared_ptr<const DecodedMetricsFile>> metrics,
        DecodedMetrics(pool, files, path, *catalog, selected, RemainingCall(call, began), cache));
    for (std::shared_ptr<const DecodedMetricsFile>& metric : metrics) {
      const auto [first, last] = RowsIn(*metric, from, to);
      if (first == last) continue;
      const uint32_t part = static_cast<uint32_t>(out.parts.size());
      out.parts.push_back(std::move(metric));
      const size_t run = out.order.size();
      for (auto it = first; it != last; ++it) out.order.push_back({part, *it});
      // This file's metrics' runs merged in name order at equal times.
      std::inplace_merge(out.order.begin() + file_run, out.order.begin() + run, out.order.end(),
                         by_time);
      if (out.order.size() > most_rows) return absl::ResourceExhaustedError(kTooManyPoints);
    }
    // Each file's run is in time order; merged stably, earlier files'
    // points stay ahead of later ones' at the same time, as a read would.
    std::inplace_merge(out.order.begin(), out.order.begin() + file_run, out.order.end(), by_time);
  }
  return out;
}

}  // namespace

absl::StatusOr<MetricPoints> ReadMetricPoints(query::QueryPool& pool, const query::ViewFiles& files,
                                              const CallOptions& call,
                                              const std::vector<std::string>& otlp_names,
                                              int64_t min_ms, int64_t max_ms,
                                              const PointColumnsWanted& wanted, PointRead read,
                                              size_t max_rows, PointCache* cache) {
  if (cache != nullptr && read != PointRead::kExemplars) {
    absl::StatusOr<MetricPoints> cached =
        SelectCachedPoints(pool, files, call, otlp_names, min_ms, max_ms, read, max_rows, *cache);
    if (!absl::IsUnimplemented(cached.status())) return cached;
  }
  STRATA_ASSIGN_OR_RETURN(DecodedMetricsFile queried,
                          QueryPoints(pool, files, call, &otlp_names,
                                      std::make_pair(min_ms, max_ms), wanted, read, max_rows));
  MetricPoints out;
  out.order.reserve(queried.by_time.size());
  for (const uint32_t r : queried.by_time) out.order.push_back({0, r});
  out.parts.push_back(std::make_shared<const DecodedMetricsFile>(std::move(queried)));
  return out;
}

absl::StatusOr<std::vector<CatalogVariant>> ReadCachedCatalog(
    query::QueryPool& pool, const query::ViewFiles& files, const CallOptions& call, int64_t min_ms,
    int64_t max_ms, bool every_metric, PointCache& cache) {
  const auto began = std::chrono::steady_clock::now();
  const uint64_t from = TimeFrom(min_ms), to = TimeTo(max_ms);
  using Key = std::tuple<std::string, std::string, int64_t, bool, int64_t>;
  // Each variant's least description so far (nullopt: none yet).
  std::map<Key, std::optional<std::string>> variants;
  for (size_t f = 0; f < files.metrics.size(); ++f) {
    const bool whole_file = every_metric && WindowHoldsFile(files, f, from, to, cache);
    STRATA_ASSIGN_OR_RETURN(
        std::shared_ptr<const FileCatalog> file,
        CatalogOf(pool, files, f, whole_file, RemainingCall(call, began), cache));
    for (const FileCatalog::Times& t : file->times) {
      if (!AnyTimeIn(t.times, from, to)) continue;
      const CatalogVariant& v = file->variants[t.variant];
      std::optional<std::string>& description =
          variants[Key(v.otlp_name, v.unit, v.type, v.monotonic, v.temporality)];
      if (t.description >= 0 &&
          (!description.has_value() || file->descriptions[t.description] < *description)) {
        description = file->descriptions[t.description];
      }
    }
  }
  std::vector<CatalogVariant> out;
  out.reserve(variants.size());
  for (auto& [key, description] : variants) {
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                   std::get<4>(key), description.value_or("")});
  }
  return out;
}

namespace {

// Adds the (resource, millisecond) pairs of `file`'s points in [from, to]
// (with `every_row`, of all its rows: label shapes) not in `seen` to `out`
// (ReadCachedResourceTimes), with resources by their joined fields in
// `resource_index`. ResourceExhausted past `most_rows` pairs.
absl::Status AddResourceTimes(const DecodedMetricsFile& file, uint64_t from, uint64_t to,
                              bool every_row, bool times_zero, size_t most_rows,
                              absl::flat_hash_map<std::string, size_t>& resource_index,
                              absl::flat_hash_set<std::pair<size_t, int64_t>>& seen,
                              ResourceTimes& out) {
  // This file's identities -> their resources' indexes.
  std::vector<size_t> resource_of(file.identities.size());
  for (size_t i = 0; i < resource_of.size(); ++i) {
    const MetricIdentity& m = file.identities[i];
    std::string key = absl::StrCat(m.service, "\x1d", m.service_namespace, "\x1d", m.instance,
                                   "\x1d", m.resource);
    const auto [it, fresh] = resource_index.emplace(std::move(key), out.resources.size());
    if (fresh) {
      MetricIdentity resource;
      resource.service = m.service;
      resource.service_namespace = m.service_namespace;
      resource.instance = m.instance;
      resource.resource = m.resource;
      out.resources.push_back(std::move(resource));
    }
    resource_of[i] = it->second;
  }
  const std::vector<uint64_t>& times = file.points.columns[kPointTime].uint64s;
  const std::vector<uint64_t>& ids = file.points.columns[kPointIdentity].uint64s;
  const auto [first, last] =
      every_row ? std::make_pair(file.by_time.begin(), file.by_time.end()) : RowsIn(file, from, to);
  for (auto it = first; it != last; ++it) {
    const int64_t t_ms = times_zero ? 0 : static_cast<int64_t>(times[*it] / 1'000'000);
    if (seen.emplace(resource_of[ids[*it]], t_ms).second) {
      out.points.emplace_back(resource_of[ids[*it]], t_ms);
      if (out.points.size() > most_rows) return absl::ResourceExhaustedError(kTooManyPoints);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResourceTimes> ReadCachedResourceTimes(query::QueryPool& pool,
                                                      const query::ViewFiles& files,
                                                      const CallOptions& call, int64_t min_ms,
                                                      int64_t max_ms, bool times_zero,
                                                      size_t max_rows, PointCache& cache) {
  const auto began = std::chrono::steady_clock::now();
  const uint64_t from = TimeFrom(min_ms), to = TimeTo(max_ms);
  const size_t most_rows = max_rows > 0 ? max_rows : pool.options().default_max_rows;
  ResourceTimes out;
  // A resource's fields, joined -> its index in out.resources.
  absl::flat_hash_map<std::string, size_t> resource_index;
  absl::flat_hash_set<std::pair<size_t, int64_t>> seen;
  for (size_t f = 0; f < files.metrics.size(); ++f) {
    const std::string& path = files.metrics[f];
    // Resources without their times (a listing) are the label shapes'
    // identities: no point decoded where the window holds them all.
    const bool whole_file = !times_zero && WindowHoldsFile(files, f, from, to, cache);
    STRATA_ASSIGN_OR_RETURN(
        std::shared_ptr<const FileCatalog> catalog,
        CatalogOf(pool, files, f, whole_file, RemainingCall(call, began), cache));
    std::vector<std::string> selected;
    for (const std::string& name : catalog->names) {
      if (HasPointIn(*catalog, name, from, to)) selected.push_back(name);
    }
    std::vector<ListedMetric> metrics;
    if (times_zero) {
      STRATA_ASSIGN_OR_RETURN(metrics, ListedMetrics(pool, files, path, *catalog, selected, from,
                                                     to, RemainingCall(call, began), cache));
    } else {
      STRATA_ASSIGN_OR_RETURN(
          std::vector<std::shared_ptr<const DecodedMetricsFile>> decoded,
          DecodedMetrics(pool, files, path, *catalog, selected, RemainingCall(call, began), cache));
      for (std::shared_ptr<const DecodedMetricsFile>& file : decoded) {
        metrics.push_back({std::move(file), false});
      }
    }
    for (const ListedMetric& metric : metrics) {
      STRATA_RETURN_IF_ERROR(AddResourceTimes(*metric.file, from, to, metric.shapes, times_zero,
                                              most_rows, resource_index, seen, out));
    }
  }
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

size_t DecodedMetricsFile::EstimatedBytes() const {
  size_t total = sizeof(*this) + by_time.capacity() * sizeof(uint32_t);
  for (const MetricIdentity& m : identities) {
    total += sizeof(m) + m.otlp_name.capacity() + m.unit.capacity() + m.service.capacity() +
             m.service_namespace.capacity() + m.instance.capacity() + m.attributes.capacity() +
             m.resource.capacity();
  }
  for (const query::TypedColumn& c : points.columns) {
    total += sizeof(c) + c.valid.capacity() + c.int64s.capacity() * sizeof(int64_t) +
             c.uint64s.capacity() * sizeof(uint64_t) + c.doubles.capacity() * sizeof(double) +
             c.offsets.capacity() * sizeof(size_t) + c.strings.capacity() * sizeof(std::string);
    for (const std::string& str : c.strings) total += str.capacity();
  }
  return total;
}

size_t FileCatalog::EstimatedBytes() const {
  size_t total = sizeof(*this) + names.capacity() * sizeof(std::string) +
                 descriptions.capacity() * sizeof(std::string) +
                 variants.capacity() * sizeof(CatalogVariant) + times.capacity() * sizeof(Times);
  for (const std::string& n : names) total += n.capacity();
  for (const std::string& d : descriptions) total += d.capacity();
  for (const CatalogVariant& v : variants) total += v.otlp_name.capacity() + v.unit.capacity();
  for (const Times& t : times) total += t.times.capacity() * sizeof(uint64_t);
  return total;
}

}  // namespace strata::api::internal
