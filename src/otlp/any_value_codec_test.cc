// EncodeAnyValueProto / DecodeAnyValueProto against libprotobuf: every
// AnyValue the random generators produce (attribute values at every level
// and log bodies) decodes from libprotobuf's bytes and encodes back to the
// same bytes after normalization; nested children land contiguously in the
// batch's nested tables; malformed bytes are InvalidArgument.

#include "otlp/any_value_codec.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "opentelemetry/proto/common/v1/common.pb.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"

namespace strata::otlp {
namespace {

using opentelemetry::proto::common::v1::AnyValue;

// Every AnyValue in a logs request (record bodies and attribute values of
// records and resources; the 0.38 protos have no scope attributes),
// normalized.
std::vector<AnyValue> ValuesOf(const otlp_reference::LogsRequest& request) {
  std::vector<AnyValue> out;
  auto add_attributes = [&](const auto& attributes) {
    for (const auto& kv : attributes) out.push_back(kv.value());
  };
  for (const auto& rl : request.resource_logs()) {
    add_attributes(rl.resource().attributes());
    for (const auto& sl : rl.scope_logs()) {
      for (const auto& record : sl.log_records()) {
        out.push_back(record.body());
        add_attributes(record.attributes());
      }
    }
  }
  for (AnyValue& v : out) otlp_reference::Normalize(&v);
  return out;
}

TEST(AnyValueCodecTest, GeneratedValuesRoundTripByteForByte) {
  int nested = 0;
  int values = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    for (const AnyValue& value : ValuesOf(otlp_reference::RandomLogsRequest(seed))) {
      const std::string bytes = value.SerializeAsString();
      BatchBase batch;
      ValueRow row;
      absl::Status s = DecodeAnyValueProto(bytes, &batch, &row);
      ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s;
      ASSERT_EQ(static_cast<int>(row.type), value.value_case() == AnyValue::VALUE_NOT_SET
                                                ? 0
                                                : static_cast<int>(value.value_case()));
      ValueColumns table;
      table.Append(row);
      std::string encoded = "prefix";
      EncodeAnyValueProto(batch, table, 0, &encoded);
      ASSERT_EQ(encoded, "prefix" + bytes) << "seed " << seed << ": " << value.DebugString();
      ++values;
      nested += row.type == ValueType::kArray || row.type == ValueType::kKvList;
    }
  }
  EXPECT_GT(values, 1000);
  EXPECT_GT(nested, 50);
}

TEST(AnyValueCodecTest, ChildrenAreContiguousAndDepthIsLimited) {
  AnyValue value;
  auto* array = value.mutable_array_value();
  array->add_values()->set_int_value(1);
  auto* kv = array->add_values()->mutable_kvlist_value()->add_values();
  kv->set_key("k");
  kv->mutable_value()->mutable_array_value()->add_values()->set_string_value("deep");
  array->add_values()->set_bool_value(false);
  const std::string bytes = value.SerializeAsString();

  BatchBase batch;
  ValueRow row;
  ASSERT_TRUE(DecodeAnyValueProto(bytes, &batch, &row).ok());
  ASSERT_EQ(row.type, ValueType::kArray);
  ValueColumns holder;
  holder.Append(row);
  const Range children = holder.children_at(0);
  ASSERT_EQ(children.count, 3u);
  EXPECT_EQ(batch.nested_values.type[children.begin], ValueType::kInt);
  EXPECT_EQ(batch.nested_values.type[children.begin + 1], ValueType::kKvList);
  EXPECT_EQ(batch.nested_values.type[children.begin + 2], ValueType::kBool);
  const Range entries = batch.nested_values.children_at(children.begin + 1);
  ASSERT_EQ(entries.count, 1u);
  EXPECT_EQ(batch.nested_attributes.key[entries.begin], "k");

  // Depth: the array is depth 1, its kvlist 2, the inner array 3.
  DecodeLimits limits;
  limits.max_value_depth = 2;
  BatchBase shallow;
  absl::Status s = DecodeAnyValueProto(bytes, &shallow, &row, limits);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  limits.max_value_depth = 3;
  BatchBase enough;
  EXPECT_TRUE(DecodeAnyValueProto(bytes, &enough, &row, limits).ok());
}

TEST(AnyValueCodecTest, MalformedBytesAreInvalidArgument) {
  AnyValue value;
  value.mutable_kvlist_value()->add_values()->set_key("key");
  const std::string good = value.SerializeAsString();
  for (size_t cut = 1; cut < good.size(); ++cut) {
    BatchBase batch;
    ValueRow row;
    absl::Status s = DecodeAnyValueProto(good.substr(0, cut), &batch, &row);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << "cut " << cut << ": " << s;
  }
  const std::string bad_cases[] = {
      std::string("\x0a\x02\xff\xfe", 4),  // string_value that is not UTF-8
      std::string("\x10", 1),              // bool_value without its varint
      std::string("\x21\x00", 2),          // double_value cut short
      std::string("\x2a\x00\x2a\x00", 4),  // array_value twice
      std::string("\x40\x01", 2),          // string_value_strindex
  };
  for (const std::string& bytes : bad_cases) {
    BatchBase batch;
    ValueRow row;
    absl::Status s = DecodeAnyValueProto(bytes, &batch, &row);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  }
}

}  // namespace
}  // namespace strata::otlp
