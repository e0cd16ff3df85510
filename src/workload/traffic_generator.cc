// TrafficGenerator: resources, scopes and traces (traffic_generator.h).
// Logs and metrics are in traffic_logs_metrics.cc.

#include "workload/traffic_generator.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "workload/traffic_internal.h"

namespace strata::workload {
namespace internal {

uint32_t AppendServiceResources(otlp::BatchBase* batch) {
  const uint32_t first = static_cast<uint32_t>(batch->resources.size());
  for (const Service& service : kServices) {
    const size_t begin = batch->resource_attributes.size();
    otlp::AttributeColumns* attrs = &batch->resource_attributes;
    AddString(attrs, "service.name", service.name);
    AddString(attrs, "service.version", service.version);
    AddString(attrs, "service.namespace", "shop");
    AddString(attrs, "deployment.environment.name", "production");
    AddString(attrs, "host.name", service.host);
    AddString(attrs, "k8s.pod.name", service.pod);
    AddString(attrs, "k8s.namespace.name", "shop");
    AddString(attrs, "telemetry.sdk.name", "opentelemetry");
    AddString(attrs, "telemetry.sdk.language", service.language);
    AddString(attrs, "telemetry.sdk.version", "1.32.0");
    otlp::ResourceRow row;
    row.attributes = Since(*attrs, begin);
    row.entity_refs = otlp::Range{static_cast<uint32_t>(batch->entity_refs.size()), 0};
    row.schema_url = "https://opentelemetry.io/schemas/1.26.0";
    batch->resources.Append(row);
  }
  return first;
}

uint32_t AppendScope(otlp::BatchBase* batch, uint32_t resource, std::string_view name,
                     std::string_view version) {
  otlp::ScopeRow row;
  row.resource = resource;
  row.name = name;
  row.version = version;
  row.attributes = otlp::Range{static_cast<uint32_t>(batch->scope_attributes.size()), 0};
  return batch->scopes.Append(row);
}

}  // namespace internal

using internal::AddInt;
using internal::AddString;
using internal::kServices;
using internal::Since;

namespace {

constexpr std::array<std::string_view, 6> kRoutes = {
    "/api/cart/items",        "/api/checkout",          "/api/products/{id}",
    "/api/payment/authorize", "/api/inventory/reserve", "/api/recommendations"};
constexpr std::array<std::string_view, 6> kPaths = {
    "/api/cart/items",        "/api/checkout",          "/api/products/8812",
    "/api/payment/authorize", "/api/inventory/reserve", "/api/recommendations"};
constexpr std::array<std::string_view, 4> kMethods = {"GET", "GET", "POST", "PUT"};
constexpr std::array<std::string_view, 4> kStatements = {
    "SELECT id, sku, quantity FROM cart_items WHERE cart_id = ?",
    "UPDATE inventory SET reserved = reserved + ? WHERE sku = ?",
    "INSERT INTO payments (order_id, amount, currency) VALUES (?, ?, ?)",
    "SELECT price, currency FROM products WHERE id = ?"};
constexpr std::array<std::string_view, 3> kTables = {"cart_items", "inventory", "payments"};

}  // namespace

// Builds the traces of one batch. Each service has two scopes: HTTP/RPC
// instrumentation and database client instrumentation.
class TrafficGenerator::TraceWriter {
 public:
  TraceWriter(TrafficGenerator* generator, otlp::TraceBatch* batch)
      : g_(*generator), rng_(*generator->rng_), batch_(batch) {
    const uint32_t first_resource = internal::AppendServiceResources(batch);
    for (size_t s = 0; s < kServices.size(); ++s) {
      const uint32_t resource = first_resource + static_cast<uint32_t>(s);
      scopes_[s][0] = internal::AppendScope(batch, resource, "io.opentelemetry.http", "1.32.0");
      scopes_[s][1] = internal::AppendScope(batch, resource, "io.opentelemetry.jdbc", "1.32.0");
    }
  }

  // One trace of `span_target` spans (at least 1). Returns its span count.
  int AddTrace(int span_target);
  // Writes a held-back CLIENT span (HeldCall) into this batch.
  void AppendHeldCall(const HeldCall& call);

 private:
  struct Server {
    int service;
    otlp::SpanId span_id;
    uint64_t start;
    uint64_t end;
  };

  // A child interval inside [start, end].
  std::pair<uint64_t, uint64_t> ChildInterval(uint64_t start, uint64_t end) {
    const uint64_t length = end - start;
    const uint64_t child_start = start + rng_.Below(length / 4 + 1);
    const uint64_t child_length = 1 + rng_.Below((end - child_start) / 2 + 1);
    return {child_start, child_start + child_length};
  }
  std::string_view Copy(std::string_view text) { return batch_->arena.Copy(text); }
  // A span link's target.
  struct LinkTarget {
    otlp::TraceId trace_id{};
    otlp::SpanId span_id{};
  };
  // Appends a span whose attributes were appended since `attrs_begin`,
  // with the id `span_id` when given (else a random one) and a link to
  // `link` when given.
  otlp::SpanId AppendSpan(int service, bool database, const otlp::SpanId* parent,
                          std::string_view name, int32_t kind, uint64_t start, uint64_t end,
                          size_t attrs_begin, bool fail, const otlp::SpanId* span_id = nullptr,
                          const LinkTarget* link = nullptr);
  // The attributes of a call's CLIENT span; returns the span's name.
  std::string_view AppendClientAttributes(int callee, bool rpc, size_t route,
                                          std::string_view method, bool fail);
  void AddCall(const Server& caller, std::vector<Server>* servers);
  void AddDatabaseCall(const Server& caller);
  // A message `caller` publishes and another service consumes.
  void AddMessage(const Server& caller);

  TrafficGenerator& g_;
  Random& rng_;
  otlp::TraceBatch* batch_;
  std::array<std::array<uint32_t, 2>, kServices.size()> scopes_{};
  otlp::TraceId trace_id_{};
  int spans_ = 0;
};

otlp::SpanId TrafficGenerator::TraceWriter::AppendSpan(
    int service, bool database, const otlp::SpanId* parent, std::string_view name, int32_t kind,
    uint64_t start, uint64_t end, size_t attrs_begin, bool fail, const otlp::SpanId* span_id,
    const LinkTarget* link) {
  otlp::SpanRow row;
  row.scope = scopes_[service][database ? 1 : 0];
  row.trace_id = trace_id_;
  row.span_id = span_id != nullptr ? *span_id : rng_.NonZeroId<8>();
  if (parent != nullptr) {
    row.parent_span_id = *parent;
    row.has_parent_span_id = 1;
  }
  row.flags = 0x101;  // sampled, with the parent-is-remote bits known
  row.name = name;
  row.kind = kind;
  row.start_time_unix_nano = start;
  row.end_time_unix_nano = end;
  row.attributes = Since(batch_->span_attributes, attrs_begin);

  const uint32_t events_begin = static_cast<uint32_t>(batch_->events.size());
  if (fail) {
    row.status_code = 2;  // ERROR
    row.status_message = "upstream request failed: connection reset by peer";
    const size_t begin = batch_->event_attributes.size();
    AddString(&batch_->event_attributes, "exception.type", "java.net.SocketException");
    AddString(&batch_->event_attributes, "exception.message", "Connection reset");
    AddString(&batch_->event_attributes, "exception.stacktrace",
              "java.net.SocketException: Connection reset\n\tat java.base/sun.nio.ch."
              "NioSocketImpl.implRead(NioSocketImpl.java:328)\n\tat java.base/java.net."
              "Socket$SocketInputStream.read(Socket.java:1099)");
    batch_->events.Append(
        {end > start ? end - 1 : end, "exception", Since(batch_->event_attributes, begin), 0});
  } else if (rng_.Percent(15)) {
    const size_t begin = batch_->event_attributes.size();
    AddString(&batch_->event_attributes, "message.type", "SENT");
    AddInt(&batch_->event_attributes, "message.id", static_cast<int64_t>(rng_.Below(100)));
    constexpr std::array<std::string_view, 3> kEvents = {"cache.miss", "retry", "message"};
    batch_->events.Append({start + (end - start) / 3, kEvents[rng_.Below(kEvents.size())],
                           Since(batch_->event_attributes, begin), 0});
  }
  row.events =
      otlp::Range{events_begin, static_cast<uint32_t>(batch_->events.size()) - events_begin};

  const uint32_t links_begin = static_cast<uint32_t>(batch_->links.size());
  if (link != nullptr) {
    const size_t begin = batch_->link_attributes.size();
    AddString(&batch_->link_attributes, "messaging.operation.type", "process");
    otlp::LinkRow row_link;
    row_link.trace_id = link->trace_id;
    row_link.span_id = link->span_id;
    row_link.attributes = Since(batch_->link_attributes, begin);
    batch_->links.Append(row_link);
  }
  if (rng_.Percent(2)) {
    const size_t begin = batch_->link_attributes.size();
    AddString(&batch_->link_attributes, "messaging.operation", "process");
    otlp::LinkRow link;
    link.trace_id = rng_.NonZeroId<16>();
    link.span_id = rng_.NonZeroId<8>();
    link.attributes = Since(batch_->link_attributes, begin);
    batch_->links.Append(link);
  }
  row.links = otlp::Range{links_begin, static_cast<uint32_t>(batch_->links.size()) - links_begin};
  batch_->spans.Append(row);
  ++spans_;

  RecentSpan recent{trace_id_, row.span_id, service, end, fail};
  if (g_.recent_.size() < 4096) {
    g_.recent_.push_back(recent);
  } else {
    g_.recent_[g_.recent_next_] = recent;
    g_.recent_next_ = (g_.recent_next_ + 1) % g_.recent_.size();
  }
  return row.span_id;
}

void TrafficGenerator::TraceWriter::AddDatabaseCall(const Server& caller) {
  auto [start, end] = ChildInterval(caller.start, caller.end);
  const size_t begin = batch_->span_attributes.size();
  otlp::AttributeColumns* attrs = &batch_->span_attributes;
  const size_t statement = rng_.Below(kStatements.size());
  AddString(attrs, "db.system.name", "postgresql");
  AddString(attrs, "db.namespace", "shop");
  AddString(attrs, "db.query.text", kStatements[statement]);
  AddString(attrs, "db.collection.name", kTables[statement % kTables.size()]);
  AddString(attrs, "server.address", "postgres.shop.svc");
  AddInt(attrs, "server.port", 5432);
  constexpr std::array<std::string_view, 4> kOperations = {"SELECT cart_items", "UPDATE inventory",
                                                           "INSERT payments", "SELECT products"};
  AppendSpan(caller.service, true, &caller.span_id, kOperations[statement], 3 /* CLIENT */, start,
             end, begin, rng_.Percent(static_cast<uint64_t>(g_.options_.error_percent) / 2));
}

std::string_view TrafficGenerator::TraceWriter::AppendClientAttributes(int callee, bool rpc,
                                                                       size_t route,
                                                                       std::string_view method,
                                                                       bool fail) {
  otlp::AttributeColumns* attrs = &batch_->span_attributes;
  const std::string_view callee_name = kServices[callee].name;
  const std::string_view host = Copy(fmt::format("{}.shop.svc", callee_name));
  std::string_view name;
  if (rpc) {
    name = Copy(fmt::format("shop.{}/Get", callee_name));
    AddString(attrs, "rpc.system", "grpc");
    AddString(attrs, "rpc.service", name.substr(0, name.size() - 4));
    AddString(attrs, "rpc.method", "Get");
    AddInt(attrs, "rpc.grpc.status_code", fail ? 14 : 0);
  } else {
    name = method;
    AddString(attrs, "http.request.method", method);
    AddString(attrs, "url.full", Copy(fmt::format("http://{}{}", host, kPaths[route])));
    AddInt(attrs, "http.response.status_code", fail ? 503 : 200);
  }
  AddString(attrs, "server.address", host);
  AddInt(attrs, "server.port", 8080);
  AddString(attrs, "peer.service", callee_name);
  return name;
}

void TrafficGenerator::TraceWriter::AppendHeldCall(const HeldCall& call) {
  trace_id_ = call.trace_id;
  const size_t begin = batch_->span_attributes.size();
  const std::string_view name =
      AppendClientAttributes(call.callee, call.rpc, call.route, call.method, call.fail);
  AppendSpan(call.service, false, &call.parent_span_id, name, 3 /* CLIENT */, call.start, call.end,
             begin, call.fail, &call.span_id);
}

void TrafficGenerator::TraceWriter::AddCall(const Server& caller, std::vector<Server>* servers) {
  const int callee = 1 + static_cast<int>(rng_.Below(kServices.size() - 1));
  auto [start, end] = ChildInterval(caller.start, caller.end);
  const bool rpc = rng_.Below(3) == 0;
  const size_t route = rng_.Below(kRoutes.size());
  const std::string_view method = kMethods[rng_.Below(kMethods.size())];
  const bool fail = rng_.Percent(static_cast<uint64_t>(g_.options_.error_percent));
  const int64_t status = fail ? 503 : 200;
  otlp::AttributeColumns* attrs = &batch_->span_attributes;

  // The caller's CLIENT span, now or (held back) in a later batch.
  const int late_percent = g_.options_.late_parent_percent;
  otlp::SpanId client;
  std::string_view name;
  if (late_percent > 0 && rng_.Percent(static_cast<uint64_t>(late_percent))) {
    client = rng_.NonZeroId<8>();
    g_.held_.push_back({trace_id_, client, caller.span_id, caller.service, callee, rpc, route,
                        method, fail, start, end});
    name = rpc ? Copy(fmt::format("shop.{}/Get", kServices[callee].name)) : method;
  } else {
    const size_t begin = batch_->span_attributes.size();
    name = AppendClientAttributes(callee, rpc, route, method, fail);
    client = AppendSpan(caller.service, false, &caller.span_id, name, 3 /* CLIENT */, start, end,
                        begin, fail);
  }

  // The callee's SERVER span, a little inside the client's interval.
  const uint64_t skew = (end - start) / 20;
  const size_t begin = batch_->span_attributes.size();
  if (rpc) {
    AddString(attrs, "rpc.system", "grpc");
    AddString(attrs, "rpc.service", name.substr(0, name.size() - 4));
    AddString(attrs, "rpc.method", "Get");
    AddInt(attrs, "rpc.grpc.status_code", fail ? 14 : 0);
  } else {
    name = Copy(fmt::format("{} {}", method, kRoutes[route]));
    AddString(attrs, "http.request.method", method);
    AddString(attrs, "http.route", kRoutes[route]);
    AddString(attrs, "url.path", kPaths[route]);
    AddString(attrs, "url.scheme", "http");
    AddInt(attrs, "http.response.status_code", status);
  }
  AddString(attrs, "network.peer.address", "10.0.1.17");
  const otlp::SpanId server = AppendSpan(callee, false, &client, name, 2 /* SERVER */, start + skew,
                                         end - skew, begin, fail);
  servers->push_back({callee, server, start + skew, end - skew});
}

void TrafficGenerator::TraceWriter::AddMessage(const Server& caller) {
  auto [start, end] = ChildInterval(caller.start, caller.end);
  const int consumer = (caller.service + 1 + static_cast<int>(rng_.Below(kServices.size() - 1))) %
                       static_cast<int>(kServices.size());
  const bool child = rng_.Below(2) == 0;
  const bool fail = rng_.Percent(static_cast<uint64_t>(g_.options_.error_percent));
  otlp::AttributeColumns* attrs = &batch_->span_attributes;
  size_t begin = attrs->size();
  AddString(attrs, "messaging.system", "kafka");
  AddString(attrs, "messaging.destination.name", "orders");
  AddString(attrs, "messaging.operation.type", "send");
  const otlp::SpanId producer = AppendSpan(caller.service, false, &caller.span_id, "send orders",
                                           4 /* PRODUCER */, start, end, begin, false);
  // Consumed a little later, by another service: as the producer's child
  // in its trace, or at the root of a trace of its own linked to it.
  const uint64_t consume_start = end + rng_.Below(50'000'000);
  const uint64_t consume_end = consume_start + 1'000'000 + rng_.Below(20'000'000);
  begin = attrs->size();
  AddString(attrs, "messaging.system", "kafka");
  AddString(attrs, "messaging.destination.name", "orders");
  AddString(attrs, "messaging.operation.type", "process");
  AddString(attrs, "messaging.consumer.group.name", kServices[consumer].name);
  if (child) {
    AppendSpan(consumer, false, &producer, "process orders", 5 /* CONSUMER */, consume_start,
               consume_end, begin, fail);
    return;
  }
  const LinkTarget link{trace_id_, producer};
  trace_id_ = rng_.NonZeroId<16>();
  AppendSpan(consumer, false, nullptr, "process orders", 5 /* CONSUMER */, consume_start,
             consume_end, begin, fail, nullptr, &link);
  trace_id_ = link.trace_id;
}

int TrafficGenerator::TraceWriter::AddTrace(int span_target) {
  trace_id_ = rng_.NonZeroId<16>();
  spans_ = 0;
  const uint64_t start = g_.now_unix_nano_ + rng_.Below(1'000'000);
  const uint64_t duration = 2'000'000 + rng_.Below(400'000'000);
  const size_t route = rng_.Below(kRoutes.size());
  const std::string_view method = kMethods[rng_.Below(kMethods.size())];

  const size_t begin = batch_->span_attributes.size();
  otlp::AttributeColumns* attrs = &batch_->span_attributes;
  AddString(attrs, "http.request.method", method);
  AddString(attrs, "http.route", kRoutes[route]);
  AddString(attrs, "url.path", kPaths[route]);
  AddString(attrs, "url.scheme", "https");
  AddInt(attrs, "http.response.status_code", 200);
  AddString(attrs, "user_agent.original",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)");
  AddString(attrs, "client.address", Copy(fmt::format("203.0.113.{}", rng_.Below(250) + 1)));
  if (g_.options_.structured_values) {
    constexpr std::array<std::string_view, 3> kCities = {"Köln", "東京", "São Paulo"};
    const std::string_view city = kCities[route % kCities.size()];
    AddString(attrs, "user.city", city);
    attrs->Append({"app.tags", internal::StringArray(batch_, {kRoutes[route], city})});
    // {"id": <route index>, "premium": <even route>}
    otlp::AttributeColumns& nested = batch_->nested_attributes;
    const uint32_t user = static_cast<uint32_t>(nested.size());
    nested.Append({"id", {otlp::ValueType::kInt, {}, route}});
    nested.Append({"premium", {otlp::ValueType::kBool, {}, route % 2 == 0 ? 1u : 0u}});
    attrs->Append(
        {"app.user", {otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack({user, 2})}});
  }
  const std::string_view name = Copy(fmt::format("{} {}", method, kRoutes[route]));
  const otlp::SpanId root =
      AppendSpan(0, false, nullptr, name, 2 /* SERVER */, start, start + duration, begin, false);

  std::vector<Server> servers = {{0, root, start, start + duration}};
  while (spans_ < span_target) {
    const Server caller = servers[rng_.Below(servers.size())];
    if (spans_ + 2 <= span_target && (caller.service == 0 || rng_.Percent(40))) {
      AddCall(caller, &servers);
    } else {
      AddDatabaseCall(caller);
    }
  }
  const int messaging_percent = g_.options_.messaging_percent;
  if (messaging_percent > 0 && rng_.Percent(static_cast<uint64_t>(messaging_percent))) {
    AddMessage(servers[rng_.Below(servers.size())]);
  }
  // Traffic moves on by about a trace's worth of time at a few thousand
  // requests per second, or by the spacing asked for.
  const uint64_t spacing = g_.options_.trace_spacing_nanos;
  g_.now_unix_nano_ += spacing > 0 ? spacing : 200'000 + rng_.Below(200'000);
  return spans_;
}

TrafficGenerator::TrafficGenerator(TrafficOptions options)
    : options_(options),
      rng_(std::make_unique<Random>(options.seed)),
      now_unix_nano_(options.start_time_unix_nano) {}

TrafficGenerator::~TrafficGenerator() = default;

std::unique_ptr<otlp::TraceBatch> TrafficGenerator::Traces(int span_count) {
  auto batch = std::make_unique<otlp::TraceBatch>();
  TraceWriter writer(this, batch.get());
  int spans = 0;
  const int lo = std::max(1, options_.min_spans_per_trace);
  const int hi = std::max(lo, options_.max_spans_per_trace);
  while (spans < span_count) {
    spans += writer.AddTrace(lo + static_cast<int>(rng_->Below(hi - lo + 1)));
  }
  const uint64_t delay = options_.late_parent_delay_nanos;
  if (!held_.empty() && now_unix_nano_ >= delay) {
    spans += ReleaseHeldCalls(&writer, now_unix_nano_ - delay);
  }
  spans_generated_ += static_cast<uint64_t>(spans);
  return batch;
}

int TrafficGenerator::ReleaseHeldCalls(TraceWriter* writer, uint64_t due_unix_nano) {
  int released = 0;
  std::vector<HeldCall> kept;
  for (const HeldCall& call : held_) {
    if (call.end <= due_unix_nano) {
      writer->AppendHeldCall(call);
      ++released;
    } else {
      kept.push_back(call);
    }
  }
  held_ = std::move(kept);
  return released;
}

std::unique_ptr<otlp::TraceBatch> TrafficGenerator::HeldBackSpans() {
  auto batch = std::make_unique<otlp::TraceBatch>();
  if (held_.empty()) return batch;
  TraceWriter writer(this, batch.get());
  spans_generated_ += static_cast<uint64_t>(ReleaseHeldCalls(&writer, UINT64_MAX));
  return batch;
}

}  // namespace strata::workload
