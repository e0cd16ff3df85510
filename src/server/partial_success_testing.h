#pragma once

// Test helpers for OTLP partial_success (server tests over gRPC and HTTP):
// a trace request with some semantically invalid spans (docs/otlp.md,
// "Rejected rows") built with libprotobuf's generated classes and as
// OTLP/JSON text, and a reader of partial_success from a protobuf
// Export<Signal>ServiceResponse. The test protos predate partial_success,
// so libprotobuf reads it as an unknown field.

#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "google/protobuf/unknown_field_set.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace strata::server::testing {

// Three spans named "a", "b", "c". "b" always has an all-zero trace_id;
// with `all_invalid`, "a" has no trace_id and "c" an all-zero span_id too.
struct PartlyInvalidTraces {
  explicit PartlyInvalidTraces(bool all_invalid = false) {
    auto* scope_spans = request.add_resource_spans()->add_scope_spans();
    auto add = [&](std::string trace_id, std::string span_id, const char* name) {
      auto* span = scope_spans->add_spans();
      span->set_trace_id(trace_id);
      span->set_span_id(span_id);
      span->set_name(name);
    };
    std::string valid_trace(16, '\x01');
    valid_trace[15] = '\x10';
    add(all_invalid ? "" : valid_trace, "\x11\x12\x13\x14\x15\x16\x17\x18", "a");
    add(std::string(16, '\0'), "\x11\x12\x13\x14\x15\x16\x17\x19", "b");
    valid_trace[15] = '\x11';
    add(valid_trace, all_invalid ? std::string(8, '\0') : "\x11\x12\x13\x14\x15\x16\x17\x1a", "c");
  }

  std::string Proto() const { return request.SerializeAsString(); }

  std::string Json() const {
    std::string spans;
    for (const auto& span : request.resource_spans(0).scope_spans(0).spans()) {
      if (!spans.empty()) spans += ",";
      spans += fmt::format(R"({{"traceId":"{}","spanId":"{}","name":"{}"}})", Hex(span.trace_id()),
                           Hex(span.span_id()), span.name());
    }
    return R"({"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{},"spans":[)" + spans +
           "]}]}]}";
  }

  static std::string Hex(const std::string& bytes) {
    std::string out;
    for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
    return out;
  }

  opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest request;
};

struct PartialSuccess {
  bool present = false;
  uint64_t rejected = 0;
  std::string message;
};

// partial_success { 1: rejected_<signal>, 2: error_message } as field 1 of
// a protobuf Export<Signal>ServiceResponse; `present` false when absent or
// unreadable.
inline PartialSuccess ParsePartialSuccessProto(const std::string& body) {
  PartialSuccess out;
  google::protobuf::UnknownFieldSet top;
  if (!top.ParseFromString(body) || top.field_count() != 1 || top.field(0).number() != 1) {
    return out;
  }
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromString(top.field(0).length_delimited())) return out;
  out.present = true;
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i).number() == 1) out.rejected = fields.field(i).varint();
    if (fields.field(i).number() == 2) out.message = fields.field(i).length_delimited();
  }
  return out;
}

}  // namespace strata::server::testing
