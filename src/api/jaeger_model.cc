#include "api/jaeger_model.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "otlp/encode_common.h"

namespace strata::api {
namespace {

using otlp::ValueType;

constexpr std::string_view kServiceNameKey = "service.name";

// Appends value `row` of `values` as plain JSON: arrays and maps as JSON
// arrays and objects, bytes as base64, an empty value as null (the text of
// an array or map tag).
void AppendPlainValue(const otlp::BatchBase& batch, const otlp::ValueColumns& values, size_t row,
                      int depth, std::string* out) {
  const ValueType type = values.type[row];
  if ((type == ValueType::kArray || type == ValueType::kKvList) &&
      depth >= otlp::internal::kMaxValueDepth) {
    out->append("null");
    return;
  }
  if (type == ValueType::kArray) {
    const otlp::Range children = values.children_at(row);
    out->push_back('[');
    for (uint32_t i = children.begin; i < children.end(); ++i) {
      if (i != children.begin) out->push_back(',');
      AppendPlainValue(batch, batch.nested_values, i, depth + 1, out);
    }
    out->push_back(']');
    return;
  }
  if (type == ValueType::kKvList) {
    const otlp::Range children = values.children_at(row);
    out->push_back('{');
    for (uint32_t i = children.begin; i < children.end(); ++i) {
      if (i != children.begin) out->push_back(',');
      out->push_back('"');
      otlp::JsonWriter::AppendEscaped(batch.nested_attributes.key[i], out);
      out->append("\":");
      AppendPlainValue(batch, batch.nested_attributes.value, i, depth + 1, out);
    }
    out->push_back('}');
    return;
  }
  // A fresh writer: nothing before it at its level, so no comma.
  otlp::JsonWriter w(out);
  switch (type) {
    case ValueType::kString:
      w.String(values.str[row]);
      break;
    case ValueType::kBool:
      w.Bool(values.bool_at(row));
      break;
    case ValueType::kInt:
      w.Int(values.int_at(row));
      break;
    case ValueType::kDouble:
      w.Double(values.double_at(row));
      break;
    case ValueType::kBytes:
      w.Base64String(values.str[row]);
      break;
    default:
      w.Null();
      break;
  }
}

std::string PlainValueText(const otlp::BatchBase& batch, const otlp::ValueColumns& values,
                           size_t row) {
  std::string out;
  AppendPlainValue(batch, values, row, 0, &out);
  return out;
}

void WriteTag(otlp::JsonWriter* w, std::string_view key, std::string_view type) {
  w->Key("key");
  w->String(key);
  w->Key("type");
  w->String(type);
  w->Key("value");
}

void StringTag(otlp::JsonWriter* w, std::string_view key, std::string_view value) {
  w->BeginObject();
  WriteTag(w, key, "string");
  w->String(value);
  w->EndObject();
}

// One attribute as a Jaeger key/value: strings, booleans, integers,
// doubles and bytes keep their types; arrays and maps are strings of their
// JSON text; an empty value is the empty string.
void AttributeTag(const otlp::BatchBase& batch, const otlp::AttributeColumns& attributes,
                  size_t row, otlp::JsonWriter* w) {
  const otlp::ValueColumns& values = attributes.value;
  const std::string_view key = attributes.key[row];
  w->BeginObject();
  switch (values.type[row]) {
    case ValueType::kString:
      WriteTag(w, key, "string");
      w->String(values.str[row]);
      break;
    case ValueType::kBool:
      WriteTag(w, key, "bool");
      w->Bool(values.bool_at(row));
      break;
    case ValueType::kInt:
      WriteTag(w, key, "int64");
      w->Int(values.int_at(row));
      break;
    case ValueType::kDouble:
      WriteTag(w, key, "float64");
      w->Double(values.double_at(row));
      break;
    case ValueType::kBytes:
      WriteTag(w, key, "binary");
      w->Base64String(values.str[row]);
      break;
    case ValueType::kArray:
    case ValueType::kKvList:
      WriteTag(w, key, "string");
      w->String(PlainValueText(batch, values, row));
      break;
    case ValueType::kEmpty:
      WriteTag(w, key, "string");
      w->String("");
      break;
  }
  w->EndObject();
}

void AttributeTags(const otlp::BatchBase& batch, const otlp::AttributeColumns& attributes,
                   otlp::Range rows, std::string_view skip_key, otlp::JsonWriter* w) {
  for (uint32_t i = rows.begin; i < rows.end(); ++i) {
    if (!skip_key.empty() && attributes.key[i] == skip_key) continue;
    AttributeTag(batch, attributes, i, w);
  }
}

void HexId(otlp::JsonWriter* w, const otlp::SpanId& id) { w->HexString(id.data(), id.size()); }

void TraceIdString(otlp::JsonWriter* w, const otlp::TraceId& id) {
  w->String(JaegerTraceIdHex(id));
}

// Writes the process of resource `resource`.
void WriteProcess(const otlp::BatchBase& batch, uint32_t resource, otlp::JsonWriter* w) {
  const otlp::Range attributes = batch.resources.attributes[resource];
  std::optional<std::string_view> service;
  for (uint32_t i = attributes.begin; i < attributes.end(); ++i) {
    if (batch.resource_attributes.key[i] == kServiceNameKey &&
        batch.resource_attributes.value.type[i] == ValueType::kString) {
      service = batch.resource_attributes.value.str[i];
      break;
    }
  }
  w->BeginObject();
  w->Key("serviceName");
  w->String(service.value_or(kJaegerNoServiceName));
  w->Key("tags");
  w->BeginArray();
  // A service.name that is not a string stays a tag.
  AttributeTags(batch, batch.resource_attributes, attributes,
                service.has_value() ? kServiceNameKey : "", w);
  w->EndArray();
  w->EndObject();
}

// The process of `resource` as JSON text: its identity (equal texts are one
// process).
std::string ProcessJson(const otlp::BatchBase& batch, uint32_t resource) {
  std::string out;
  otlp::JsonWriter w(&out);
  WriteProcess(batch, resource, &w);
  return out;
}

void WriteLogs(const otlp::TraceBatch& batch, otlp::Range events, otlp::JsonWriter* w) {
  w->BeginArray();
  for (uint32_t e = events.begin; e < events.end(); ++e) {
    w->BeginObject();
    w->Key("timestamp");
    w->Uint(batch.events.time_unix_nano[e] / 1000);
    w->Key("fields");
    w->BeginArray();
    const otlp::Range attributes = batch.events.attributes[e];
    bool has_event_key = false;
    for (uint32_t i = attributes.begin; i < attributes.end(); ++i) {
      has_event_key = has_event_key || batch.event_attributes.key[i] == "event";
    }
    // The event's name as the field "event", unless an attribute already
    // has that key.
    if (!batch.events.name[e].empty() && !has_event_key) {
      StringTag(w, "event", batch.events.name[e]);
    }
    AttributeTags(batch, batch.event_attributes, attributes, "", w);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

void WriteSpanTags(const otlp::TraceBatch& batch, size_t s, otlp::JsonWriter* w) {
  const otlp::SpanColumns& spans = batch.spans;
  w->BeginArray();
  AttributeTags(batch, batch.span_attributes, spans.attributes[s], "", w);
  const uint32_t scope = spans.scope[s];
  if (!batch.scopes.name[scope].empty()) StringTag(w, "otel.scope.name", batch.scopes.name[scope]);
  if (!batch.scopes.version[scope].empty()) {
    StringTag(w, "otel.scope.version", batch.scopes.version[scope]);
  }
  if (const std::string_view kind = JaegerSpanKindName(spans.kind[s]); !kind.empty()) {
    StringTag(w, "span.kind", kind);
  }
  if (spans.status_code[s] == 1) StringTag(w, "otel.status_code", "OK");
  if (spans.status_code[s] == 2) {
    StringTag(w, "otel.status_code", "ERROR");
    w->BeginObject();
    WriteTag(w, "error", "bool");
    w->Bool(true);
    w->EndObject();
  }
  if (!spans.status_message[s].empty()) {
    StringTag(w, "otel.status_description", spans.status_message[s]);
  }
  if (!spans.trace_state[s].empty()) StringTag(w, "w3c.tracestate", spans.trace_state[s]);
  w->EndArray();
}

void WriteReferences(const otlp::TraceBatch& batch, size_t s, otlp::JsonWriter* w) {
  const otlp::SpanColumns& spans = batch.spans;
  w->BeginArray();
  const otlp::SpanId zero{};
  if (spans.has_parent_span_id[s] != 0 && spans.parent_span_id[s] != zero) {
    w->BeginObject();
    w->Key("refType");
    w->String("CHILD_OF");
    w->Key("traceID");
    TraceIdString(w, spans.trace_id[s]);
    w->Key("spanID");
    HexId(w, spans.parent_span_id[s]);
    w->EndObject();
  }
  const otlp::Range links = spans.links[s];
  for (uint32_t l = links.begin; l < links.end(); ++l) {
    w->BeginObject();
    w->Key("refType");
    w->String("FOLLOWS_FROM");
    w->Key("traceID");
    TraceIdString(w, batch.links.trace_id[l]);
    w->Key("spanID");
    HexId(w, batch.links.span_id[l]);
    w->EndObject();
  }
  w->EndArray();
}

void WriteSpan(const otlp::TraceBatch& batch, size_t s, std::string_view process_id,
               otlp::JsonWriter* w) {
  const otlp::SpanColumns& spans = batch.spans;
  w->BeginObject();
  w->Key("traceID");
  TraceIdString(w, spans.trace_id[s]);
  w->Key("spanID");
  HexId(w, spans.span_id[s]);
  // W3C trace flags (the low byte); absent when zero, as Jaeger omits it.
  if (const uint32_t flags = spans.flags[s] & 0xff; flags != 0) {
    w->Key("flags");
    w->Uint(flags);
  }
  w->Key("operationName");
  w->String(spans.name[s]);
  w->Key("references");
  WriteReferences(batch, s, w);
  const uint64_t start = spans.start_time_unix_nano[s];
  const uint64_t end = spans.end_time_unix_nano[s];
  w->Key("startTime");
  w->Uint(start / 1000);
  w->Key("duration");
  w->Uint(end > start ? (end - start) / 1000 : 0);
  w->Key("tags");
  WriteSpanTags(batch, s, w);
  w->Key("logs");
  WriteLogs(batch, spans.events[s], w);
  w->Key("processID");
  w->String(process_id);
  w->Key("warnings");
  w->Null();
  w->EndObject();
}

// Writes the trace made of `rows` (spans of one trace id).
void WriteTrace(const otlp::TraceBatch& batch, const std::vector<uint32_t>& rows,
                otlp::JsonWriter* w) {
  // Processes by identity, numbered in order of first use; each written
  // from the first resource that has it.
  std::vector<uint32_t> processes;
  absl::flat_hash_map<std::string, size_t> process_of_text;
  absl::flat_hash_map<uint32_t, size_t> process_of_resource;
  std::vector<size_t> span_process;
  span_process.reserve(rows.size());
  for (const uint32_t s : rows) {
    const uint32_t resource = batch.scopes.resource[batch.spans.scope[s]];
    auto known = process_of_resource.find(resource);
    if (known == process_of_resource.end()) {
      std::string text = ProcessJson(batch, resource);
      auto [it, added] = process_of_text.try_emplace(std::move(text), processes.size());
      if (added) processes.push_back(resource);
      known = process_of_resource.emplace(resource, it->second).first;
    }
    span_process.push_back(known->second);
  }
  w->BeginObject();
  w->Key("traceID");
  TraceIdString(w, batch.spans.trace_id[rows.front()]);
  w->Key("spans");
  w->BeginArray();
  for (size_t i = 0; i < rows.size(); ++i) {
    WriteSpan(batch, rows[i], "p" + std::to_string(span_process[i] + 1), w);
  }
  w->EndArray();
  w->Key("processes");
  w->BeginObject();
  for (size_t p = 0; p < processes.size(); ++p) {
    w->Key("p" + std::to_string(p + 1));
    WriteProcess(batch, processes[p], w);
  }
  w->EndObject();
  w->Key("warnings");
  w->Null();
  w->EndObject();
}

// {"data":<data>,"total":n,"limit":0,"offset":0,"errors":null}.
std::string Envelope(std::string data, size_t total) {
  std::string out = "{\"data\":";
  out += data;
  out += ",\"total\":" + std::to_string(total) + ",\"limit\":0,\"offset\":0,\"errors\":null}";
  return out;
}

}  // namespace

std::string JaegerTraceIdHex(const otlp::TraceId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const bool high_zero = std::all_of(id.begin(), id.begin() + 8, [](uint8_t b) { return b == 0; });
  std::string out;
  for (size_t i = high_zero ? 8 : 0; i < id.size(); ++i) {
    out.push_back(kDigits[id[i] >> 4]);
    out.push_back(kDigits[id[i] & 0xf]);
  }
  return out;
}

std::string_view JaegerSpanKindName(int32_t kind) {
  switch (kind) {
    case 1:
      return "internal";
    case 2:
      return "server";
    case 3:
      return "client";
    case 4:
      return "producer";
    case 5:
      return "consumer";
    default:
      return "";
  }
}

std::optional<int32_t> JaegerSpanKindOf(std::string_view name) {
  for (int32_t kind = 0; kind <= 5; ++kind) {
    if (JaegerSpanKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

size_t WriteJaegerTraces(const otlp::TraceBatch& batch, otlp::JsonWriter* out) {
  std::vector<otlp::TraceId> order;
  std::map<otlp::TraceId, std::vector<uint32_t>> rows;
  for (uint32_t s = 0; s < batch.spans.size(); ++s) {
    std::vector<uint32_t>& trace = rows[batch.spans.trace_id[s]];
    if (trace.empty()) order.push_back(batch.spans.trace_id[s]);
    trace.push_back(s);
  }
  for (const otlp::TraceId& id : order) WriteTrace(batch, rows[id], out);
  return order.size();
}

std::string JaegerTracesResponse(std::span<const otlp::TraceBatch> traces) {
  std::string data;
  otlp::JsonWriter w(&data);
  w.BeginArray();
  size_t total = 0;
  for (const otlp::TraceBatch& batch : traces) {
    total += WriteJaegerTraces(batch, &w);
  }
  w.EndArray();
  return Envelope(std::move(data), total);
}

std::string JaegerNamesResponse(const std::vector<std::string>& names) {
  std::string data;
  otlp::JsonWriter w(&data);
  w.BeginArray();
  for (const std::string& name : names) w.String(name);
  w.EndArray();
  return Envelope(std::move(data), names.size());
}

std::string JaegerOperationsResponse(const std::vector<JaegerOperation>& operations) {
  std::string data;
  otlp::JsonWriter w(&data);
  w.BeginArray();
  for (const JaegerOperation& operation : operations) {
    w.BeginObject();
    w.Key("name");
    w.String(operation.name);
    w.Key("spanKind");
    w.String(operation.span_kind);
    w.EndObject();
  }
  w.EndArray();
  return Envelope(std::move(data), operations.size());
}

std::string JaegerDependenciesResponse(const std::vector<JaegerDependency>& dependencies) {
  std::string data;
  otlp::JsonWriter w(&data);
  w.BeginArray();
  for (const JaegerDependency& dependency : dependencies) {
    w.BeginObject();
    w.Key("parent");
    w.String(dependency.parent);
    w.Key("child");
    w.String(dependency.child);
    w.Key("callCount");
    w.Int(dependency.call_count);
    w.EndObject();
  }
  w.EndArray();
  return Envelope(std::move(data), dependencies.size());
}

std::string JaegerErrorResponse(int code, std::string_view message) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("data");
  w.Null();
  w.Key("total");
  w.Int(0);
  w.Key("limit");
  w.Int(0);
  w.Key("offset");
  w.Int(0);
  w.Key("errors");
  w.BeginArray();
  w.BeginObject();
  w.Key("code");
  w.Int(code);
  w.Key("msg");
  w.String(message);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace strata::api
