// The JSON bodies of the service health answers (service_health_json.h).

#include "api/service_health_json.h"

#include "otlp/json_writer.h"

namespace strata::api {
namespace {

constexpr const char* kKindNames[] = {"UNSPECIFIED", "INTERNAL", "SERVER",
                                      "CLIENT",      "PRODUCER", "CONSUMER"};
constexpr const char* kSeverityNames[] = {"unset", "trace", "debug", "info",
                                          "warn",  "error", "fatal"};

void NullableDouble(otlp::JsonWriter& w, std::optional<double> v) {
  if (v.has_value()) {
    w.Double(*v);
  } else {
    w.Null();
  }
}

void NullableNanos(otlp::JsonWriter& w, std::optional<int64_t> v) {
  if (v.has_value()) {
    w.IntString(*v);
  } else {
    w.Null();
  }
}

std::optional<double> PerSecond(int64_t count, const MinuteWindow& window) {
  if (window.seconds() <= 0) return std::nullopt;
  return static_cast<double>(count) / window.seconds();
}

std::optional<double> Ratio(int64_t part, int64_t whole) {
  if (whole == 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

// rate, error_rate and the three quantiles of `count` spans of which
// `errors` failed, their durations in `m` (a Red or edge measures: both
// have Quantile(thousandths)).
template <typename M>
void RateAndQuantiles(otlp::JsonWriter& w, int64_t count, int64_t errors, const M& m,
                      const MinuteWindow& window) {
  w.Key("rate");
  NullableDouble(w, PerSecond(count, window));
  w.Key("error_rate");
  NullableDouble(w, Ratio(errors, count));
  for (auto [key, q] : {std::pair{"p50_nano", 500}, {"p95_nano", 950}, {"p99_nano", 990}}) {
    w.Key(key);
    NullableNanos(w, m.Quantile(q));
  }
}
void RateAndQuantiles(otlp::JsonWriter& w, const Red& red, const MinuteWindow& window) {
  RateAndQuantiles(w, red.count(), red.errors(), red, window);
}

// The measures of an operation or endpoint row.
void SpanMeasures(otlp::JsonWriter& w, const Red& red, const MinuteWindow& window) {
  w.Key("span_count");
  w.Int(red.count());
  w.Key("error_count");
  w.Int(red.errors());
  RateAndQuantiles(w, red, window);
  w.Key("avg_nano");
  NullableNanos(w, red.count() == 0 ? std::nullopt
                                    : std::optional<int64_t>(
                                          static_cast<int64_t>(red.duration_sum() / red.count())));
  w.Key("min_nano");
  NullableNanos(w, red.count() == 0 ? std::nullopt : std::optional<int64_t>(red.duration_min()));
  w.Key("max_nano");
  NullableNanos(w, red.count() == 0 ? std::nullopt : std::optional<int64_t>(red.duration_max()));
}

void Window(otlp::JsonWriter& w, const MinuteWindow& window) {
  w.Key("start");
  w.UintString(window.first);
  w.Key("end");
  w.UintString(window.end);
}

void Service(otlp::JsonWriter& w, const ServiceSelector& service) {
  w.Key("service");
  w.String(service.name);
  w.Key("namespace");
  if (service.ns.has_value()) {
    w.String(*service.ns);
  } else {
    w.Null();
  }
}

// {"service", "namespace", "start", "end", <list>: [one object per item,
// its members written by `item`]}.
template <typename T, typename F>
std::string ServiceListJson(const ServiceSelector& service, const MinuteWindow& window,
                            std::string_view list, const std::vector<T>& items, F&& item) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  Service(w, service);
  Window(w, window);
  w.Key(list);
  w.BeginArray();
  for (const T& t : items) {
    w.BeginObject();
    item(w, t);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string EndpointName(const EndpointRed& e) {
  switch (e.type) {
    case rollups::EndpointType::kHttp:
      return e.b.empty() ? e.a : e.a + " " + e.b;
    case rollups::EndpointType::kRpc:
      return e.a + "/" + e.b;
    default:
      return e.b.empty() ? e.a : e.a + " " + e.b;
  }
}

}  // namespace

std::string SpanKindName(uint8_t kind) {
  return kind < 6 ? kKindNames[kind] : std::to_string(kind);
}

const char* EndpointTypeName(rollups::EndpointType type) {
  switch (type) {
    case rollups::EndpointType::kHttp:
      return "http";
    case rollups::EndpointType::kRpc:
      return "rpc";
    case rollups::EndpointType::kMessaging:
      return "messaging";
    case rollups::EndpointType::kNone:
      break;
  }
  return "none";
}

std::string ServicesJson(const std::vector<ServiceRed>& services, const MinuteWindow& window,
                         const HealthThresholds& thresholds) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  Window(w, window);
  w.Key("request_kinds");
  w.BeginArray();
  w.String("SERVER");
  w.String("CONSUMER");
  w.EndArray();
  w.Key("services");
  w.BeginArray();
  for (const ServiceRed& s : services) {
    w.BeginObject();
    w.Key("name");
    w.String(s.name);
    w.Key("namespace");
    w.String(s.ns);
    // Health from requests; a service that serves none (a batch job, a
    // client) from all its spans.
    const Red& judged = s.requests.count() > 0 ? s.requests : s.spans;
    w.Key("health");
    w.String(HealthOf(judged, thresholds));
    w.Key("request_count");
    w.Int(s.requests.count());
    w.Key("request_errors");
    w.Int(s.requests.errors());
    RateAndQuantiles(w, s.requests, window);
    w.Key("span_count");
    w.Int(s.spans.count());
    w.Key("span_errors");
    w.Int(s.spans.errors());
    w.Key("logs");
    w.BeginObject();
    for (size_t i = 0; i < s.logs.size(); ++i) {
      w.Key(kSeverityNames[i]);
      w.Int(s.logs[i]);
    }
    w.EndObject();
    w.Key("metric_points");
    w.Int(s.metric_points);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string OperationsJson(const ServiceSelector& service,
                           const std::vector<OperationRed>& operations,
                           const MinuteWindow& window) {
  return ServiceListJson(service, window, "operations", operations,
                         [&](otlp::JsonWriter& w, const OperationRed& o) {
                           w.Key("name");
                           w.String(o.name);
                           w.Key("kind");
                           w.String(SpanKindName(o.kind));
                           SpanMeasures(w, o.red, window);
                         });
}

std::string EndpointsJson(const ServiceSelector& service, const std::vector<EndpointRed>& endpoints,
                          const MinuteWindow& window) {
  return ServiceListJson(service, window, "endpoints", endpoints,
                         [&](otlp::JsonWriter& w, const EndpointRed& e) {
                           w.Key("type");
                           w.String(EndpointTypeName(e.type));
                           w.Key("name");
                           w.String(EndpointName(e));
                           w.Key("a");
                           w.String(e.a);
                           w.Key("b");
                           w.String(e.b);
                           w.Key("kind");
                           w.String(SpanKindName(e.kind));
                           SpanMeasures(w, e.red, window);
                         });
}

std::string RedSeriesJson(const std::vector<Red>& points, const MinuteWindow& window, uint64_t step,
                          const std::vector<uint8_t>& kinds) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  Window(w, window);
  w.Key("step_nano");
  w.UintString(step);
  w.Key("kinds");
  w.BeginArray();
  if (kinds.empty()) {
    w.String("SERVER");
    w.String("CONSUMER");
  }
  for (uint8_t k : kinds) w.String(SpanKindName(k));
  w.EndArray();
  w.Key("points");
  w.BeginArray();
  for (size_t i = 0; i < points.size(); ++i) {
    const uint64_t first = window.first + i * step;
    const MinuteWindow bucket{first, std::min(first + step, window.end)};
    w.BeginObject();
    w.Key("time");
    w.UintString(first);
    w.Key("count");
    w.Int(points[i].count());
    w.Key("errors");
    w.Int(points[i].errors());
    RateAndQuantiles(w, points[i], bucket);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

const char* NodeTypeName(rollups::NodeType type) {
  switch (type) {
    case rollups::NodeType::kService:
      return "service";
    case rollups::NodeType::kDatabase:
      return "database";
    case rollups::NodeType::kMessaging:
      return "messaging";
    case rollups::NodeType::kPeer:
      break;
  }
  return "peer";
}

const char* EdgeTypeName(rollups::EdgeType type) {
  switch (type) {
    case rollups::EdgeType::kDatabase:
      return "database";
    case rollups::EdgeType::kMessaging:
      return "messaging";
    case rollups::EdgeType::kCall:
      break;
  }
  return "call";
}

namespace {

// Counts (under `calls` and `errors`), rate, error_rate and quantiles of
// edge measures.
void EdgeMeasuresJson(otlp::JsonWriter& w, const rollups::EdgeMeasures& m,
                      const MinuteWindow& window, std::string_view calls, std::string_view errors) {
  w.Key(calls);
  w.Int(m.calls);
  w.Key(errors);
  w.Int(m.errors);
  RateAndQuantiles(w, m.calls, m.errors, m, window);
}

}  // namespace

std::string ServiceMapJson(const ServiceMapAnswer& map, const MinuteWindow& window,
                           const rollups::EdgeResolverOptions& resolver) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  Window(w, window);
  w.Key("complete");
  w.Bool(map.pending_batches == 0 && map.unreadable_batches == 0 &&
         map.resolved_from <= window.first);
  w.Key("pending_batches");
  w.Uint(map.pending_batches);
  w.Key("unreadable_batches");
  w.Uint(map.unreadable_batches);
  if (map.unreadable_batches > 0) {
    w.Key("unreadable_error");
    w.String(map.last_unreadable_error);
  }
  w.Key("resolved_from");
  w.UintString(map.resolved_from);
  w.Key("truncated");
  w.Bool(map.truncated);
  w.Key("node_limit_reached");
  w.Bool(map.node_limit_reached);
  w.Key("late_window_sec");
  w.Uint(resolver.late_window_nanos / 1'000'000'000);
  w.Key("nodes");
  w.BeginArray();
  for (size_t i = 0; i < map.nodes.size(); ++i) {
    const MapNode& node = map.nodes[i];
    w.BeginObject();
    w.Key("id");
    w.Uint(i);
    w.Key("type");
    w.String(NodeTypeName(node.node.type));
    w.Key("name");
    w.String(node.node.name);
    if (node.node.type == rollups::NodeType::kService) {
      w.Key("namespace");
      w.String(node.node.ns);
      w.Key("requests");
      w.Int(node.requests.count());
      w.Key("request_errors");
      w.Int(node.requests.errors());
      RateAndQuantiles(w, node.requests, window);
    } else {
      EdgeMeasuresJson(w, node.incoming, window, "requests", "request_errors");
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("edges");
  w.BeginArray();
  for (const MapEdge& edge : map.edges) {
    w.BeginObject();
    w.Key("source");
    w.Uint(edge.source);
    w.Key("target");
    w.Uint(edge.target);
    w.Key("type");
    w.String(EdgeTypeName(edge.type));
    EdgeMeasuresJson(w, edge.measures, window, "calls", "errors");
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace strata::api
