// MetricsSeriesSource (prometheus_series.h): OTLP points read through the
// query pool and turned into Prometheus series in C++.
//
// A Select runs two queries: the catalog of OTLP metrics with a point in the
// window (name, unit, type, monotonicity, temporality), whose Prometheus
// names decide which OTLP metrics the `__name__` matchers want; then those
// metrics' points in time order. Each point becomes one sample of one or
// more series (a histogram point: one per bucket, `_sum` and `_count`), the
// other matchers are applied to the finished label sets, and delta points
// are summed into running totals so that rate() and increase() see
// counters. The series themselves are assembled by
// prometheus_series_builder.h.

#include "api/prometheus_series.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/prometheus_deltas.h"
#include "api/prometheus_labels.h"
#include "api/prometheus_names.h"
#include "api/prometheus_points.h"
#include "api/prometheus_series_builder.h"
#include "common/status_macros.h"
#include "compat/promql/label_matcher.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;
using internal::CellDouble;
using internal::CellInt;
using internal::CellString;

constexpr int kGauge = 5, kSum = 7, kHistogram = 9, kExponentialHistogram = 10, kSummary = 11;
constexpr int kDelta = 1;
constexpr int64_t kNoRecordedValue = 1;  // DataPointFlags.FLAG_NO_RECORDED_VALUE
constexpr size_t kMaxQueryBytes = size_t{512} << 20;

// One OTLP metric of the catalog.
struct CatalogEntry {
  std::string otlp_name;
  std::string unit;
  int64_t type = 0;
  bool monotonic = false;
  int64_t temporality = 0;
  std::string help;
  PromKind kind = PromKind::kGauge;
  std::string family;
};

PromKind KindOf(int64_t type, bool monotonic) {
  switch (type) {
    case kSum:
      return monotonic ? PromKind::kCounter : PromKind::kGauge;
    case kHistogram:
    case kExponentialHistogram:
      return PromKind::kHistogram;
    case kSummary:
      return PromKind::kSummary;
    default:
      return PromKind::kGauge;
  }
}

// The series names an OTLP metric gives: the family itself (gauges,
// counters, summary quantiles), `_bucket` (explicit histograms), `_sum`
// and `_count` (histograms and summaries).
std::vector<std::string> SeriesNames(const CatalogEntry& entry) {
  switch (entry.kind) {
    case PromKind::kHistogram:
      if (entry.type == kHistogram) {
        return {entry.family + "_bucket", entry.family + "_sum", entry.family + "_count"};
      }
      return {entry.family + "_sum", entry.family + "_count"};
    case PromKind::kSummary:
      return {entry.family, entry.family + "_sum", entry.family + "_count"};
    default:
      return {entry.family};
  }
}

// The metric variants with a point in [min_ms, max_ms]: from `cache`'s
// decoded files when there is one (and no file is too large to decode),
// else from DuckDB. `every_metric`: the caller reads the points of every
// variant listed next, through `cache` (internal::ReadCachedCatalog).
absl::StatusOr<std::vector<CatalogEntry>> ReadCatalog(query::QueryPool& pool,
                                                      const query::ViewFiles& files,
                                                      const CallOptions& call, int64_t min_ms,
                                                      int64_t max_ms, bool every_metric,
                                                      internal::PointCache* cache) {
  if (cache != nullptr) {
    absl::StatusOr<std::vector<internal::CatalogVariant>> cached =
        internal::ReadCachedCatalog(pool, files, call, min_ms, max_ms, every_metric, *cache);
    if (cached.ok()) {
      std::vector<CatalogEntry> out;
      out.reserve(cached->size());
      for (internal::CatalogVariant& v : *cached) {
        CatalogEntry entry;
        entry.otlp_name = std::move(v.otlp_name);
        entry.unit = std::move(v.unit);
        entry.type = v.type;
        entry.monotonic = v.monotonic;
        entry.temporality = v.temporality;
        entry.help = std::move(v.description);
        entry.kind = KindOf(entry.type, entry.monotonic);
        entry.family = PromMetricName(entry.otlp_name, entry.unit, entry.kind);
        out.push_back(std::move(entry));
      }
      return out;
    }
    if (!absl::IsUnimplemented(cached.status())) return cached.status();
  }
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, min_ms) * 1'000'000));
  params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, max_ms) * 1'000'000 + 999'999));
  constexpr char kSql[] =
      "SELECT metric_name, coalesce(metric_unit, ''), metric_type, coalesce(is_monotonic, false),"
      " coalesce(aggregation_temporality, 0), coalesce(min(metric_description), '')"
      " FROM metrics_stored WHERE metric_name IS NOT NULL"
      " AND time_unix_nano >= $1 AND time_unix_nano <= $2 GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3";
  STRATA_ASSIGN_OR_RETURN(query::QueryResult result,
                          pool.Run(files, kSql, internal::Options(call, std::move(params), 0)));
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 6, "metric catalog"));
  std::vector<CatalogEntry> out;
  for (const auto& row : result.rows) {
    CatalogEntry entry;
    entry.otlp_name = CellString(row[0]);
    entry.unit = CellString(row[1]);
    STRATA_ASSIGN_OR_RETURN(entry.type, CellInt(row[2]));
    entry.monotonic = CellString(row[3]) == "true";
    STRATA_ASSIGN_OR_RETURN(entry.temporality, CellInt(row[4]));
    entry.help = CellString(row[5]);
    entry.kind = KindOf(entry.type, entry.monotonic);
    entry.family = PromMetricName(entry.otlp_name, entry.unit, entry.kind);
    out.push_back(std::move(entry));
  }
  return out;
}

// Whether `m`, a matcher of `__name__`, accepts every series name (none
// is empty): =~".*", =~".+", !="" or !~"". Others may refuse some.
bool AcceptsEveryName(const promql::LabelMatcher& m) {
  switch (m.type) {
    case promql::MatchType::kRegexMatch:
      return m.value == ".*" || m.value == ".+";
    case promql::MatchType::kNotEqual:
    case promql::MatchType::kRegexNoMatch:
      return m.value.empty();
    case promql::MatchType::kEqual:
      return false;
  }
  return false;
}

// The delta sums and histograms among `wanted`, by OTLP name.
std::vector<std::string> DeltaNames(
    const std::map<std::string, std::vector<const CatalogEntry*>>& wanted) {
  std::vector<std::string> out;
  for (const auto& [name, entries] : wanted) {
    for (const CatalogEntry* e : entries) {
      if (e->temporality == kDelta &&
          (e->type == kSum || e->type == kHistogram || e->type == kExponentialHistogram)) {
        out.push_back(name);
        break;
      }
    }
  }
  return out;
}

// A series of one identity, resolved on first use: unset until then, then
// its index in the SeriesBuilder, or nullopt when the matchers refuse it.
using SeriesSlot = std::optional<std::optional<size_t>>;

// What the points of one identity (internal::MetricIdentity) share.
struct IdentitySeries {
  const CatalogEntry* entry = nullptr;  // null: a variant not asked for
  promql::Labels base;                  // job, instance and the attributes
  SeriesSlot value, count, sum;         // the family's own series, _count, _sum
  std::vector<double> bounds;           // the explicit bounds of the last point
  std::vector<std::string> le;          // `le` of each bucket of `bounds`, then +Inf
  std::vector<SeriesSlot> buckets;      // one per entry of `le`
  absl::flat_hash_map<std::string, SeriesSlot> quantiles;  // by `quantile` text
};

// target_info's labels for a resource: job and instance, and its other
// attributes (`resource`, as AttributeSetSql renders them).
promql::Labels TargetInfoLabels(const std::string& service, const std::string& service_namespace,
                                const std::string& instance, std::string_view resource) {
  promql::Labels labels;
  internal::AddResourceLabels(service, service_namespace, instance, &labels);
  std::string rest;
  for (const auto& [key, value] : internal::SplitAttributeSet(resource)) {
    if (key == "service.name" || key == "service.namespace" || key == "service.instance.id") {
      continue;
    }
    absl::StrAppend(&rest, key, "\x1f", value, "\x1e");
  }
  internal::AddAttributeLabels(rest, &labels);
  labels.push_back({"__name__", "target_info"});
  return promql::SortedByName(std::move(labels));
}

constexpr char kTargetInfoTooLarge[] =
    "target_info: more samples than the query's budget allows; narrow its range";

}  // namespace

absl::StatusOr<std::vector<promql::Series>> MetricsSeriesSource::Select(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    const promql::SelectLimits& limits) {
  return Collect(matchers, min_ms, max_ms, limits, Mode::kSamples, nullptr);
}

absl::StatusOr<std::vector<promql::Labels>> MetricsSeriesSource::SelectLabels(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    int64_t max_series) {
  STRATA_ASSIGN_OR_RETURN(
      std::vector<promql::Series> series,
      Collect(matchers, min_ms, max_ms, {.max_series = max_series}, Mode::kLabels, nullptr));
  std::vector<promql::Labels> out;
  out.reserve(series.size());
  for (auto& one : series) out.push_back(std::move(one.labels));
  return out;
}

absl::StatusOr<std::vector<PromExemplars>> MetricsSeriesSource::Exemplars(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    int64_t max_series) {
  std::vector<PromExemplars> out;
  STRATA_RETURN_IF_ERROR(
      Collect(matchers, min_ms, max_ms, {.max_series = max_series}, Mode::kExemplars, &out)
          .status());
  return out;
}

absl::StatusOr<std::vector<promql::Series>> MetricsSeriesSource::Collect(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    const promql::SelectLimits& limits, Mode mode, std::vector<PromExemplars>* exemplars_out) {
  const bool labels_only = mode == Mode::kLabels;
  // Exemplar mode: series key -> index in *exemplars_out.
  std::map<std::string, size_t> exemplar_index;
  std::vector<internal::CompiledMatcher> name_matchers, other_matchers;
  for (const auto& m : matchers) {
    (m.name == "__name__" ? name_matchers : other_matchers).emplace_back(m);
  }
  for (const auto* list : {&name_matchers, &other_matchers}) {
    for (const internal::CompiledMatcher& m : *list) STRATA_RETURN_IF_ERROR(m.status());
  }
  auto name_wanted = [&](std::string_view name) {
    return std::all_of(name_matchers.begin(), name_matchers.end(),
                       [&](const internal::CompiledMatcher& m) { return m.Matches(name); });
  };
  const auto began = std::chrono::steady_clock::now();
  // Every metric of the window's samples wanted (a query such as
  // {job="x"}): the points of every variant are read next, so a file is
  // decoded whole with its catalog. A listing reads label shapes instead
  // of points, and exemplars are not read through the cache.
  const bool every_metric =
      mode == Mode::kSamples &&
      std::all_of(matchers.begin(), matchers.end(), [](const promql::LabelMatcher& m) {
        return m.name != "__name__" || AcceptsEveryName(m);
      });
  STRATA_ASSIGN_OR_RETURN(std::vector<CatalogEntry> catalog,
                          ReadCatalog(pool_, files_, call_, min_ms, max_ms, every_metric, cache_));
  // OTLP name -> the entries (one per unit/type variant) whose series are wanted.
  std::map<std::string, std::vector<const CatalogEntry*>> wanted;
  for (const CatalogEntry& entry : catalog) {
    for (const std::string& name : SeriesNames(entry)) {
      if (name_wanted(name)) {
        wanted[entry.otlp_name].push_back(&entry);
        break;
      }
    }
  }
  internal::SeriesBuilder builder(other_matchers, limits);
  if (mode == Mode::kSamples) {
    if (const std::vector<std::string> deltas = DeltaNames(wanted); !deltas.empty()) {
      std::vector<internal::DeltaVariant> variants;
      for (const std::string& name : deltas) {
        for (const CatalogEntry* e : wanted[name]) {
          if (e->temporality != kDelta) continue;
          variants.push_back(
              {e->otlp_name, e->unit, e->type, e->monotonic, e->type == kSum, e->family});
        }
      }
      STRATA_ASSIGN_OR_RETURN(std::vector<internal::DeltaBaseline> baselines,
                              internal::ReadDeltaBaselines(pool_, files_, call_, variants, min_ms));
      for (const internal::DeltaBaseline& b : baselines) builder.SetBaseline(b.labels, b.total);
    }
  }
  const size_t max_rows = limits.max_samples > 0 ? static_cast<size_t>(limits.max_samples) : 0;

  if (!wanted.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, entries] : wanted) names.push_back(name);
    // Only the columns of the series asked for: a `_count` selection reads
    // no bucket lists.
    internal::PointColumnsWanted columns;
    for (const auto& [name, entries] : wanted) {
      for (const CatalogEntry* e : entries) {
        if (e->type == kGauge || e->type == kSum) {
          columns.value = columns.value || name_wanted(e->family);
          continue;
        }
        columns.count = columns.count || name_wanted(e->family + "_count");
        columns.sum = columns.sum || name_wanted(e->family + "_sum");
        columns.buckets =
            columns.buckets || (e->type == kHistogram &&
                                (mode == Mode::kExemplars || name_wanted(e->family + "_bucket")));
        columns.quantiles = columns.quantiles || (e->type == kSummary && name_wanted(e->family));
      }
    }
    const internal::PointRead read = mode == Mode::kSamples  ? internal::PointRead::kSamples
                                     : mode == Mode::kLabels ? internal::PointRead::kLabels
                                                             : internal::PointRead::kExemplars;
    STRATA_ASSIGN_OR_RETURN(
        internal::MetricPoints points,
        internal::ReadMetricPoints(pool_, files_, internal::RemainingCall(call_, began), names,
                                   min_ms, max_ms, columns, read, max_rows, cache_));
    // What the points of one identity share: the catalog entry, the labels,
    // and the series each emitted name and label value goes to; a part's
    // identities from identity_base[part] on.
    std::vector<size_t> identity_base;
    size_t identity_count = 0;
    for (const auto& part : points.parts) {
      identity_base.push_back(identity_count);
      identity_count += part->identities.size();
    }
    std::vector<IdentitySeries> identities(identity_count);
    for (size_t p = 0; p < points.parts.size(); ++p) {
      for (size_t j = 0; j < points.parts[p]->identities.size(); ++j) {
        const internal::MetricIdentity& m = points.parts[p]->identities[j];
        IdentitySeries& identity = identities[identity_base[p] + j];
        const auto found = wanted.find(m.otlp_name);
        if (found == wanted.end()) continue;
        const auto entry =
            std::find_if(found->second.begin(), found->second.end(), [&](const CatalogEntry* e) {
              return e->unit == m.unit && e->type == m.type && e->monotonic == m.monotonic &&
                     e->temporality == m.temporality;
            });
        if (entry == found->second.end()) continue;  // a variant not asked for
        identity.entry = *entry;
        internal::AddResourceLabels(m.service, m.service_namespace, m.instance, &identity.base);
        internal::AddAttributeLabels(m.attributes, &identity.base);
      }
    }
    // The series of `slot` (resolved on first use): family + `suffix`, with
    // label `extra_name` = `extra` when extra_name is not empty; nullopt
    // when the matchers refuse it.
    auto resolve = [&](const IdentitySeries& identity, SeriesSlot& slot, std::string_view suffix,
                       std::string_view extra_name,
                       const std::string& extra) -> absl::StatusOr<std::optional<size_t>> {
      if (!slot.has_value()) {
        std::optional<size_t> index;
        const std::string name = absl::StrCat(identity.entry->family, std::string(suffix));
        if (name_wanted(name)) {
          promql::Labels labels = identity.base;
          labels.push_back({"__name__", name});
          if (!extra_name.empty()) labels.push_back({std::string(extra_name), extra});
          STRATA_ASSIGN_OR_RETURN(index, builder.Intern(promql::SortedByName(std::move(labels))));
        }
        slot = index;
      }
      return *slot;
    };
    for (const internal::PointRow point : points.order) {
      const std::vector<query::TypedColumn>& col = points.parts[point.part]->points.columns;
      const size_t r = point.row;
      IdentitySeries& identity =
          identities[identity_base[point.part] + col[internal::kPointIdentity].uint64s[r]];
      if (identity.entry == nullptr) continue;
      const CatalogEntry& e = *identity.entry;
      const int64_t t_ms = static_cast<int64_t>(col[internal::kPointTime].uint64s[r]) / 1'000'000;
      // A labels read of a cached file has real flags and sums: only the shape counts.
      const bool stale =
          !labels_only && (col[internal::kPointFlags].int64s[r] & kNoRecordedValue) != 0;
      const query::TypedColumn& bounds_column = col[internal::kPointBounds];
      if (mode == Mode::kExemplars) {
        std::vector<MetricExemplar> exemplars;
        STRATA_RETURN_IF_ERROR(
            internal::ParseExemplars(col[internal::kPointExemplars].strings[r], &exemplars));
        const double* bounds = bounds_column.double_list(r);
        const double* bounds_end = bounds + bounds_column.list_size(r);
        for (MetricExemplar& exemplar : exemplars) {
          if (exemplar.time < min_ms * 1'000'000 || exemplar.time > max_ms * 1'000'000 + 999'999) {
            continue;
          }
          // The series an exemplar belongs to: the family's, or for a
          // histogram the bucket that holds its value.
          promql::Labels labels = identity.base;
          if (e.type == kHistogram) {
            const double v = exemplar.value.value_or(0);
            const double* bound =
                std::find_if(bounds, bounds_end, [&](double b) { return v <= b; });
            labels.push_back({"__name__", e.family + "_bucket"});
            labels.push_back(
                {"le", internal::PromBoundText(bound == bounds_end ? INFINITY : *bound)});
          } else if (e.type == kGauge || e.type == kSum) {
            labels.push_back({"__name__", e.family});
          } else {
            continue;
          }
          if (!name_wanted(labels[labels.size() - (e.type == kHistogram ? 2 : 1)].value)) continue;
          labels = promql::SortedByName(std::move(labels));
          if (!std::all_of(other_matchers.begin(), other_matchers.end(),
                           [&](const internal::CompiledMatcher& m) {
                             return m.Matches(promql::LabelValue(labels, m.name()));
                           })) {
            continue;
          }
          std::string key;
          for (const auto& label : labels)
            absl::StrAppend(&key, label.name, "\x1f", label.value, "\x1e");
          auto [it, inserted] = exemplar_index.emplace(std::move(key), exemplars_out->size());
          if (inserted) {
            if (limits.max_series > 0 &&
                static_cast<int64_t>(exemplars_out->size()) >= limits.max_series) {
              return absl::ResourceExhaustedError(absl::StrCat(
                  "the query's exemplars span more than ", limits.max_series, " series"));
            }
            exemplars_out->push_back({std::move(labels), {}});
          }
          (*exemplars_out)[it->second].exemplars.push_back(std::move(exemplar));
        }
        continue;
      }
      const bool delta = e.temporality == kDelta;
      auto emit = [&](SeriesSlot& slot, std::string_view suffix, std::string_view extra_name,
                      const std::string& extra, double v, bool accumulate) -> absl::Status {
        STRATA_ASSIGN_OR_RETURN(const std::optional<size_t> index,
                                resolve(identity, slot, suffix, extra_name, extra));
        if (!index.has_value()) return absl::OkStatus();
        return builder.Append(*index, t_ms, v, accumulate, stale);
      };
      auto number = [&](internal::PointColumn c) {
        const query::TypedColumn& column = col[c];
        if (!column.is_valid(r)) return std::nan("");
        return column.kind == query::TypedKind::kUInt64 ? static_cast<double>(column.uint64s[r])
                                                        : column.doubles[r];
      };
      if (e.type == kGauge || e.type == kSum) {
        STRATA_RETURN_IF_ERROR(emit(identity.value, "", "", "", number(internal::kPointValue),
                                    delta && e.type == kSum));
        continue;
      }
      const double count = number(internal::kPointCount);
      const double sum = number(internal::kPointSum);
      const bool accumulate = delta && e.type != kSummary;
      if (labels_only ? col[internal::kPointSum].is_valid(r) : !std::isnan(sum) || stale) {
        STRATA_RETURN_IF_ERROR(emit(identity.sum, "_sum", "", "", sum, accumulate));
      }
      STRATA_RETURN_IF_ERROR(emit(identity.count, "_count", "", "", count, accumulate));
      // Columns not asked for may hold values (a cached file's points):
      // only the wanted ones make series.
      if (e.type == kHistogram && columns.buckets) {
        const double* bounds = bounds_column.double_list(r);
        const size_t bound_count = bounds_column.list_size(r);
        if (identity.le.empty() || !std::equal(bounds, bounds + bound_count,
                                               identity.bounds.begin(), identity.bounds.end())) {
          identity.bounds.assign(bounds, bounds + bound_count);
          identity.le.clear();
          for (double bound : identity.bounds)
            identity.le.push_back(internal::PromBoundText(bound));
          identity.le.push_back("+Inf");
          identity.buckets.assign(identity.le.size(), SeriesSlot());
        }
        const query::TypedColumn& counts = col[internal::kPointBuckets];
        const uint64_t* bucket_counts = counts.uint64_list(r);
        double cumulative = 0;
        for (size_t i = 0; i < counts.list_size(r); ++i) {
          cumulative += static_cast<double>(bucket_counts[i]);
          const size_t k = std::min(i, identity.le.size() - 1);
          STRATA_RETURN_IF_ERROR(
              emit(identity.buckets[k], "_bucket", "le", identity.le[k], cumulative, accumulate));
        }
      } else if (e.type == kSummary && columns.quantiles) {
        const query::TypedColumn& quantiles = col[internal::kPointQuantiles];
        const query::TypedColumn& values = col[internal::kPointQuantileValues];
        const size_t n = std::min(quantiles.list_size(r), values.list_size(r));
        for (size_t i = 0; i < n; ++i) {
          std::string quantile = internal::PromBoundText(quantiles.double_list(r)[i]);
          SeriesSlot& slot = identity.quantiles[quantile];
          STRATA_RETURN_IF_ERROR(
              emit(slot, "", "quantile", quantile, values.double_list(r)[i], false));
        }
      }
    }
  }

  if (mode != Mode::kExemplars && name_wanted("target_info")) {
    STRATA_RETURN_IF_ERROR(AddTargetInfo(min_ms, max_ms, labels_only, max_rows,
                                         internal::RemainingCall(call_, began), builder));
  }
  // Both queries read in time order, so every series' samples ascend.
  return builder.Finish();
}

absl::Status MetricsSeriesSource::AddTargetInfo(int64_t min_ms, int64_t max_ms, bool labels_only,
                                                size_t max_rows, const CallOptions& call,
                                                internal::SeriesBuilder& builder) {
  // One sample of value 1 per resource and point time.
  if (cache_ != nullptr) {
    absl::StatusOr<internal::ResourceTimes> cached = internal::ReadCachedResourceTimes(
        pool_, files_, call, min_ms, max_ms, labels_only, max_rows, *cache_);
    if (absl::IsResourceExhausted(cached.status())) {
      return absl::ResourceExhaustedError(kTargetInfoTooLarge);
    }
    if (!absl::IsUnimplemented(cached.status())) {
      STRATA_RETURN_IF_ERROR(cached.status());
      std::vector<promql::Labels> labels;
      labels.reserve(cached->resources.size());
      for (const internal::MetricIdentity& r : cached->resources) {
        labels.push_back(TargetInfoLabels(r.service, r.service_namespace, r.instance, r.resource));
      }
      for (const auto& [resource, t_ms] : cached->points) {
        STRATA_RETURN_IF_ERROR(builder.Add(labels[resource], t_ms, 1, false, false));
      }
      return absl::OkStatus();
    }
  }
  std::vector<query::QueryParam> info_params;
  info_params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, min_ms) * 1'000'000));
  info_params.emplace_back(
      static_cast<uint64_t>(std::max<int64_t>(0, max_ms) * 1'000'000 + 999'999));
  const std::string sql =
      absl::StrCat("SELECT DISTINCT coalesce(service_name, ''), ",
                   internal::ResourceValueSql("service.namespace"), ", ",
                   internal::ResourceValueSql("service.instance.id"), ", ",
                   internal::AttributeSetSql("resource_attr"),
                   labels_only ? ", 0" : ", time_unix_nano // 1000000",
                   " FROM metrics WHERE time_unix_nano >= $1 AND time_unix_nano <= $2",
                   labels_only ? "" : " ORDER BY 5");
  query::QueryOptions options = internal::Options(call, std::move(info_params), max_rows);
  options.max_bytes = kMaxQueryBytes;
  STRATA_ASSIGN_OR_RETURN(query::QueryResult result, pool_.Run(files_, sql, options));
  if (result.truncated) return absl::ResourceExhaustedError(kTargetInfoTooLarge);
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 5, "target_info"));
  for (const auto& row : result.rows) {
    STRATA_ASSIGN_OR_RETURN(const int64_t t_ms, CellInt(row[4]));
    STRATA_RETURN_IF_ERROR(builder.Add(TargetInfoLabels(CellString(row[0]), CellString(row[1]),
                                                        CellString(row[2]), CellString(row[3])),
                                       t_ms, 1, false, false));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PromMetadata>> MetricsSeriesSource::Metadata(int64_t min_ms,
                                                                        int64_t max_ms) {
  STRATA_ASSIGN_OR_RETURN(std::vector<CatalogEntry> catalog,
                          ReadCatalog(pool_, files_, call_, min_ms, max_ms,
                                      /*every_metric=*/false, cache_));
  std::map<std::string, PromMetadata> by_name;
  for (const CatalogEntry& entry : catalog) {
    static constexpr std::string_view kTypes[] = {"gauge", "counter", "histogram", "summary"};
    PromMetadata one{entry.family, std::string(kTypes[static_cast<int>(entry.kind)]), entry.unit,
                     entry.help};
    by_name.emplace(entry.family, std::move(one));
  }
  std::vector<PromMetadata> out;
  for (auto& [name, one] : by_name) out.push_back(std::move(one));
  return out;
}

}  // namespace strata::api
