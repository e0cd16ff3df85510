#include "api/trace_columns.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/check.h"
#include "otlp/encode.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

constexpr std::string_view kServiceNameKey = "service.name";

// Interns strings into a table of distinct values, in order of first use.
class StringTable {
 public:
  uint32_t IndexOf(std::string_view value) {
    auto [it, inserted] = index_.try_emplace(value, static_cast<uint32_t>(values_.size()));
    if (inserted) values_.push_back(value);
    return it->second;
  }
  const std::vector<std::string_view>& values() const { return values_; }

 private:
  absl::flat_hash_map<std::string_view, uint32_t> index_;
  std::vector<std::string_view> values_;
};

// Nanosecond counts as numbers when JavaScript reads them exactly, else as
// decimal strings.
void WriteNanos(otlp::JsonWriter& w, int64_t nanos) {
  if (nanos > kMaxExactJsonInteger || nanos < -kMaxExactJsonInteger) {
    w.IntString(nanos);
  } else {
    w.Int(nanos);
  }
}
void WriteNanos(otlp::JsonWriter& w, uint64_t nanos) {
  if (nanos > static_cast<uint64_t>(kMaxExactJsonInteger)) {
    w.UintString(nanos);
  } else {
    w.Uint(nanos);
  }
}

template <typename Write>
void WriteArray(otlp::JsonWriter& w, std::string_view key, size_t count, Write&& write) {
  w.Key(key);
  w.BeginArray();
  for (size_t i = 0; i < count; ++i) write(i);
  w.EndArray();
}

}  // namespace

std::string_view ResourceServiceName(const otlp::BatchBase& batch, size_t resource) {
  const otlp::Range range = batch.resources.attributes[resource];
  const otlp::AttributeColumns& attributes = batch.resource_attributes;
  for (uint32_t a = range.begin; a < range.end(); ++a) {
    if (attributes.key[a] != kServiceNameKey) continue;
    if (attributes.value.type[a] != otlp::ValueType::kString) return {};
    return attributes.value.str[a];
  }
  return {};
}

std::string TraceColumnsJson(const otlp::TraceBatch& trace) {
  const otlp::SpanColumns& spans = trace.spans;
  const size_t count = spans.size();
  STRATA_CHECK(count > 0, "a compact trace needs a span");

  // Resource rows of the batch -> index of their distinct JSON, and the
  // service and resource index of each span.
  std::vector<std::string> resources;
  std::vector<uint32_t> resource_of_row(trace.resources.size());
  std::vector<uint32_t> service_of_row(trace.resources.size());
  absl::flat_hash_map<std::string, uint32_t> resource_index;
  StringTable services;
  for (size_t r = 0; r < trace.resources.size(); ++r) {
    std::string json = otlp::EncodeResourceJson(trace, r);
    auto [it, inserted] = resource_index.try_emplace(json, static_cast<uint32_t>(resources.size()));
    if (inserted) resources.push_back(std::move(json));
    resource_of_row[r] = it->second;
    service_of_row[r] = services.IndexOf(ResourceServiceName(trace, r));
  }
  StringTable names;
  std::vector<uint32_t> name_of_span(count);
  uint64_t trace_start = spans.start_time_unix_nano[0];
  for (size_t i = 0; i < count; ++i) {
    name_of_span[i] = names.IndexOf(spans.name[i]);
    trace_start = std::min(trace_start, spans.start_time_unix_nano[i]);
  }
  const auto resource_row = [&](size_t span) { return trace.scopes.resource[spans.scope[span]]; };

  std::string out;
  // About 60 bytes a span (two hex ids, five small integers, two offsets).
  out.reserve(256 + 80 * count);
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("trace_id");
  w.HexString(spans.trace_id[0].data(), spans.trace_id[0].size());
  w.Key("start_time_unix_nano");
  w.UintString(trace_start);
  w.Key("span_count");
  w.Uint(count);
  w.Key("resources");
  w.BeginArray();
  // Each is a whole JSON object already; JsonWriter has no raw value, so
  // the separators are written here.
  for (size_t r = 0; r < resources.size(); ++r) {
    if (r > 0) out.push_back(',');
    out.append(resources[r]);
  }
  w.EndArray();
  WriteArray(w, "services", services.values().size(),
             [&](size_t s) { w.String(services.values()[s]); });
  WriteArray(w, "names", names.values().size(), [&](size_t n) { w.String(names.values()[n]); });
  w.Key("spans");
  w.BeginObject();
  WriteArray(w, "span_id", count,
             [&](size_t i) { w.HexString(spans.span_id[i].data(), spans.span_id[i].size()); });
  WriteArray(w, "parent_span_id", count, [&](size_t i) {
    if (spans.has_parent_span_id[i]) {
      w.HexString(spans.parent_span_id[i].data(), spans.parent_span_id[i].size());
    } else {
      w.String("");
    }
  });
  WriteArray(w, "resource", count, [&](size_t i) { w.Uint(resource_of_row[resource_row(i)]); });
  WriteArray(w, "service", count, [&](size_t i) { w.Uint(service_of_row[resource_row(i)]); });
  WriteArray(w, "name", count, [&](size_t i) { w.Uint(name_of_span[i]); });
  WriteArray(w, "kind", count, [&](size_t i) { w.Int(spans.kind[i]); });
  WriteArray(w, "status_code", count, [&](size_t i) { w.Int(spans.status_code[i]); });
  WriteArray(w, "start_offset_nano", count,
             [&](size_t i) { WriteNanos(w, spans.start_time_unix_nano[i] - trace_start); });
  WriteArray(w, "duration_nano", count, [&](size_t i) {
    WriteNanos(w,
               static_cast<int64_t>(spans.end_time_unix_nano[i] - spans.start_time_unix_nano[i]));
  });
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace strata::api
