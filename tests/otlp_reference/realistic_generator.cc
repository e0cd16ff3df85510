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
    "/api/cart/items", "/api/checkout", "/api/products/{id}",
    "/api/payment/authorize", "/api/inventory/reserve", "/healthz"};

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

void FillServiceResource(const Service& service, opentelemetry::proto::resource::v1::Resource* r) {
  auto* attrs = r->mutable_attributes();
  AddString(attrs, "service.name", service.name);
  AddString(attrs, "service.version", service.version);
  AddString(attrs, "service.namespace", "shop");
  AddString(attrs, "host.name", service.host);
  AddString(attrs, "deployment.environment", "production");
  AddString(attrs, "telemetry.sdk.name", "opentelemetry");
  AddString(attrs, "telemetry.sdk.language", service.language);
  AddString(attrs, "k8s.pod.name", absl::StrCat(service.name, "-7d9f8b6c5-x2x4q"));
}

// One server span of a trace under construction: calls hang below it.
struct ServerSpan {
  int service;
  std::string span_id;
  uint64_t start;
  uint64_t end;
};

// Builds the spans of one request, one trace after another, into per-service
// ScopeSpans (scope 0: HTTP and RPC instrumentation, scope 1: database).
class TraceBuilder {
 public:
  TraceBuilder(uint64_t seed, TraceRequest* request) : rng_(seed) {
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

  // Adds one trace of up to `budget` spans; returns how many it added.
  int AddTrace(int budget);

 private:
  trace::Span* NewSpan(int service, bool database, const std::string& parent_id, uint64_t start,
                       uint64_t end);
  void AddCall(const ServerSpan& caller, int callee, std::vector<ServerSpan>* servers);
  void AddDatabaseCall(const ServerSpan& caller);
  void MaybeAddEventsAndLinks(trace::Span* span);
  void FillHttpServer(trace::Span* span, std::string_view route, int status);

  RandomSource rng_;
  std::vector<std::array<trace::ScopeSpans*, 2>> scopes_;
  std::string trace_id_;
};

trace::Span* TraceBuilder::NewSpan(int service, bool database, const std::string& parent_id,
                                   uint64_t start, uint64_t end) {
  trace::Span* span = scopes_[service][database ? 1 : 0]->add_spans();
  span->set_trace_id(trace_id_);
  span->set_span_id(rng_.NonZeroBytes(8));
  if (!parent_id.empty()) span->set_parent_span_id(parent_id);
  span->set_start_time_unix_nano(start);
  span->set_end_time_unix_nano(end);
  span->set_flags_unused_marker_do_not_call();
  return span;
}

}  // namespace
}  // namespace strata::otlp_reference
