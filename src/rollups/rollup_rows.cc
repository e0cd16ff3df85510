// Building and merging rollup rows (rollup_rows.h).

#include "rollups/rollup_rows.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace strata::rollups {
namespace {

using otlp::AttributeColumns;
using otlp::Range;
using otlp::ValueType;

constexpr int32_t kStatusError = 2;
// A duration bucket fits 16 bits.
static_assert(kDurationBuckets <= (1u << 16));

// The attribute keys a span's endpoint is read from, in the order of the
// rules of rollups-parquet.md "Endpoints".
enum EndpointKey : int {
  kHttpRequestMethod,
  kHttpMethod,
  kHttpRoute,
  kUrlTemplate,
  kHttpTarget,
  kRpcService,
  kRpcMethod,
  kMessagingSystem,
  kMessagingDestinationName,
  kMessagingDestinationTemplate,
  kEndpointKeyCount,
};
constexpr std::string_view kEndpointKeys[kEndpointKeyCount] = {
    "http.request.method",
    "http.method",
    "http.route",
    "url.template",
    "http.target",
    "rpc.service",
    "rpc.method",
    "messaging.system",
    "messaging.destination.name",
    "messaging.destination.template",
};

// For each endpoint key, the value of its first occurrence in `range` when
// that is a string, else nullopt (absent, or the first occurrence has
// another type: the promotion rule).
std::array<std::optional<std::string_view>, kEndpointKeyCount> EndpointValues(
    const AttributeColumns& table, Range range) {
  std::array<std::optional<std::string_view>, kEndpointKeyCount> out;
  std::array<bool, kEndpointKeyCount> seen{};
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    const std::string_view key = table.key[i];
    if (key.size() < 10 || (key[0] != 'h' && key[0] != 'u' && key[0] != 'r' && key[0] != 'm')) {
      continue;  // every endpoint key is 10 or more bytes and starts so
    }
    for (int k = 0; k < kEndpointKeyCount; ++k) {
      if (seen[k] || key != kEndpointKeys[k]) continue;
      seen[k] = true;
      if (table.value.type[i] == ValueType::kString) out[k] = table.value.str[i];
      break;
    }
  }
  return out;
}

struct Endpoint {
  EndpointType type = EndpointType::kNone;
  std::string_view a;
  std::string_view b;
};

// The path of an http.target: up to its first '?'.
std::string_view TargetPath(std::string_view target) { return target.substr(0, target.find('?')); }

Endpoint EndpointOf(const AttributeColumns& table, Range range) {
  const auto v = EndpointValues(table, range);
  auto first = [&](std::initializer_list<EndpointKey> keys) -> std::optional<std::string_view> {
    for (EndpointKey k : keys) {
      if (v[k].has_value()) return v[k];
    }
    return std::nullopt;
  };
  if (std::optional<std::string_view> method = first({kHttpRequestMethod, kHttpMethod})) {
    std::string_view route;
    if (std::optional<std::string_view> r = first({kHttpRoute, kUrlTemplate})) {
      route = *r;
    } else if (v[kHttpTarget].has_value()) {
      route = TargetPath(*v[kHttpTarget]);
    }
    return {EndpointType::kHttp, *method, route};
  }
  if (v[kRpcService].has_value() || v[kRpcMethod].has_value()) {
    return {EndpointType::kRpc, v[kRpcService].value_or(""), v[kRpcMethod].value_or("")};
  }
  if (v[kMessagingSystem].has_value()) {
    return {EndpointType::kMessaging, *v[kMessagingSystem],
            first({kMessagingDestinationName, kMessagingDestinationTemplate}).value_or("")};
  }
  return {};
}

// The value of the first occurrence of `key` in `range` when it is a
// string, else "".
std::string_view FirstString(const AttributeColumns& table, Range range, std::string_view key) {
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    if (table.key[i] != key) continue;
    return table.value.type[i] == ValueType::kString ? table.value.str[i] : std::string_view();
  }
  return {};
}

// A key while rows are being counted: views into the batches, and the
// service as an index into Builder::services_.
struct KeyView {
  RollupKind kind;
  uint64_t minute;
  uint32_t service;
  std::string_view a;  // span name, or endpoint_a
  std::string_view b;  // endpoint_b
  uint8_t span_kind;
  EndpointType endpoint_type;
  uint8_t severity_class;

  friend bool operator==(const KeyView&, const KeyView&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const KeyView& k) {
    return H::combine(std::move(h), k.kind, k.minute, k.service, k.a, k.b, k.span_kind,
                      k.endpoint_type, k.severity_class);
  }
};

class Builder {
 public:
  void AddTraces(const otlp::TraceBatch& batch) {
    const std::vector<uint32_t> services = ServicesOf(batch);
    const otlp::SpanColumns& spans = batch.spans;
    for (size_t i = 0; i < spans.size(); ++i) {
      if (!ValidOwner(batch, spans.scope[i]) ||
          spans.attributes[i].end() > batch.span_attributes.size()) {
        continue;  // a broken batch: the table writer refuses the commit
      }
      const uint32_t service = services[batch.scopes.resource[spans.scope[i]]];
      const uint64_t minute = MinuteOf(spans.start_time_unix_nano[i]);
      const auto span_kind = static_cast<uint8_t>(spans.kind[i]);
      // Modulo 2^64, as spans.parquet's duration_nano.
      const auto duration =
          static_cast<int64_t>(spans.end_time_unix_nano[i] - spans.start_time_unix_nano[i]);
      const bool error = spans.status_code[i] == kStatusError;
      AddSpan(KeyView{RollupKind::kOperation,
                      minute,
                      service,
                      spans.name[i],
                      {},
                      span_kind,
                      EndpointType::kNone,
                      0},
              duration, error);
      const Endpoint endpoint = EndpointOf(batch.span_attributes, spans.attributes[i]);
      if (endpoint.type != EndpointType::kNone) {
        AddSpan(KeyView{RollupKind::kEndpoint, minute, service, endpoint.a, endpoint.b, span_kind,
                        endpoint.type, 0},
                duration, error);
      }
    }
  }

  void AddLogs(const otlp::LogBatch& batch) {
    const std::vector<uint32_t> services = ServicesOf(batch);
    const otlp::LogRecordColumns& logs = batch.logs;
    for (size_t i = 0; i < logs.size(); ++i) {
      if (!ValidOwner(batch, logs.scope[i])) continue;
      const uint64_t time =
          logs.time_unix_nano[i] != 0 ? logs.time_unix_nano[i] : logs.observed_time_unix_nano[i];
      Count(KeyView{RollupKind::kLogSeverity,
                    MinuteOf(time),
                    services[batch.scopes.resource[logs.scope[i]]],
                    {},
                    {},
                    0,
                    EndpointType::kNone,
                    SeverityClass(logs.severity_number[i])});
    }
  }

  void AddMetrics(const otlp::MetricBatch& batch) {
    const std::vector<uint32_t> services = ServicesOf(batch);
    for (const otlp::PointColumnsBase* points :
         {static_cast<const otlp::PointColumnsBase*>(&batch.number_points),
          static_cast<const otlp::PointColumnsBase*>(&batch.histogram_points),
          static_cast<const otlp::PointColumnsBase*>(&batch.exponential_points),
          static_cast<const otlp::PointColumnsBase*>(&batch.summary_points)}) {
      for (size_t i = 0; i < points->size(); ++i) {
        if (points->metric[i] >= batch.metrics.size() ||
            !ValidOwner(batch, batch.metrics.scope[points->metric[i]])) {
          continue;
        }
        const uint32_t scope = batch.metrics.scope[points->metric[i]];
        Count(KeyView{RollupKind::kMetricPoints,
                      MinuteOf(points->time_unix_nano[i]),
                      services[batch.scopes.resource[scope]],
                      {},
                      {},
                      0,
                      EndpointType::kNone,
                      0});
      }
    }
  }

  RollupRows Finish() {
    // Histograms: each row's buckets sorted (a row holds few spans, so
    // many small sorts beat one large one), then counted in runs.
    std::vector<std::vector<DurationHistogram::Bucket>> buckets(rows_.size());
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::vector<uint16_t>& b = rows_[r].buckets;
      std::sort(b.begin(), b.end());
      for (size_t i = 0; i < b.size();) {
        size_t j = i + 1;
        while (j < b.size() && b[j] == b[i]) ++j;
        buckets[r].push_back(DurationHistogram::Bucket{b[i], static_cast<int64_t>(j - i)});
        i = j;
      }
      b = {};
    }
    RollupRows out;
    out.reserve(rows_.size());
    for (size_t r = 0; r < rows_.size(); ++r) {
      const KeyView& k = rows_[r].key;
      RollupRow row;
      row.key.kind = k.kind;
      row.key.minute = k.minute;
      row.key.service_namespace = std::string(services_[k.service].first);
      row.key.service_name = std::string(services_[k.service].second);
      row.key.severity_class = k.severity_class;
      if (k.kind == RollupKind::kOperation) {
        row.key.span_name = std::string(k.a);
        row.key.span_kind = k.span_kind;
      } else if (k.kind == RollupKind::kEndpoint) {
        row.key.span_kind = k.span_kind;
        row.key.endpoint_type = k.endpoint_type;
        row.key.endpoint_a = std::string(k.a);
        row.key.endpoint_b = std::string(k.b);
      }
      row.measures = std::move(rows_[r].measures);
      if (HasDurations(k.kind)) {
        // Counts of one row's durations: at most its span count.
        row.measures.histogram = *DurationHistogram::FromBuckets(buckets[r]);
      }
      out.push_back(std::move(row));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const RollupRow& x, const RollupRow& y) { return x.key < y.key; });
    return out;
  }

 private:
  struct Counting {
    KeyView key;
    RollupMeasures measures;        // histogram filled by Finish
    std::vector<uint16_t> buckets;  // the duration bucket of each span
  };

  // Whether `scope` and its resource are rows of `batch`. The table
  // writers check every invariant of a batch (otlp::ValidateBatch) and
  // refuse a broken one; BuildRollups may run beside them, so it only
  // keeps clear of indexes it would follow out of bounds.
  static bool ValidOwner(const otlp::BatchBase& batch, uint32_t scope) {
    return scope < batch.scopes.size() && batch.scopes.resource[scope] < batch.resources.size();
  }

  // The service index of every resource of `batch`.
  std::vector<uint32_t> ServicesOf(const otlp::BatchBase& batch) {
    std::vector<uint32_t> out(batch.resources.size());
    for (size_t r = 0; r < out.size(); ++r) {
      Range attrs = batch.resources.attributes[r];
      if (attrs.end() > batch.resource_attributes.size()) attrs = {};
      const std::pair<std::string_view, std::string_view> service{
          FirstString(batch.resource_attributes, attrs, "service.namespace"),
          FirstString(batch.resource_attributes, attrs, "service.name")};
      auto [it, added] = service_index_.try_emplace(service, services_.size());
      if (added) services_.push_back(service);
      out[r] = it->second;
    }
    return out;
  }

  // The row `key` counts in now.
  uint32_t RowOf(const KeyView& key) {
    auto [it, added] = index_.try_emplace(key, static_cast<uint32_t>(rows_.size()));
    if (added) rows_.push_back(Counting{key, {}, {}});
    return it->second;
  }

  void Count(const KeyView& key) { ++rows_[RowOf(key)].measures.count; }

  void AddSpan(const KeyView& key, int64_t duration, bool error) {
    uint32_t row = RowOf(key);
    RollupMeasures* m = &rows_[row].measures;
    int64_t sum = 0;
    if (m->count > 0 && __builtin_add_overflow(m->duration_sum, duration, &sum)) {
      // The sum would leave int64: the key goes on in a row of its own.
      row = static_cast<uint32_t>(rows_.size());
      rows_.push_back(Counting{key, {}, {}});
      index_[key] = row;
      m = &rows_[row].measures;
    }
    if (m->count == 0) {
      m->duration_min = duration;
      m->duration_max = duration;
    } else {
      m->duration_min = std::min(m->duration_min, duration);
      m->duration_max = std::max(m->duration_max, duration);
    }
    m->duration_sum += duration;
    ++m->count;
    if (error) ++m->errors;
    rows_[row].buckets.push_back(static_cast<uint16_t>(DurationBucket(duration)));
  }

  std::vector<std::pair<std::string_view, std::string_view>> services_;
  absl::flat_hash_map<std::pair<std::string_view, std::string_view>, uint32_t> service_index_;
  std::vector<Counting> rows_;
  absl::flat_hash_map<KeyView, uint32_t> index_;
};

}  // namespace

uint8_t SeverityClass(int32_t severity_number) {
  if (severity_number < 1 || severity_number > 24) return 0;
  return static_cast<uint8_t>(1 + (severity_number - 1) / 4);
}

bool CanAdd(const RollupMeasures& from, const RollupMeasures& into) {
  int64_t sum = 0;
  return !__builtin_add_overflow(into.duration_sum, from.duration_sum, &sum);
}

void AddMeasures(const RollupMeasures& from, RollupMeasures* into) {
  if (from.count == 0) return;
  if (into->count == 0) {
    *into = from;
    return;
  }
  into->count += from.count;
  into->errors += from.errors;
  into->duration_sum += from.duration_sum;
  into->duration_min = std::min(into->duration_min, from.duration_min);
  into->duration_max = std::max(into->duration_max, from.duration_max);
  into->histogram.Merge(from.histogram);
}

RollupRows BuildRollups(std::span<const otlp::TraceBatch* const> traces,
                        std::span<const otlp::LogBatch* const> logs,
                        std::span<const otlp::MetricBatch* const> metrics) {
  Builder builder;
  for (const otlp::TraceBatch* batch : traces) builder.AddTraces(*batch);
  for (const otlp::LogBatch* batch : logs) builder.AddLogs(*batch);
  for (const otlp::MetricBatch* batch : metrics) builder.AddMetrics(*batch);
  return builder.Finish();
}

RollupRows MergeRollups(std::span<const RollupRows* const> inputs) {
  std::vector<const RollupRow*> all;
  for (const RollupRows* rows : inputs) {
    for (const RollupRow& row : *rows) all.push_back(&row);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const RollupRow* x, const RollupRow* y) { return x->key < y->key; });
  RollupRows out;
  for (const RollupRow* row : all) {
    if (!out.empty() && out.back().key == row->key && CanAdd(row->measures, out.back().measures)) {
      AddMeasures(row->measures, &out.back().measures);
    } else {
      out.push_back(*row);
    }
  }
  return out;
}

}  // namespace strata::rollups
