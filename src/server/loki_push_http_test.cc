// POST /loki/api/v1/push on the OTLP/HTTP listener, end to end through curl
// into a real storage engine: JSON (plain and gzip) and Snappy-compressed
// protobuf pushes stored as OTLP log records, refusals storing nothing,
// bodies that inflate past the limit (gzip and Snappy bombs) refused with
// 413 without being inflated beyond it.

#include "server/loki_push_http.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "server/gzip.h"
#include "server/http_testing.h"
#include "server/partial_success_testing.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using testing::HttpAnswer;
using testing::kToken;

const std::string kAuth = std::string("Authorization: Bearer ") + kToken;

// ---- a PushRequest written by hand (field numbers from loki_push.h) ----

void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void Len(std::string* out, int field, std::string_view bytes) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | 2);
  Varint(out, bytes.size());
  out->append(bytes);
}
std::string Pair(std::string_view name, std::string_view value) {
  std::string out;
  Len(&out, 1, name);
  Len(&out, 2, value);
  return out;
}
std::string PushProto() {
  std::string timestamp;
  Varint(&timestamp, 1 << 3);
  Varint(&timestamp, 1'700'000'001);
  Varint(&timestamp, 2 << 3);
  Varint(&timestamp, 42);
  std::string entry;
  Len(&entry, 1, timestamp);
  Len(&entry, 2, "proto line");
  Len(&entry, 3, Pair("span_id", "0a0b0c0d0e0f1011"));
  Len(&entry, 3, Pair("order", "o-7"));
  std::string stream;
  Len(&stream, 1, R"({service_name="shop", k8s_pod_name="shop-1"})");
  Len(&stream, 2, entry);
  std::string request;
  Len(&request, 1, stream);
  return request;
}
// Snappy's block format with literals only: the uncompressed length, then
// literal elements of at most 65,536 bytes.
std::string SnappyLiterals(std::string_view data) {
  std::string out;
  Varint(&out, data.size());
  while (!data.empty()) {
    const size_t n = std::min<size_t>(data.size(), 65'536);
    if (n <= 60) {
      out.push_back(static_cast<char>((n - 1) << 2));
    } else if (n <= 256) {
      out.push_back(static_cast<char>(60 << 2));
      out.push_back(static_cast<char>(n - 1));
    } else {
      out.push_back(static_cast<char>(61 << 2));
      out.push_back(static_cast<char>((n - 1) & 0xff));
      out.push_back(static_cast<char>((n - 1) >> 8));
    }
    out.append(data.substr(0, n));
    data.remove_prefix(n);
  }
  return out;
}

std::string ResourceAttribute(const otlp::LogBatch& batch, size_t record, std::string_view key) {
  const uint32_t scope = batch.logs.scope[record];
  const uint32_t resource = batch.scopes.resource[scope];
  const otlp::Range range = batch.resources.attributes[resource];
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    if (batch.resource_attributes.key[i] == key) {
      return std::string(batch.resource_attributes.value.str[i]);
    }
  }
  return "<absent>";
}
std::string RecordAttribute(const otlp::LogBatch& batch, size_t record, std::string_view key) {
  const otlp::Range range = batch.logs.attributes[record];
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    if (batch.log_attributes.key[i] == key) return std::string(batch.log_attributes.value.str[i]);
  }
  return "<absent>";
}

using LokiPushHttpTest = testing::OtlpHttpServerTest;

TEST_F(LokiPushHttpTest, JsonAndProtobufPushesAreStoredAsLogRecords) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string json =
      R"({"streams":[{"stream":{"service_name":"cart","team":"pay"},"values":[)"
      R"(["1700000000000000005","json line",{"trace_id":"0102030405060708090a0b0c0d0e0f10",)"
      R"("detected_level":"error","user":"u1"}]]}]})";
  HttpAnswer answer = Post(kLokiPushPath, json, {"Content-Type: application/json", kAuth});
  ASSERT_EQ(answer.status, 204) << answer.body;
  answer = Post(kLokiPushPath, SnappyLiterals(PushProto()),
                {"Content-Type: application/x-protobuf", kAuth});
  ASSERT_EQ(answer.status, 204) << answer.body;
  ASSERT_EQ(StoredRows(Signal::kLogs), 2u);

  bool saw_json = false, saw_proto = false;
  for (const otlp::LogBatch& batch : testing::ReadStoredLogs(fs_, *storage_->Pin())) {
    for (size_t i = 0; i < batch.logs.size(); ++i) {
      if (batch.logs.body.str[i] == "json line") {
        saw_json = true;
        EXPECT_EQ(batch.logs.time_unix_nano[i], 1'700'000'000'000'000'005u);
        EXPECT_EQ(ResourceAttribute(batch, i, "service.name"), "cart");
        EXPECT_EQ(ResourceAttribute(batch, i, "team"), "pay");
        EXPECT_EQ(RecordAttribute(batch, i, "user"), "u1");
        EXPECT_EQ(batch.logs.severity_text[i], "error");
        EXPECT_EQ(batch.logs.severity_number[i], 17);
        ASSERT_EQ(batch.logs.has_trace_id[i], 1);
        EXPECT_EQ(batch.logs.trace_id[i][0], 0x01);
        EXPECT_EQ(batch.logs.trace_id[i][15], 0x10);
      } else if (batch.logs.body.str[i] == "proto line") {
        saw_proto = true;
        EXPECT_EQ(batch.logs.time_unix_nano[i], 1'700'000'001'000'000'042u);
        EXPECT_EQ(ResourceAttribute(batch, i, "service.name"), "shop");
        EXPECT_EQ(ResourceAttribute(batch, i, "k8s.pod.name"), "shop-1");
        EXPECT_EQ(RecordAttribute(batch, i, "order"), "o-7");
        ASSERT_EQ(batch.logs.has_span_id[i], 1);
        EXPECT_EQ(batch.logs.span_id[i][0], 0x0a);
        EXPECT_EQ(batch.logs.has_trace_id[i], 0);
      }
    }
  }
  EXPECT_TRUE(saw_json);
  EXPECT_TRUE(saw_proto);
}

TEST_F(LokiPushHttpTest, RefusalsStoreNothing) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string json = R"({"streams":[{"stream":{"a":"b"},"values":[["1","x"]]}]})";
  HttpAnswer answer = Post(kLokiPushPath, json, {"Content-Type: text/plain", kAuth});
  EXPECT_EQ(answer.status, 415) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("unsupported Content-Type"));
  answer =
      Post(kLokiPushPath, R"({"streams":[{"stream":)", {"Content-Type: application/json", kAuth});
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("malformed Loki push"));
  answer =
      Post(kLokiPushPath, "not snappy at all", {"Content-Type: application/x-protobuf", kAuth});
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("not a Snappy block"));
  answer = Post(kLokiPushPath, json, {"Content-Type: application/json"});
  EXPECT_EQ(answer.status, 401) << answer.body;
  answer =
      Post(kLokiPushPath, json, {"Content-Type: application/json", "Authorization: Bearer wrong"});
  EXPECT_EQ(answer.status, 401) << answer.body;
  EXPECT_EQ(StoredRows(Signal::kLogs), 0u);
}

// As Loki does: a push whose streams are partly unstorable stores the rest
// and answers 400 naming what it dropped; one with nothing storable stores
// nothing.
TEST_F(LokiPushHttpTest, APartlyStorablePushStoresTheRestAndAnswers400) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string long_line(300 * 1024, 'x');
  std::string labels = "{";
  for (int i = 0; i < 65; ++i) labels += fmt::format("{}\"l{}\":\"v\"", i ? "," : "", i);
  labels += "}";
  const std::string json = fmt::format(
      R"({{"streams":[{{"stream":{{"service_name":"cart"}},"values":[["1700000000000000001","kept 1"],)"
      R"(["1700000000000000002","{}"],["1700000000000000003","kept 2"]]}},)"
      R"({{"stream":{},"values":[["1700000000000000004","dropped with its stream"]]}}]}})",
      long_line, labels);
  HttpAnswer answer = Post(kLokiPushPath, json, {"Content-Type: application/json", kAuth});
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("2 of 4 entries of the Loki push were dropped and 2 stored"));
  EXPECT_THAT(answer.body, HasSubstr("stream 0, entry 1: a line of 307200 bytes"));
  EXPECT_EQ(StoredRows(Signal::kLogs), 2u);
  std::vector<std::string> bodies;
  for (const otlp::LogBatch& batch : testing::ReadStoredLogs(fs_, *storage_->Pin())) {
    for (size_t i = 0; i < batch.logs.size(); ++i) {
      bodies.emplace_back(batch.logs.body.str[i]);
    }
  }
  EXPECT_THAT(bodies, ::testing::UnorderedElementsAre("kept 1", "kept 2"));
  EXPECT_EQ(
      metrics_.rejected_rows(Signal::kLogs, Transport::kHttp, otlp::RowRejectReason::kLokiEntry),
      1u);
  EXPECT_EQ(metrics_.rejected_rows(Signal::kLogs, Transport::kHttp,
                                   otlp::RowRejectReason::kLokiStreamLabels),
            1u);

  // Nothing storable: 400, nothing stored.
  answer = Post(
      kLokiPushPath,
      fmt::format(R"({{"streams":[{{"stream":{{"a":"b"}},"values":[["1","{}"]]}}]}})", long_line),
      {"Content-Type: application/json", kAuth});
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("1 of 1 entries of the Loki push were dropped and 0 stored"));
  EXPECT_EQ(StoredRows(Signal::kLogs), 2u);
  EXPECT_EQ(
      metrics_.rejected_rows(Signal::kLogs, Transport::kHttp, otlp::RowRejectReason::kLokiEntry),
      2u);
}

TEST_F(LokiPushHttpTest, GzipJsonPushesAreInflatedWithinTheDecompressedBodyLimit) {
  ASSERT_NO_FATAL_FAILURE(StartServer());  // 1 MiB on the wire, 4 MiB inflated
  const std::string json =
      R"({"streams":[{"stream":{"service_name":"zip"},"values":[)"
      R"(["1700000000000000001","gzipped line one"],["1700000000000000002","gzipped line two"]]}]})";
  HttpAnswer answer = Post(kLokiPushPath, Gzip(json),
                           {"Content-Type: application/json", "Content-Encoding: gzip", kAuth});
  ASSERT_EQ(answer.status, 204) << answer.body;
  EXPECT_EQ(StoredRows(Signal::kLogs), 2u);
  std::vector<std::string> bodies;
  for (const otlp::LogBatch& batch : testing::ReadStoredLogs(fs_, *storage_->Pin())) {
    for (size_t i = 0; i < batch.logs.size(); ++i) {
      bodies.emplace_back(batch.logs.body.str[i]);
      EXPECT_EQ(ResourceAttribute(batch, i, "service.name"), "zip");
    }
  }
  EXPECT_THAT(bodies, ::testing::UnorderedElementsAre("gzipped line one", "gzipped line two"));

  // A gzip bomb: 8 MiB of JSON (one long line) is a few KiB compressed,
  // well under the wire limit, and twice the inflated limit.
  const std::string huge = R"({"streams":[{"stream":{"service_name":"zip"},"values":[)"
                           R"(["1700000000000000003",")" +
                           std::string(8 << 20, 'a') + R"("]]}]})";
  const std::string bomb = Gzip(huge, 9);
  ASSERT_LT(bomb.size(), 64u << 10);
  answer = Post(kLokiPushPath, bomb,
                {"Content-Type: application/json", "Content-Encoding: gzip", kAuth});
  EXPECT_EQ(answer.status, 413) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("decompresses to more than the limit of 4194304 bytes"));
  EXPECT_EQ(metrics_.rejected(Signal::kLogs, Transport::kHttp, RejectReason::kBodyTooLarge), 1u);
  // A body that is not gzip at all is a 400, not a 413.
  answer = Post(kLokiPushPath, "not gzip",
                {"Content-Type: application/json", "Content-Encoding: gzip", kAuth});
  EXPECT_EQ(answer.status, 400) << answer.body;
  // Just under the limit inflated: stored.
  const std::string fits = R"({"streams":[{"stream":{"service_name":"zip"},"values":[)"
                           R"(["1700000000000000004",")" +
                           std::string(200 << 10, 'b') + R"("]]}]})";
  answer = Post(kLokiPushPath, Gzip(fits),
                {"Content-Type: application/json", "Content-Encoding: x-gzip", kAuth});
  EXPECT_EQ(answer.status, 204) << answer.body;
  EXPECT_EQ(StoredRows(Signal::kLogs), 3u);
}

TEST_F(LokiPushHttpTest, ASnappyBlockThatInflatesPastTheLimitIs413) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // A block that declares 64 MiB: refused from its header, before any
  // allocation.
  std::string bomb;
  Varint(&bomb, 64u << 20);
  bomb += SnappyLiterals("x").substr(1);
  HttpAnswer answer = Post(kLokiPushPath, bomb, {"Content-Type: application/x-protobuf", kAuth});
  EXPECT_EQ(answer.status, 413) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("the protobuf push is too large"));
  EXPECT_THAT(answer.body, HasSubstr("above the limit of 4194304"));
  EXPECT_EQ(metrics_.rejected(Signal::kLogs, Transport::kHttp, RejectReason::kBodyTooLarge), 1u);
  EXPECT_EQ(StoredRows(Signal::kLogs), 0u);
}

}  // namespace
}  // namespace strata::server
