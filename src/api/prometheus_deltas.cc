// Delta baselines (prometheus_deltas.h): one query summing each delta
// series' values, sums and bucket counts before the window.

#include "api/prometheus_deltas.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/prometheus_labels.h"
#include "api/prometheus_points.h"
#include "common/status_macros.h"
#include "compat/promql/label_matcher.h"

namespace strata::api::internal {
namespace {

namespace promql = compat::promql;

// "1,2.5,3" (array_to_string of a list) -> numbers.
absl::StatusOr<std::vector<double>> DeltaBoundList(const std::optional<std::string>& cell) {
  std::vector<double> out;
  if (!cell.has_value() || cell->empty()) return out;
  size_t begin = 0;
  const std::string& text = *cell;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    STRATA_ASSIGN_OR_RETURN(double value, CellDouble(text.substr(begin, end - begin)));
    out.push_back(value);
    begin = end + 1;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<DeltaBaseline>> ReadDeltaBaselines(
    query::QueryPool& pool, const query::ViewFiles& files, const CallOptions& call,
    const std::vector<DeltaVariant>& variants, int64_t min_ms) {
  std::vector<DeltaBaseline> out;
  if (variants.empty()) return out;
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, min_ms) * 1'000'000));
  std::set<std::string> names;
  for (const DeltaVariant& v : variants) names.insert(v.otlp_name);
  std::vector<std::string> placeholders;
  for (const std::string& name : names) {
    placeholders.push_back(NextParam(params));
    params.emplace_back(name);
  }
  const std::string identity = absl::StrCat(
      "metric_name, coalesce(metric_unit, ''), metric_type, coalesce(is_monotonic, false),"
      " coalesce(service_name, ''), ",
      ResourceValueSql("service.namespace"), ", ", ResourceValueSql("service.instance.id"), ", ",
      AttributeSetSql("attr"), " AS attrs, array_to_string(explicit_bounds, ',') AS bounds");
  const std::string where = absl::StrCat(
      " FROM metrics WHERE time_unix_nano < $1 AND aggregation_temporality = 1"
      " AND metric_name IN (",
      absl::StrJoin(placeholders, ", "), ")");
  // Bucket -1: the value (sums) or the count, -2: the histogram's sum, k >= 0:
  // bucket k's count.
  const std::string sql = absl::StrCat(
      "SELECT * FROM (SELECT ", identity,
      ", -1 AS k, sum(coalesce(value_double, CAST(value_int AS DOUBLE), CAST(\"count\" AS "
      "DOUBLE)))",
      where, " GROUP BY ALL UNION ALL SELECT ", identity, ", -2, sum(\"sum\")", where,
      " AND \"sum\" IS NOT NULL GROUP BY ALL UNION ALL SELECT i.* EXCLUDE (c), sum(c) FROM "
      "(SELECT ",
      identity, ", unnest(range(0, len(bucket_counts))) AS k, unnest(bucket_counts) AS c", where,
      " AND bucket_counts IS NOT NULL) i GROUP BY ALL) ORDER BY ALL");
  STRATA_ASSIGN_OR_RETURN(query::QueryResult result,
                          pool.Run(files, sql, Options(call, std::move(params), 0)));
  STRATA_RETURN_IF_ERROR(CheckShape(result, 11, "delta baselines"));
  // Cumulative bucket totals of the series being read, by its row's identity.
  std::string last_identity;
  double cumulative = 0;
  for (const auto& row : result.rows) {
    const std::string otlp_name = CellString(row[0]);
    STRATA_ASSIGN_OR_RETURN(const int64_t type, CellInt(row[2]));
    const bool monotonic = CellString(row[3]) == "true";
    const std::string unit = CellString(row[1]);
    const auto variant = std::find_if(variants.begin(), variants.end(), [&](const DeltaVariant& v) {
      return v.otlp_name == otlp_name && v.unit == unit && v.type == type &&
             v.monotonic == monotonic;
    });
    if (variant == variants.end()) continue;
    promql::Labels labels;
    AddResourceLabels(CellString(row[4]), CellString(row[5]), CellString(row[6]), &labels);
    AddAttributeLabels(CellString(row[7]), &labels);
    STRATA_ASSIGN_OR_RETURN(const int64_t k, CellInt(row[9]));
    STRATA_ASSIGN_OR_RETURN(const double total, CellDouble(row[10]));
    if (std::isnan(total)) continue;
    if (variant->is_sum) {
      labels.push_back({"__name__", variant->family});
    } else if (k == -1) {
      labels.push_back({"__name__", variant->family + "_count"});
    } else if (k == -2) {
      labels.push_back({"__name__", variant->family + "_sum"});
    } else {
      // Buckets come in order of k within one identity: le is cumulative.
      const std::string identity_key = absl::StrCat(
          CellString(row[0]), "\x1e", CellString(row[4]), "\x1e", CellString(row[5]), "\x1e",
          CellString(row[6]), "\x1e", CellString(row[7]), "\x1e", CellString(row[8]));
      if (identity_key != last_identity || k == 0) cumulative = 0;
      last_identity = identity_key;
      cumulative += total;
      STRATA_ASSIGN_OR_RETURN(std::vector<double> bounds, DeltaBoundList(row[8]));
      const double le = k < static_cast<int64_t>(bounds.size()) ? bounds[k] : INFINITY;
      labels.push_back({"__name__", variant->family + "_bucket"});
      labels.push_back({"le", PromBoundText(le)});
      out.push_back({promql::SortedByName(std::move(labels)), cumulative});
      continue;
    }
    out.push_back({promql::SortedByName(std::move(labels)), total});
  }
  return out;
}

}  // namespace strata::api::internal
