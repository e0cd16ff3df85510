#pragma once

// Test traffic shared by the service-map and trace-metrics tests: traces of
// frontend -> cart (-> postgres, -> kafka -> billing), billing -> an outside
// API and frontend -> an uninstrumented peer, spread over several minutes,
// and a writer that exports each service's spans apart, shuffled, so
// children land before their parents and after them.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "otlp/decode.h"
#include "storage/storage.h"

namespace strata::api::service_map_testing {

inline constexpr int64_t kMs = 1'000'000;

struct Span {
  std::string service;
  std::string json;
};

inline std::string Attr(std::string_view key, std::string_view value) {
  return fmt::format(R"({{"key":"{}","value":{{"stringValue":"{}"}}}})", key, value);
}

// Traces of frontend -> cart (-> postgres, -> kafka -> billing), billing ->
// an outside API, each span tagged with its service.
inline std::vector<Span> Traces(int traces, int64_t t0) {
  std::vector<Span> out;
  auto span = [&](int trace, int id, int parent, std::string_view service, int kind, int64_t start,
                  int64_t duration, bool error, std::string attrs, std::string link = "") {
    out.push_back(
        {std::string(service),
         fmt::format(R"({{"traceId":"{:032x}","spanId":"{:016x}",{}"name":"op{}","kind":{},)"
                     R"("startTimeUnixNano":"{}","endTimeUnixNano":"{}","status":{{"code":{}}},)"
                     R"("attributes":[{}]{}}})",
                     trace + 1, trace * 16 + id,
                     parent < 0 ? std::string()
                                : fmt::format(R"("parentSpanId":"{:016x}",)", trace * 16 + parent),
                     id, kind, start, start + duration, error ? 2 : 0, attrs,
                     link.empty() ? "" : fmt::format(R"(,"links":[{}])", link))});
  };
  for (int t = 0; t < traces; ++t) {
    const int64_t s = t0 + t * 7 * 1'000 * kMs;  // a trace every 7 s: several minutes
    const int64_t d = (1 + t % 13) * 3 * kMs;
    span(t, 1, -1, "frontend", 2, s, 10 * d, false, "");
    span(t, 2, 1, "frontend", 3, s + kMs, 8 * d, t % 5 == 0, Attr("peer.service", "cart"));
    span(t, 3, 2, "cart", 2, s + 2 * kMs, 7 * d, t % 5 == 0, "");
    span(t, 4, 3, "cart", 3, s + 3 * kMs, d, t % 7 == 0,
         Attr("db.system.name", "postgresql") + "," + Attr("db.namespace", "shop"));
    span(t, 5, 3, "cart", 4, s + 4 * kMs, d / 2, false,
         Attr("messaging.system", "kafka") + "," + Attr("messaging.destination.name", "orders"));
    const std::string queue =
        Attr("messaging.system", "kafka") + "," + Attr("messaging.destination.name", "orders");
    if (t % 3 == 0) {
      span(t, 6, 5, "billing", 5, s + 5 * kMs, 2 * d, t % 4 == 0, queue);
    } else if (t % 3 == 1) {  // a consumer in a trace of its own, linked to the producer
      span(t + 10'000, 6, -1, "billing", 5, s + 5 * kMs, 2 * d, false, queue,
           fmt::format(R"({{"traceId":"{:032x}","spanId":"{:016x}"}})", t + 1, t * 16 + 5));
    } else {  // a consumer that only names the destination it read from
      span(t + 20'000, 6, -1, "billing", 5, s + 5 * kMs, 2 * d, t % 4 == 0, queue);
    }
    span(t, 7, 6, "billing", 3, s + 6 * kMs, d, t % 3 == 0,
         Attr("server.address", "api.payments.example"));
    // A client whose server never reports: a virtual peer named by it.
    span(t, 8, 1, "frontend", 3, s + 7 * kMs, d, false, Attr("peer.service", "recommendations"));
  }
  return out;
}

inline std::string RequestJson(std::string_view service, const std::vector<std::string>& spans) {
  std::string joined;
  for (const std::string& s : spans) joined += (joined.empty() ? "" : ",") + s;
  return fmt::format(R"({{"resourceSpans":[{{"resource":{{"attributes":[{}]}},)"
                     R"("scopeSpans":[{{"scope":{{"name":"t"}},"spans":[{}]}}]}}]}})",
                     Attr("service.name", service), joined);
}

// Writes `spans` to `storage`: each service's in 4 requests, the requests
// in an order shuffled by `seed`.
inline absl::Status WriteExportedApart(storage::Storage& storage, std::vector<Span> spans,
                                       unsigned seed) {
  std::mt19937 rng(seed);
  std::shuffle(spans.begin(), spans.end(), rng);
  std::map<std::string, std::vector<std::vector<std::string>>> parts;
  for (size_t i = 0; i < spans.size(); ++i) {
    auto& list = parts[spans[i].service];
    list.resize(4);
    list[i % 4].push_back(spans[i].json);
  }
  std::vector<std::string> requests;
  for (const auto& [service, lists] : parts) {
    for (const auto& list : lists) requests.push_back(RequestJson(service, list));
  }
  std::shuffle(requests.begin(), requests.end(), rng);
  for (const std::string& json : requests) {
    auto batch = std::make_unique<otlp::TraceBatch>();
    if (absl::Status decoded = otlp::DecodeTracesJson(json, batch.get()); !decoded.ok()) {
      return decoded;
    }
    storage::WriteRequest request;
    request.rows = batch->spans.size();
    request.traces = std::move(batch);
    request.bytes = json.size();
    if (absl::Status written = storage.Write(std::move(request)); !written.ok()) return written;
  }
  return absl::OkStatus();
}

}  // namespace strata::api::service_map_testing
