#pragma once

// Test helpers for OTLP partial_success (server tests over gRPC and HTTP):
// a trace request with some semantically invalid spans (docs/otlp.md,
// "Rejected rows") built with libprotobuf's generated classes and as
// OTLP/JSON text, and a reader of partial_success from a protobuf
// Export<Signal>ServiceResponse. The test protos predate partial_success,
// so libprotobuf reads it as an unknown field. Also the contrary case: a
// logs request whose invalid ids are cleared while every record is kept
// ("Cleared log record ids"), and a reader of the stored log records.

#include <cstdint>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "google/protobuf/unknown_field_set.h"
#include "io/file_system.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"
#include "otlp/batch.h"
#include "storage/commit/catalog.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"

namespace strata::server::testing {

// Lowercase hex of `bytes`, as OTLP/JSON writes ids.
inline std::string Hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

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

  opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest request;
};

// Three log records with bodies "a", "b", "c": "a" has valid ids (kept), "b"
// a 15-byte trace_id (cleared) and a valid span_id (kept), "c" an all-zero
// trace_id and a 9-byte span_id (both cleared). Nothing is rejected.
struct LogsWithInvalidIds {
  LogsWithInvalidIds() {
    auto* scope_logs = request.add_resource_logs()->add_scope_logs();
    auto add = [&](std::string trace_id, std::string span_id, const char* body) {
      auto* record = scope_logs->add_log_records();
      record->set_trace_id(trace_id);
      record->set_span_id(span_id);
      record->mutable_body()->set_string_value(body);
    };
    add(kTraceId, kSpanId, "a");
    add(kTraceId.substr(0, 15), kSpanId, "b");
    add(std::string(16, '\0'), kSpanId + "\x19", "c");
  }

  std::string Proto() const { return request.SerializeAsString(); }

  std::string Json() const {
    std::string records;
    for (const auto& record : request.resource_logs(0).scope_logs(0).log_records()) {
      if (!records.empty()) records += ",";
      records +=
          fmt::format(R"({{"traceId":"{}","spanId":"{}","body":{{"stringValue":"{}"}}}})",
                      Hex(record.trace_id()), Hex(record.span_id()), record.body().string_value());
    }
    return R"({"resourceLogs":[{"resource":{},"scopeLogs":[{"scope":{},"logRecords":[)" + records +
           "]}]}]}";
  }

  // Checks what a store of this request holds, once per request stored:
  // ids kept byte for byte where valid, absent where cleared.
  static void ExpectStored(const std::vector<otlp::LogBatch>& stored, size_t requests) {
    size_t records = 0;
    for (const otlp::LogBatch& b : stored) {
      for (size_t i = 0; i < b.logs.size(); ++i, ++records) {
        const std::string_view body = b.logs.body.str[i];
        const std::string trace(b.logs.trace_id[i].begin(), b.logs.trace_id[i].end());
        const std::string span(b.logs.span_id[i].begin(), b.logs.span_id[i].end());
        EXPECT_EQ(b.logs.has_trace_id[i], body == "a" ? 1 : 0) << body;
        EXPECT_EQ(b.logs.has_span_id[i], body == "c" ? 0 : 1) << body;
        EXPECT_EQ(trace, b.logs.has_trace_id[i] ? kTraceId : std::string(16, '\0')) << body;
        EXPECT_EQ(span, b.logs.has_span_id[i] ? kSpanId : std::string(8, '\0')) << body;
      }
    }
    EXPECT_EQ(records, 3 * requests);
  }

  inline static const std::string kTraceId =
      "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10";
  inline static const std::string kSpanId = "\x11\x12\x13\x14\x15\x16\x17\x18";

  opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest request;
};

// Every log record of `snapshot`, one batch per stored batch, read back
// from its logs.parquet.
inline std::vector<otlp::LogBatch> ReadStoredLogs(FileSystem& fs,
                                                  const storage::Snapshot& snapshot) {
  std::vector<otlp::LogBatch> out;
  for (const auto& batch : snapshot.batches()) {
    if (!batch->meta().logs_parquet.has_value()) continue;
    auto source = storage::OpenFileSource(fs, batch->dir() + "/logs.parquet");
    EXPECT_TRUE(source.ok()) << source.status();
    if (!source.ok()) continue;
    auto logs = storage::ReadLogsTable(source->get(), batch->id().ToString(), "logs.parquet");
    EXPECT_TRUE(logs.ok()) << logs.status();
    if (logs.ok()) out.push_back(*std::move(logs));
  }
  return out;
}

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
