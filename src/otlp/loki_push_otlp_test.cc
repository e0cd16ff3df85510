#include "otlp/loki_push_otlp.h"

#include <gtest/gtest.h>

#include <string>

#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/loki_push.h"

namespace strata::otlp {
namespace {

TEST(LokiPushOtlpTest, DefaultLabelsGetTheirDottedNamesBack) {
  EXPECT_EQ(ResourceAttributeForLokiLabel("service_name"), "service.name");
  EXPECT_EQ(ResourceAttributeForLokiLabel("k8s_pod_name"), "k8s.pod.name");
  EXPECT_EQ(ResourceAttributeForLokiLabel("deployment_environment_name"),
            "deployment.environment.name");
  EXPECT_EQ(ResourceAttributeForLokiLabel("team"), "team");
  EXPECT_EQ(ResourceAttributeForLokiLabel("service.name"), "service.name");
}

TEST(LokiPushOtlpTest, StreamsAndEntriesBecomeOtlpLogRecords) {
  LokiPush push;
  LokiPushStream stream;
  stream.labels = {{"service_name", "cart"}, {"team", "payments \"a\""}};
  stream.entries.push_back(
      LokiPushEntry{.time_unix_nano = 1'700'000'000'123'456'789,
                    .line = "paid\n\"ok\"",
                    .metadata = {{"trace_id", "0102030405060708090A0B0C0D0E0F10"},
                                 {"span_id", "0102030405060708"},
                                 {"detected_level", "warn"},
                                 {"user", "u1"}}});
  stream.entries.push_back(LokiPushEntry{
      .time_unix_nano = 5,
      .line = "second",
      .metadata = {
          {"trace_id", "not-hex"}, {"severity_text", "ERROR"}, {"severity_number", "18"}}});
  push.streams.push_back(stream);
  push.streams.push_back(LokiPushStream{.labels = {{"service_name", "empty"}}});  // no entries
  auto json = LokiPushToOtlpLogsJson(push);
  ASSERT_TRUE(json.ok()) << json.status();
  LogBatch batch;
  ASSERT_TRUE(DecodeLogsJson(*json, &batch).ok()) << *json;

  ASSERT_EQ(batch.resources.size(), 1u);
  ASSERT_EQ(batch.resource_attributes.size(), 2u);
  EXPECT_EQ(batch.resource_attributes.key[0], "service.name");
  EXPECT_EQ(batch.resource_attributes.value.str[0], "cart");
  EXPECT_EQ(batch.resource_attributes.key[1], "team");
  EXPECT_EQ(batch.resource_attributes.value.str[1], "payments \"a\"");

  ASSERT_EQ(batch.logs.size(), 2u);
  EXPECT_EQ(batch.logs.time_unix_nano[0], 1'700'000'000'123'456'789u);
  EXPECT_EQ(batch.logs.body.str[0], "paid\n\"ok\"");
  EXPECT_EQ(batch.logs.severity_text[0], "warn");
  EXPECT_EQ(batch.logs.severity_number[0], 13);
  ASSERT_EQ(batch.logs.has_trace_id[0], 1);
  EXPECT_EQ(batch.logs.trace_id[0][0], 0x01);
  EXPECT_EQ(batch.logs.trace_id[0][15], 0x10);
  ASSERT_EQ(batch.logs.has_span_id[0], 1);
  EXPECT_EQ(batch.logs.span_id[0][7], 0x08);
  const Range first = batch.logs.attributes[0];
  ASSERT_EQ(first.count, 1u);
  EXPECT_EQ(batch.log_attributes.key[first.begin], "user");
  EXPECT_EQ(batch.log_attributes.value.str[first.begin], "u1");

  EXPECT_EQ(batch.logs.time_unix_nano[1], 5u);
  EXPECT_EQ(batch.logs.severity_text[1], "ERROR");
  EXPECT_EQ(batch.logs.severity_number[1], 18);
  EXPECT_EQ(batch.logs.has_trace_id[1], 0);
  const Range second = batch.logs.attributes[1];
  ASSERT_EQ(second.count, 1u);  // the id that is not hex stays an attribute
  EXPECT_EQ(batch.log_attributes.key[second.begin], "trace_id");
  EXPECT_EQ(batch.log_attributes.value.str[second.begin], "not-hex");
}

TEST(LokiPushOtlpTest, NegativeTimestampIsRefused) {
  LokiPush push;
  push.streams.push_back(
      LokiPushStream{.labels = {{"service_name", "x"}},
                     .entries = {LokiPushEntry{.time_unix_nano = -1, .line = "l"}}});
  EXPECT_EQ(LokiPushToOtlpLogsJson(push).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::otlp

namespace strata::otlp {
namespace {

// docs/loki.md, "Push": a line that is not UTF-8 makes the OTLP/JSON
// decoding refuse the push.
TEST(LokiPushOtlpTest, ALineThatIsNotUtf8IsRefusedByTheOtlpDecoder) {
  LokiPush push;
  push.streams.push_back(
      LokiPushStream{.labels = {{"service_name", "x"}},
                     .entries = {LokiPushEntry{.time_unix_nano = 1, .line = "bad \xff byte"}}});
  auto json = LokiPushToOtlpLogsJson(push);
  ASSERT_TRUE(json.ok());
  LogBatch batch;
  EXPECT_FALSE(DecodeLogsJson(*json, &batch).ok());
}

}  // namespace
}  // namespace strata::otlp
