// ValueJsonWriter against values built in a batch and encoded by otlp's
// protobuf AnyValue encoder, as the storage tables hold arrays and kvlists.

#include "query/value_json.h"

#include <bit>
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "otlp/any_value_codec.h"

namespace strata::query {
namespace {

std::string Json(const StoredValue& value) {
  ValueJsonWriter writer;
  std::string out;
  const absl::Status s = writer.AppendValue(value, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(ValueJsonTest, ScalarsAreTheirJsonValues) {
  EXPECT_EQ(Json({.type = 1, .str = "quote \" backslash \\ tab \t Grüße 😀"}),
            R"("quote \" backslash \\ tab \t Grüße 😀")");
  EXPECT_EQ(Json({.type = 3, .int_value = std::numeric_limits<int64_t>::min()}),
            "-9223372036854775808");
  EXPECT_EQ(Json({.type = 4, .double_value = 0.25}), "0.25");
  EXPECT_EQ(Json({.type = 4, .double_value = 2.0}), "2.0");
  EXPECT_EQ(Json({.type = 4, .double_value = -0.0}), "-0.0");
  EXPECT_EQ(Json({.type = 4, .double_value = std::nan("")}), R"("NaN")");
  EXPECT_EQ(Json({.type = 4, .double_value = -HUGE_VAL}), R"("-Infinity")");
  EXPECT_EQ(Json({.type = 2, .bool_value = true}), "true");
  EXPECT_EQ(Json({.type = 7, .bytes = std::string_view("\x01\x02\x03", 3)}), R"("AQID")");
  EXPECT_EQ(Json({.type = 0}), "null");
  // A value column that is NULL where the type needs a value: null.
  EXPECT_EQ(Json({.type = 1, .present = false}), "null");
}

TEST(ValueJsonTest, ArraysAndMapsFromTheirStoredBytes) {
  // {"name": "Zoë", "tags": ["a", 1, 2.5, false, <bytes>, <empty>], "inner": {}}
  otlp::BatchBase batch;
  const uint32_t items = static_cast<uint32_t>(batch.nested_values.size());
  batch.nested_values.AppendString("a");
  batch.nested_values.AppendInt(1);
  batch.nested_values.AppendDouble(2.5);
  batch.nested_values.AppendBool(false);
  batch.nested_values.AppendBytes(std::string_view("\xff", 1));
  batch.nested_values.AppendEmpty();
  const uint32_t entries = static_cast<uint32_t>(batch.nested_attributes.size());
  batch.nested_attributes.Append({"name", {otlp::ValueType::kString, "Zoë", 0}});
  batch.nested_attributes.Append(
      {"tags", {otlp::ValueType::kArray, {}, otlp::ValueColumns::Pack({items, 6})}});
  batch.nested_attributes.Append(
      {"inner", {otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack({0, 0})}});
  otlp::ValueColumns top;
  top.AppendKvList({entries, 3});
  std::string bytes;
  otlp::EncodeAnyValueProto(batch, top, 0, &bytes);
  EXPECT_EQ(Json({.type = 6, .bytes = bytes}),
            R"({"name":"Zoë","tags":["a",1,2.5,false,"/w==",null],"inner":{}})");
  // Text: a string as it is, anything else its JSON.
  ValueJsonWriter writer;
  std::string text;
  ASSERT_TRUE(writer.AppendText({.type = 1, .str = "plain"}, &text).ok());
  EXPECT_EQ(text, "plain");
}

TEST(ValueJsonTest, BytesThatDoNotDecodeAreAnError) {
  ValueJsonWriter writer;
  std::string out;
  EXPECT_FALSE(writer.AppendValue({.type = 6, .bytes = "\x32\x05\x0a"}, &out).ok());
  EXPECT_FALSE(writer.AppendValue({.type = 9}, &out).ok());
}

}  // namespace
}  // namespace strata::query
