// NewHttpClient (otlp_client.h) against strata's OTLP/HTTP listener and
// against scripted servers, and the OTLP/HTTP codec it shares with the
// server (otlp_http_codec.h).

#include <future>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/gzip.h"
#include "server/http_adapter.h"
#include "server/http_testing.h"
#include "server/otlp_client.h"
#include "server/otlp_http_codec.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using testing::JsonToProto;
using testing::kToken;
using testing::PayloadJson;

constexpr auto kWait = std::chrono::seconds(30);

// Sends one export and waits for its reply.
ExportReply ExportAndWait(OtlpClient& client, Signal signal, std::string payload) {
  auto promise = std::make_shared<std::promise<ExportReply>>();
  std::future<ExportReply> future = promise->get_future();
  client.Export(signal, std::make_shared<const std::string>(std::move(payload)),
                [promise](ExportReply reply) { promise->set_value(std::move(reply)); });
  if (future.wait_for(kWait) != std::future_status::ready) {
    return ExportReply{.status = absl::InternalError("test: no reply")};
  }
  return future.get();
}

std::unique_ptr<OtlpClient> NewClient(OtlpClientOptions options) {
  absl::StatusOr<std::unique_ptr<OtlpClient>> client = NewHttpClient(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

using HttpClientTest = testing::OtlpHttpServerTest;

TEST_F(HttpClientTest, ExportsEverySignalInBothEncodingsWithAndWithoutGzip) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  uint64_t expected[3] = {0, 0, 0};
  uint64_t seed = 0;
  for (Encoding encoding : {Encoding::kProtobuf, Encoding::kJson}) {
    for (bool gzip : {false, true}) {
      auto client = NewClient({.target = Target(),
                               .token = kToken,
                               .encoding = encoding,
                               .gzip = gzip,
                               .connections = 3,
                               .threads = 2});
      ASSERT_NE(client, nullptr);
      // Many exports at once over three connections.
      std::vector<std::future<ExportReply>> replies;
      for (int i = 0; i < 12; ++i) {
        const Signal signal = static_cast<Signal>(i % 3);
        std::string payload = PayloadJson(signal, 10 + i, ++seed);
        if (encoding == Encoding::kProtobuf) payload = JsonToProto(signal, payload);
        if (gzip) payload = Gzip(payload);
        expected[i % 3] += 10 + i;
        auto promise = std::make_shared<std::promise<ExportReply>>();
        replies.push_back(promise->get_future());
        client->Export(signal, std::make_shared<const std::string>(std::move(payload)),
                       [promise](ExportReply reply) { promise->set_value(std::move(reply)); });
      }
      for (auto& reply : replies) {
        ASSERT_EQ(reply.wait_for(kWait), std::future_status::ready);
        ExportReply got = reply.get();
        EXPECT_TRUE(got.status.ok()) << got.status;
        EXPECT_EQ(got.rejected_rows, 0);
      }
    }
  }
  EXPECT_EQ(StoredRows(Signal::kTraces), expected[0]);
  EXPECT_EQ(StoredRows(Signal::kLogs), expected[1]);
  EXPECT_EQ(StoredRows(Signal::kMetrics), expected[2]);
  // Connections were kept alive: 4 clients of 3 connections at most.
  EXPECT_LE(server_->GetStats().connections_accepted, 12u);
}

TEST_F(HttpClientTest, RefusalsComeBackAsStatusCodesWithTheServersMessage) {
  OtlpHttpOptions options = SmallOptions();
  options.http.max_body_bytes = 64 << 10;
  storage::StorageOptions storage_options;
  storage_options.writer.inflight_bytes_limit = 1;
  ASSERT_NO_FATAL_FAILURE(StartServer(options, std::move(storage_options)));
  for (Encoding encoding : {Encoding::kProtobuf, Encoding::kJson}) {
    auto wrong_token = NewClient({.target = Target(), .token = "nope", .encoding = encoding});
    ExportReply unauthenticated =
        ExportAndWait(*wrong_token, Signal::kLogs, PayloadJson(Signal::kLogs, 1, 1));
    EXPECT_EQ(unauthenticated.status.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(std::string(unauthenticated.status.message()), HasSubstr("unknown or revoked"));

    auto client = NewClient({.target = Target(), .token = kToken, .encoding = encoding});
    const std::string garbage = "\x0a\x05xx";
    otlp::TraceBatch scratch;
    const absl::Status decoder = encoding == Encoding::kProtobuf
                                     ? otlp::DecodeTracesProto(garbage, &scratch)
                                     : otlp::DecodeTracesJson(garbage, &scratch);
    ASSERT_FALSE(decoder.ok());
    ExportReply invalid = ExportAndWait(*client, Signal::kTraces, garbage);
    EXPECT_EQ(invalid.status, decoder) << "the decoder's own message";

    ExportReply too_large = ExportAndWait(*client, Signal::kTraces, std::string(100 << 10, 'x'));
    EXPECT_EQ(too_large.status.code(), absl::StatusCode::kOutOfRange) << too_large.status;

    auto gzip_claims =
        NewClient({.target = Target(), .token = kToken, .encoding = encoding, .gzip = true});
    ExportReply not_gzip = ExportAndWait(*gzip_claims, Signal::kTraces, "plain");
    EXPECT_EQ(not_gzip.status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(not_gzip.status.message()), HasSubstr("gzip body"));
  }

  // 429 with Retry-After while a commit holds the whole budget.
  auto client = NewClient({.target = Target(), .token = kToken, .encoding = Encoding::kJson});
  fs_.Close();
  auto first = std::async(std::launch::async, [&] {
    return ExportAndWait(*client, Signal::kTraces, PayloadJson(Signal::kTraces, 5, 2));
  });
  ASSERT_TRUE(fs_.WaitUntilHeld(std::chrono::seconds(30)));
  ExportReply over = ExportAndWait(*client, Signal::kTraces, PayloadJson(Signal::kTraces, 5, 3));
  EXPECT_EQ(over.status.code(), absl::StatusCode::kResourceExhausted) << over.status;
  EXPECT_EQ(over.retry_after, std::chrono::seconds(1));
  fs_.Open();
  EXPECT_TRUE(first.get().status.ok());

  // 503 with Retry-After once storage shut down.
  storage_->Shutdown(std::chrono::seconds(1));
  ExportReply unavailable =
      ExportAndWait(*client, Signal::kTraces, PayloadJson(Signal::kTraces, 5, 4));
  EXPECT_EQ(unavailable.status.code(), absl::StatusCode::kUnavailable) << unavailable.status;
  EXPECT_EQ(unavailable.retry_after, std::chrono::seconds(5));
}

TEST_F(HttpClientTest, ReconnectsAfterTheServerClosedAnIdleConnection) {
  OtlpHttpOptions options = SmallOptions();
  options.http.idle_timeout = std::chrono::milliseconds(100);
  ASSERT_NO_FATAL_FAILURE(StartServer(options));
  auto client = NewClient(
      {.target = Target(), .token = kToken, .encoding = Encoding::kJson, .connections = 1});
  for (int i = 0; i < 3; ++i) {
    ExportReply reply = ExportAndWait(*client, Signal::kLogs, PayloadJson(Signal::kLogs, 2, i));
    ASSERT_TRUE(reply.status.ok()) << reply.status;
    // The server drops the idle connection before the next export.
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (server_->GetStats().open_connections > 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(server_->GetStats().open_connections, 0);
  }
  EXPECT_EQ(StoredRows(Signal::kLogs), 6u);
  EXPECT_EQ(server_->GetStats().connections_accepted, 3u);
}

TEST(HttpClientScriptedTest, ReadsPartialSuccessInBothEncodings) {
  auto server = HttpServer::Start(
      HttpServerOptions{.address = "127.0.0.1:0"},
      [](HttpRequest request, HttpResponder responder) {
        HttpResponse response;
        response.content_type = std::string(request.Header("Content-Type"));
        if (response.content_type == "application/json") {
          response.body = R"({"partialSuccess":{"rejectedLogRecords":"7","errorMessage":"x"}})";
        } else {
          // partial_success { rejected_spans: 9, error_message: "x" }
          response.body = std::string("\x0a\x05\x08\x09\x12\x01x", 7);
        }
        responder.Respond(std::move(response));
      });
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string target = fmt::format("127.0.0.1:{}", (*server)->port());
  auto json = NewClient({.target = target, .encoding = Encoding::kJson});
  ExportReply from_json = ExportAndWait(*json, Signal::kLogs, "{}");
  EXPECT_TRUE(from_json.status.ok()) << from_json.status;
  EXPECT_EQ(from_json.rejected_rows, 7);
  auto proto = NewClient({.target = target, .encoding = Encoding::kProtobuf});
  ExportReply from_proto = ExportAndWait(*proto, Signal::kTraces, "");
  EXPECT_TRUE(from_proto.status.ok()) << from_proto.status;
  EXPECT_EQ(from_proto.rejected_rows, 9);
}

TEST(HttpClientScriptedTest, NoAnswerIsDeadlineExceededAndNoServerIsUnavailable) {
  Mutex mu;
  std::vector<HttpResponder> parked;  // guarded by mu; never answered
  auto server = HttpServer::Start(HttpServerOptions{.address = "127.0.0.1:0"},
                                  [&](HttpRequest, HttpResponder responder) {
                                    MutexLock lock(&mu);
                                    parked.push_back(std::move(responder));
                                  });
  ASSERT_TRUE(server.ok()) << server.status();
  const uint16_t port = (*server)->port();
  {
    auto client = NewClient(
        {.target = fmt::format("127.0.0.1:{}", port), .timeout = std::chrono::milliseconds(200)});
    const auto start = std::chrono::steady_clock::now();
    ExportReply reply = ExportAndWait(*client, Signal::kTraces, "");
    EXPECT_EQ(reply.status.code(), absl::StatusCode::kDeadlineExceeded) << reply.status;
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  }
  (*server)->Shutdown(std::chrono::seconds(1));
  {
    MutexLock lock(&mu);
    parked.clear();
  }
  // Nothing listens on the port any more.
  auto client = NewClient({.target = fmt::format("127.0.0.1:{}", port)});
  ExportReply refused = ExportAndWait(*client, Signal::kMetrics, "");
  EXPECT_EQ(refused.status.code(), absl::StatusCode::kUnavailable) << refused.status;
  EXPECT_THAT(std::string(refused.status.message()), HasSubstr("connect"));
}

TEST(HttpClientScriptedTest, DestroyingTheClientAnswersEveryOutstandingExport) {
  Mutex mu;
  std::vector<HttpResponder> parked;  // guarded by mu
  auto server = HttpServer::Start(HttpServerOptions{.address = "127.0.0.1:0"},
                                  [&](HttpRequest, HttpResponder responder) {
                                    MutexLock lock(&mu);
                                    parked.push_back(std::move(responder));
                                  });
  ASSERT_TRUE(server.ok()) << server.status();
  std::atomic<int> answered{0};
  std::atomic<int> unavailable{0};
  {
    auto client =
        NewClient({.target = fmt::format("127.0.0.1:{}", (*server)->port()), .connections = 2});
    for (int i = 0; i < 10; ++i) {
      client->Export(Signal::kTraces, std::make_shared<const std::string>(""),
                     [&](ExportReply reply) {
                       if (reply.status.code() == absl::StatusCode::kUnavailable) ++unavailable;
                       ++answered;
                     });
    }
  }
  EXPECT_EQ(answered.load(), 10);
  EXPECT_EQ(unavailable.load(), 10);
  (*server)->Shutdown(std::chrono::seconds(1));
}

TEST(HttpClientOptionsTest, MalformedTargetsAreRefused) {
  EXPECT_EQ(NewHttpClient({.target = "no-port"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(NewHttpClient({.target = "127.0.0.1:0"}).ok());
}

// ---------------------------------------------------------------------------
// otlp_http_codec.h

TEST(OtlpHttpCodecTest, ContentTypesIgnoreParametersAndCase) {
  EXPECT_EQ(EncodingForContentType("application/x-protobuf"), Encoding::kProtobuf);
  EXPECT_EQ(EncodingForContentType(" Application/JSON ; charset=utf-8"), Encoding::kJson);
  EXPECT_EQ(EncodingForContentType("application/protobuf"), std::nullopt);
  EXPECT_EQ(EncodingForContentType(""), std::nullopt);
}

TEST(OtlpHttpCodecTest, StatusBodiesRoundTripThroughTheClientsReader) {
  const absl::Status status = absl::InvalidArgumentError(
      "resource_spans[0]: \"bad\"\tvalue \\ \xc3\xa9 \xf0\x9f\x98\x80 \x01");
  for (Encoding encoding : {Encoding::kProtobuf, Encoding::kJson}) {
    const std::string body = EncodeStatusBody(encoding, status);
    ExportReply reply = ParseExportReply(Signal::kTraces, 400, ContentTypeFor(encoding), "", body);
    EXPECT_EQ(reply.status, status) << body;
  }
  EXPECT_EQ(EncodeStatusBody(Encoding::kJson, absl::UnavailableError("down")),
            R"({"code":14,"message":"down"})");
}

TEST(OtlpHttpCodecTest, AnswersMapToCodesAndRetryAfter) {
  struct Case {
    int status;
    absl::StatusCode code;
  };
  for (const Case& c : std::initializer_list<Case>{
           {400, absl::StatusCode::kInvalidArgument},
           {401, absl::StatusCode::kUnauthenticated},
           {403, absl::StatusCode::kPermissionDenied},
           {413, absl::StatusCode::kOutOfRange},
           {415, absl::StatusCode::kFailedPrecondition},
           {429, absl::StatusCode::kResourceExhausted},
           {503, absl::StatusCode::kUnavailable},
           {504, absl::StatusCode::kDeadlineExceeded},
           {500, absl::StatusCode::kInternal},
           {418, absl::StatusCode::kUnknown},
       }) {
    EXPECT_EQ(CodeForHttpStatus(c.status), c.code) << c.status;
    if (c.status != 418) {
      EXPECT_EQ(HttpStatusFor(c.code), c.status);
    }
    ExportReply reply = ParseExportReply(Signal::kLogs, c.status, "text/plain", " 7 ", "why\n");
    EXPECT_EQ(reply.status.code(), c.code);
    EXPECT_EQ(reply.status.message(), "why");
    EXPECT_EQ(reply.retry_after, std::chrono::seconds(7));
  }
  ExportReply empty = ParseExportReply(Signal::kLogs, 502, "", "Wed, 21 Oct 2015 07:28:00 GMT", "");
  EXPECT_EQ(empty.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(empty.status.message(), "HTTP status 502");
  EXPECT_EQ(empty.retry_after, std::chrono::seconds(0));
  ExportReply metrics = ParseExportReply(Signal::kMetrics, 200, "application/json", "",
                                         R"({"partialSuccess":{"rejectedDataPoints":3}})");
  EXPECT_TRUE(metrics.status.ok());
  EXPECT_EQ(metrics.rejected_rows, 3);
}

}  // namespace
}  // namespace strata::server
