#include "otlp_reference/normalize.h"

#include <string_view>

#include "google/protobuf/descriptor.h"

namespace strata::otlp_reference {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Full names of the fields normalize.h lists.
bool AlwaysPresent(const FieldDescriptor& field) {
  static constexpr std::string_view kFields[] = {
      "opentelemetry.proto.trace.v1.ResourceSpans.resource",
      "opentelemetry.proto.trace.v1.ScopeSpans.scope",
      "opentelemetry.proto.trace.v1.Span.status",
      "opentelemetry.proto.logs.v1.ResourceLogs.resource",
      "opentelemetry.proto.logs.v1.ScopeLogs.scope",
      "opentelemetry.proto.logs.v1.LogRecord.body",
      "opentelemetry.proto.metrics.v1.ResourceMetrics.resource",
      "opentelemetry.proto.metrics.v1.ScopeMetrics.scope",
      "opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.positive",
      "opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.negative",
      "opentelemetry.proto.common.v1.KeyValue.value",
  };
  for (std::string_view name : kFields) {
    if (field.full_name() == name) return true;
  }
  return false;
}

}  // namespace

void Normalize(Message* message) {
  const Reflection* reflection = message->GetReflection();
  const auto* descriptor = message->GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      int n = reflection->FieldSize(*message, field);
      for (int k = 0; k < n; ++k) Normalize(reflection->MutableRepeatedMessage(message, field, k));
    } else if (reflection->HasField(*message, field) || AlwaysPresent(*field)) {
      Normalize(reflection->MutableMessage(message, field));
    }
  }
}

}  // namespace strata::otlp_reference
