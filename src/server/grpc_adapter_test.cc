// The OTLP/gRPC adapter against a real storage engine: exports of every
// signal stored before the OK, gzip inflated by the adapter under its limit,
// auth refusals that never reach storage, decoder errors, unknown methods,
// RetryInfo on over-budget and unavailable answers, message limits, client
// deadlines and graceful shutdown with calls in flight. Besides strata's own
// client (NewGrpcClient), calls are made with gRPC's protobuf call path and
// libprotobuf's generated OTLP classes, the way generated stubs do.
//
// Commits are held back deterministically with PublishGateFileSystem, which blocks
// the rename that publishes a batch until the test opens the gate.

#include "server/grpc_adapter.h"

#include <grpc/compression.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

#include <atomic>
#include <fstream>
#include <future>
#include <thread>

#include "common/mutex.h"
#include "gmock/gmock.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "server/gzip.h"
#include "server/ingest_metrics.h"
#include "server/otlp_client.h"
#include "server/partial_success_testing.h"
#include "server/testing/test_ca.h"
#include "server/tls_context.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kToken = "strata_good";
constexpr std::string_view kReadToken = "strata_read";
constexpr auto kWait = std::chrono::seconds(30);

absl::Status CheckToken(std::string_view token) {
  if (token == kToken) return absl::OkStatus();
  if (token == kReadToken) return absl::PermissionDeniedError("the token has read scope");
  return absl::UnauthenticatedError("unknown or revoked token");
}

// Polls `done` until it holds or `timeout` passes; for conditions another
// thread establishes without a notification the test can wait on.
template <typename Predicate>
bool WaitUntil(Predicate done, std::chrono::nanoseconds timeout = kWait) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// What a call made without strata's client saw.
struct RawReply {
  grpc::Status status;
  std::string response;
};

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Valid() || !buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

class GrpcAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {}

  void Start(storage::StorageOptions storage_options = {}, GrpcServerOptions grpc_options = {}) {
    auto opened = storage::Storage::Open(fs_, tmp_.path() + "/data", std::move(storage_options));
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = std::move(*opened);
    service_ =
        std::make_unique<IngestService>(*storage_, CheckToken, metrics_, IngestService::Options{});
    grpc_options.address = "127.0.0.1:0";
    auto server = GrpcServer::Start(*service_, grpc_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
  }

  void TearDown() override {
    fs_.Open();
    server_.reset();
    if (storage_) storage_->Shutdown(std::chrono::seconds(10));
    storage_.reset();
    service_.reset();
  }

  std::string Target() const { return "127.0.0.1:" + std::to_string(server_->port()); }

  std::unique_ptr<OtlpClient> Client(std::string token = std::string(kToken), bool gzip = false,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    auto client = NewGrpcClient(OtlpClientOptions{
        .target = Target(), .token = std::move(token), .gzip = gzip, .timeout = timeout});
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? std::move(*client) : nullptr;
  }

  static ExportReply Send(OtlpClient& client, Signal signal, std::string payload) {
    std::promise<ExportReply> answered;
    client.Export(signal, std::make_shared<const std::string>(std::move(payload)),
                  [&answered](ExportReply reply) { answered.set_value(std::move(reply)); });
    return answered.get_future().get();
  }

  // A call through gRPC's generic stub with full control of the method,
  // metadata and compression.
  RawReply RawCall(const std::string& method, const std::string& message,
                   const std::string& authorization = "Bearer " + std::string(kToken),
                   grpc_compression_algorithm compression = GRPC_COMPRESS_NONE) {
    auto channel = grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kWait);
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    if (compression != GRPC_COMPRESS_NONE) context.set_compression_algorithm(compression);
    grpc::Slice slice(message);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status status) { done.set_value(std::move(status)); });
    RawReply reply;
    reply.status = done.get_future().get();
    reply.response = Flatten(response);
    return reply;
  }

  struct Stored {
    uint64_t spans = 0, logs = 0, points = 0;
  };
  Stored StoredRows() const {
    Stored stored;
    std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    for (const auto& batch : snapshot->batches()) {
      stored.spans += batch->meta().spans.rows;
      stored.logs += batch->meta().logs.rows;
      stored.points += batch->meta().metrics.rows;
    }
    return stored;
  }

  // Whether `id` is in a published batch (through the batch filters and
  // trace indexes).
  bool TraceStored(const otlp::TraceId& id) {
    std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    for (const auto& batch : snapshot->batches()) {
      const storage::TraceFilter* filter = storage::BatchTraceFilter(*batch);
      if (filter == nullptr || !filter->MayContain(id)) continue;
      auto index = fs_.NewRandomAccessFile(batch->dir() + "/spans.tidx");
      if (!index.ok()) continue;
      auto location = filter->Find(**index, id);
      if (location.ok() && location->has_value()) return true;
    }
    return false;
  }

  void ExpectStoredSpans(uint64_t spans) { EXPECT_EQ(StoredRows().spans, spans); }

  // The writer saw nothing at all.
  void ExpectStorageUntouched() {
    storage::GroupCommitWriterStats stats = storage_->WriterStats();
    EXPECT_EQ(stats.requests_ok + stats.requests_rejected_over_budget +
                  stats.requests_rejected_shutdown + stats.requests_failed_unavailable +
                  stats.requests_failed_invalid + stats.inflight_requests,
              0u);
    EXPECT_EQ(storage_->Pin()->size(), 0u);
  }

  storage::testing::PublishGateFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"grpc_adapter"};
  std::unique_ptr<storage::Storage> storage_;
  IngestMetrics metrics_;
  std::unique_ptr<IngestService> service_;
  std::unique_ptr<GrpcServer> server_;
  workload::TrafficGenerator generator_{workload::TrafficOptions{.seed = 17}};
};

std::string TraceMethod() { return std::string(GrpcMethodFor(Signal::kTraces)); }
std::string LogsMethod() { return std::string(GrpcMethodFor(Signal::kLogs)); }

TEST_F(GrpcAdapterTest, ExportsOfEverySignalAreStoredBeforeTheOk) {
  Start();
  auto client = Client();
  auto traces = generator_.Traces(300);
  auto logs = generator_.Logs(200);
  auto metrics = generator_.Metrics(150);

  ExportReply reply = Send(*client, Signal::kTraces, otlp::EncodeTracesProto(*traces));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(reply.rejected_rows, 0);
  EXPECT_EQ(StoredRows().spans, traces->spans.size());

  reply = Send(*client, Signal::kLogs, otlp::EncodeLogsProto(*logs));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(StoredRows().logs, logs->logs.size());

  reply = Send(*client, Signal::kMetrics, otlp::EncodeMetricsProto(*metrics));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(StoredRows().points, metrics->point_count());

  EXPECT_TRUE(TraceStored(traces->spans.trace_id.front()));
  EXPECT_EQ(metrics_.ingested_rows(Signal::kTraces, Transport::kGrpc), traces->spans.size());
  EXPECT_EQ(metrics_.ingested_rows(Signal::kLogs, Transport::kGrpc), logs->logs.size());
  EXPECT_EQ(metrics_.ingested_rows(Signal::kMetrics, Transport::kGrpc), metrics->point_count());
  EXPECT_EQ(server_->TEST_gzip_messages_inflated(), 0u);
}

TEST_F(GrpcAdapterTest, ManyConcurrentExportsOverSeveralConnectionsAreAllStored) {
  Start();
  auto client = NewGrpcClient(
      OtlpClientOptions{.target = Target(), .token = std::string(kToken), .connections = 4});
  ASSERT_TRUE(client.ok()) << client.status();
  constexpr int kRequests = 48;
  uint64_t spans = 0;
  std::vector<std::shared_ptr<const std::string>> payloads;
  for (int i = 0; i < kRequests; ++i) {
    auto traces = generator_.Traces(50);
    spans += traces->spans.size();
    payloads.push_back(std::make_shared<const std::string>(otlp::EncodeTracesProto(*traces)));
  }
  Mutex mu;
  std::vector<absl::Status> statuses;
  for (const auto& payload : payloads) {
    (*client)->Export(Signal::kTraces, payload, [&](const ExportReply& reply) {
      MutexLock lock(&mu);
      statuses.push_back(reply.status);
    });
  }
  ASSERT_TRUE(WaitUntil([&] {
    MutexLock lock(&mu);
    return statuses.size() == kRequests;
  }));
  MutexLock lock(&mu);
  for (const absl::Status& s : statuses) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(StoredRows().spans, spans);
}

TEST_F(GrpcAdapterTest, GzipMessagesAreInflatedByTheAdapter) {
  Start();
  auto client = Client(std::string(kToken), /*gzip=*/true);
  auto traces = generator_.Traces(200);
  auto logs = generator_.Logs(100);
  ExportReply reply = Send(*client, Signal::kTraces, Gzip(otlp::EncodeTracesProto(*traces)));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  reply = Send(*client, Signal::kLogs, Gzip(otlp::EncodeLogsProto(*logs)));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(StoredRows().spans, traces->spans.size());
  EXPECT_EQ(StoredRows().logs, logs->logs.size());
  // gRPC core handed the compressed bytes over (it would inflate a whole
  // message before checking its size); the adapter inflated them under its
  // limit.
  EXPECT_EQ(server_->TEST_gzip_messages_inflated(), 2u);

  // An uncompressed payload is compressed by gRPC alone.
  auto metrics = generator_.Metrics(100);
  reply = Send(*client, Signal::kMetrics, otlp::EncodeMetricsProto(*metrics));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(StoredRows().points, metrics->point_count());
  EXPECT_EQ(server_->TEST_gzip_messages_inflated(), 3u);

  // A corrupt gzip payload fails in the client, before any call.
  std::string corrupt = Gzip(otlp::EncodeLogsProto(*logs));
  corrupt.resize(corrupt.size() / 2);
  reply = Send(*client, Signal::kLogs, corrupt);
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(server_->TEST_gzip_messages_inflated(), 3u);
}

TEST_F(GrpcAdapterTest, DeflateIsRefusedAsUnimplemented) {
  Start();
  auto traces = generator_.Traces(20);
  RawReply reply = RawCall(TraceMethod(), otlp::EncodeTracesProto(*traces),
                           "Bearer " + std::string(kToken), GRPC_COMPRESS_DEFLATE);
  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::UNIMPLEMENTED)
      << reply.status.error_message();
  ExpectStorageUntouched();
}

TEST_F(GrpcAdapterTest, MissingOrWrongTokenIsUnauthenticatedWithoutTouchingStorage) {
  Start();
  const std::string payload = otlp::EncodeTracesProto(*generator_.Traces(30));
  ExportReply none = Send(*Client(""), Signal::kTraces, payload);
  EXPECT_EQ(none.status.code(), absl::StatusCode::kUnauthenticated) << none.status;
  ExportReply wrong =
      Send(*Client("strata_wrong"), Signal::kLogs, otlp::EncodeLogsProto(*generator_.Logs(10)));
  EXPECT_EQ(wrong.status.code(), absl::StatusCode::kUnauthenticated) << wrong.status;
  EXPECT_THAT(std::string(wrong.status.message()), Not(HasSubstr("strata_wrong")));
  RawReply basic = RawCall(TraceMethod(), payload, "Basic " + std::string(kToken));
  EXPECT_EQ(basic.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  ExpectStorageUntouched();
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kGrpc, RejectReason::kUnauthenticated),
            2u);
  EXPECT_EQ(metrics_.rejected(Signal::kLogs, Transport::kGrpc, RejectReason::kUnauthenticated), 1u);
}

TEST_F(GrpcAdapterTest, TokenWithoutIngestScopeIsPermissionDenied) {
  Start();
  ExportReply reply = Send(*Client(std::string(kReadToken)), Signal::kMetrics,
                           otlp::EncodeMetricsProto(*generator_.Metrics(20)));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kPermissionDenied) << reply.status;
  ExpectStorageUntouched();
}

TEST_F(GrpcAdapterTest, GarbageIsInvalidArgumentWithTheDecoderMessage) {
  Start();
  const std::string garbage("\x0a\x05\x01", 3);
  otlp::TraceBatch scratch;
  const absl::Status decoder = otlp::DecodeTracesProto(garbage, &scratch);
  ASSERT_FALSE(decoder.ok());
  ExportReply reply = Send(*Client(), Signal::kTraces, garbage);
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reply.status.message(), decoder.message());
  ExpectStorageUntouched();
}

TEST_F(GrpcAdapterTest, UnknownMethodIsUnimplemented) {
  Start();
  RawReply reply = RawCall(
      "/opentelemetry.proto.collector.profiles.v1development."
      "ProfilesService/Export",
      "");
  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(reply.status.error_message(), HasSubstr("ProfilesService"));
  ExpectStorageUntouched();
}

TEST_F(GrpcAdapterTest, OverBudgetIsResourceExhaustedWithRetryInfo) {
  storage::StorageOptions options;
  options.writer.inflight_requests_limit = 1;
  Start(options);
  fs_.Close();
  auto client = Client();
  auto first = generator_.Traces(40);
  std::promise<ExportReply> first_reply;
  client->Export(Signal::kTraces,
                 std::make_shared<const std::string>(otlp::EncodeTracesProto(*first)),
                 [&](ExportReply reply) { first_reply.set_value(std::move(reply)); });
  ASSERT_TRUE(WaitUntil([&] { return fs_.held() > 0; }));

  ExportReply refused =
      Send(*client, Signal::kTraces, otlp::EncodeTracesProto(*generator_.Traces(40)));
  EXPECT_EQ(refused.status.code(), absl::StatusCode::kResourceExhausted) << refused.status;
  EXPECT_EQ(refused.retry_after, std::chrono::seconds(1));

  // The status details, read with libprotobuf: google.rpc.Status { 1: code,
  // 3: Any { 1: RetryInfo type URL, 2: RetryInfo { 1: Duration { 1: 1 } } } }.
  RawReply raw = RawCall(TraceMethod(), otlp::EncodeTracesProto(*generator_.Traces(10)));
  ASSERT_EQ(raw.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  google::protobuf::UnknownFieldSet status;
  ASSERT_TRUE(status.ParseFromString(raw.status.error_details()));
  ASSERT_EQ(status.field_count(), 3);
  EXPECT_EQ(status.field(0).varint(), 8u);  // RESOURCE_EXHAUSTED
  EXPECT_EQ(status.field(1).length_delimited(), raw.status.error_message());
  google::protobuf::UnknownFieldSet any, retry_info, duration;
  ASSERT_TRUE(any.ParseFromString(status.field(2).length_delimited()));
  EXPECT_EQ(any.field(0).length_delimited(), "type.googleapis.com/google.rpc.RetryInfo");
  ASSERT_TRUE(retry_info.ParseFromString(any.field(1).length_delimited()));
  ASSERT_TRUE(duration.ParseFromString(retry_info.field(0).length_delimited()));
  EXPECT_EQ(duration.field(0).number(), 1);
  EXPECT_EQ(duration.field(0).varint(), 1u);

  fs_.Open();
  ExportReply first_answer = first_reply.get_future().get();
  EXPECT_TRUE(first_answer.status.ok()) << first_answer.status;
  EXPECT_EQ(StoredRows().spans, first->spans.size());
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kGrpc, RejectReason::kOverBudget), 2u);
}

TEST_F(GrpcAdapterTest, StorageShutDownIsUnavailableWithRetryInfo) {
  Start();
  storage_->Shutdown(std::chrono::seconds(1));
  ExportReply reply = Send(*Client(), Signal::kLogs, otlp::EncodeLogsProto(*generator_.Logs(5)));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kUnavailable) << reply.status;
  EXPECT_EQ(reply.retry_after, std::chrono::seconds(5));
}

TEST_F(GrpcAdapterTest, OversizeMessagesAreResourceExhausted) {
  GrpcServerOptions options;
  options.max_message_bytes = 64 << 10;
  Start({}, options);
  auto traces = generator_.Traces(2000);
  std::string big = otlp::EncodeTracesProto(*traces);
  ASSERT_GT(big.size(), options.max_message_bytes);
  // Too large as sent: gRPC refuses it.
  ExportReply reply = Send(*Client(), Signal::kTraces, big);
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kResourceExhausted) << reply.status;

  // Small on the wire, too large inflated (a gzip bomb): the adapter stops
  // inflating at the limit.
  const std::string bomb(4 << 20, '\0');
  ASSERT_LT(Gzip(bomb).size(), options.max_message_bytes);
  RawReply raw = RawCall(TraceMethod(), bomb, "Bearer " + std::string(kToken), GRPC_COMPRESS_GZIP);
  EXPECT_EQ(raw.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(raw.status.error_message(), HasSubstr("inflates to more than"));
  EXPECT_EQ(server_->TEST_gzip_messages_inflated(), 1u);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kGrpc, RejectReason::kBodyTooLarge), 1u);
  ExpectStorageUntouched();

  // Under the limit, compressed or not, the same server accepts.
  auto small = generator_.Traces(20);
  reply = Send(*Client(std::string(kToken), /*gzip=*/true), Signal::kTraces,
               Gzip(otlp::EncodeTracesProto(*small)));
  EXPECT_TRUE(reply.status.ok()) << reply.status;
}

TEST_F(GrpcAdapterTest, WireAndInflatedLimitsAreSeparate) {
  GrpcServerOptions options;
  options.max_wire_message_bytes = 128 << 10;
  options.max_message_bytes = 4 << 20;
  Start({}, options);
  auto traces = generator_.Traces(2000);
  const std::string payload = otlp::EncodeTracesProto(*traces);
  ASSERT_GT(payload.size(), options.max_wire_message_bytes);
  ASSERT_LT(payload.size(), options.max_message_bytes);
  ASSERT_LT(Gzip(payload).size(), options.max_wire_message_bytes);
  // Too large as sent uncompressed.
  ExportReply reply = Send(*Client(), Signal::kTraces, payload);
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kResourceExhausted) << reply.status;
  // Small enough compressed, and under the inflated limit.
  reply = Send(*Client(std::string(kToken), /*gzip=*/true), Signal::kTraces, Gzip(payload));
  EXPECT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(StoredRows().spans, traces->spans.size());
  options.max_wire_message_bytes = uint64_t{1} << 32;
  EXPECT_EQ(GrpcServer::Start(*service_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(GrpcAdapterTest, ClientDeadlinePassingWhileStorageCommitsIsSafe) {
  Start();
  fs_.Close();
  auto traces = generator_.Traces(30);
  ExportReply reply = Send(*Client(std::string(kToken), false, std::chrono::milliseconds(200)),
                           Signal::kTraces, otlp::EncodeTracesProto(*traces));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kDeadlineExceeded) << reply.status;
  ASSERT_TRUE(WaitUntil([&] { return fs_.held() > 0; }));
  // The storage answer now arrives for a call gRPC has finished with.
  fs_.Open();
  ASSERT_TRUE(WaitUntil([&] { return storage_->WriterStats().requests_ok == 1; }));
  // Delivery is at-least-once: the rows are stored although the client gave up.
  EXPECT_EQ(StoredRows().spans, traces->spans.size());
  // The server keeps serving.
  ExportReply next = Send(*Client(), Signal::kTraces, otlp::EncodeTracesProto(*traces));
  EXPECT_TRUE(next.status.ok()) << next.status;
}

// Sends `count` trace exports; returns their spans' first trace ids and
// collects the replies in `replies`.
struct InFlight {
  size_t answered() {
    MutexLock lock(&mu);
    return replies.size();
  }

  Mutex mu;
  std::vector<std::pair<ExportReply, size_t>> replies ABSL_GUARDED_BY(mu);
  std::vector<otlp::TraceId> first_trace;
  std::vector<uint64_t> spans;
};

void SendTraces(OtlpClient& client, workload::TrafficGenerator& generator, int count,
                InFlight* in_flight) {
  for (int i = 0; i < count; ++i) {
    auto traces = generator.Traces(30);
    in_flight->first_trace.push_back(traces->spans.trace_id.front());
    in_flight->spans.push_back(traces->spans.size());
    client.Export(Signal::kTraces,
                  std::make_shared<const std::string>(otlp::EncodeTracesProto(*traces)),
                  [in_flight, i](ExportReply reply) {
                    MutexLock lock(&in_flight->mu);
                    in_flight->replies.emplace_back(std::move(reply), i);
                  });
  }
}

TEST_F(GrpcAdapterTest, ShutdownLetsCallsInFlightFinishBeforeTheDeadline) {
  Start();
  fs_.Close();
  auto client = Client();
  InFlight in_flight;
  constexpr int kCalls = 12;
  SendTraces(*client, generator_, kCalls, &in_flight);
  ASSERT_TRUE(
      WaitUntil([&] { return storage_->WriterStats().inflight_requests == uint64_t{kCalls}; }));
  std::thread stopper([&] { server_->Shutdown(kWait); });
  // New calls are refused while the old ones finish.
  ASSERT_TRUE(WaitUntil([&] {
    ExportReply late = Send(*Client(), Signal::kTraces, "");
    return late.status.code() == absl::StatusCode::kUnavailable;
  }));
  fs_.Open();
  stopper.join();
  ASSERT_TRUE(WaitUntil([&] { return in_flight.answered() == kCalls; }));
  MutexLock lock(&in_flight.mu);
  ASSERT_EQ(in_flight.replies.size(), static_cast<size_t>(kCalls));
  uint64_t spans = 0;
  for (const auto& [reply, i] : in_flight.replies) {
    EXPECT_TRUE(reply.status.ok()) << reply.status;
    EXPECT_TRUE(TraceStored(in_flight.first_trace[i]));
    spans += in_flight.spans[i];
  }
  EXPECT_EQ(StoredRows().spans, spans);
}

TEST_F(GrpcAdapterTest, ShutdownDeadlineCancelsCallsAndLateStorageAnswersAreSafe) {
  Start();
  fs_.Close();
  auto client = Client();
  InFlight in_flight;
  constexpr int kCalls = 8;
  SendTraces(*client, generator_, kCalls, &in_flight);
  ASSERT_TRUE(
      WaitUntil([&] { return storage_->WriterStats().inflight_requests == uint64_t{kCalls}; }));
  const auto began = Clock::now();
  server_->Shutdown(std::chrono::milliseconds(300));
  // Shutdown did not wait for storage, which is still held at the gate.
  EXPECT_LT(Clock::now() - began, std::chrono::seconds(10));
  EXPECT_GT(fs_.held(), 0);
  ASSERT_TRUE(WaitUntil([&] { return in_flight.answered() == kCalls; }));
  {
    MutexLock lock(&in_flight.mu);
    ASSERT_EQ(in_flight.replies.size(), static_cast<size_t>(kCalls));
    for (const auto& [reply, i] : in_flight.replies) {
      // gRPC's own answer for calls it cancels at the shutdown deadline:
      // retryable for an OTLP exporter.
      EXPECT_EQ(reply.status.code(), absl::StatusCode::kUnavailable) << reply.status;
    }
  }
  server_.reset();
  // Storage now answers calls whose reactors gRPC is done with.
  fs_.Open();
  ASSERT_TRUE(WaitUntil([&] { return storage_->WriterStats().requests_ok == uint64_t{kCalls}; }));
}

TEST_F(GrpcAdapterTest, DestroyingTheClientAnswersItsOutstandingCalls) {
  Start();
  fs_.Close();
  auto client = Client();
  InFlight in_flight;
  constexpr int kCalls = 3;
  SendTraces(*client, generator_, kCalls, &in_flight);
  ASSERT_TRUE(
      WaitUntil([&] { return storage_->WriterStats().inflight_requests == uint64_t{kCalls}; }));
  const auto began = Clock::now();
  client.reset();
  EXPECT_LT(Clock::now() - began, std::chrono::seconds(10));
  MutexLock lock(&in_flight.mu);
  ASSERT_EQ(in_flight.replies.size(), static_cast<size_t>(kCalls));
  for (const auto& [reply, i] : in_flight.replies) {
    EXPECT_EQ(reply.status.code(), absl::StatusCode::kCancelled) << reply.status;
  }
}

TEST_F(GrpcAdapterTest, GeneratedProtobufClientIsServed) {
  // The request is built with libprotobuf's generated classes, serialized and
  // the response parsed by gRPC's protobuf call path (what generated stubs
  // use), not by strata's encoders or client.
  Start();
  namespace collector = opentelemetry::proto::collector::trace::v1;
  collector::ExportTraceServiceRequest request;
  auto* resource_spans = request.add_resource_spans();
  auto* attribute = resource_spans->mutable_resource()->add_attributes();
  attribute->set_key("service.name");
  attribute->mutable_value()->set_string_value("checkout");
  auto* scope_spans = resource_spans->add_scope_spans();
  scope_spans->mutable_scope()->set_name("io.opentelemetry.test");
  std::string trace_id(16, '\0');
  for (int i = 0; i < 3; ++i) {
    auto* span = scope_spans->add_spans();
    trace_id[15] = static_cast<char>(i + 1);
    span->set_trace_id(trace_id);
    span->set_span_id(std::string(7, '\x01') + static_cast<char>(i + 1));
    span->set_name("GET /cart");
    span->set_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_SERVER);
    span->set_start_time_unix_nano(1'750'000'000'000'000'000ULL + i);
    span->set_end_time_unix_nano(1'750'000'000'100'000'000ULL + i);
  }
  auto channel = grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials());
  const std::string method = TraceMethod();
  grpc::internal::RpcMethod rpc(method.c_str(), grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + std::string(kToken));
  context.set_deadline(std::chrono::system_clock::now() + kWait);
  collector::ExportTraceServiceResponse response;
  grpc::Status status =
      grpc::internal::BlockingUnaryCall<collector::ExportTraceServiceRequest,
                                        collector::ExportTraceServiceResponse,
                                        grpc::protobuf::MessageLite, grpc::protobuf::MessageLite>(
          channel.get(), rpc, &context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Parsed by libprotobuf: an empty response (no partial_success; the
  // test protos predate that field, so it would show as an unknown field).
  EXPECT_EQ(response.ByteSizeLong(), 0u);
  EXPECT_EQ(StoredRows().spans, 3u);
  otlp::TraceId id{};
  id[15] = 2;
  EXPECT_TRUE(TraceStored(id));
}

TEST_F(GrpcAdapterTest, RejectedSpansAreReportedInPartialSuccessAndTheOthersStored) {
  // Built and read with libprotobuf: one of three spans has an all-zero
  // trace_id (docs/otlp.md, "Rejected rows").
  Start();
  const testing::PartlyInvalidTraces request;
  RawReply reply = RawCall(TraceMethod(), request.Proto());
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  const testing::PartialSuccess partial = testing::ParsePartialSuccessProto(reply.response);
  ASSERT_TRUE(partial.present);
  EXPECT_EQ(partial.rejected, 1u);
  EXPECT_THAT(partial.message, HasSubstr("rejected 1 spans"));
  EXPECT_THAT(partial.message, HasSubstr("span 1: trace_id is all zero"));
  EXPECT_EQ(StoredRows().spans, 2u);
  otlp::TraceId kept;
  kept.fill(1);
  kept[15] = 0x10;
  EXPECT_TRUE(TraceStored(kept));
  EXPECT_FALSE(TraceStored(otlp::TraceId{}));
  EXPECT_EQ(
      metrics_.rejected_rows(Signal::kTraces, Transport::kGrpc, otlp::RowRejectReason::kTraceId),
      1u);
  EXPECT_EQ(metrics_.ingested_rows(Signal::kTraces, Transport::kGrpc), 2u);
  const std::string page = metrics_.RenderPrometheus(storage_->WriterStats());
  EXPECT_THAT(page, HasSubstr("strata_ingest_rejected_rows_total{signal=\"traces\","
                              "transport=\"grpc\",reason=\"trace_id\"} 1"));
}

TEST_F(GrpcAdapterTest, LogRecordsWithInvalidIdsAreStoredWithThoseIdsAbsent) {
  // docs/otlp.md, "Cleared log record ids": OK with an empty response (no
  // partial_success), every record stored, the invalid ids absent.
  Start();
  RawReply reply = RawCall(LogsMethod(), testing::LogsWithInvalidIds().Proto());
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  EXPECT_EQ(reply.response, "");
  EXPECT_EQ(StoredRows().logs, 3u);
  testing::LogsWithInvalidIds::ExpectStored(testing::ReadStoredLogs(fs_, *storage_->Pin()), 1);
  const otlp::ClearedIds cleared = metrics_.cleared_log_ids(Transport::kGrpc);
  EXPECT_EQ(cleared.trace_id, 2u);
  EXPECT_EQ(cleared.span_id, 1u);
  EXPECT_THAT(metrics_.RenderPrometheus(storage_->WriterStats()),
              HasSubstr("strata_ingest_cleared_ids_total{signal=\"logs\",transport=\"grpc\","
                        "field=\"span_id\"} 1"));
}

TEST_F(GrpcAdapterTest, ACallWhoseEveryRowIsRejectedIsInvalidArgument) {
  Start();
  RawReply reply = RawCall(TraceMethod(), testing::PartlyInvalidTraces(true).Proto());
  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(reply.status.error_message(), HasSubstr("rejected 3 spans"));
  EXPECT_THAT(reply.status.error_message(), HasSubstr("span 0: trace_id is missing"));
  ExpectStorageUntouched();
}

TEST_F(GrpcAdapterTest, ACallThatNeverSendsItsMessageIsEndedByTheServer) {
  // A raw call opens its stream and sends metadata but no message; only
  // the server's request timeout (not the client's 30 s deadline) ends it.
  Start({}, GrpcServerOptions{.request_timeout = std::chrono::milliseconds(300)});
  auto channel = grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kWait);
  context.AddMetadata("authorization", "Bearer " + std::string(kToken));
  const auto began = Clock::now();
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, TraceMethod(), &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  ASSERT_TRUE(cq.Next(&tag, &ok));
  ASSERT_EQ(tag, reinterpret_cast<void*>(1));
  ASSERT_TRUE(ok);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(2));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  ASSERT_EQ(tag, reinterpret_cast<void*>(2));
  const auto took = Clock::now() - began;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("did not arrive within 300 ms"));
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::seconds(20));
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kGrpc, RejectReason::kDeadlineExceeded),
            1u);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  // A call that does send its message in time is served as usual.
  RawReply reply = RawCall(TraceMethod(), otlp::EncodeTracesProto(*generator_.Traces(5)));
  EXPECT_TRUE(reply.status.ok()) << reply.status.error_message();
  ExpectStoredSpans(5);
}

TEST_F(GrpcAdapterTest, StartRefusesAMemoryQuotaBelowTheMessageLimitAndANonPositiveTimeout) {
  Start();
  GrpcServerOptions options{
      .address = "127.0.0.1:0", .max_message_bytes = 1 << 20, .memory_quota_bytes = 1 << 19};
  EXPECT_EQ(GrpcServer::Start(*service_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.memory_quota_bytes = 4 << 20;
  options.request_timeout = std::chrono::nanoseconds(0);
  EXPECT_EQ(GrpcServer::Start(*service_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.request_timeout = std::chrono::seconds(1);
  auto small = GrpcServer::Start(*service_, options);
  ASSERT_TRUE(small.ok()) << small.status();
}

TEST_F(GrpcAdapterTest, StartRefusesBadAddressesAndAPortInUse) {
  Start();
  GrpcServerOptions options;
  options.address = "127.0.0.1";
  EXPECT_EQ(GrpcServer::Start(*service_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.address = "127.0.0.1:" + std::to_string(server_->port());
  auto second = GrpcServer::Start(*service_, options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("#cannot-listen"));
  EXPECT_EQ(NewGrpcClient(OtlpClientOptions{.target = "nowhere"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// TLS: the pair is served to TLS clients only; ReloadTls() gives new
// connections the new pair within kTlsRefreshSeconds while a connection
// already open goes on working.
TEST_F(GrpcAdapterTest, TlsServesThePairAndAReloadReachesNewConnectionsOnly) {
  testing::TestPair a, b;
  std::string log;
  ASSERT_TRUE(testing::MakeTestPair(tmp_.path() + "/a", "grpc test CA A", &a, &log)) << log;
  ASSERT_TRUE(testing::MakeTestPair(tmp_.path() + "/b", "grpc test CA B", &b, &log)) << log;
  auto pair_a = TlsServerContext::Load(a.cert_pem, a.key_pem);
  auto pair_b = TlsServerContext::Load(b.cert_pem, b.key_pem);
  ASSERT_TRUE(pair_a.ok() && pair_b.ok());
  Start({}, GrpcServerOptions{.tls_key_and_chain_pem = (*pair_a)->key_and_chain_pem()});

  auto read_file = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string ca_a = read_file(a.ca_pem), ca_b = read_file(b.ca_pem);
  // A channel of its own (its own connection) trusting `ca`, or plaintext.
  auto channel = [&](const std::string& ca) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto credentials = ca.empty() ? grpc::InsecureChannelCredentials()
                                  : grpc::SslCredentials({.pem_root_certs = ca});
    return grpc::CreateCustomChannel(Target(), credentials, args);
  };
  const std::string payload = otlp::EncodeTracesProto(*generator_.Traces(3));
  auto call = [&](const std::shared_ptr<grpc::Channel>& on) {
    grpc::GenericStub stub(on);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    context.AddMetadata("authorization", "Bearer " + std::string(kToken));
    grpc::Slice slice(payload);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, TraceMethod(), grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status status) { done.set_value(std::move(status)); });
    return done.get_future().get();
  };

  std::shared_ptr<grpc::Channel> open = channel(ca_a);
  grpc::Status first = call(open);
  ASSERT_TRUE(first.ok()) << first.error_message();
  EXPECT_EQ(call(channel("")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(call(channel(ca_b)).error_code(), grpc::StatusCode::UNAVAILABLE);

  ASSERT_TRUE(server_->ReloadTls((*pair_b)->key_and_chain_pem()).ok());
  // New connections trust B once gRPC has read the new pair.
  EXPECT_TRUE(WaitUntil([&] { return call(channel(ca_b)).ok(); },
                        std::chrono::seconds(GrpcServer::kTlsRefreshSeconds + 5)));
  EXPECT_EQ(call(channel(ca_a)).error_code(), grpc::StatusCode::UNAVAILABLE);
  // The connection made before the reload carries on.
  grpc::Status again = call(open);
  EXPECT_TRUE(again.ok()) << again.error_message();
  EXPECT_EQ(open->GetState(false), GRPC_CHANNEL_READY);
}

TEST_F(GrpcAdapterTest, ReloadTlsIsRefusedWithoutTls) {
  Start();
  EXPECT_EQ(server_->ReloadTls("pem").code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace strata::server
