#include "otlp_reference/compare.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"

namespace strata::otlp_reference {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::util::FieldContext;
using google::protobuf::util::SimpleFieldComparator;

double DoubleAt(const Message& message, const FieldDescriptor* field, int index) {
  const auto* reflection = message.GetReflection();
  return field->is_repeated() ? reflection->GetRepeatedDouble(message, field, index)
                              : reflection->GetDouble(message, field);
}

// Bitwise double comparison (NaN == NaN); everything else as the default.
class BitwiseDoubleComparator : public SimpleFieldComparator {
 public:
  ComparisonResult Compare(const Message& message_1, const Message& message_2,
                           const FieldDescriptor* field, int index_1, int index_2,
                           const FieldContext* field_context) override {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE) {
      return SimpleCompare(message_1, message_2, field, index_1, index_2, field_context);
    }
    double a = DoubleAt(message_1, field, index_1);
    double b = DoubleAt(message_2, field, index_2);
    bool same = (std::isnan(a) && std::isnan(b)) ||
                std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
    return same ? SAME : DIFFERENT;
  }
};

}  // namespace

std::string MessageDifferences(const Message& expected, const Message& actual) {
  BitwiseDoubleComparator comparator;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  std::string report;
  differencer.ReportDifferencesToString(&report);
  if (differencer.Compare(expected, actual)) return "";
  // Compare() can fail without a report (e.g. different message types).
  return report.empty() ? "messages differ" : report;
}

}  // namespace strata::otlp_reference
