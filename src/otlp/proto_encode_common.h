#pragma once

// ProtoEncoderBase holds what the three protobuf encoders share: the
// ExportXServiceRequest -> ResourceX -> ScopeX envelope (identical field
// numbers for spans, logs and metrics), Resource, InstrumentationScope,
// KeyValue and AnyValue. Each signal's encoder derives from it and supplies
// the item message (Span, LogRecord, Metric).
//
// Presence rules (see batch.h): an empty Resource or InstrumentationScope is
// omitted; a KeyValue always carries its value field, and a kEmpty value is
// written as a zero-length AnyValue message, so absent and empty values (which
// the decoders treat alike) both come back as kEmpty. A oneof member of
// AnyValue is written even at its default ("", false, 0, 0.0), since the
// member's presence is the value's type.
//
// Precondition: the batch satisfies batch.h's invariants; AnyValue nesting
// deeper than kMaxValueDepth (only possible through a cycle of child
// Ranges) aborts. Thread-safety: one encoder per call; the batch is only read.

#include <cstdint>
#include <string>
#include <vector>

#include "otlp/batch.h"
#include "otlp/encode_common.h"
#include "otlp/proto_writer.h"

namespace strata::otlp::internal {

class ProtoEncoderBase {
 protected:
  ProtoEncoderBase(const BatchBase& batch, std::string* out) : batch_(batch), w_(out) {}

  // Writes resource_{spans,logs,metrics} (field 1 of the request): every
  // resource row, under it its scope rows, under each scope the item rows
  // that `item_scope` assigns to it, written by write_item(row) as field 2 of
  // the ScopeX message.
  template <typename WriteItem>
  void WriteResourceTree(const std::vector<uint32_t>& item_scope, WriteItem&& write_item) {
    RowGroups scopes(batch_.scopes.resource, batch_.resources.size());
    RowGroups items(item_scope, batch_.scopes.size());
    for (size_t r = 0; r < batch_.resources.size(); ++r) {
      ProtoWriter::Mark resource_x = w_.Open(1);
      WriteResource(r);
      for (uint32_t s : scopes.children(r)) {
        ProtoWriter::Mark scope_x = w_.Open(2);
        WriteScope(s);
        for (uint32_t item : items.children(s)) write_item(item);
        w_.String(3, batch_.scopes.schema_url[s]);
        w_.Close(scope_x);
      }
      w_.String(3, batch_.resources.schema_url[r]);
      w_.Close(resource_x);
    }
  }

  // Writes rows [rows.begin, rows.end()) of `table` as repeated KeyValue
  // messages in `field`.
  void WriteKeyValues(uint32_t field, const AttributeColumns& table, Range rows);
  // Writes values[row] as an AnyValue message in `field`.
  void WriteAnyValue(uint32_t field, const ValueColumns& values, size_t row, int depth);

  const BatchBase& batch_;
  ProtoWriter w_;

 private:
  void WriteResource(size_t row);  // ResourceX.resource = 1
  void WriteScope(size_t row);     // ScopeX.scope = 1
  void WriteEntityRef(size_t row);
  void WriteKeyValuesAtDepth(uint32_t field, const AttributeColumns& table, Range rows, int depth);
};

}  // namespace strata::otlp::internal
