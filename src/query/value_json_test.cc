// ValueJsonWriter against values built in a batch and encoded by otlp's
// protobuf AnyValue encoder, as the storage tables hold arrays and kvlists.

#include "query/value_json.h"

#include <bit>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "otlp/any_value_codec.h"
#include "otlp/decode.h"

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

// A random value of any type into `batch` (children) and the returned row;
// strings mix letters with bytes JSON escapes, multi-byte UTF-8 and a
// malformed byte.
otlp::ValueRow RandomValue(std::mt19937& rng, otlp::BatchBase* batch, int depth,
                           std::deque<std::string>* texts) {
  static constexpr std::string_view kPieces[] = {
      "a", "error", "n",    "u", "b",   "rue", "\"", "\\", "\n", "\t", "\x01", "\x1f",
      "é", "😀",     "\xff", " ", "402", "NaN", "e",  "0",  ":",  ",",  "{",    "]"};
  auto text = [&]() -> std::string_view {
    std::string& t = texts->emplace_back();
    const int n = static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) t += kPieces[rng() % std::size(kPieces)];
    return t;
  };
  const int kind = static_cast<int>(rng() % (depth < 3 ? 9 : 7));
  switch (kind) {
    case 0:
      return {otlp::ValueType::kString, text(), 0};
    case 1:
      return {otlp::ValueType::kInt,
              {},
              static_cast<uint64_t>(static_cast<int64_t>(rng() % 2001) - 1000)};
    case 2: {
      static constexpr double kDoubles[] = {0.25, -1e300, 402.0, 1e-7, 3.0};
      double v = kDoubles[rng() % std::size(kDoubles)];
      if (rng() % 5 == 0) v = std::nan("");
      if (rng() % 7 == 0) v = -HUGE_VAL;
      return {otlp::ValueType::kDouble, {}, std::bit_cast<uint64_t>(v)};
    }
    case 3:
      return {otlp::ValueType::kBool, {}, rng() % 2};
    case 4:
      return {otlp::ValueType::kBytes, text(), 0};
    case 5:
    case 6:
      return {otlp::ValueType::kEmpty, {}, 0};
    case 7: {
      const uint32_t n = rng() % 4;
      std::vector<otlp::ValueRow> children;
      for (uint32_t i = 0; i < n; ++i)
        children.push_back(RandomValue(rng, batch, depth + 1, texts));
      const uint32_t first = static_cast<uint32_t>(batch->nested_values.size());
      for (const otlp::ValueRow& c : children) batch->nested_values.Append(c);
      return {otlp::ValueType::kArray, {}, otlp::ValueColumns::Pack({first, n})};
    }
    default: {
      const uint32_t n = rng() % 4;
      std::vector<otlp::AttributeRow> children;
      for (uint32_t i = 0; i < n; ++i) {
        const std::string_view key = text();
        children.push_back({key, RandomValue(rng, batch, depth + 1, texts)});
      }
      const uint32_t first = static_cast<uint32_t>(batch->nested_attributes.size());
      for (const otlp::AttributeRow& c : children) batch->nested_attributes.Append(c);
      return {otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack({first, n})};
    }
  }
}

// TextContains gives the answer of searching AppendText's text, on random
// values and needles cut from that text (so most match, including cuts that
// start inside an escape or a base64 string) or made of the same pieces.
TEST(ValueJsonTest, TextContainsAnswersAsSearchingTheText) {
  std::mt19937 rng(7);
  ValueJsonWriter writer;
  int matched = 0;
  int missed = 0;
  int undecodable = 0;
  for (int round = 0; round < 3000; ++round) {
    otlp::BatchBase batch;
    std::deque<std::string> texts;
    otlp::ValueColumns top;
    const otlp::ValueRow row = RandomValue(rng, &batch, 0, &texts);
    top.Append(row);
    StoredValue value;
    std::string bytes;
    switch (row.type) {
      case otlp::ValueType::kArray:
      case otlp::ValueType::kKvList:
        otlp::EncodeAnyValueProto(batch, top, 0, &bytes);
        value = {.type = static_cast<uint8_t>(row.type == otlp::ValueType::kArray ? 5 : 6),
                 .bytes = bytes};
        break;
      case otlp::ValueType::kString:
        value = {.type = 1, .str = row.str};
        break;
      case otlp::ValueType::kInt:
        value = {.type = 3, .int_value = static_cast<int64_t>(row.bits)};
        break;
      case otlp::ValueType::kDouble:
        value = {.type = 4, .double_value = std::bit_cast<double>(row.bits)};
        break;
      case otlp::ValueType::kBool:
        value = {.type = 2, .bool_value = row.bits != 0};
        break;
      case otlp::ValueType::kBytes:
        value = {.type = 7, .bytes = row.str};
        break;
      default:
        value = {.type = static_cast<uint8_t>(rng() % 2 == 0 ? 0 : 1), .present = false};
    }
    std::string text;
    if (value.type != 0 && !writer.AppendText(value, &text).ok()) {
      // Nested bytes that do not decode (a malformed byte inside a nested
      // string): TextContains fails as AppendText does, for any needle.
      ++undecodable;
      EXPECT_FALSE(writer.TextContains(value, "a").ok());
      EXPECT_FALSE(writer.TextContains(value, "{").ok());
      continue;
    }
    for (int n = 0; n < 8; ++n) {
      std::string needle;
      if (!text.empty() && n < 6) {
        const size_t at = rng() % text.size();
        needle = text.substr(at, 1 + rng() % 6);
        if (n == 5 && !needle.empty()) needle.back() ^= 1;  // a near miss
      } else {
        needle = std::string(texts.empty() ? "x" : texts[rng() % texts.size()]) + "e";
      }
      const bool want = text.find(needle) != std::string::npos;
      const absl::StatusOr<bool> got = writer.TextContains(value, needle);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(*got, want) << "needle [" << needle << "] in [" << text << "]";
      (want ? matched : missed) += 1;
    }
  }
  // Both answers were exercised often.
  EXPECT_GT(matched, 5000);
  EXPECT_GT(missed, 3000);
  EXPECT_GT(undecodable, 10);
  // The empty needle is in every text, even an empty value's "".
  EXPECT_TRUE(*writer.TextContains({.type = 0}, ""));
  EXPECT_FALSE(*writer.TextContains({.type = 0}, "null"));
  EXPECT_FALSE(writer.TextContains({.type = 6, .bytes = "\x32\x05\x0a"}, "a").ok());
}

// EncodedContains answers, off the wire, for every array and kvlist the
// encoder writes, as searching the text would; it leaves to the decoder
// exactly the bytes that do not decode (a malformed byte inside a string).
TEST(ValueJsonTest, EncodedContainsAnswersForWhatTheEncoderWrites) {
  std::mt19937 rng(11);
  ValueJsonWriter writer;
  int answered = 0;
  int matched = 0;
  int undecodable = 0;
  for (int round = 0; round < 10000; ++round) {
    otlp::BatchBase batch;
    std::deque<std::string> texts;
    otlp::ValueColumns top;
    const otlp::ValueRow row = RandomValue(rng, &batch, 0, &texts);
    if (row.type != otlp::ValueType::kArray && row.type != otlp::ValueType::kKvList) continue;
    top.Append(row);
    std::string bytes;
    otlp::EncodeAnyValueProto(batch, top, 0, &bytes);
    const StoredValue value{
        .type = static_cast<uint8_t>(row.type == otlp::ValueType::kArray ? 5 : 6), .bytes = bytes};
    std::string text;
    if (!writer.AppendText(value, &text).ok()) {
      ++undecodable;
      EXPECT_FALSE(writer.EncodedContains(bytes, "a").has_value());
      continue;
    }
    for (int n = 0; n < 6; ++n) {
      std::string needle = texts.empty() ? "x" : texts[rng() % texts.size()];
      if (n < 4 && !text.empty()) needle = text.substr(rng() % text.size(), 1 + rng() % 6);
      if (needle.empty() || needle.find_first_of("\"{}[],:") != std::string::npos) continue;
      const std::optional<bool> got = writer.EncodedContains(bytes, needle);
      ASSERT_TRUE(got.has_value()) << "needle [" << needle << "] in [" << text << "]";
      ASSERT_EQ(*got, text.find(needle) != std::string::npos)
          << "needle [" << needle << "] in [" << text << "]";
      ++answered;
      matched += *got ? 1 : 0;
    }
  }
  EXPECT_GT(answered, 3000);
  EXPECT_GT(matched, 1500);
  EXPECT_LT(matched, answered - 1000);
  EXPECT_GT(undecodable, 5);
}

// Bytes off the encoder's shape are left to the decoder, even when a token
// before the odd part holds the needle: a second oneof member (the decoder
// keeps the last), an unknown field, a key after its value, a string that
// is not UTF-8, nesting past the decoder's limit.
TEST(ValueJsonTest, EncodedContainsLeavesOtherShapesToTheDecoder) {
  ValueJsonWriter writer;
  // ArrayValue{values: [AnyValue{string_value: "ab"}]} is 2a 06 0a 04 0a 02 'a' 'b'.
  const std::string array(
      "\x2a\x06\x0a\x04\x0a\x02"
      "ab",
      8);
  ASSERT_EQ(writer.EncodedContains(array, "ab"), true);
  ASSERT_EQ(writer.EncodedContains(array, "b\\"), false);
  // Off the shape: the walk answers nothing and TextContains gives the
  // decoder's answer, or its error.
  struct OffShape {
    const char* what;
    std::string bytes;
    uint8_t type;
    const char* needle;
    std::optional<bool> decoded;  // nullopt: the decoder refuses the bytes
  };
  const OffShape cases[] = {
      // The decoder keeps the last member: its text is [7].
      {"a string member then an int member",
       std::string("\x2a\x08\x0a\x06\x0a\x02"
                   "ab\x18\x07",
                   10),
       5, "ab", false},
      {"an unknown field after the member",
       std::string("\x2a\x08\x0a\x06\x0a\x02"
                   "ab\x48\x01",
                   10),
       5, "ab", true},
      // KvList{values: [KeyValue{value: {int_value: 1}, key: "k"}]}.
      {"a key after its value",
       std::string("\x32\x09\x0a\x07\x12\x02\x18\x01\x0a\x01"
                   "k",
                   11),
       6, "k", true},
      {"a string that is not UTF-8",
       std::string("\x2a\x07\x0a\x05\x0a\x03"
                   "ab\xff",
                   9),
       5, "ab", std::nullopt},
  };
  for (const OffShape& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(writer.EncodedContains(c.bytes, c.needle), std::nullopt);
    const absl::StatusOr<bool> got =
        writer.TextContains({.type = c.type, .bytes = c.bytes}, c.needle);
    EXPECT_EQ(got.ok(), c.decoded.has_value()) << got.status();
    if (got.ok() && c.decoded.has_value()) EXPECT_EQ(*got, *c.decoded);
  }
  EXPECT_EQ(*writer.TextContains({.type = 5, .bytes = cases[0].bytes}, "7"), true);
  // Arrays nested one deeper than the decoder's limit, the innermost
  // holding the needle: the decoder refuses them.
  std::string nested(
      "\x0a\x02"
      "ab",
      4);
  for (uint32_t depth = 0; depth <= otlp::DecodeLimits{}.max_value_depth; ++depth) {
    std::string array_value = "\x0a" + std::string(1, static_cast<char>(nested.size())) + nested;
    nested = "\x2a" + std::string(1, static_cast<char>(array_value.size())) + array_value;
  }
  ASSERT_LT(nested.size(), 128u);
  EXPECT_EQ(writer.EncodedContains(nested, "ab"), std::nullopt);
  EXPECT_FALSE(writer.TextContains({.type = 5, .bytes = nested}, "ab").ok());
  EXPECT_EQ(writer.EncodedContains(nested.substr(4), "ab"), true);
}

}  // namespace
}  // namespace strata::query
