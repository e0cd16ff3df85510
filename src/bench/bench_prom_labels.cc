#include "bench/bench_prom_labels.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <tuple>

#include "api/prometheus_point_cache.h"
#include "api/prometheus_series.h"
#include "bench/bench_common.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::bench {
namespace {

namespace promql = compat::promql;

// The most series one listing may answer, as the endpoints allow
// (prometheus_endpoints.cc).
constexpr int64_t kListedSeriesMax = 100'000;

// One listing as its endpoint computes it from the label sets of its
// match[] selector: the answer as strings (a series as its labels' text).
using ListingAnswer = std::vector<std::string>;
using Reduce = std::function<ListingAnswer(const std::vector<promql::Labels>&)>;

ListingAnswer SeriesAnswer(const std::vector<promql::Labels>& sets) {
  std::set<std::string> series;
  for (const promql::Labels& labels : sets) {
    std::string text;
    for (const promql::Label& label : labels) {
      text.append(label.name).append("=").append(label.value).append(",");
    }
    series.insert(std::move(text));
  }
  return ListingAnswer(series.begin(), series.end());
}

ListingAnswer LabelNamesAnswer(const std::vector<promql::Labels>& sets) {
  std::set<std::string> names;
  for (const promql::Labels& labels : sets) {
    for (const promql::Label& label : labels) names.insert(label.name);
  }
  return ListingAnswer(names.begin(), names.end());
}

ListingAnswer MetricNamesAnswer(const std::vector<promql::Labels>& sets) {
  std::set<std::string> values;
  for (const promql::Labels& labels : sets) {
    for (const promql::Label& label : labels) {
      if (label.name == "__name__") values.insert(label.value);
    }
  }
  return ListingAnswer(values.begin(), values.end());
}

struct Listing {
  const char* name;
  std::vector<promql::LabelMatcher> matchers;
  Reduce reduce;
};

// One call of `listing` through `cache` (null: none): its answer and, in
// `seconds`, its wall time.
absl::StatusOr<ListingAnswer> CallListing(query::QueryPool& pool, const query::ViewFiles& files,
                                          const Listing& listing, int64_t start_ms, int64_t end_ms,
                                          api::internal::PointCache* cache,
                                          std::vector<double>* seconds) {
  const api::CallOptions call{.deadline = std::chrono::seconds(120)};
  const BenchClock::time_point t0 = BenchClock::now();
  api::MetricsSeriesSource source(pool, files, call, cache);
  STRATA_ASSIGN_OR_RETURN(
      std::vector<promql::Labels> sets,
      source.SelectLabels(listing.matchers, start_ms, end_ms, kListedSeriesMax));
  ListingAnswer answer = listing.reduce(sets);
  seconds->push_back(SecondsSince(t0));
  return answer;
}

// Times `listing`: cold through a new cache, then `runs` times each with
// no cache and through that cache, alternately; every answer must equal
// the first uncached one.
absl::StatusOr<PromListTimes> TimeListing(query::QueryPool& pool, const query::ViewFiles& files,
                                          const Listing& listing, int64_t start_ms, int64_t end_ms,
                                          int runs, ListingAnswer* answer) {
  api::internal::PointCache cache(api::internal::PointCache::kDefaultMaxBytes);
  std::vector<double> cold_s, cached_s, uncached_s;
  STRATA_ASSIGN_OR_RETURN(const ListingAnswer cold,
                          CallListing(pool, files, listing, start_ms, end_ms, &cache, &cold_s));
  const size_t cold_decode_queries = cache.decode_queries();
  const size_t cold_catalog_queries = cache.catalog_queries();
  for (int run = 0; run < runs; ++run) {
    STRATA_ASSIGN_OR_RETURN(
        const ListingAnswer uncached,
        CallListing(pool, files, listing, start_ms, end_ms, nullptr, &uncached_s));
    STRATA_ASSIGN_OR_RETURN(const ListingAnswer cached,
                            CallListing(pool, files, listing, start_ms, end_ms, &cache, &cached_s));
    if (run == 0) *answer = uncached;
    if (cold != *answer || cached != *answer || uncached != *answer) {
      return absl::InternalError(fmt::format(
          "{}: answers differ: {} cold, {} warm through the cache, {} uncached (first {})",
          listing.name, cold.size(), cached.size(), uncached.size(), answer->size()));
    }
  }
  return PromListTimes{.cold_ms = QuantileMs(cold_s, 0.5),
                       .cached_p50_ms = QuantileMs(cached_s, 0.5),
                       .uncached_p50_ms = QuantileMs(uncached_s, 0.5),
                       .answers = answer->size(),
                       .cold_decode_queries = cold_decode_queries,
                       .cold_catalog_queries = cold_catalog_queries};
}

}  // namespace

absl::StatusOr<PromLabelsBenchNumbers> RunPromLabelsBench(query::QueryPool& pool,
                                                          const query::ViewFiles& files,
                                                          int64_t start_ms, int64_t end_ms,
                                                          int runs) {
  runs = std::max(1, runs);
  // What the endpoints use when a request has no match[].
  const std::vector<promql::LabelMatcher> every_series = {
      {promql::MatchType::kRegexMatch, "__name__", ".+"}};
  const Listing series{
      "series", {{promql::MatchType::kEqual, "__name__", kPromSeriesMetric}}, SeriesAnswer};
  const Listing labels{"labels", every_series, LabelNamesAnswer};
  const Listing label_values{"label/__name__/values", every_series, MetricNamesAnswer};
  PromLabelsBenchNumbers numbers;
  ListingAnswer series_answer;
  STRATA_ASSIGN_OR_RETURN(numbers.series,
                          TimeListing(pool, files, series, start_ms, end_ms, runs, &series_answer));
  STRATA_ASSIGN_OR_RETURN(numbers.labels, TimeListing(pool, files, labels, start_ms, end_ms, runs,
                                                      &numbers.label_names));
  STRATA_ASSIGN_OR_RETURN(numbers.label_values, TimeListing(pool, files, label_values, start_ms,
                                                            end_ms, runs, &numbers.metric_names));
  return numbers;
}

}  // namespace strata::bench
