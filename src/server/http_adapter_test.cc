// http_adapter.h end to end: the OTLP/HTTP listener in front of a real
// storage engine, driven by the real curl binary and raw sockets; the API
// listener's health routes and router; and the server's limits, deadlines,
// connection cap and graceful shutdown.

#include "server/http_adapter.h"

#include <atomic>
#include <future>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/proto_wire.h"
#include "server/gzip.h"
#include "server/http_testing.h"
#include "server/otlp_http_codec.h"
#include "server/partial_success_testing.h"

namespace strata::server {
namespace {

using testing::Curl;
using ::testing::HasSubstr;
using testing::HttpAnswer;
using testing::JsonToProto;
using testing::kToken;
using testing::PayloadJson;
using testing::RawConnection;
using ::testing::StartsWith;

constexpr auto kWait = std::chrono::seconds(30);
const std::string kAuth = std::string("Authorization: Bearer ") + kToken;
const std::string kProtobuf = "Content-Type: application/x-protobuf";
const std::string kJson = "Content-Type: application/json";

// google.rpc.Status from an error answer in either encoding.
struct StatusBody {
  int code = -1;
  std::string message;
};

StatusBody ParseStatusBody(const HttpAnswer& answer) {
  StatusBody out;
  const std::string type = answer.Header("content-type");
  if (type == "application/x-protobuf") {
    otlp::WireReader reader(answer.body);
    while (!reader.done()) {
      uint32_t tag = 0;
      if (!reader.ReadTag(&tag)) return StatusBody{};
      if (tag == otlp::Tag(1, otlp::WireType::kVarint)) {
        uint64_t code = 0;
        if (!reader.ReadVarint(&code)) return StatusBody{};
        out.code = static_cast<int>(code);
      } else if (tag == otlp::Tag(2, otlp::WireType::kLen)) {
        std::string_view message;
        if (!reader.ReadLen(&message)) return StatusBody{};
        out.message = std::string(message);
      } else if (!reader.SkipField(tag)) {
        return StatusBody{};
      }
    }
    return out;
  }
  // {"code":N,"message":"..."}: read back through the client's parser.
  ExportReply reply = ParseExportReply(Signal::kTraces, 400, type, "", answer.body);
  out.message = std::string(reply.status.message());
  const size_t at = answer.body.find("\"code\":");
  if (at != std::string::npos) out.code = std::atoi(answer.body.c_str() + at + 7);
  return out;
}

// A request with a Content-Length body, for raw connections.
std::string RawPost(std::string_view path, std::string_view content_type, std::string_view body,
                    bool auth = true) {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: test\r\nContent-Type: {}\r\n{}Content-Length: {}\r\n\r\n{}", path,
      content_type, auth ? kAuth + "\r\n" : "", body.size(), body);
}

constexpr std::string_view kEmptyExport = "{}";

// Polls `condition` until it holds or kWait passes. For state a server
// updates after the client already saw its effect (a connection closes
// before the io thread counts why).
template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// ---------------------------------------------------------------------------
// OTLP/HTTP through curl

using OtlpHttpTest = testing::OtlpHttpServerTest;

TEST_F(OtlpHttpTest, ProtobufExportIsAnsweredAfterItsRowsAreStored) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string body = JsonToProto(Signal::kTraces, testing::TracesJson(120, 1));
  HttpAnswer answer = Post("/v1/traces", body, {kProtobuf, kAuth});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.Header("content-type"), "application/x-protobuf");
  EXPECT_EQ(answer.body, "");  // an empty ExportTraceServiceResponse
  // Acknowledged means published: the pinned snapshot already has the rows.
  EXPECT_EQ(StoredRows(Signal::kTraces), 120u);
  EXPECT_EQ(metrics_.ingested_rows(Signal::kTraces, Transport::kHttp), 120u);

  for (Signal signal : {Signal::kLogs, Signal::kMetrics}) {
    HttpAnswer more = Post(HttpPathFor(signal), JsonToProto(signal, PayloadJson(signal, 30, 2)),
                           {kProtobuf, kAuth});
    ASSERT_EQ(more.status, 200) << more.body;
    EXPECT_EQ(StoredRows(signal), 30u);
  }
}

TEST_F(OtlpHttpTest, RejectedSpansAreReportedInPartialSuccessAndTheOthersStored) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const testing::PartlyInvalidTraces request;
  const std::string json = request.Json();
  HttpAnswer answer = Post("/v1/traces", json, {kJson, kAuth});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.Header("content-type"), "application/json");
  ExportReply reply =
      ParseExportReply(Signal::kTraces, 200, answer.Header("content-type"), "", answer.body);
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(reply.rejected_rows, 1);
  EXPECT_THAT(answer.body, HasSubstr(R"("partialSuccess":{"rejectedSpans":"1","errorMessage":)"));
  EXPECT_THAT(answer.body, HasSubstr("span 1: trace_id is all zero"));
  EXPECT_EQ(StoredRows(Signal::kTraces), 2u);

  answer = Post("/v1/traces", request.Proto(), {kProtobuf, kAuth});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const testing::PartialSuccess partial = testing::ParsePartialSuccessProto(answer.body);
  ASSERT_TRUE(partial.present);
  EXPECT_EQ(partial.rejected, 1u);
  EXPECT_THAT(partial.message, HasSubstr("span 1: trace_id is all zero"));
  EXPECT_EQ(StoredRows(Signal::kTraces), 4u);
  EXPECT_EQ(
      metrics_.rejected_rows(Signal::kTraces, Transport::kHttp, otlp::RowRejectReason::kTraceId),
      2u);
  EXPECT_EQ(metrics_.ingested_rows(Signal::kTraces, Transport::kHttp), 4u);
}

TEST_F(OtlpHttpTest, LogRecordsWithInvalidIdsAreStoredWithThoseIdsAbsent) {
  // docs/otlp.md, "Cleared log record ids": 200, no partial_success, every
  // record stored, the invalid ids absent and counted.
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const testing::LogsWithInvalidIds request;
  HttpAnswer answer = Post("/v1/logs", request.Json(), {kJson, kAuth});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body, "{}");
  answer = Post("/v1/logs", request.Proto(), {kProtobuf, kAuth});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body, "");  // an empty ExportLogsServiceResponse
  EXPECT_EQ(StoredRows(Signal::kLogs), 6u);
  testing::LogsWithInvalidIds::ExpectStored(testing::ReadStoredLogs(fs_, *storage_->Pin()), 2);
  EXPECT_EQ(metrics_.ingested_rows(Signal::kLogs, Transport::kHttp), 6u);
  const otlp::ClearedIds cleared = metrics_.cleared_log_ids(Transport::kHttp);
  EXPECT_EQ(cleared.trace_id, 4u);
  EXPECT_EQ(cleared.span_id, 2u);
  EXPECT_EQ(metrics_.rejected(Signal::kLogs, Transport::kHttp, RejectReason::kInvalidArgument), 0u);
  EXPECT_THAT(metrics_.RenderPrometheus(storage_->WriterStats()),
              HasSubstr("strata_ingest_cleared_ids_total{signal=\"logs\",transport=\"http\","
                        "field=\"trace_id\"} 4"));
}

TEST_F(OtlpHttpTest, ARequestWhoseEveryRowIsRejectedIs400AndStoresNothing) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const testing::PartlyInvalidTraces request(/*all_invalid=*/true);
  for (bool proto : {false, true}) {
    HttpAnswer answer = Post("/v1/traces", proto ? request.Proto() : request.Json(),
                             {proto ? kProtobuf : kJson, kAuth});
    ASSERT_EQ(answer.status, 400) << answer.body;
    const StatusBody status = ParseStatusBody(answer);
    EXPECT_EQ(status.code, 3);  // INVALID_ARGUMENT
    EXPECT_THAT(status.message, HasSubstr("rejected 3 spans"));
    EXPECT_THAT(status.message, HasSubstr("span 0: trace_id is missing"));
  }
  EXPECT_EQ(StoredRows(Signal::kTraces), 0u);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kInvalidArgument),
            2u);
}

TEST_F(OtlpHttpTest, JsonExportsOfEverySignalAreStoredAndAnsweredInJson) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (Signal signal : {Signal::kTraces, Signal::kLogs, Signal::kMetrics}) {
    // Parameters of the media type are ignored.
    HttpAnswer answer = Post(HttpPathFor(signal), PayloadJson(signal, 25, 3),
                             {"Content-Type: application/json; charset=utf-8", kAuth});
    ASSERT_EQ(answer.status, 200) << SignalName(signal) << ": " << answer.body;
    EXPECT_EQ(answer.Header("content-type"), "application/json");
    EXPECT_EQ(answer.body, "{}");
    EXPECT_EQ(StoredRows(signal), 25u) << SignalName(signal);
  }
}

TEST_F(OtlpHttpTest, GzipBodiesAreDecompressed) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string proto = JsonToProto(Signal::kTraces, testing::TracesJson(200, 4));
  HttpAnswer answer = Post("/v1/traces", Gzip(proto), {kProtobuf, "Content-Encoding: gzip", kAuth});
  ASSERT_EQ(answer.status, 200) << answer.body;
  HttpAnswer json =
      Post("/v1/logs", Gzip(testing::LogsJson(10, 5)), {kJson, "Content-Encoding: GZIP", kAuth});
  ASSERT_EQ(json.status, 200) << json.body;
  EXPECT_EQ(StoredRows(Signal::kTraces), 200u);
  EXPECT_EQ(StoredRows(Signal::kLogs), 10u);
}

TEST_F(OtlpHttpTest, MissingOrWrongTokenIs401AndStorageIsNotTouched) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string body = JsonToProto(Signal::kTraces, testing::TracesJson(5, 6));
  HttpAnswer missing = Post("/v1/traces", body, {kProtobuf});
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.Header("www-authenticate"), "Bearer");
  StatusBody status = ParseStatusBody(missing);
  EXPECT_EQ(status.code, static_cast<int>(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(status.message, HasSubstr("Bearer"));

  HttpAnswer wrong =
      Post("/v1/traces", testing::TracesJson(5, 6), {kJson, "Authorization: Bearer not-the-token"});
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.Header("www-authenticate"), "Bearer");
  EXPECT_EQ(wrong.Header("content-type"), "application/json");
  EXPECT_THAT(ParseStatusBody(wrong).message, HasSubstr("unknown or revoked"));
  EXPECT_THAT(wrong.body, ::testing::Not(HasSubstr("not-the-token")));

  EXPECT_EQ(storage_->WriterStats().inflight_requests + storage_->WriterStats().requests_ok, 0u);
  EXPECT_EQ(StoredRows(Signal::kTraces), 0u);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kUnauthenticated),
            2u);
}

TEST_F(OtlpHttpTest, UnsupportedContentTypeOrEncodingIs415) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  HttpAnswer text = Post("/v1/traces", "hello", {"Content-Type: text/plain", kAuth});
  EXPECT_EQ(text.status, 415);
  EXPECT_THAT(text.body, HasSubstr("application/x-protobuf or application/json"));
  HttpAnswer none = Post("/v1/logs", "hello", {"Content-Type:", kAuth});
  EXPECT_EQ(none.status, 415);
  HttpAnswer brotli =
      Post("/v1/traces", testing::TracesJson(1, 7), {kJson, "Content-Encoding: br", kAuth});
  EXPECT_EQ(brotli.status, 415);
  EXPECT_EQ(ParseStatusBody(brotli).code, static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(ParseStatusBody(brotli).message, HasSubstr("Content-Encoding \"br\""));
  EXPECT_EQ(
      metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kUnsupportedMediaType),
      2u);
  EXPECT_EQ(metrics_.rejected(Signal::kLogs, Transport::kHttp, RejectReason::kUnsupportedMediaType),
            1u);
}

TEST_F(OtlpHttpTest, UnknownPathIs404AndOtherMethodsAre405) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  HttpAnswer unknown = Post("/v1/profiles", "{}", {kJson, kAuth});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(unknown.body, HasSubstr("/v1/traces"));
  HttpAnswer get = Curl({Url("/v1/metrics")});
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.Header("allow"), "POST");
  EXPECT_EQ(metrics_.rejected(Signal::kMetrics, Transport::kHttp, RejectReason::kInvalidArgument),
            1u);
}

TEST_F(OtlpHttpTest, OversizedBodyIs413BeforeItIsRead) {
  OtlpHttpOptions options = SmallOptions();
  options.http.max_body_bytes = 64 << 10;
  ASSERT_NO_FATAL_FAILURE(StartServer(options));
  const std::string big = testing::TracesJson(2000, 8);
  ASSERT_GT(big.size(), 64u << 10);
  HttpAnswer answer = Post("/v1/traces", big, {kJson, kAuth});
  EXPECT_EQ(answer.status, 413);
  EXPECT_THAT(answer.body, HasSubstr("65536"));
  // Without Content-Length (chunked), the limit holds as the body arrives.
  HttpAnswer chunked = Post("/v1/traces", big, {kJson, kAuth, "Transfer-Encoding: chunked"});
  EXPECT_EQ(chunked.status, 413);
  EXPECT_EQ(StoredRows(Signal::kTraces), 0u);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kBodyTooLarge), 2u);
  // The server still serves after refusing.
  EXPECT_EQ(Post("/v1/traces", testing::TracesJson(3, 9), {kJson, kAuth}).status, 200);
}

TEST_F(OtlpHttpTest, GzipBombIs413WithoutInflatingIt) {
  OtlpHttpOptions options = SmallOptions();
  options.max_decompressed_body_bytes = 1 << 20;
  ASSERT_NO_FATAL_FAILURE(StartServer(options));
  // 256 MiB of zeros in about 256 KiB; two copies to show members count
  // together.
  const std::string member = Gzip(std::string(128 << 20, '\0'), 9);
  const std::string bomb = member + member;
  ASSERT_LT(bomb.size(), 1u << 20);
  HttpAnswer answer = Post("/v1/traces", bomb, {kProtobuf, "Content-Encoding: gzip", kAuth});
  EXPECT_EQ(answer.status, 413);
  StatusBody status = ParseStatusBody(answer);
  EXPECT_EQ(status.code, static_cast<int>(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(status.message, HasSubstr("more than the limit of 1048576 bytes"));
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kBodyTooLarge), 1u);

  HttpAnswer corrupt =
      Post("/v1/traces", bomb.substr(0, 100), {kJson, "Content-Encoding: gzip", kAuth});
  EXPECT_EQ(corrupt.status, 400);
  EXPECT_THAT(ParseStatusBody(corrupt).message, HasSubstr("gzip body"));
}

TEST_F(OtlpHttpTest, GarbageIs400WithTheDecodersMessage) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string garbage = "\x0a\xff\xff\xff\x7f garbage";
  otlp::TraceBatch scratch;
  const absl::Status expected = otlp::DecodeTracesProto(garbage, &scratch);
  ASSERT_FALSE(expected.ok());
  HttpAnswer answer = Post("/v1/traces", garbage, {kProtobuf, kAuth});
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(answer.Header("content-type"), "application/x-protobuf");
  StatusBody status = ParseStatusBody(answer);
  EXPECT_EQ(status.code, static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(status.message, std::string(expected.message()));

  HttpAnswer json = Post("/v1/logs", R"({"resourceLogs":[{"scopeLogs":7}]})", {kJson, kAuth});
  EXPECT_EQ(json.status, 400);
  EXPECT_THAT(ParseStatusBody(json).message, HasSubstr("scope"));
  EXPECT_EQ(StoredRows(Signal::kTraces) + StoredRows(Signal::kLogs), 0u);
}

TEST_F(OtlpHttpTest, OverTheInflightBudgetIs429WithRetryAfter) {
  storage::StorageOptions storage_options;
  // One request fills the budget (a request larger than the whole budget is
  // admitted only when nothing else is in flight).
  storage_options.writer.inflight_bytes_limit = 1;
  ASSERT_NO_FATAL_FAILURE(StartServer(SmallOptions(), std::move(storage_options)));
  fs_.Close();
  auto first = std::async(std::launch::async, [&] {
    return Post("/v1/traces", testing::TracesJson(10, 10), {kJson, kAuth});
  });
  ASSERT_TRUE(fs_.WaitUntilHeld(std::chrono::seconds(30)));
  HttpAnswer refused = Post("/v1/traces", JsonToProto(Signal::kTraces, testing::TracesJson(10, 11)),
                            {kProtobuf, kAuth});
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.Header("retry-after"), "1");
  EXPECT_EQ(ParseStatusBody(refused).code, static_cast<int>(absl::StatusCode::kResourceExhausted));
  fs_.Open();
  HttpAnswer answered = first.get();
  EXPECT_EQ(answered.status, 200) << answered.body;
  EXPECT_EQ(StoredRows(Signal::kTraces), 10u);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kOverBudget), 1u);
}

TEST_F(OtlpHttpTest, ShutdownStorageIs503WithRetryAfter) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  storage_->Shutdown(std::chrono::seconds(1));
  HttpAnswer answer = Post("/v1/metrics", testing::MetricsJson(3, 12), {kJson, kAuth});
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(answer.Header("retry-after"), "5");
  EXPECT_EQ(ParseStatusBody(answer).code, static_cast<int>(absl::StatusCode::kUnavailable));
}

// ---------------------------------------------------------------------------
// Connections, deadlines, shutdown

TEST_F(OtlpHttpTest, HoldsAThousandKeepAliveConnectionsAndServesEachAgain) {
  constexpr int kConnections = 1000;
  absl::StatusOr<uint64_t> limit = RaiseOpenFileLimit(4 * kConnections + 256);
  ASSERT_TRUE(limit.ok()) << limit.status();
  ASSERT_GE(*limit, 2u * kConnections + 128) << "RLIMIT_NOFILE too low for this test";
  OtlpHttpOptions options = SmallOptions();
  options.http.io_threads = 1;  // one thread serves them all
  ASSERT_NO_FATAL_FAILURE(StartServer(options));

  std::vector<std::unique_ptr<RawConnection>> connections;
  for (int i = 0; i < kConnections; ++i) {
    connections.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(connections.back()->connected())
        << i << ": " << std::strerror(connections.back()->error());
    ASSERT_TRUE(connections.back()->Send(RawPost("/v1/traces", "application/json", kEmptyExport)));
  }
  for (int i = 0; i < kConnections; ++i) {
    std::optional<HttpAnswer> answer = connections[i]->ReadAnswer(kWait);
    ASSERT_TRUE(answer.has_value()) << "connection " << i;
    ASSERT_EQ(answer->status, 200) << "connection " << i << ": " << answer->body;
    ASSERT_EQ(answer->Header("connection"), "") << "keep-alive is HTTP/1.1's default";
  }
  // All of them are open at once, and each is served once more.
  EXPECT_EQ(server_->GetStats().open_connections, kConnections);
  EXPECT_THAT(metrics_.RenderPrometheus(storage_->WriterStats()),
              HasSubstr("\nstrata_http_connections 1000\n"));
  for (int i = 0; i < kConnections; ++i) {
    ASSERT_TRUE(connections[i]->Send(
        RawPost("/v1/logs", "application/json", testing::LogsJson(1, static_cast<uint64_t>(i)))));
  }
  for (int i = 0; i < kConnections; ++i) {
    std::optional<HttpAnswer> answer = connections[i]->ReadAnswer(kWait);
    ASSERT_TRUE(answer.has_value()) << "connection " << i;
    ASSERT_EQ(answer->status, 200) << "connection " << i << ": " << answer->body;
  }
  EXPECT_EQ(StoredRows(Signal::kLogs), static_cast<uint64_t>(kConnections));
  EXPECT_EQ(server_->GetStats().connections_accepted, static_cast<uint64_t>(kConnections));
}

TEST_F(OtlpHttpTest, StalledClientsDoNotHoldTheServerAndAreClosedAtTheirDeadline) {
  OtlpHttpOptions options = SmallOptions();
  options.http.io_threads = 1;
  options.http.header_timeout = std::chrono::milliseconds(1500);
  options.http.read_timeout = std::chrono::milliseconds(1500);
  ASSERT_NO_FATAL_FAILURE(StartServer(options));

  const auto start = std::chrono::steady_clock::now();
  RawConnection half_header(server_->port());
  ASSERT_TRUE(half_header.Send("POST /v1/traces HTTP/1.1\r\nHost: test\r\nContent-Ty"));
  RawConnection half_body(server_->port());
  ASSERT_TRUE(half_body.Send(fmt::format(
      "POST /v1/traces HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n{}\r\n"
      "Content-Length: 1000\r\n\r\n{{\"resourceSpans\":[",
      kAuth)));

  // Meanwhile the one io thread serves everyone else.
  HttpAnswer served = Post("/v1/traces", testing::TracesJson(4, 13), {kJson, kAuth});
  EXPECT_EQ(served.status, 200) << served.body;
  RawConnection other(server_->port());
  ASSERT_TRUE(other.Send(RawPost("/v1/traces", "application/json", kEmptyExport)));
  std::optional<HttpAnswer> answer = other.ReadAnswer(kWait);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 200);
  ASSERT_TRUE(half_header.LooksOpen()) << "served while the stalled clients were connected";
  ASSERT_TRUE(half_body.LooksOpen());

  // Each stalled client is disconnected by its deadline, not before.
  EXPECT_TRUE(half_header.WaitClosed(kWait));
  EXPECT_GE(std::chrono::steady_clock::now() - start, options.http.header_timeout);
  EXPECT_TRUE(half_body.WaitClosed(kWait));
  EXPECT_TRUE(Eventually([&] { return server_->GetStats().timeouts == 2; }))
      << server_->GetStats().timeouts;
  EXPECT_TRUE(Eventually([&] {
    return metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kDeadlineExceeded) ==
           2;
  }));
  EXPECT_TRUE(other.LooksOpen()) << "a kept-alive connection is not a stalled one";
}

TEST_F(OtlpHttpTest, BodiesOverTheServerWideBudgetAre429BeforeTheyAreRead) {
  OtlpHttpOptions options = SmallOptions();
  options.http.max_inflight_body_bytes = 100 << 10;
  ASSERT_NO_FATAL_FAILURE(StartServer(options));
  const std::string first_body = testing::TracesJson(250, 16);
  const std::string second_body = testing::TracesJson(250, 17);
  ASSERT_GT(first_body.size(), 50u << 10);
  ASSERT_LT(first_body.size(), 100u << 10);

  // The first request's header is read (the server answers 100 Continue
  // once its body has a reservation); its body has not been sent yet.
  RawConnection first(server_->port());
  ASSERT_TRUE(first.Send(
      fmt::format("POST /v1/traces HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n{}\r\n"
                  "Expect: 100-continue\r\nContent-Length: {}\r\n\r\n",
                  kAuth, first_body.size())));
  std::optional<HttpAnswer> go_on = first.ReadAnswer(kWait);
  ASSERT_TRUE(go_on.has_value());
  ASSERT_EQ(go_on->status, 100);
  EXPECT_EQ(server_->GetStats().body_bytes_reserved, first_body.size());

  RawConnection second(server_->port());
  ASSERT_TRUE(second.Send(RawPost("/v1/traces", "application/json", second_body)));
  std::optional<HttpAnswer> busy = second.ReadAnswer(kWait);
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->status, 429);
  EXPECT_EQ(busy->Header("retry-after"), "1");
  EXPECT_TRUE(second.WaitClosed(kWait));
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kOverBudget), 1u);

  ASSERT_TRUE(first.Send(first_body));
  std::optional<HttpAnswer> stored = first.ReadAnswer(kWait);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->status, 200) << stored->body;
  EXPECT_EQ(server_->GetStats().body_bytes_reserved, 0u);
  EXPECT_EQ(Post("/v1/traces", second_body, {kJson, kAuth}).status, 200);
  EXPECT_EQ(StoredRows(Signal::kTraces), 500u);
}

TEST_F(OtlpHttpTest, IdleKeepAliveConnectionIsClosedAfterIdleTimeout) {
  OtlpHttpOptions options = SmallOptions();
  options.http.idle_timeout = std::chrono::milliseconds(300);
  ASSERT_NO_FATAL_FAILURE(StartServer(options));
  RawConnection connection(server_->port());
  // The server's idle timer starts after it answered, so after this.
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(connection.Send(RawPost("/v1/traces", "application/json", kEmptyExport)));
  ASSERT_TRUE(connection.ReadAnswer(kWait).has_value());
  EXPECT_TRUE(connection.WaitClosed(kWait));
  EXPECT_GE(std::chrono::steady_clock::now() - sent, options.http.idle_timeout);
}

TEST_F(OtlpHttpTest, ConnectionsOverTheCapAreRefusedWith503) {
  OtlpHttpOptions options = SmallOptions();
  options.http.max_connections = 2;
  ASSERT_NO_FATAL_FAILURE(StartServer(options));
  std::vector<std::unique_ptr<RawConnection>> open;
  for (int i = 0; i < 2; ++i) {
    open.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(open.back()->Send(RawPost("/v1/traces", "application/json", kEmptyExport)));
    ASSERT_TRUE(open.back()->ReadAnswer(kWait).has_value());
  }
  RawConnection third(server_->port());
  ASSERT_TRUE(third.connected());
  std::optional<HttpAnswer> refused = third.ReadAnswer(kWait);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->Header("retry-after"), "1");
  EXPECT_THAT(refused->body, HasSubstr("too many open connections"));
  EXPECT_TRUE(third.WaitClosed(kWait));
  EXPECT_EQ(server_->GetStats().connections_refused, 1u);

  // Once one closes, a new one is served.
  open.pop_back();
  ASSERT_TRUE(Eventually([&] { return server_->GetStats().open_connections == 1; }));
  RawConnection fourth(server_->port());
  ASSERT_TRUE(fourth.Send(RawPost("/v1/traces", "application/json", kEmptyExport)));
  std::optional<HttpAnswer> served = fourth.ReadAnswer(kWait);
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status, 200);
}

TEST_F(OtlpHttpTest, ShutdownFinishesInFlightRequestsAndClosesIdleConnections) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  RawConnection idle(server_->port());
  ASSERT_TRUE(idle.Send(RawPost("/v1/traces", "application/json", kEmptyExport)));
  ASSERT_TRUE(idle.ReadAnswer(kWait).has_value());

  fs_.Close();
  RawConnection in_flight(server_->port());
  ASSERT_TRUE(
      in_flight.Send(RawPost("/v1/traces", "application/json", testing::TracesJson(7, 14))));
  ASSERT_TRUE(fs_.WaitUntilHeld(std::chrono::seconds(30)));

  server_->StopAccepting();
  RawConnection late(server_->port());
  EXPECT_FALSE(late.connected());
  EXPECT_EQ(late.error(), ECONNREFUSED);

  std::thread shutdown([&] { server_->Shutdown(std::chrono::seconds(30)); });
  EXPECT_TRUE(idle.WaitClosed(kWait)) << "idle keep-alive connections close at once";
  EXPECT_TRUE(in_flight.LooksOpen());
  fs_.Open();
  std::optional<HttpAnswer> answer = in_flight.ReadAnswer(kWait);
  shutdown.join();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 200) << answer->body;
  EXPECT_EQ(answer->Header("connection"), "close");
  EXPECT_EQ(StoredRows(Signal::kTraces), 7u);
  EXPECT_TRUE(in_flight.WaitClosed(kWait));
  EXPECT_EQ(server_->GetStats().open_connections, 0) << "Shutdown() returned";
}

TEST_F(OtlpHttpTest, AnUploadStillArrivingAtTheDrainDeadlineIsAnswered503WithConnectionClose) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  RawConnection slow(server_->port());
  ASSERT_TRUE(slow.Send(fmt::format(
      "POST /v1/traces HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n{}\r\n"
      "Content-Length: 900000\r\n\r\n{{\"resourceSpans\":[",
      kAuth)));
  // The header was read: the request is being received, not idle.
  ASSERT_TRUE(Eventually([&] { return server_->GetStats().requests == 1; }));

  const auto drain = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  std::thread shutdown([&] { server_->Shutdown(drain); });
  std::optional<HttpAnswer> answer = slow.ReadAnswer(kWait);
  const auto answered = std::chrono::steady_clock::now() - start;
  shutdown.join();
  const auto returned = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(answer.has_value()) << "the connection was closed without an answer";
  EXPECT_EQ(answer->status, 503) << answer->body;
  EXPECT_EQ(answer->Header("connection"), "close");
  EXPECT_EQ(answer->Header("retry-after"), "5");
  EXPECT_THAT(answer->body, HasSubstr("shutting down"));
  EXPECT_GE(answered, drain) << "the upload may still finish until the drain deadline";
  EXPECT_LT(returned, drain + std::chrono::seconds(1));
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kUnavailable), 1u);
}

// ---------------------------------------------------------------------------
// The generic server and router

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options, HttpHandler handler) {
    options.address = "127.0.0.1:0";
    auto server = HttpServer::Start(std::move(options), std::move(handler));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  std::string Url(std::string_view path) const {
    return fmt::format("http://127.0.0.1:{}{}", server_->port(), path);
  }

  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, HealthRoutesAnswerAndReadinessFollowsTheCallback) {
  std::atomic<bool> ready{false};
  HttpRouter router;
  AddHealthRoutes(&router, HealthChecks{
                               .ready =
                                   [&] {
                                     return ready.load() ? absl::OkStatus()
                                                         : absl::UnavailableError(
                                                               "recovering the data directory");
                                   },
                               .metrics_text = [] { return std::string("strata_up 1\n"); },
                           });
  ASSERT_NO_FATAL_FAILURE(Start({}, std::move(router).ToHandler()));
  HttpAnswer health = Curl({Url("/healthz")});
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  HttpAnswer not_ready = Curl({Url("/readyz")});
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_THAT(not_ready.body, HasSubstr("recovering the data directory"));
  ready = true;
  EXPECT_EQ(Curl({Url("/readyz")}).status, 200);
  HttpAnswer metrics = Curl({Url("/metrics")});
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics.body, "strata_up 1\n");
  EXPECT_EQ(Curl({Url("/nope")}).status, 404);
  HttpAnswer post = Curl({"-X", "POST", Url("/healthz")});
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.Header("allow"), "GET");
}

TEST_F(OtlpHttpTest, MetricsPageShowsHttpIngest) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_EQ(Post("/v1/traces", testing::TracesJson(6, 15), {kJson, kAuth}).status, 200);
  HttpRouter router;
  AddHealthRoutes(&router, HealthChecks{.metrics_text = [this] {
    return metrics_.RenderPrometheus(storage_->WriterStats());
  }});
  auto api =
      HttpServer::Start(HttpServerOptions{.address = "127.0.0.1:0"}, std::move(router).ToHandler());
  ASSERT_TRUE(api.ok()) << api.status();
  HttpAnswer page = Curl({fmt::format("http://127.0.0.1:{}/metrics", (*api)->port())});
  EXPECT_EQ(page.status, 200);
  EXPECT_THAT(page.body, HasSubstr("strata_ingest_rows_total"));
  EXPECT_THAT(page.body, HasSubstr("transport=\"http\""));
}

TEST_F(HttpServerTest, RouterPrefersExactPathsThenLongestPrefix) {
  HttpRouter router;
  auto reply = [](std::string text) {
    return [text](HttpRequest request, HttpResponder responder) {
      responder.Respond(HttpResponse::Text(200, text + " " + std::string(request.query())));
    };
  };
  router.Add("GET", "/api/v1/traces", reply("list"));
  router.AddPrefix("GET", "/api/v1/", reply("api"));
  router.AddPrefix("GET", "/api/v1/traces/", reply("trace"));
  router.AddPrefix("DELETE", "/api/v1/traces/", reply("delete"));
  ASSERT_NO_FATAL_FAILURE(Start({}, std::move(router).ToHandler()));
  EXPECT_EQ(Curl({Url("/api/v1/traces?limit=5")}).body, "list limit=5");
  EXPECT_EQ(Curl({Url("/api/v1/traces/abc")}).body, "trace ");
  EXPECT_EQ(Curl({Url("/api/v1/services")}).body, "api ");
  EXPECT_EQ(Curl({"-X", "DELETE", Url("/api/v1/traces/abc")}).body, "delete ");
  HttpAnswer put = Curl({"-X", "PUT", Url("/api/v1/traces/abc")});
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(put.Header("allow"), "GET, DELETE");
  EXPECT_EQ(Curl({Url("/other")}).status, 404);
}

TEST_F(HttpServerTest, MountSendsEveryMethodToTheInnerRouterWhichAllowsExactlyItsOwn) {
  HttpRouter inner;
  auto reply = [](std::string text) {
    return [text](HttpRequest, HttpResponder responder) {
      responder.Respond(HttpResponse::Text(200, text));
    };
  };
  inner.Add("GET", "/api/v1/traces", reply("search"));
  inner.AddPrefix("GET", "/api/v1/traces/", reply("trace"));
  inner.Add("POST", "/api/v1/sql", reply("sql"));
  HttpRouter outer;
  AddHealthRoutes(&outer, HealthChecks{});
  outer.Mount("/api/", std::move(inner).ToHandler());
  ASSERT_NO_FATAL_FAILURE(Start({}, std::move(outer).ToHandler()));

  EXPECT_EQ(Curl({Url("/api/v1/traces")}).body, "search");
  EXPECT_EQ(Curl({"-X", "POST", Url("/api/v1/sql")}).body, "sql");
  for (const char* method : {"OPTIONS", "PUT", "DELETE", "POST", "PATCH"}) {
    for (const char* path : {"/api/v1/traces", "/api/v1/traces/abc"}) {
      HttpAnswer answer = Curl({"-X", method, Url(path)});
      EXPECT_EQ(answer.status, 405) << method << " " << path;
      EXPECT_EQ(answer.Header("allow"), "GET") << method << " " << path;
    }
  }
  HttpAnswer get_sql = Curl({Url("/api/v1/sql")});
  EXPECT_EQ(get_sql.status, 405);
  EXPECT_EQ(get_sql.Header("allow"), "POST");
  EXPECT_EQ(Curl({"-X", "DELETE", Url("/api/v1/nothing")}).status, 404);
  HttpAnswer post_health = Curl({"-X", "POST", Url("/healthz")});
  EXPECT_EQ(post_health.status, 405);
  EXPECT_EQ(post_health.Header("allow"), "GET");
}

TEST_F(HttpServerTest, ARequestUnansweredAtTheDrainDeadlineIsAnswered503AndItsLateAnswerDropped) {
  Mutex mu;
  std::vector<HttpResponder> parked;  // guarded by mu
  HttpServerOptions options;
  options.shutdown_retry_after = std::chrono::seconds(2);
  ASSERT_NO_FATAL_FAILURE(Start(options, [&](HttpRequest, HttpResponder responder) {
    MutexLock lock(&mu);
    parked.push_back(std::move(responder));
  }));
  RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(&mu);
    return parked.size() == 1;
  }));
  const auto drain = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  std::thread shutdown([&] { server_->Shutdown(drain); });
  std::optional<HttpAnswer> answer = connection.ReadAnswer(kWait);
  shutdown.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, drain + std::chrono::seconds(1));
  ASSERT_TRUE(answer.has_value()) << "the connection was closed without an answer";
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->Header("connection"), "close");
  EXPECT_EQ(answer->Header("retry-after"), "2");
  EXPECT_TRUE(connection.WaitClosed(kWait));
  MutexLock lock(&mu);
  EXPECT_FALSE(parked[0].Respond(HttpResponse::Text(200, "too late")));
}

TEST_F(HttpServerTest, AnswersFromOtherThreadsLateAnswersAndDroppedRequests) {
  Mutex mu;
  std::vector<HttpResponder> parked;  // guarded by mu
  std::vector<std::thread> threads;
  HttpServerOptions options;
  options.request_timeout = std::chrono::milliseconds(300);
  ASSERT_NO_FATAL_FAILURE(Start(options, [&](HttpRequest request, HttpResponder responder) {
    if (request.path() == "/later") {
      // Answered from another thread.
      MutexLock lock(&mu);
      threads.emplace_back([responder = std::move(responder)]() mutable {
        responder.Respond(HttpResponse::Text(202, "from another thread"));
      });
    } else if (request.path() == "/hang") {
      MutexLock lock(&mu);
      parked.push_back(std::move(responder));
    } else if (request.path() == "/drop") {
      // The responder is destroyed unanswered.
    } else {
      responder.Respond(HttpResponse::Text(200, "ok"));
    }
  }));
  RawConnection connection(server_->port());
  auto get = [&](std::string_view path) {
    EXPECT_TRUE(connection.Send(fmt::format("GET {} HTTP/1.1\r\nHost: t\r\n\r\n", path)));
    return connection.ReadAnswer(kWait).value_or(HttpAnswer{});
  };
  EXPECT_EQ(get("/later").status, 202);
  EXPECT_EQ(get("/drop").status, 500);
  HttpAnswer deadline = get("/hang");
  EXPECT_EQ(deadline.status, 504);
  {
    // The late answer is not taken for the next request's.
    MutexLock lock(&mu);
    ASSERT_EQ(parked.size(), 1u);
    parked[0].Respond(HttpResponse::Text(299, "late"));
  }
  HttpAnswer next = get("/ok");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "ok");
  // Two pipelined requests are answered in order.
  ASSERT_TRUE(
      connection.Send("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /later HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(connection.ReadAnswer(kWait).value_or(HttpAnswer{}).status, 200);
  EXPECT_EQ(connection.ReadAnswer(kWait).value_or(HttpAnswer{}).status, 202);
  server_->Shutdown(std::chrono::seconds(1));
  MutexLock lock(&mu);
  for (std::thread& thread : threads) thread.join();
  // Answering after shutdown is refused, not a crash.
  EXPECT_FALSE(parked[0].Respond(HttpResponse::Text(200, "too late")));
}

TEST_F(HttpServerTest, OversizedHeaderIs431AndMalformedRequestIs400) {
  HttpServerOptions options;
  options.max_header_bytes = 4096;
  ASSERT_NO_FATAL_FAILURE(Start(options, [](HttpRequest, HttpResponder responder) {
    responder.Respond(HttpResponse::Text(200, "ok"));
  }));
  RawConnection big(server_->port());
  ASSERT_TRUE(
      big.Send("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(8192, 'a') + "\r\n\r\n"));
  std::optional<HttpAnswer> answer = big.ReadAnswer(kWait);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 431);
  EXPECT_EQ(answer->Header("connection"), "close");
  EXPECT_TRUE(big.WaitClosed(kWait));

  RawConnection garbage(server_->port());
  ASSERT_TRUE(garbage.Send("HELLO\x01 there\r\n\r\n"));
  answer = garbage.ReadAnswer(kWait);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 400);
  EXPECT_THAT(answer->body, StartsWith("malformed HTTP request"));
  EXPECT_TRUE(garbage.WaitClosed(kWait));
}

TEST(HttpServerStartTest, AddressInUseAndMalformedAddressAreRefused) {
  auto first = HttpServer::Start(HttpServerOptions{.address = "127.0.0.1:0"},
                                 [](HttpRequest, HttpResponder) {});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second =
      HttpServer::Start(HttpServerOptions{.address = fmt::format("127.0.0.1:{}", (*first)->port())},
                        [](HttpRequest, HttpResponder) {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("in use"));
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("docs/operations.md#cannot-listen"));
  auto malformed = HttpServer::Start(HttpServerOptions{.address = "nonsense"},
                                     [](HttpRequest, HttpResponder) {});
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  auto all_interfaces =
      HttpServer::Start(HttpServerOptions{.address = ":0"}, [](HttpRequest, HttpResponder) {});
  ASSERT_TRUE(all_interfaces.ok()) << all_interfaces.status();
  EXPECT_NE((*all_interfaces)->port(), 0);
}

}  // namespace
}  // namespace strata::server
