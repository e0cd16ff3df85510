#pragma once

// Shared machinery of the protobuf OTLP decoders (proto_decode_*.cc):
// DecodeContext, which carries the input, the limits and — only once
// something has gone wrong — the error; typed field readers; and decoders
// for the messages every signal shares (AnyValue, KeyValue, Resource with its
// entity_refs, InstrumentationScope) plus the Resource*/Scope* envelope that
// wraps every signal's records.
//
// Error reporting costs nothing on the success path. A failing decoder
// records the message and byte offset once (Fail*), then every enclosing
// level prepends its path segment (In) while returning false, so the path
// ("resource_spans[0].scope_spans[2].spans[7].trace_id") is only ever built
// for a request that is rejected anyway.
//
// Protobuf merge semantics are not supported: a singular sub-message that
// appears twice in one parent (Resource, InstrumentationScope, Status,
// KeyValue.value, LogRecord.body, ...) and a Metric.data oneof set twice are
// InvalidArgument, because merging would interleave child rows that the batch
// keeps contiguous. Repeated scalars follow protobuf: the last one wins.
//
// Thread-safety: a DecodeContext belongs to one decode call.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/proto_wire.h"
#include "otlp/row_checks.h"

namespace strata::otlp::proto {

// Names of a message's fields indexed by field number ("" where the number is
// unknown or reserved). A field with a name is known: receiving it with the
// wrong wire type is an error instead of an unknown field to skip.
using FieldNames = std::span<const std::string_view>;

inline constexpr const char* kDuplicateMessage =
    "appears twice; protobuf merge semantics are not supported";

class DecodeContext {
 public:
  DecodeContext(std::string_view input, const DecodeLimits& limits)
      : base_(input.data()), limits_(limits) {}

  DecodeContext(const DecodeContext&) = delete;
  DecodeContext& operator=(const DecodeContext&) = delete;

  const DecodeLimits& limits() const { return limits_; }

  // Error path. Each records the first failure (message and the offset of
  // `at` in the input), prepends `field` when given, and returns false.
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE bool Fail(const char* at, std::string_view field,
                                                        std::string_view message);
  // The reader's own error (truncation, bad varint, ...) at its field start.
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE bool FailWire(const WireReader& r,
                                                            std::string_view field = {});
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE bool FailWire(const WireReader& r,
                                                            std::string_view field, size_t index);

  // Prepends a path segment ("scope", or "spans[7]") while an error unwinds.
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE bool In(std::string_view field);
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE bool In(std::string_view field, size_t index);

  // InvalidArgument "otlp: <path>: <message> (at byte N)"; `root` stands in
  // for an empty path (an error in the request message itself).
  absl::Status ToStatus(std::string_view root) const;

 private:
  const char* base_;
  DecodeLimits limits_;
  bool failed_ = false;
  size_t error_offset_ = 0;
  std::string message_;
  std::vector<std::string> reversed_path_;
};

// Skips an unknown field, or rejects a known one sent with the wrong wire
// type. Out of line: unknown fields are rare.
[[nodiscard]] bool SkipOrReject(DecodeContext& ctx, WireReader& r, uint32_t tag,
                                FieldNames names);

// ------------------------------------------------------------ typed fields
// Each reads the value of the field whose tag was just read, or fails with
// the path segment `field`.

[[nodiscard]] inline bool GetString(DecodeContext& ctx, WireReader& r, std::string_view field,
                                    std::string_view* out) {
  if (ABSL_PREDICT_FALSE(!r.ReadLen(out))) return ctx.FailWire(r, field);
  if (ABSL_PREDICT_FALSE(!IsValidUtf8(*out))) return ctx.Fail(r.field_start(), field, "invalid UTF-8");
  return true;
}

[[nodiscard]] inline bool GetBytes(DecodeContext& ctx, WireReader& r, std::string_view field,
                                   std::string_view* out) {
  if (ABSL_PREDICT_FALSE(!r.ReadLen(out))) return ctx.FailWire(r, field);
  return true;
}

[[nodiscard]] inline bool GetVarint(DecodeContext& ctx, WireReader& r, std::string_view field,
                                    uint64_t* out) {
  if (ABSL_PREDICT_FALSE(!r.ReadVarint(out))) return ctx.FailWire(r, field);
  return true;
}

[[nodiscard]] inline bool GetFixed64(DecodeContext& ctx, WireReader& r, std::string_view field,
                                     uint64_t* out) {
  if (ABSL_PREDICT_FALSE(!r.ReadFixed64(out))) return ctx.FailWire(r, field);
  return true;
}

[[nodiscard]] inline bool GetFixed32(DecodeContext& ctx, WireReader& r, std::string_view field,
                                     uint32_t* out) {
  if (ABSL_PREDICT_FALSE(!r.ReadFixed32(out))) return ctx.FailWire(r, field);
  return true;
}

[[nodiscard]] inline bool GetDouble(DecodeContext& ctx, WireReader& r, std::string_view field,
                                    double* out) {
  uint64_t bits;
  if (ABSL_PREDICT_FALSE(!r.ReadFixed64(&bits))) return ctx.FailWire(r, field);
  std::memcpy(out, &bits, sizeof bits);
  return true;
}

ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE bool FailIdLength(DecodeContext& ctx,
                                                              const WireReader& r,
                                                              std::string_view field, size_t got,
                                                              size_t want, bool optional);

// A trace or span id: exactly N bytes, or (when `optional`) also 0 bytes,
// which leaves *id zero and *present 0.
template <size_t N>
[[nodiscard]] inline bool GetId(DecodeContext& ctx, WireReader& r, std::string_view field,
                                bool optional, std::array<uint8_t, N>* id, uint8_t* present) {
  std::string_view bytes;
  if (ABSL_PREDICT_FALSE(!r.ReadLen(&bytes))) return ctx.FailWire(r, field);
  if (ABSL_PREDICT_TRUE(bytes.size() == N)) {
    std::memcpy(id->data(), bytes.data(), N);
    *present = 1;
    return true;
  }
  if (bytes.empty() && optional) {
    *id = {};
    *present = 0;
    return true;
  }
  return FailIdLength(ctx, r, field, bytes.size(), N, optional);
}

// An id that row_checks.h decides about (a span's ids reject their span
// when invalid, a log record's are cleared): any length is read; the bytes
// are copied only when there are exactly N, else *id is zeroed.
template <size_t N>
[[nodiscard]] inline bool GetIdAnyLength(DecodeContext& ctx, WireReader& r, std::string_view field,
                                         std::array<uint8_t, N>* id, internal::IdLength* length) {
  std::string_view bytes;
  if (ABSL_PREDICT_FALSE(!r.ReadLen(&bytes))) return ctx.FailWire(r, field);
  length->bytes = static_cast<uint32_t>(bytes.size());
  if (ABSL_PREDICT_TRUE(bytes.size() == N)) {
    std::memcpy(id->data(), bytes.data(), N);
  } else {
    *id = {};
  }
  return true;
}

// ---------------------------------------------------------- shared messages

// Decodes an AnyValue message. `depth` is the nesting depth an array or
// kvlist at this position has (1 for an attribute's value or a log body);
// its children go to b->nested_values / b->nested_attributes, each value's
// children contiguous.
[[nodiscard]] bool DecodeAnyValue(DecodeContext& ctx, std::string_view payload, uint32_t depth,
                                  BatchBase* b, ValueRow* out);

// Decodes a KeyValue message and appends it to `table`, which is an owner's
// attribute table (never b->nested_attributes: kvlist entries are placed by
// DecodeAnyValue).
[[nodiscard]] bool AppendKeyValue(DecodeContext& ctx, std::string_view payload, BatchBase* b,
                                  AttributeColumns* table);

// The repeated-KeyValue field of the tag just read: appends it to `table`,
// naming it `field`[i] in errors, where i counts from row `begin` of `table`.
[[nodiscard]] inline bool GetAttribute(DecodeContext& ctx, WireReader& r, std::string_view field,
                                       BatchBase* b, AttributeColumns* table, size_t begin) {
  std::string_view payload;
  if (ABSL_PREDICT_FALSE(!r.ReadLen(&payload))) return ctx.FailWire(r, field, table->size() - begin);
  if (ABSL_PREDICT_FALSE(!AppendKeyValue(ctx, payload, b, table))) {
    return ctx.In(field, table->size() - begin);
  }
  return true;
}

// Reserves room for `more` rows in each column, growing geometrically so that
// decoding many requests into one batch stays linear. Callers derive `more`
// from the input size, so the reservation is bounded by it.
template <typename... Columns>
void ReserveMore(size_t more, Columns&... columns) {
  auto grow = [more](auto& column) {
    const size_t needed = column.size() + more;
    if (column.capacity() < needed) column.reserve(std::max(needed, 2 * column.capacity()));
  };
  (grow(columns), ...);
}

inline void ReserveMore(size_t more, AttributeColumns* table) {
  ReserveMore(more, table->key, table->value.type, table->value.str, table->value.bits);
}

inline Range RangeFrom(size_t begin, size_t end) {
  return Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)};
}

// Appends a Resource row with empty values and returns its index; the
// Resource message, if present, is decoded into it by DecodeResource.
uint32_t AppendResourceRow(BatchBase* b);
[[nodiscard]] bool DecodeResource(DecodeContext& ctx, std::string_view payload, BatchBase* b,
                                  uint32_t row);

// Appends an InstrumentationScope row owned by `resource` and returns its
// index; DecodeScope fills it from the message.
uint32_t AppendScopeRow(BatchBase* b, uint32_t resource);
[[nodiscard]] bool DecodeScope(DecodeContext& ctx, std::string_view payload, BatchBase* b,
                               uint32_t row);

// ------------------------------------------------------------ the envelope
// Export*ServiceRequest → Resource* → Scope* → records, identical for all
// signals but for names and the record decoder.

struct SignalNames {
  std::string_view request;         // "ExportTraceServiceRequest"
  std::string_view resource_group;  // "resource_spans"
  std::string_view scope_group;     // "scope_spans"
  std::string_view record;          // "spans"
};

// `decode_record(ctx, payload, scope_row)` decodes one record message.
template <typename RecordFn>
[[nodiscard]] bool DecodeScopeGroup(DecodeContext& ctx, std::string_view payload, BatchBase* b,
                                    uint32_t resource, const SignalNames& names,
                                    RecordFn& decode_record) {
  const uint32_t row = AppendScopeRow(b, resource);
  bool seen_scope = false;
  uint32_t records = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen): {
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, "scope");
        if (seen_scope) return ctx.Fail(r.field_start(), "scope", kDuplicateMessage);
        seen_scope = true;
        if (!DecodeScope(ctx, sub, b, row)) return ctx.In("scope");
        break;
      }
      case Tag(2, WireType::kLen): {
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, names.record, records);
        if (!decode_record(ctx, sub, row)) return ctx.In(names.record, records);
        ++records;
        break;
      }
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "schema_url", &b->scopes.schema_url[row])) return false;
        break;
      default: {
        const std::string_view fields[] = {"", "scope", names.record, "schema_url"};
        if (!SkipOrReject(ctx, r, tag, fields)) return false;
      }
    }
  }
  return true;
}

template <typename RecordFn>
[[nodiscard]] bool DecodeResourceGroup(DecodeContext& ctx, std::string_view payload, BatchBase* b,
                                       const SignalNames& names, RecordFn& decode_record) {
  const uint32_t row = AppendResourceRow(b);
  bool seen_resource = false;
  uint32_t groups = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen): {
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, "resource");
        if (seen_resource) return ctx.Fail(r.field_start(), "resource", kDuplicateMessage);
        seen_resource = true;
        if (!DecodeResource(ctx, sub, b, row)) return ctx.In("resource");
        break;
      }
      case Tag(2, WireType::kLen): {
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, names.scope_group, groups);
        if (!DecodeScopeGroup(ctx, sub, b, row, names, decode_record)) {
          return ctx.In(names.scope_group, groups);
        }
        ++groups;
        break;
      }
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "schema_url", &b->resources.schema_url[row])) return false;
        break;
      default: {
        // Field 1000 (the deprecated instrumentation_library_*) is unknown here.
        const std::string_view fields[] = {"", "resource", names.scope_group, "schema_url"};
        if (!SkipOrReject(ctx, r, tag, fields)) return false;
      }
    }
  }
  return true;
}

template <typename RecordFn>
[[nodiscard]] absl::Status DecodeRequest(std::string_view bytes, BatchBase* b,
                                         const DecodeLimits& limits, const SignalNames& names,
                                         RecordFn decode_record) {
  DecodeContext ctx(bytes, limits);
  uint32_t groups = 0;
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t tag;
    bool ok;
    if (!r.ReadTag(&tag)) {
      ok = ctx.FailWire(r);
    } else if (tag == Tag(1, WireType::kLen)) {
      std::string_view sub;
      if (!r.ReadLen(&sub)) {
        ok = ctx.FailWire(r, names.resource_group, groups);
      } else {
        ok = DecodeResourceGroup(ctx, sub, b, names, decode_record) ||
             ctx.In(names.resource_group, groups);
        ++groups;
      }
    } else {
      const std::string_view fields[] = {"", names.resource_group};
      ok = SkipOrReject(ctx, r, tag, fields);
    }
    if (!ok) return ctx.ToStatus(names.request);
  }
  return absl::OkStatus();
}

}  // namespace strata::otlp::proto
