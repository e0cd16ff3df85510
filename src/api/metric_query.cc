// MetricNames, ParseAggregation, DefaultStep and QueryMetric (search.h).
//
// QueryMetric reads the matching points (at most kMaxMetricPoints) ordered
// by stream and time, and aggregates them here: rates and histogram
// quantiles need each stream's previous point, which is simpler and exact
// in C++.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "api/params.h"
#include "api/search.h"
#include "common/status_macros.h"

namespace strata::api {
namespace {

using internal::CellDouble;
using internal::CellInt;
using internal::CellString;
using internal::kExemplarsSql;
using internal::ParseExemplars;

constexpr int kGauge = 5, kSum = 7, kHistogram = 9, kExponentialHistogram = 10, kSummary = 11;
constexpr int kCumulative = 2;

std::string TypeName(int64_t type) {
  switch (type) {
    case kGauge:
      return "gauge";
    case kSum:
      return "sum";
    case kHistogram:
      return "histogram";
    case kExponentialHistogram:
      return "exponential_histogram";
    case kSummary:
      return "summary";
    default:
      return "unset";
  }
}

// "1,2.5,3" (array_to_string of a list) -> numbers; NULL or "" -> {}.
absl::StatusOr<std::vector<double>> ParseNumberList(const std::optional<std::string>& cell) {
  std::vector<double> out;
  if (!cell.has_value()) return out;
  const std::string_view text = *cell;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string_view::npos) end = text.size();
    STRATA_ASSIGN_OR_RETURN(double value, CellDouble(std::string(text.substr(begin, end - begin))));
    out.push_back(value);
    begin = end + 1;
  }
  return out;
}

struct Bucket {
  double value_sum = 0;
  int64_t value_count = 0;
  double value_min = INFINITY;
  double value_max = -INFINITY;
  double hist_sum = 0;
  double hist_count = 0;
  double increase = 0;
  bool has_increase = false;
  std::vector<double> bounds;
  std::vector<double> counts;
};

// The q-quantile of a merged explicit-bucket histogram, interpolating
// linearly inside the bucket that holds the rank. The first bucket starts
// at 0 when its upper bound is positive (else at that bound); a rank in the
// overflow bucket answers the largest finite bound.
std::optional<double> HistogramQuantile(double q, const std::vector<double>& bounds,
                                        const std::vector<double>& counts) {
  double total = 0;
  for (double c : counts) total += c;
  if (total <= 0 || counts.empty()) return std::nullopt;
  const double rank = q * total;
  double before = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (before + counts[i] < rank && i + 1 < counts.size()) {
      before += counts[i];
      continue;
    }
    if (i >= bounds.size()) return bounds.empty() ? std::nullopt : std::optional(bounds.back());
    const double upper = bounds[i];
    const double lower = i == 0 ? std::min(0.0, upper) : bounds[i - 1];
    if (counts[i] <= 0) return upper;
    return lower + (upper - lower) * (rank - before) / counts[i];
  }
  return std::nullopt;
}

double QuantileOf(Aggregation aggregation) {
  switch (aggregation) {
    case Aggregation::kP50:
      return 0.5;
    case Aggregation::kP90:
      return 0.9;
    case Aggregation::kP95:
      return 0.95;
    case Aggregation::kP99:
      return 0.99;
    default:
      return -1;
  }
}

std::optional<double> Finish(const Bucket& bucket, Aggregation aggregation, int64_t step) {
  switch (aggregation) {
    case Aggregation::kSum:
      if (bucket.value_count > 0) return bucket.value_sum;
      if (bucket.hist_count > 0) return bucket.hist_sum;
      return std::nullopt;
    case Aggregation::kAvg:
      if (bucket.value_count > 0) return bucket.value_sum / static_cast<double>(bucket.value_count);
      if (bucket.hist_count > 0) return bucket.hist_sum / bucket.hist_count;
      return std::nullopt;
    case Aggregation::kMin:
      if (std::isinf(bucket.value_min)) return std::nullopt;
      return bucket.value_min;
    case Aggregation::kMax:
      if (std::isinf(bucket.value_max)) return std::nullopt;
      return bucket.value_max;
    case Aggregation::kRate:
      if (!bucket.has_increase) return std::nullopt;
      return bucket.increase / (static_cast<double>(step) / kNanosPerSecond);
    default:
      return HistogramQuantile(QuantileOf(aggregation), bucket.bounds, bucket.counts);
  }
}

}  // namespace

absl::StatusOr<Aggregation> ParseAggregation(std::string_view name, std::string_view value) {
  static constexpr std::pair<std::string_view, Aggregation> kNames[] = {
      {"sum", Aggregation::kSum}, {"avg", Aggregation::kAvg},   {"min", Aggregation::kMin},
      {"max", Aggregation::kMax}, {"rate", Aggregation::kRate}, {"p50", Aggregation::kP50},
      {"p90", Aggregation::kP90}, {"p95", Aggregation::kP95},   {"p99", Aggregation::kP99}};
  for (const auto& [text, aggregation] : kNames) {
    if (value == text) return aggregation;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(name),
      ": not one of sum, avg, min, max, rate, p50, p90, p95, p99: ", QuoteForError(value)));
}

int64_t DefaultStep(int64_t start, int64_t end) {
  const int64_t raw = (end - start) / 60;
  const int64_t seconds = (raw + kNanosPerSecond / 2) / kNanosPerSecond;
  return std::max<int64_t>(1, seconds) * kNanosPerSecond;
}

absl::StatusOr<std::vector<MetricName>> MetricNames(query::QueryPool& pool,
                                                    const query::ViewFiles& files, int64_t start,
                                                    int64_t end, int64_t limit,
                                                    const CallOptions& call) {
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(start));
  params.emplace_back(static_cast<uint64_t>(end));
  const std::string sql = absl::StrCat(
      "SELECT metric_name, min(metric_type), coalesce(min(metric_unit), ''), count(*)"
      " FROM metrics WHERE time_unix_nano >= $1 AND time_unix_nano < $2"
      " AND metric_name IS NOT NULL GROUP BY metric_name ORDER BY metric_name LIMIT ",
      limit);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql, internal::Options(call, std::move(params), static_cast<size_t>(limit))));
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 4, "metric names"));
  std::vector<MetricName> out;
  for (const auto& row : result.rows) {
    MetricName name;
    name.name = CellString(row[0]);
    STRATA_ASSIGN_OR_RETURN(int64_t type, CellInt(row[1]));
    name.type = TypeName(type);
    name.unit = CellString(row[2]);
    STRATA_ASSIGN_OR_RETURN(name.points, CellInt(row[3]));
    out.push_back(std::move(name));
  }
  return out;
}

absl::StatusOr<std::vector<MetricSeries>> QueryMetric(query::QueryPool& pool,
                                                      const query::ViewFiles& files,
                                                      const MetricQuery& q,
                                                      const CallOptions& call) {
  if (q.step <= 0) return absl::InvalidArgumentError("step: must be positive");
  if ((q.end - q.start) / q.step >= kMaxMetricBuckets) {
    return absl::InvalidArgumentError(absl::StrCat("step: the window would have more than ",
                                                   kMaxMetricBuckets, " steps; use a larger step"));
  }
  std::vector<query::QueryParam> params;
  params.emplace_back(q.name);
  params.emplace_back(static_cast<uint64_t>(q.start));
  params.emplace_back(static_cast<uint64_t>(q.end));
  std::string filters;
  for (const auto& [key, value] : q.attributes) {
    internal::AppendAttributeFilter(key, value, {"attr", "resource_attr"}, &filters, &params);
  }
  const std::string sql = absl::StrCat(
      "SELECT coalesce(service_name, ''), ", internal::AttributeSetSql("attr"), " AS point_attrs, ",
      internal::AttributeSetSql("resource_attr"),
      " AS resource_attrs, time_unix_nano, metric_type, aggregation_temporality,"
      " coalesce(value_double, CAST(value_int AS DOUBLE)), \"count\", \"sum\", \"min\", \"max\","
      " array_to_string(explicit_bounds, ','), array_to_string(bucket_counts, ','), ",
      kExemplarsSql,
      " FROM metrics"
      " WHERE metric_name = $1 AND time_unix_nano >= $2 AND time_unix_nano < $3",
      filters, " ORDER BY 1, 2, 3, time_unix_nano");
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql, internal::Options(call, std::move(params), kMaxMetricPoints)));
  if (result.truncated) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: more than ", kMaxMetricPoints,
                     " points in the window; narrow start/end or add attr.<key> filters"));
  }
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 14, "metric query"));
  const bool quantile = QuantileOf(q.aggregation) > 0;

  // series (service, point attributes) -> bucket index -> accumulator.
  std::map<std::pair<std::string, std::string>, std::map<int64_t, Bucket>> series;
  std::map<std::pair<std::string, std::string>, std::vector<MetricExemplar>> exemplars;
  std::tuple<std::string, std::string, std::string> previous_stream;
  bool have_previous = false;
  // The stream's previous value (or histogram count) and bucket counts.
  bool have_value = false;
  double previous_value = 0;
  std::vector<double> previous_counts;
  for (const auto& row : result.rows) {
    std::tuple<std::string, std::string, std::string> stream{CellString(row[0]), CellString(row[1]),
                                                             CellString(row[2])};
    const bool same_stream = have_previous && stream == previous_stream;
    if (!same_stream) {
      have_value = false;
      previous_counts.clear();
    }
    STRATA_ASSIGN_OR_RETURN(int64_t time, CellInt(row[3]));
    STRATA_ASSIGN_OR_RETURN(int64_t type, CellInt(row[4]));
    const int64_t temporality = row[5].has_value() ? *CellInt(row[5]) : 0;
    Bucket& bucket = series[{std::get<0>(stream), std::get<1>(stream)}][(time - q.start) / q.step];
    if (row[13].has_value() && !row[13]->empty()) {
      STRATA_RETURN_IF_ERROR(
          ParseExemplars(*row[13], &exemplars[{std::get<0>(stream), std::get<1>(stream)}]));
    }
    const bool cumulative = temporality == kCumulative || type == kGauge;
    if (type == kGauge || type == kSum) {
      STRATA_ASSIGN_OR_RETURN(double value, CellDouble(row[6]));
      if (!std::isnan(value)) {
        bucket.value_sum += value;
        ++bucket.value_count;
        bucket.value_min = std::min(bucket.value_min, value);
        bucket.value_max = std::max(bucket.value_max, value);
        if (!cumulative) {
          bucket.increase += value;
          bucket.has_increase = true;
        } else if (have_value) {
          const double delta = value - previous_value;
          bucket.increase += delta < 0 && type == kSum ? value : delta;
          bucket.has_increase = true;
        }
        previous_value = value;
        have_value = true;
      }
    } else if (type == kHistogram || type == kExponentialHistogram || type == kSummary) {
      STRATA_ASSIGN_OR_RETURN(double count, CellDouble(row[7]));
      STRATA_ASSIGN_OR_RETURN(double sum, CellDouble(row[8]));
      STRATA_ASSIGN_OR_RETURN(double min, CellDouble(row[9]));
      STRATA_ASSIGN_OR_RETURN(double max, CellDouble(row[10]));
      if (!std::isnan(sum)) bucket.hist_sum += sum;
      if (!std::isnan(count)) bucket.hist_count += count;
      if (!std::isnan(min)) bucket.value_min = std::min(bucket.value_min, min);
      if (!std::isnan(max)) bucket.value_max = std::max(bucket.value_max, max);
      if (!std::isnan(count)) {
        if (!cumulative) {
          bucket.increase += count;
          bucket.has_increase = true;
        } else if (have_value) {
          const double delta = count - previous_value;
          bucket.increase += delta < 0 ? count : delta;
          bucket.has_increase = true;
        }
        previous_value = count;
        have_value = true;
      }
      if (type == kHistogram && quantile) {
        STRATA_ASSIGN_OR_RETURN(std::vector<double> bounds, ParseNumberList(row[11]));
        STRATA_ASSIGN_OR_RETURN(std::vector<double> counts, ParseNumberList(row[12]));
        std::vector<double> delta = counts;
        bool use = true;
        if (cumulative) {
          use = !previous_counts.empty();
          if (use && previous_counts.size() == counts.size()) {
            bool reset = false;
            for (size_t i = 0; i < counts.size(); ++i) {
              delta[i] = counts[i] - previous_counts[i];
              if (delta[i] < 0) reset = true;
            }
            if (reset) delta = counts;
          }
        }
        previous_counts = counts;
        if (use) {
          if (bucket.counts.empty()) {
            bucket.bounds = bounds;
            bucket.counts = delta;
          } else if (bucket.bounds == bounds && bucket.counts.size() == delta.size()) {
            for (size_t i = 0; i < delta.size(); ++i) bucket.counts[i] += delta[i];
          }
        }
      }
    }
    previous_stream = std::move(stream);
    have_previous = true;
  }

  std::vector<MetricSeries> out;
  for (const auto& [key, buckets] : series) {
    MetricSeries one;
    if (!key.first.empty()) one.labels.emplace_back("service.name", key.first);
    for (auto& label : internal::SplitAttributeSet(key.second)) {
      one.labels.push_back(std::move(label));
    }
    for (const auto& [index, bucket] : buckets) {
      std::optional<double> value = Finish(bucket, q.aggregation, q.step);
      if (value.has_value()) one.points.emplace_back(q.start + index * q.step, *value);
    }
    if (one.points.empty()) continue;
    if (auto found = exemplars.find(key); found != exemplars.end()) {
      one.exemplars = std::move(found->second);
      auto by_time = [](const MetricExemplar& a, const MetricExemplar& b) {
        return std::tie(a.time, a.trace_id, a.span_id) < std::tie(b.time, b.trace_id, b.span_id);
      };
      std::sort(one.exemplars.begin(), one.exemplars.end(), by_time);
      if (one.exemplars.size() > kMaxMetricExemplarsPerSeries) {
        one.exemplars.erase(one.exemplars.begin(),
                            one.exemplars.end() - kMaxMetricExemplarsPerSeries);
      }
    }
    if (static_cast<int64_t>(out.size()) == kMaxMetricSeries) {
      return absl::InvalidArgumentError(
          absl::StrCat("name: more than ", kMaxMetricSeries, " series; add attr.<key> filters"));
    }
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace strata::api
