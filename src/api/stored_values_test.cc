// The text forms of stored values (stored_values.h) read back exactly, and
// anything else is refused.

#include "api/stored_values.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/any_value_codec.h"
#include "otlp/encode.h"

namespace strata::api::internal {
namespace {

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

TEST(StoredValuesTest, EveryScalarTypeReadsBack) {
  otlp::BatchBase batch;
  otlp::AttributeColumns table;
  otlp::Range range;
  // Keys "k" (6B) and "" ; DuckDB's hex() is upper case, the API's lower.
  const absl::Status read = AppendStoredAttributes(
      "6B:1:C3A9,6b:3:-9223372036854775808,6B:4:0.1,6B:4:-0.0,6B:4:nan,6B:4:-inf,6B:2:true,"
      "6B:2:false,6B:7:00ff,:0:,6B:1:",
      &batch, &table, &range);
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(range, (otlp::Range{0, 11}));
  EXPECT_EQ(otlp::EncodeKeyValuesJson(batch, table, range),
            R"([{"key":"k","value":{"stringValue":"é"}},)"
            R"({"key":"k","value":{"intValue":"-9223372036854775808"}},)"
            R"({"key":"k","value":{"doubleValue":0.1}},{"key":"k","value":{"doubleValue":-0.0}},)"
            R"({"key":"k","value":{"doubleValue":"NaN"}},)"
            R"({"key":"k","value":{"doubleValue":"-Infinity"}},)"
            R"({"key":"k","value":{"boolValue":true}},{"key":"k","value":{"boolValue":false}},)"
            R"({"key":"k","value":{"bytesValue":"AP8="}},{"value":{}},)"
            R"({"key":"k","value":{"stringValue":""}}])");
  otlp::Range none;
  ASSERT_TRUE(AppendStoredAttributes("", &batch, &table, &none).ok());
  EXPECT_EQ(none, (otlp::Range{11, 0}));
}

// A kvlist holding an array, encoded by otlp's AnyValue encoder, reads
// back as the same value.
TEST(StoredValuesTest, NestedValuesReadBack) {
  otlp::BatchBase source;
  source.nested_values.AppendString("x");
  source.nested_values.AppendInt(7);
  source.nested_attributes.Append(otlp::AttributeRow{
      .key = "list",
      .value = {.type = otlp::ValueType::kArray, .bits = otlp::ValueColumns::Pack({0, 2})}});
  otlp::ValueColumns top;
  top.AppendKvList({0, 1});
  std::string encoded;
  otlp::EncodeAnyValueProto(source, top, 0, &encoded);
  const std::string expected = otlp::EncodeAnyValueJson(source, top, 0);
  EXPECT_EQ(expected, R"({"kvlistValue":{"values":[{"key":"list","value":{"arrayValue":{"values":[)"
                      R"({"stringValue":"x"},{"intValue":"7"}]}}}]}})");

  otlp::BatchBase batch;
  otlp::ValueColumns bodies;
  const absl::Status read = AppendStoredValue(6, Hex(encoded), &batch, &bodies);
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(otlp::EncodeAnyValueJson(batch, bodies, 0), expected);
}

TEST(StoredValuesTest, MalformedTextIsInternal) {
  for (const char* text : {"6B:1", "6B:1:C3A9:0", "zz:1:00", "6B:8:", "6B:x:", "6B:3:x", "6B:3:1.5",
                           "6B:2:yes", "6B:1:C3A", "6B:1:GG", "6B:0:1", "6B:4:"}) {
    otlp::BatchBase batch;
    otlp::AttributeColumns table;
    otlp::Range range;
    EXPECT_EQ(AppendStoredAttributes(text, &batch, &table, &range).code(),
              absl::StatusCode::kInternal)
        << text;
  }
}

// An array or kvlist that does not decode, or decodes as the other type.
TEST(StoredValuesTest, CorruptNestedValueIsDataLoss) {
  otlp::BatchBase batch;
  otlp::ValueColumns values;
  EXPECT_EQ(AppendStoredValue(6, "2a05", &batch, &values).code(), absl::StatusCode::kDataLoss);
  // 0x32 0x00: an empty kvlist_value, stored as type 5 (array).
  EXPECT_EQ(AppendStoredValue(5, "3200", &batch, &values).code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(AppendStoredValue(6, "3200", &batch, &values).ok());
  EXPECT_EQ(values.size(), 1u);
}

}  // namespace
}  // namespace strata::api::internal
