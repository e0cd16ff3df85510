#include "otlp/any_value_path.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/any_value_codec.h"
#include "otlp/batch.h"

namespace strata::otlp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ValuePathTest, SegmentsSplitOnDotsWithEscapes) {
  EXPECT_THAT(*ParseValuePath("code"), ElementsAre("code"));
  EXPECT_THAT(*ParseValuePath("user.id"), ElementsAre("user", "id"));
  EXPECT_THAT(*ParseValuePath("http\\.status.x"), ElementsAre("http.status", "x"));
  EXPECT_THAT(*ParseValuePath("a\\\\.b"), ElementsAre("a\\", "b"));
  EXPECT_THAT(*ParseValuePath("ключ.0"), ElementsAre("ключ", "0"));
}

TEST(ValuePathTest, BadPathsSayWhy) {
  EXPECT_THAT(ParseValuePath("").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseValuePath(".a").status().message(), HasSubstr("empty segment"));
  EXPECT_THAT(ParseValuePath("a.").status().message(), HasSubstr("empty segment"));
  EXPECT_THAT(ParseValuePath("a..b").status().message(), HasSubstr("empty segment"));
  EXPECT_THAT(ParseValuePath("a\\x").status().message(), HasSubstr("backslash"));
  EXPECT_THAT(ParseValuePath("a\\").status().message(), HasSubstr("backslash"));
  std::string deep = "a";
  for (size_t i = 1; i < kMaxValuePathSegments; ++i) deep += ".a";
  EXPECT_TRUE(ParseValuePath(deep).ok());
  EXPECT_THAT(ParseValuePath(deep + ".a").status().message(), HasSubstr("more than 32"));
}

TEST(ValuePathTest, MatchValuesParseAsAttributeFiltersDo) {
  const ValueMatch m = ParseValueMatch("402");
  EXPECT_EQ(m.as_int, 402);
  EXPECT_EQ(m.as_double, 402.0);
  EXPECT_FALSE(m.as_bool.has_value());
  EXPECT_FALSE(ParseValueMatch("4x").as_int.has_value());
  EXPECT_FALSE(ParseValueMatch("inf").as_double.has_value());
  EXPECT_FALSE(ParseValueMatch("").as_double.has_value());
  EXPECT_EQ(ParseValueMatch("true").as_bool, true);
  EXPECT_FALSE(ParseValueMatch("True").as_bool.has_value());
}

// {"code": 402, "user": {"id": 7}, "tags": ["x", 2.5, true], "code": "dup",
//  "b": bytes "402"}, encoded as strata stores it.
std::string EncodedBody() {
  BatchBase batch;
  const uint32_t user = static_cast<uint32_t>(batch.nested_attributes.size());
  batch.nested_attributes.Append({"id", {ValueType::kInt, {}, 7}});
  const uint32_t tags = static_cast<uint32_t>(batch.nested_values.size());
  batch.nested_values.AppendString("x");
  batch.nested_values.AppendDouble(2.5);
  batch.nested_values.AppendBool(true);
  const uint32_t top = static_cast<uint32_t>(batch.nested_attributes.size());
  batch.nested_attributes.Append({"code", {ValueType::kInt, {}, 402}});
  batch.nested_attributes.Append(
      {"user", {ValueType::kKvList, {}, ValueColumns::Pack(Range{user, 1})}});
  batch.nested_attributes.Append(
      {"tags", {ValueType::kArray, {}, ValueColumns::Pack(Range{tags, 3})}});
  batch.nested_attributes.Append({"code", {ValueType::kString, "dup", 0}});
  batch.nested_attributes.Append({"b", {ValueType::kBytes, "402", 0}});
  ValueColumns body;
  body.AppendKvList(Range{top, 5});
  std::string out;
  EncodeAnyValueProto(batch, body, 0, &out);
  return out;
}

bool Equals(std::string_view path, std::string_view value) {
  absl::StatusOr<bool> equal =
      AnyValuePathEquals(EncodedBody(), *ParseValuePath(path), ParseValueMatch(value));
  EXPECT_TRUE(equal.ok()) << equal.status();
  return equal.ok() && *equal;
}

TEST(ValuePathTest, ValuesAreComparedByType) {
  EXPECT_TRUE(Equals("code", "402"));
  // An int compares with the text read as an int only, as attr.<key>= does.
  EXPECT_FALSE(Equals("code", "402.0"));
  // The first "code" counts; the second is never reached.
  EXPECT_FALSE(Equals("code", "dup"));
  EXPECT_TRUE(Equals("user.id", "7"));
  EXPECT_FALSE(Equals("user.id", "8"));
  EXPECT_TRUE(Equals("tags.0", "x"));
  EXPECT_TRUE(Equals("tags.1", "2.5"));
  EXPECT_TRUE(Equals("tags.1", "25e-1"));
  EXPECT_TRUE(Equals("tags.2", "true"));
  EXPECT_FALSE(Equals("tags.2", "1"));
  EXPECT_FALSE(Equals("tags.3", "x"));
  EXPECT_FALSE(Equals("tags.00", "x"));
  EXPECT_FALSE(Equals("tags.-0", "x"));
  // Bytes, kvlists and arrays never match; paths through scalars lead nowhere.
  EXPECT_FALSE(Equals("b", "402"));
  EXPECT_FALSE(Equals("user", ""));
  EXPECT_FALSE(Equals("code.x", "402"));
  EXPECT_FALSE(Equals("missing", "402"));
}

TEST(ValuePathTest, BytesThatDoNotDecodeAreAnError) {
  EXPECT_FALSE(AnyValuePathEquals("\x2a\x05", {"a"}, ParseValueMatch("1")).ok());
}

}  // namespace
}  // namespace strata::otlp
