// TraceMetricsSource and PromSeriesSources (prometheus_trace_metrics.h).
//
// A Select gathers "bases": one per operation (service, span kind, span
// name) from the rollups' operation rows, one per service-map edge (client,
// server, connection type) from the resolver's minutes. Each base keeps its
// measures per minute of the window and, merged, before it. The series of a
// base are then running totals of one of those measures, sampled at the end
// of every minute while the base is active. A SelectLabels keeps only the
// distinct bases with a count in the minutes that can give a sample.

#include "api/prometheus_trace_metrics.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "api/service_health_json.h"
#include "common/status_macros.h"
#include "compat/promql/label_matcher.h"
#include "compat/promql/result_json.h"
#include "rollups/duration_histogram.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;

constexpr uint64_t kMinute = rollups::kMinuteNanos;
constexpr int64_t kMinuteMs = 60'000;
// A base without counts for this long stops having samples (it goes stale
// 5 minutes later, by the lookback).
constexpr uint64_t kActiveAfterLastCount = 15 * kMinute;
// The finite `le` bounds and +Inf.
constexpr int kSlots = kTraceLatencyBounds + 1;

constexpr std::string_view kCalls = "traces_spanmetrics_calls_total";
constexpr std::string_view kLatency = "traces_spanmetrics_latency";
constexpr std::string_view kRequests = "traces_service_graph_request_total";
constexpr std::string_view kFailed = "traces_service_graph_request_failed_total";
constexpr std::string_view kServerSeconds = "traces_service_graph_request_server_seconds";

enum class Family { kSpanMetrics, kServiceGraph };

int64_t BoundNanos(int index) { return int64_t{1'000'000} << index; }

// The `le` slot of each rollup duration bucket: the first bound at or
// above the bucket's value.
uint8_t SlotOf(uint32_t bucket) {
  static const std::vector<uint8_t> table = [] {
    std::vector<uint8_t> out(rollups::kDurationBuckets);
    for (uint32_t i = 0; i < rollups::kDurationBuckets; ++i) {
      const int64_t value = rollups::BucketValue(i);
      int slot = 0;
      while (slot < kTraceLatencyBounds && value > BoundNanos(slot)) ++slot;
      out[i] = static_cast<uint8_t>(slot);
    }
    return out;
  }();
  return bucket < table.size() ? table[bucket] : kTraceLatencyBounds;
}

// What a base counted in one minute (or before the window).
struct Measures {
  double count = 0;
  double errors = 0;
  double seconds = 0;
  std::array<double, kSlots> slots{};  // spans per slot, not cumulative

  void Add(const Measures& other) {
    count += other.count;
    errors += other.errors;
    seconds += other.seconds;
    for (int i = 0; i < kSlots; ++i) slots[i] += other.slots[i];
  }
};

Measures FromRollup(const rollups::RollupMeasures& m) {
  Measures out;
  out.count = static_cast<double>(m.count);
  out.errors = static_cast<double>(m.errors);
  out.seconds = static_cast<double>(m.duration_sum) / 1e9;
  for (const auto& bucket : m.histogram.buckets()) {
    out.slots[SlotOf(bucket.index)] += static_cast<double>(bucket.count);
  }
  return out;
}

Measures FromEdge(const rollups::EdgeMeasures& m) {
  Measures out;
  out.count = static_cast<double>(m.calls);
  out.errors = static_cast<double>(m.errors);
  out.seconds = static_cast<double>(m.duration_sum) / 1e9;
  for (const auto& [bucket, count] : m.buckets) out.slots[SlotOf(bucket)] += count;
  return out;
}

struct Base {
  Family family = Family::kSpanMetrics;
  promql::Labels labels;  // sorted, without __name__
  Measures before;        // the minutes before the window, merged
  uint64_t last_count_before = 0;
  bool counted_before = false;
  std::map<uint64_t, Measures> minutes;  // the window's
};

// One series of a base: its name, an extra label, and the value it takes
// from the running totals.
struct Output {
  std::string name;
  std::string label;  // "" for none
  std::string value;
  std::function<double(const Measures&)> measure;
};

std::vector<Output> HistogramOutputs(std::string_view family) {
  std::vector<Output> out;
  for (int slot = 0; slot < kSlots; ++slot) {
    out.push_back({std::string(family) + "_bucket", "le",
                   slot == kTraceLatencyBounds
                       ? std::string("+Inf")
                       : promql::FormatFloat(TraceLatencyBoundSeconds(slot)),
                   [slot](const Measures& m) {
                     double sum = 0;
                     for (int i = 0; i <= slot; ++i) sum += m.slots[i];
                     return sum;
                   }});
  }
  out.push_back(
      {std::string(family) + "_sum", "", "", [](const Measures& m) { return m.seconds; }});
  out.push_back(
      {std::string(family) + "_count", "", "", [](const Measures& m) { return m.count; }});
  return out;
}

const std::vector<Output>& OutputsOf(Family family) {
  static const std::vector<Output> span_metrics = [] {
    std::vector<Output> out = {
        {std::string(kCalls), "status_code", "STATUS_CODE_ERROR",
         [](const Measures& m) { return m.errors; }},
        {std::string(kCalls), "status_code", "STATUS_CODE_UNSET",
         [](const Measures& m) { return m.count - m.errors; }},
    };
    for (Output& one : HistogramOutputs(kLatency)) out.push_back(std::move(one));
    return out;
  }();
  static const std::vector<Output> service_graph = [] {
    std::vector<Output> out = {
        {std::string(kRequests), "", "", [](const Measures& m) { return m.count; }},
        {std::string(kFailed), "", "", [](const Measures& m) { return m.errors; }},
    };
    for (Output& one : HistogramOutputs(kServerSeconds)) out.push_back(std::move(one));
    return out;
  }();
  return family == Family::kSpanMetrics ? span_metrics : service_graph;
}

const std::vector<std::string>& NamesOf(Family family) {
  static const auto names = [](Family f) {
    std::vector<std::string> out;
    for (const Output& one : OutputsOf(f)) {
      if (std::find(out.begin(), out.end(), one.name) == out.end()) out.push_back(one.name);
    }
    return out;
  };
  static const std::vector<std::string> span_metrics = names(Family::kSpanMetrics);
  static const std::vector<std::string> service_graph = names(Family::kServiceGraph);
  return family == Family::kSpanMetrics ? span_metrics : service_graph;
}

// Whether a series named `name` can pass the `__name__` matchers.
bool NameWanted(absl::Span<const promql::LabelMatcher> matchers, const std::string& name) {
  std::vector<promql::LabelMatcher> on_name;
  for (const auto& m : matchers) {
    if (m.name == "__name__") on_name.push_back(m);
  }
  absl::StatusOr<promql::MatcherSet> set = promql::MatcherSet::Compile(on_name);
  return set.ok() && set->Matches({{"__name__", name}});
}

bool FamilyWanted(absl::Span<const promql::LabelMatcher> matchers, Family family) {
  for (const std::string& name : NamesOf(family)) {
    if (NameWanted(matchers, name)) return true;
  }
  return false;
}

std::string KeyOf(const promql::Labels& labels) {
  std::string key;
  for (const auto& label : labels) absl::StrAppend(&key, label.name, "\x1f", label.value, "\x1e");
  return key;
}

// Bases by their labels.
class Bases {
 public:
  Base& Get(Family family, promql::Labels labels) {
    std::string key = KeyOf(labels);
    auto [it, added] = index_.try_emplace(std::move(key), bases_.size());
    if (added) bases_.push_back(Base{family, std::move(labels), {}, 0, false, {}});
    return bases_[it->second];
  }
  // Adds what a base counted in `minute`: into the window's minutes when
  // it lies in [first, end), into `before` when earlier.
  static void Count(Base& base, uint64_t minute, uint64_t first, const Measures& m) {
    if (minute < first) {
      base.before.Add(m);
      if (m.count != 0) {
        base.last_count_before = std::max(base.last_count_before, minute);
        base.counted_before = true;
      }
    } else {
      base.minutes[minute].Add(m);
    }
  }
  std::vector<Base>& all() { return bases_; }

 private:
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<Base> bases_;
};

const char* ConnectionType(const rollups::Node& target, rollups::EdgeType type) {
  switch (type) {
    case rollups::EdgeType::kDatabase:
      return "database";
    case rollups::EdgeType::kMessaging:
      return "messaging_system";
    case rollups::EdgeType::kCall:
      break;
  }
  return target.type == rollups::NodeType::kService ? "" : "virtual_node";
}

// The minutes whose end lies in [min_ms, max_ms], the instants of the
// samples: [first, last], by their first instants; nullopt for none.
struct SampleMinutes {
  uint64_t first = 0;
  uint64_t last = 0;
};

std::optional<SampleMinutes> SampleMinutesOf(int64_t min_ms, int64_t max_ms) {
  if (max_ms < kMinuteMs || max_ms < min_ms) return std::nullopt;
  const int64_t first_ms = std::max<int64_t>(0, min_ms - kMinuteMs);
  const uint64_t first = static_cast<uint64_t>((first_ms + kMinuteMs - 1) / kMinuteMs) * kMinute;
  const uint64_t last = static_cast<uint64_t>((max_ms - kMinuteMs) / kMinuteMs) * kMinute;
  if (last < first) return std::nullopt;
  return SampleMinutes{first, last};
}

promql::Labels OperationLabels(const rollups::RollupKey& key) {
  return promql::SortedByName({{"service", key.service_name},
                               {"span_kind", SpanKindName(key.span_kind)},
                               {"span_name", key.span_name}});
}

promql::Labels EdgeLabels(const MinuteEdge& edge) {
  promql::Labels labels = {{"client", edge.source.name}, {"server", edge.target.name}};
  const char* connection = ConnectionType(edge.target, edge.type);
  if (*connection != '\0') labels.push_back({"connection_type", connection});
  return promql::SortedByName(std::move(labels));
}

// The labels of one output series of a base.
promql::Labels SeriesLabels(const promql::Labels& base, const Output& output) {
  promql::Labels labels = base;
  labels.push_back({"__name__", output.name});
  if (!output.label.empty()) labels.push_back({output.label, output.value});
  return promql::SortedByName(std::move(labels));
}

absl::Status TooManySeries(int64_t max_series) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the query selects more than ", max_series, " series; narrow its matchers"));
}

}  // namespace

double TraceLatencyBoundSeconds(int index) { return static_cast<double>(BoundNanos(index)) / 1e9; }

bool TraceMetricsSource::Serves(std::string_view name) {
  for (Family family : {Family::kSpanMetrics, Family::kServiceGraph}) {
    for (const std::string& one : NamesOf(family)) {
      if (one == name) return true;
    }
  }
  return false;
}

bool TraceMetricsSource::WantedBy(absl::Span<const promql::LabelMatcher> matchers) {
  return FamilyWanted(matchers, Family::kSpanMetrics) ||
         FamilyWanted(matchers, Family::kServiceGraph);
}

std::vector<PromMetadata> TraceMetricsSource::Metadata() {
  return {
      {std::string(kRequests), "counter", "",
       "Calls between two nodes of the service map, from strata's service-map edges."},
      {std::string(kFailed), "counter", "",
       "Calls between two nodes of the service map with an error status."},
      {std::string(kServerSeconds), "histogram", "s",
       "Durations of the called side's spans of service-map calls."},
      {std::string(kCalls), "counter", "",
       "Spans per service, span kind, span name and error status, from strata's rollups."},
      {std::string(kLatency), "histogram", "s",
       "Span durations per service, span kind and span name, from strata's rollups."},
  };
}

absl::StatusOr<std::vector<promql::Series>> TraceMetricsSource::Select(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    const promql::SelectLimits& limits) {
  std::vector<promql::Series> out;
  const std::optional<SampleMinutes> window = SampleMinutesOf(min_ms, max_ms);
  if (!window.has_value()) return out;
  const uint64_t first = window->first, last = window->last, end = last + kMinute;

  const bool span_metrics = FamilyWanted(matchers, Family::kSpanMetrics);
  const bool service_graph = FamilyWanted(matchers, Family::kServiceGraph);
  if (!span_metrics && !service_graph) return out;
  STRATA_ASSIGN_OR_RETURN(const promql::MatcherSet matcher_set,
                          promql::MatcherSet::Compile(matchers));

  // Every minute before the window counts in the running totals.
  Bases bases;
  if (span_metrics) {
    STRATA_ASSIGN_OR_RETURN(RollupSet rows,
                            rollups_.ForWindow(fs_, snapshot_, MinuteWindow{0, end}));
    for (const auto& batch : rows) {
      for (const rollups::RollupRow& row : batch->rows) {
        const rollups::RollupKey& key = row.key;
        if (key.kind != rollups::RollupKind::kOperation || key.minute >= end) continue;
        Base& base = bases.Get(Family::kSpanMetrics, OperationLabels(key));
        Bases::Count(base, key.minute, first, FromRollup(row.measures));
      }
    }
  }
  if (service_graph) {
    for (const MinuteEdge& edge : map_.MinuteEdges(fs_, snapshot_, end)) {
      Base& base = bases.Get(Family::kServiceGraph, EdgeLabels(edge));
      Bases::Count(base, edge.minute, first, FromEdge(edge.measures));
    }
  }

  int64_t samples = 0;
  for (Base& base : bases.all()) {
    work_.minute_measures += static_cast<int64_t>(base.minutes.size());
    // The running totals at the end of each minute the base is active in.
    // An inactive stretch is skipped to the next minute with measures, so
    // the loop takes a step per sample or per such minute, however long
    // the window (all of time, for a listing without `start`).
    std::vector<std::pair<int64_t, Measures>> totals;
    Measures running = base.before;
    bool active = base.counted_before;
    uint64_t active_until = base.last_count_before + kActiveAfterLastCount;
    auto next = base.minutes.begin();
    for (uint64_t minute = first; minute <= last; minute += kMinute) {
      ++work_.minute_steps;
      if (next != base.minutes.end() && next->first == minute) {
        running.Add(next->second);
        if (next->second.count != 0) {
          active = true;
          active_until = minute + kActiveAfterLastCount;
        }
        ++next;
      }
      if (!active || minute > active_until) {
        // No sample before the next minute with measures (the minutes
        // lie before `end`, after this one).
        if (next == base.minutes.end()) break;
        minute = next->first - kMinute;
        continue;
      }
      totals.push_back({static_cast<int64_t>((minute + kMinute) / 1'000'000), running});
    }
    if (totals.empty()) continue;
    for (const Output& output : OutputsOf(base.family)) {
      promql::Labels labels = SeriesLabels(base.labels, output);
      if (!matcher_set.Matches(labels)) continue;
      if (limits.max_series > 0 && static_cast<int64_t>(out.size()) >= limits.max_series) {
        return TooManySeries(limits.max_series);
      }
      samples += static_cast<int64_t>(totals.size());
      if (limits.max_samples > 0 && samples > limits.max_samples) {
        return absl::ResourceExhaustedError(absl::StrCat("the query reads more than ",
                                                         limits.max_samples,
                                                         " samples; narrow its range or matchers"));
      }
      promql::Series series{std::move(labels), {}};
      series.samples.reserve(totals.size());
      for (const auto& [t_ms, measures] : totals) {
        series.samples.push_back({t_ms, output.measure(measures)});
      }
      out.push_back(std::move(series));
    }
  }
  return out;
}

absl::StatusOr<std::vector<promql::Labels>> TraceMetricsSource::SelectLabels(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    int64_t max_series) {
  std::vector<promql::Labels> out;
  const std::optional<SampleMinutes> window = SampleMinutesOf(min_ms, max_ms);
  if (!window.has_value()) return out;
  const bool span_metrics = FamilyWanted(matchers, Family::kSpanMetrics);
  const bool service_graph = FamilyWanted(matchers, Family::kServiceGraph);
  if (!span_metrics && !service_graph) return out;
  STRATA_ASSIGN_OR_RETURN(const promql::MatcherSet matcher_set,
                          promql::MatcherSet::Compile(matchers));

  // Select gives a base series when it has a sample in the window: when it
  // is active at some minute of [first, last], that is when it counted in
  // a minute of [first - 15 minutes, last]. Only those minutes are read,
  // and nothing is kept per minute: the distinct bases, in the order met.
  const uint64_t end = window->last + kMinute;
  const uint64_t from =
      window->first > kActiveAfterLastCount ? window->first - kActiveAfterLastCount : 0;
  std::vector<std::pair<Family, promql::Labels>> bases;
  absl::flat_hash_set<std::string> seen;
  auto add = [&](Family family, promql::Labels labels) {
    if (seen.insert(KeyOf(labels)).second) bases.push_back({family, std::move(labels)});
  };
  if (span_metrics) {
    STRATA_ASSIGN_OR_RETURN(RollupSet rows,
                            rollups_.ForWindow(fs_, snapshot_, MinuteWindow{from, end}));
    for (const auto& batch : rows) {
      // A batch whose minutes all lie in [from, end) is read merged over
      // them (a row per operation; it counted if it counted in a minute).
      const bool whole = batch->first_minute >= from && batch->last_minute < end;
      for (const rollups::RollupRow& row : whole ? batch->whole : batch->rows) {
        const rollups::RollupKey& key = row.key;
        if (key.kind != rollups::RollupKind::kOperation || row.measures.count == 0 ||
            (!whole && (key.minute < from || key.minute >= end))) {
          continue;
        }
        add(Family::kSpanMetrics, OperationLabels(key));
      }
    }
  }
  if (service_graph) {
    for (const MinuteEdge& edge : map_.MinuteEdges(fs_, snapshot_, end, from)) {
      if (edge.measures.calls != 0) add(Family::kServiceGraph, EdgeLabels(edge));
    }
  }
  for (const auto& [family, base_labels] : bases) {
    for (const Output& output : OutputsOf(family)) {
      promql::Labels labels = SeriesLabels(base_labels, output);
      if (!matcher_set.Matches(labels)) continue;
      if (max_series > 0 && static_cast<int64_t>(out.size()) >= max_series) {
        return TooManySeries(max_series);
      }
      out.push_back(std::move(labels));
    }
  }
  return out;
}

namespace {

// Whether an equality matcher on `__name__` names a name of the other side.
bool NamesOnlyTraceMetrics(absl::Span<const promql::LabelMatcher> matchers) {
  for (const auto& m : matchers) {
    if (m.name == "__name__" && m.type == promql::MatchType::kEqual &&
        TraceMetricsSource::Serves(m.value)) {
      return true;
    }
  }
  return false;
}

bool IsReserved(const promql::Labels& labels) {
  return TraceMetricsSource::Serves(promql::LabelValue(labels, "__name__"));
}

}  // namespace

absl::StatusOr<std::vector<promql::Series>> PromSeriesSources::Select(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    const promql::SelectLimits& limits) {
  std::vector<promql::Series> out;
  if (!NamesOnlyTraceMetrics(matchers)) {
    STRATA_ASSIGN_OR_RETURN(out, metrics_.Select(matchers, min_ms, max_ms, limits));
    std::erase_if(out, [](const promql::Series& s) { return IsReserved(s.labels); });
  }
  if (TraceMetricsSource::WantedBy(matchers)) {
    promql::SelectLimits left = limits;
    if (left.max_series > 0) {
      left.max_series = std::max<int64_t>(1, left.max_series - static_cast<int64_t>(out.size()));
    }
    STRATA_ASSIGN_OR_RETURN(std::vector<promql::Series> traces,
                            traces_.Select(matchers, min_ms, max_ms, left));
    for (auto& one : traces) out.push_back(std::move(one));
    // In label order, as the metrics tables' series come (the order
    // functions such as topk break ties by).
    std::sort(out.begin(), out.end(), [](const promql::Series& a, const promql::Series& b) {
      return std::lexicographical_compare(
          a.labels.begin(), a.labels.end(), b.labels.begin(), b.labels.end(),
          [](const promql::Label& x, const promql::Label& y) {
            return std::tie(x.name, x.value) < std::tie(y.name, y.value);
          });
    });
  }
  return out;
}

absl::StatusOr<std::vector<promql::Labels>> PromSeriesSources::SelectLabels(
    absl::Span<const promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    int64_t max_series) {
  std::vector<promql::Labels> out;
  if (!NamesOnlyTraceMetrics(matchers)) {
    STRATA_ASSIGN_OR_RETURN(out, metrics_.SelectLabels(matchers, min_ms, max_ms, max_series));
    std::erase_if(out, IsReserved);
  }
  if (TraceMetricsSource::WantedBy(matchers)) {
    STRATA_ASSIGN_OR_RETURN(std::vector<promql::Labels> traces,
                            traces_.SelectLabels(matchers, min_ms, max_ms, max_series));
    for (auto& one : traces) out.push_back(std::move(one));
  }
  return out;
}

absl::StatusOr<std::vector<PromMetadata>> PromSeriesSources::Metadata(int64_t min_ms,
                                                                      int64_t max_ms) {
  STRATA_ASSIGN_OR_RETURN(std::vector<PromMetadata> out, metrics_.Metadata(min_ms, max_ms));
  std::erase_if(out, [](const PromMetadata& m) {
    return TraceMetricsSource::Serves(m.name) || TraceMetricsSource::Serves(m.name + "_bucket");
  });
  for (PromMetadata& one : TraceMetricsSource::Metadata()) out.push_back(std::move(one));
  std::sort(out.begin(), out.end(),
            [](const PromMetadata& a, const PromMetadata& b) { return a.name < b.name; });
  return out;
}

}  // namespace strata::api
