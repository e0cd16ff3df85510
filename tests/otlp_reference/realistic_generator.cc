// Realistic mode of the OTLP request generators (generator.h): what a small
// service mesh instrumented with OpenTelemetry SDKs sends.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/random_source.h"

namespace strata::otlp_reference {
namespace {

namespace common = opentelemetry::proto::common::v1;
namespace trace = opentelemetry::proto::trace::v1;
namespace logs = opentelemetry::proto::logs::v1;
namespace metrics = opentelemetry::proto::metrics::v1;

using google::protobuf::RepeatedPtrField;

struct Service {
  std::string_view name;
  std::string_view version;
  std::string_view host;
  std::string_view language;
};

constexpr std::array<Service, 5> kServices = {{
    {"frontend", "2.14.1", "ip-10-0-1-17.ec2.internal", "nodejs"},
    {"cart", "1.8.0", "ip-10-0-2-4.ec2.internal", "java"},
    {"checkout", "3.0.2", "ip-10-0-2-9.ec2.internal", "go"},
    {"payment", "0.9.7", "ip-10-0-3-21.ec2.internal", "python"},
    {"inventory", "5.2.0", "ip-10-0-3-30.ec2.internal", "dotnet"},
}};

constexpr std::array<std::string_view, 6> kRoutes = {
    "/api/cart/items",        "/api/checkout",          "/api/products/{id}",
    "/api/payment/authorize", "/api/inventory/reserve", "/api/recommendations"};

constexpr std::array<std::string_view, 4> kMethods = {"GET", "GET", "POST", "PUT"};

constexpr uint64_t kBaseTimeNanos = 1'714'000'000'000'000'000ULL;

void AddString(RepeatedPtrField<common::KeyValue>* attrs, std::string_view key,
               std::string_view value) {
  common::KeyValue* kv = attrs->Add();
  kv->set_key(std::string(key));
  kv->mutable_value()->set_string_value(std::string(value));
}

void AddInt(RepeatedPtrField<common::KeyValue>* attrs, std::string_view key, int64_t value) {
  common::KeyValue* kv = attrs->Add();
  kv->set_key(std::string(key));
  kv->mutable_value()->set_int_value(value);
}

void FillServiceResource(const Service& service,
                         opentelemetry::proto::resource::v1::Resource* resource) {
  RepeatedPtrField<common::KeyValue>* attrs = resource->mutable_attributes();
  AddString(attrs, "service.name", service.name);
  AddString(attrs, "service.version", service.version);
  AddString(attrs, "service.namespace", "shop");
  AddString(attrs, "host.name", service.host);
  AddString(attrs, "deployment.environment", "production");
  AddString(attrs, "telemetry.sdk.name", "opentelemetry");
  AddString(attrs, "telemetry.sdk.language", service.language);
  AddString(attrs, "k8s.pod.name", absl::StrCat(std::string(service.name), "-7d9f8b6c5-x2x4q"));
}

std::string HostPort(int service) {
  return absl::StrCat(std::string(kServices[service].name), ".shop.svc");
}

// A server span of the trace under construction; calls hang below it.
struct ServerSpan {
  int service;
  std::string span_id;
  uint64_t start;
  uint64_t end;
};

// Builds traces into per-service ScopeSpans (scope 0: HTTP and RPC
// instrumentation, scope 1: database client instrumentation).
class TraceBuilder {
 public:
  TraceBuilder(uint64_t seed, TraceRequest* request);

  // Adds one trace of at most `budget` (>= 1) spans; returns how many.
  int AddTrace(int budget);

 private:
  trace::Span* NewSpan(int service, bool database, const std::string& parent_id, uint64_t start,
                       uint64_t end);
  // A CLIENT span in the caller and the callee's SERVER span below it.
  void AddCall(const ServerSpan& caller, std::vector<ServerSpan>* servers);
  void AddDatabaseCall(const ServerSpan& caller);
  void MaybeAddEventsAndLinks(trace::Span* span);
  void MaybeFail(trace::Span* span);
  // A child interval inside [start, end).
  std::pair<uint64_t, uint64_t> ChildInterval(uint64_t start, uint64_t end);

  RandomSource rng_;
  std::vector<std::array<trace::ScopeSpans*, 2>> scopes_;
  std::string trace_id_;
};

TraceBuilder::TraceBuilder(uint64_t seed, TraceRequest* request) : rng_(seed) {
  for (const Service& service : kServices) {
    trace::ResourceSpans* rs = request->add_resource_spans();
    FillServiceResource(service, rs->mutable_resource());
    rs->set_schema_url("https://opentelemetry.io/schemas/1.24.0");
    trace::ScopeSpans* http = rs->add_scope_spans();
    http->mutable_scope()->set_name("io.opentelemetry.http");
    http->mutable_scope()->set_version("1.32.0");
    trace::ScopeSpans* db = rs->add_scope_spans();
    db->mutable_scope()->set_name("io.opentelemetry.jdbc");
    db->mutable_scope()->set_version("1.32.0");
    scopes_.push_back({http, db});
  }
}

std::pair<uint64_t, uint64_t> TraceBuilder::ChildInterval(uint64_t start, uint64_t end) {
  uint64_t length = end - start;
  uint64_t child_start = start + rng_.Below(length / 4 + 1);
  uint64_t child_length = 1 + rng_.Below((end - child_start) / 2 + 1);
  return {child_start, child_start + child_length};
}

trace::Span* TraceBuilder::NewSpan(int service, bool database, const std::string& parent_id,
                                   uint64_t start, uint64_t end) {
  trace::Span* span = scopes_[service][database ? 1 : 0]->add_spans();
  span->set_trace_id(trace_id_);
  span->set_span_id(rng_.NonZeroBytes(8));
  if (!parent_id.empty()) span->set_parent_span_id(parent_id);
  span->set_start_time_unix_nano(start);
  span->set_end_time_unix_nano(end);
  return span;
}

void TraceBuilder::MaybeFail(trace::Span* span) {
  if (!rng_.Percent(4)) return;
  span->mutable_status()->set_code(trace::Status::STATUS_CODE_ERROR);
  span->mutable_status()->set_message("upstream request failed: connection reset by peer");
  trace::Span::Event* event = span->add_events();
  event->set_name("exception");
  event->set_time_unix_nano(span->end_time_unix_nano() - 1000);
  AddString(event->mutable_attributes(), "exception.type", "java.net.SocketException");
  AddString(event->mutable_attributes(), "exception.message", "Connection reset");
  AddString(event->mutable_attributes(), "exception.stacktrace",
            "java.net.SocketException: Connection reset\n\tat java.base/sun.nio.ch."
            "NioSocketImpl.implRead(NioSocketImpl.java:328)\n\tat java.base/java.net."
            "Socket$SocketInputStream.read(Socket.java:1099)");
}

void TraceBuilder::MaybeAddEventsAndLinks(trace::Span* span) {
  if (rng_.Percent(20)) {
    trace::Span::Event* event = span->add_events();
    event->set_name(rng_.Pick<std::string>({"cache.miss", "retry", "message"}));
    event->set_time_unix_nano(span->start_time_unix_nano() + 500);
    AddString(event->mutable_attributes(), "message.type", "SENT");
    AddInt(event->mutable_attributes(), "message.id", static_cast<int64_t>(rng_.Below(100)));
  }
  if (rng_.Percent(3)) {
    trace::Span::Link* link = span->add_links();
    link->set_trace_id(rng_.NonZeroBytes(16));
    link->set_span_id(rng_.NonZeroBytes(8));
    AddString(link->mutable_attributes(), "messaging.operation", "process");
  }
}

void TraceBuilder::AddCall(const ServerSpan& caller, std::vector<ServerSpan>* servers) {
  int callee = 1 + static_cast<int>(rng_.Below(kServices.size() - 1));
  auto [start, end] = ChildInterval(caller.start, caller.end);
  bool rpc = rng_.Bool();
  std::string_view route = kRoutes[rng_.Below(kRoutes.size())];
  std::string_view method = kMethods[rng_.Below(kMethods.size())];
  trace::Span* client = NewSpan(caller.service, false, caller.span_id, start, end);
  client->set_kind(trace::Span::SPAN_KIND_CLIENT);
  RepeatedPtrField<common::KeyValue>* attrs = client->mutable_attributes();
  std::string host = HostPort(callee);
  if (rpc) {
    client->set_name(absl::StrCat("shop.", std::string(kServices[callee].name), "/Get"));
    AddString(attrs, "rpc.system", "grpc");
    AddString(attrs, "rpc.service", absl::StrCat("shop.", std::string(kServices[callee].name)));
    AddString(attrs, "rpc.method", "Get");
    AddInt(attrs, "rpc.grpc.status_code", 0);
    AddString(attrs, "network.transport", "tcp");
  } else {
    client->set_name(std::string(method));
    AddString(attrs, "http.request.method", method);
    AddString(attrs, "url.full", absl::StrCat("http://", host, std::string(route)));
    AddInt(attrs, "http.response.status_code", 200);
    AddString(attrs, "network.protocol.version", "1.1");
  }
  AddString(attrs, "server.address", host);
  AddInt(attrs, "server.port", 8080);
  AddString(attrs, "network.peer.address", "10.0.2.4");
  AddInt(attrs, "net.peer.port", 8080);
  AddString(attrs, "thread.name", "http-nio-8080-exec-7");
  MaybeAddEventsAndLinks(client);
  MaybeFail(client);

  auto [server_start, server_end] = ChildInterval(start, end);
  trace::Span* server = NewSpan(callee, false, client->span_id(), server_start, server_end);
  server->set_kind(trace::Span::SPAN_KIND_SERVER);
  server->set_name(rpc ? client->name()
                       : absl::StrCat(std::string(method), " ", std::string(route)));
  attrs = server->mutable_attributes();
  AddString(attrs, "http.request.method", method);
  AddString(attrs, "http.route", route);
  AddString(attrs, "url.path", route);
  AddString(attrs, "url.scheme", "http");
  AddInt(attrs, "http.response.status_code", 200);
  AddString(attrs, "server.address", host);
  AddInt(attrs, "server.port", 8080);
  AddString(attrs, "client.address", "10.0.1.17");
  AddString(attrs, "user_agent.original", "okhttp/4.12.0");
  AddString(attrs, "network.protocol.version", "1.1");
  MaybeAddEventsAndLinks(server);
  MaybeFail(server);
  servers->push_back({callee, server->span_id(), server_start, server_end});
}

void TraceBuilder::AddDatabaseCall(const ServerSpan& caller) {
  auto [start, end] = ChildInterval(caller.start, caller.end);
  bool redis = rng_.OneIn(3);
  trace::Span* span = NewSpan(caller.service, true, caller.span_id, start, end);
  span->set_kind(trace::Span::SPAN_KIND_CLIENT);
  RepeatedPtrField<common::KeyValue>* attrs = span->mutable_attributes();
  if (redis) {
    span->set_name("GET");
    AddString(attrs, "db.system", "redis");
    AddString(attrs, "db.statement", "GET cart:8f1e2a9c");
    AddString(attrs, "db.operation", "GET");
    AddInt(attrs, "db.redis.database_index", 0);
  } else {
    span->set_name("SELECT shop.items");
    AddString(attrs, "db.system", "postgresql");
    AddString(attrs, "db.name", "shop");
    AddString(attrs, "db.statement",
              "SELECT id, sku, quantity, price FROM items WHERE cart_id = $1 ORDER BY id");
    AddString(attrs, "db.operation", "SELECT");
    AddString(attrs, "db.sql.table", "items");
  }
  AddString(attrs, "db.user", "shop_app");
  AddString(attrs, "server.address", redis ? "redis.shop.svc" : "postgres.shop.svc");
  AddInt(attrs, "server.port", redis ? 6379 : 5432);
  AddInt(attrs, "net.peer.port", redis ? 6379 : 5432);
  AddString(attrs, "network.peer.address", "10.0.4.2");
  MaybeAddEventsAndLinks(span);
  MaybeFail(span);
}

int TraceBuilder::AddTrace(int budget) {
  trace_id_ = rng_.NonZeroBytes(16);
  int spans = static_cast<int>(rng_.Between(5, 30));
  if (spans > budget) spans = budget;
  uint64_t start = kBaseTimeNanos + rng_.Below(60'000'000'000ULL);
  uint64_t end = start + 1'000'000 + rng_.Below(900'000'000);
  std::string_view route = kRoutes[rng_.Below(kRoutes.size())];
  trace::Span* root = NewSpan(0, false, "", start, end);
  root->set_kind(trace::Span::SPAN_KIND_SERVER);
  root->set_name(absl::StrCat("GET ", std::string(route)));
  RepeatedPtrField<common::KeyValue>* attrs = root->mutable_attributes();
  AddString(attrs, "http.request.method", "GET");
  AddString(attrs, "http.route", route);
  AddString(attrs, "url.path", route);
  AddString(attrs, "url.scheme", "https");
  AddInt(attrs, "http.response.status_code", 200);
  AddString(attrs, "server.address", "shop.example.com");
  AddInt(attrs, "server.port", 443);
  AddString(attrs, "client.address", "203.0.113.50");
  AddString(attrs, "user_agent.original",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36");
  AddString(attrs, "network.protocol.version", "2");
  MaybeAddEventsAndLinks(root);
  MaybeFail(root);

  std::vector<ServerSpan> servers = {{0, root->span_id(), start, end}};
  int added = 1;
  while (added < spans) {
    const ServerSpan caller = servers[rng_.Below(servers.size())];
    if (spans - added >= 2 && rng_.Percent(60)) {
      AddCall(caller, &servers);
      added += 2;
    } else {
      AddDatabaseCall(caller);
      added += 1;
    }
  }
  return added;
}

// Log records: five services, one scope each, records spread at random.
void FillRealisticLogs(uint64_t seed, int record_count, LogsRequest* request) {
  RandomSource rng(seed);
  std::vector<logs::ScopeLogs*> scopes;
  for (const Service& service : kServices) {
    logs::ResourceLogs* rl = request->add_resource_logs();
    FillServiceResource(service, rl->mutable_resource());
    logs::ScopeLogs* sl = rl->add_scope_logs();
    sl->mutable_scope()->set_name(absl::StrCat("shop.", std::string(service.name), ".logger"));
    scopes.push_back(sl);
  }
  for (int i = 0; i < record_count; ++i) {
    logs::LogRecord* record = scopes[rng.Below(scopes.size())]->add_log_records();
    uint64_t time = kBaseTimeNanos + rng.Below(60'000'000'000ULL);
    record->set_time_unix_nano(time);
    record->set_observed_time_unix_nano(time + 1000 + rng.Below(1'000'000));
    int level = static_cast<int>(rng.Below(20));
    auto severity = level < 2   ? logs::SEVERITY_NUMBER_ERROR
                    : level < 5 ? logs::SEVERITY_NUMBER_WARN
                    : level < 8 ? logs::SEVERITY_NUMBER_DEBUG
                                : logs::SEVERITY_NUMBER_INFO;
    record->set_severity_number(severity);
    record->set_severity_text(severity == logs::SEVERITY_NUMBER_ERROR   ? "ERROR"
                              : severity == logs::SEVERITY_NUMBER_WARN  ? "WARN"
                              : severity == logs::SEVERITY_NUMBER_DEBUG ? "DEBUG"
                                                                        : "INFO");
    std::string_view route = kRoutes[rng.Below(kRoutes.size())];
    record->mutable_body()->set_string_value(absl::StrCat(
        "request ", std::string(kMethods[rng.Below(kMethods.size())]), " ", std::string(route),
        " completed in ", rng.Below(900), " ms for user ", rng.Below(100000)));
    RepeatedPtrField<common::KeyValue>* attrs = record->mutable_attributes();
    AddString(attrs, "code.function", "handleRequest");
    AddString(attrs, "code.namespace", "shop.http.RequestHandler");
    AddInt(attrs, "code.lineno", 40 + static_cast<int64_t>(rng.Below(400)));
    AddInt(attrs, "thread.id", static_cast<int64_t>(rng.Below(64)));
    AddString(attrs, "http.route", route);
    AddString(attrs, "enduser.id", absl::StrCat("user-", rng.Below(100000)));
    if (!rng.Percent(20)) {
      record->set_trace_id(rng.NonZeroBytes(16));
      record->set_span_id(rng.NonZeroBytes(8));
      record->set_flags(1);
    }
  }
}

void AddPointAttributes(RandomSource& rng, RepeatedPtrField<common::KeyValue>* attrs) {
  AddString(attrs, "http.request.method", kMethods[rng.Below(kMethods.size())]);
  AddString(attrs, "http.route", kRoutes[rng.Below(kRoutes.size())]);
  AddInt(attrs, "http.response.status_code", rng.Percent(95) ? 200 : 503);
}

void FillNumberPoint(RandomSource& rng, bool integer, metrics::NumberDataPoint* point) {
  AddPointAttributes(rng, point->mutable_attributes());
  point->set_start_time_unix_nano(kBaseTimeNanos);
  point->set_time_unix_nano(kBaseTimeNanos + 60'000'000'000ULL);
  if (integer) {
    point->set_as_int(static_cast<int64_t>(rng.Below(1'000'000)));
  } else {
    point->set_as_double(rng.Unit() * 100.0);
  }
}

void FillHistogramPoint(RandomSource& rng, metrics::HistogramDataPoint* point) {
  static constexpr std::array<double, 10> kBounds = {5, 10, 25, 50, 75, 100, 250, 500, 1000, 2500};
  AddPointAttributes(rng, point->mutable_attributes());
  point->set_start_time_unix_nano(kBaseTimeNanos);
  point->set_time_unix_nano(kBaseTimeNanos + 60'000'000'000ULL);
  uint64_t count = 0;
  for (size_t i = 0; i <= kBounds.size(); ++i) {
    uint64_t n = rng.Below(500);
    point->add_bucket_counts(n);
    count += n;
  }
  for (double bound : kBounds) point->add_explicit_bounds(bound);
  point->set_count(count);
  point->set_sum(static_cast<double>(count) * 37.5);
  point->set_min(0.4);
  point->set_max(2210.0);
  if (rng.Percent(10)) {
    metrics::Exemplar* exemplar = point->add_exemplars();
    exemplar->set_time_unix_nano(kBaseTimeNanos + 1'000'000);
    exemplar->set_as_double(212.5);
    exemplar->set_trace_id(rng.NonZeroBytes(16));
    exemplar->set_span_id(rng.NonZeroBytes(8));
  }
}

// One metric of a service with `points` data points, of the kind `index`
// names in the service's fixed metric list.
void FillRealisticMetric(RandomSource& rng, int index, int points, metrics::Metric* metric) {
  switch (index % 4) {
    case 0: {
      metric->set_name("http.server.request.duration");
      metric->set_unit("ms");
      metric->set_description("Duration of HTTP server requests.");
      metrics::Histogram* histogram = metric->mutable_histogram();
      histogram->set_aggregation_temporality(metrics::AGGREGATION_TEMPORALITY_CUMULATIVE);
      for (int i = 0; i < points; ++i) FillHistogramPoint(rng, histogram->add_data_points());
      break;
    }
    case 1: {
      metric->set_name("http.server.request.count");
      metric->set_unit("{request}");
      metrics::Sum* sum = metric->mutable_sum();
      sum->set_aggregation_temporality(metrics::AGGREGATION_TEMPORALITY_CUMULATIVE);
      sum->set_is_monotonic(true);
      for (int i = 0; i < points; ++i) FillNumberPoint(rng, true, sum->add_data_points());
      break;
    }
    case 2: {
      metric->set_name("http.server.active_requests");
      metric->set_unit("{request}");
      metrics::Sum* sum = metric->mutable_sum();
      sum->set_aggregation_temporality(metrics::AGGREGATION_TEMPORALITY_DELTA);
      for (int i = 0; i < points; ++i) FillNumberPoint(rng, true, sum->add_data_points());
      break;
    }
    default: {
      metric->set_name("process.cpu.utilization");
      metric->set_unit("1");
      metrics::Gauge* gauge = metric->mutable_gauge();
      for (int i = 0; i < points; ++i) FillNumberPoint(rng, false, gauge->add_data_points());
    }
  }
}

void FillRealisticMetrics(uint64_t seed, int point_count, MetricsRequest* request) {
  RandomSource rng(seed);
  int left = point_count;
  int metric_index = 0;
  while (left > 0) {
    for (const Service& service : kServices) {
      if (left <= 0) break;
      metrics::ResourceMetrics* rm = request->add_resource_metrics();
      FillServiceResource(service, rm->mutable_resource());
      metrics::ScopeMetrics* sm = rm->add_scope_metrics();
      sm->mutable_scope()->set_name("io.opentelemetry.sdk.metrics");
      sm->mutable_scope()->set_version("1.38.0");
      for (int m = 0; m < 4 && left > 0; ++m) {
        int points = static_cast<int>(rng.Between(5, 12));
        if (points > left) points = left;
        FillRealisticMetric(rng, metric_index++, points, sm->add_metrics());
        left -= points;
      }
    }
  }
}

}  // namespace

TraceRequest RealisticTraceRequest(uint64_t seed, int span_count) {
  TraceRequest request;
  TraceBuilder builder(seed, &request);
  int left = span_count;
  while (left > 0) left -= builder.AddTrace(left);
  return request;
}

LogsRequest RealisticLogsRequest(uint64_t seed, int record_count) {
  LogsRequest request;
  FillRealisticLogs(seed, record_count, &request);
  return request;
}

MetricsRequest RealisticMetricsRequest(uint64_t seed, int point_count) {
  MetricsRequest request;
  FillRealisticMetrics(seed, point_count, &request);
  return request;
}

}  // namespace strata::otlp_reference
