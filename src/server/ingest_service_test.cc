// IngestService: bearer-token checks, decoding, row limits and the hand-off
// to a real storage engine, with the responses an OTLP exporter parses
// (checked against libprotobuf's classes).

#include "server/ingest_service.h"

#include <malloc.h>

#include <future>
#include <utility>

#include "gmock/gmock.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kToken = "strata_good";

absl::Status CheckToken(std::string_view token) {
  if (token == kToken) return absl::OkStatus();
  if (token == "strata_read") return absl::PermissionDeniedError("token has read scope");
  return absl::UnauthenticatedError("unknown or revoked token");
}

class IngestServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = storage::Storage::Open(fs_, tmp_.path() + "/data");
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = std::move(*opened);
    service_ = std::make_unique<IngestService>(*storage_, CheckToken, metrics_,
                                               IngestService::Options{.max_rows_per_request = 500});
  }

  ExportOutcome ExportNow(Signal signal, Encoding encoding, std::string body) {
    std::promise<ExportOutcome> answered;
    const uint64_t size = body.size();
    service_->Export(
        signal, encoding, Transport::kHttp, std::make_shared<const std::string>(std::move(body)),
        size, [&answered](ExportOutcome outcome) { answered.set_value(std::move(outcome)); });
    return answered.get_future().get();
  }

  uint64_t StoredSpans() const {
    uint64_t spans = 0;
    const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    for (const auto& batch : snapshot->batches()) spans += batch->meta().spans.rows;
    return spans;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"ingest"};
  std::unique_ptr<storage::Storage> storage_;
  IngestMetrics metrics_;
  std::unique_ptr<IngestService> service_;
  workload::TrafficGenerator generator_{workload::TrafficOptions{.seed = 4}};
};

TEST_F(IngestServiceTest, AuthorizeAcceptsOnlyABearerIngestToken) {
  EXPECT_TRUE(service_->Authorize("Bearer strata_good", Signal::kTraces, Transport::kHttp).ok());
  EXPECT_TRUE(service_->Authorize("bearer  strata_good ", Signal::kTraces, Transport::kGrpc).ok());
  EXPECT_EQ(service_->Authorize("", Signal::kTraces, Transport::kHttp).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(service_->Authorize("Basic strata_good", Signal::kLogs, Transport::kHttp).code(),
            absl::StatusCode::kUnauthenticated);
  absl::Status wrong = service_->Authorize("Bearer strata_bad", Signal::kLogs, Transport::kHttp);
  EXPECT_EQ(wrong.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(wrong.message()), ::testing::Not(HasSubstr("strata_bad")));
  EXPECT_EQ(service_->Authorize("Bearer strata_read", Signal::kMetrics, Transport::kHttp).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(metrics_.rejected(Signal::kLogs, Transport::kHttp, RejectReason::kUnauthenticated), 2);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kUnauthenticated),
            1);
  EXPECT_EQ(metrics_.rejected(Signal::kMetrics, Transport::kHttp, RejectReason::kPermissionDenied),
            1);
}

TEST_F(IngestServiceTest, ProtobufAndJsonExportsAreStoredBeforeTheAnswer) {
  auto traces = generator_.Traces(120);
  const uint64_t spans = traces->spans.size();
  ExportOutcome proto =
      ExportNow(Signal::kTraces, Encoding::kProtobuf, otlp::EncodeTracesProto(*traces));
  ASSERT_TRUE(proto.status.ok()) << proto.status;
  EXPECT_EQ(proto.rows, spans);
  EXPECT_EQ(StoredSpans(), spans);

  auto more = generator_.Traces(60);
  ExportOutcome json = ExportNow(Signal::kTraces, Encoding::kJson, otlp::EncodeTracesJson(*more));
  ASSERT_TRUE(json.status.ok()) << json.status;
  EXPECT_EQ(StoredSpans(), spans + more->spans.size());
  EXPECT_EQ(metrics_.ingested_rows(Signal::kTraces, Transport::kHttp), spans + more->spans.size());

  auto logs = generator_.Logs(40);
  ExportOutcome log_outcome =
      ExportNow(Signal::kLogs, Encoding::kProtobuf, otlp::EncodeLogsProto(*logs));
  ASSERT_TRUE(log_outcome.status.ok()) << log_outcome.status;
  auto metrics = generator_.Metrics(40);
  ExportOutcome metric_outcome =
      ExportNow(Signal::kMetrics, Encoding::kJson, otlp::EncodeMetricsJson(*metrics));
  ASSERT_TRUE(metric_outcome.status.ok()) << metric_outcome.status;
  uint64_t log_rows = 0, points = 0;
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  for (const auto& batch : snapshot->batches()) {
    log_rows += batch->meta().logs.rows;
    points += batch->meta().metrics.rows;
  }
  EXPECT_EQ(log_rows, logs->logs.size());
  EXPECT_EQ(points, metrics->point_count());
}

TEST_F(IngestServiceTest, MalformedBodyIsInvalidArgumentWithTheDecoderMessage) {
  ExportOutcome garbage = ExportNow(Signal::kTraces, Encoding::kProtobuf, "\x0a\x05\x01");
  EXPECT_EQ(garbage.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(garbage.status.message()), HasSubstr("resource_spans"));
  ExportOutcome bad_json = ExportNow(Signal::kLogs, Encoding::kJson, "{\"resourceLogs\": 7}");
  EXPECT_EQ(bad_json.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StoredSpans(), 0u);
  EXPECT_EQ(storage_->Pin()->size(), 0u);
  EXPECT_EQ(metrics_.rejected(Signal::kTraces, Transport::kHttp, RejectReason::kInvalidArgument),
            1);
}

TEST_F(IngestServiceTest, TooManyRowsIsRefusedWhole) {
  auto traces = generator_.Traces(600);
  ExportOutcome outcome =
      ExportNow(Signal::kTraces, Encoding::kProtobuf, otlp::EncodeTracesProto(*traces));
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outcome.status.message()), HasSubstr("at most 500"));
  EXPECT_EQ(storage_->Pin()->size(), 0u);
}

TEST_F(IngestServiceTest, EmptyExportIsAcknowledgedWithoutACommit) {
  ExportOutcome outcome = ExportNow(Signal::kMetrics, Encoding::kProtobuf, "");
  EXPECT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(storage_->Pin()->size(), 0u);
  EXPECT_EQ(storage_->WriterStats().commit_calls, 0u);
}

TEST_F(IngestServiceTest, AfterShutdownExportsAreUnavailableWithRetryAfter) {
  storage_->Shutdown(std::chrono::seconds(1));
  auto traces = generator_.Traces(10);
  ExportOutcome outcome =
      ExportNow(Signal::kTraces, Encoding::kProtobuf, otlp::EncodeTracesProto(*traces));
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_GT(outcome.retry_after.count(), 0);
}

// The in-flight budget charge of one export: the writer's admitted bytes
// while the export's commit is held at the publish gate.
class IngestChargeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = storage::Storage::Open(fs_, tmp_.path() + "/data");
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = std::move(*opened);
    service_ =
        std::make_unique<IngestService>(*storage_, CheckToken, metrics_, IngestService::Options{});
  }

  uint64_t ChargeOf(Signal signal, Encoding encoding, std::string body) {
    std::promise<ExportOutcome> answered;
    const uint64_t size = body.size();
    fs_.Close();
    service_->Export(
        signal, encoding, Transport::kHttp, std::make_shared<const std::string>(std::move(body)),
        size, [&answered](ExportOutcome outcome) { answered.set_value(std::move(outcome)); });
    const bool held = fs_.WaitUntilHeld(std::chrono::seconds(30));
    const uint64_t charge = storage_->WriterStats().inflight_bytes;
    fs_.Open();
    ExportOutcome outcome = answered.get_future().get();
    EXPECT_TRUE(held);
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(storage_->WriterStats().inflight_bytes, 0u);
    return charge;
  }

  storage::testing::PublishGateFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"ingest-charge"};
  std::unique_ptr<storage::Storage> storage_;
  IngestMetrics metrics_;
  std::unique_ptr<IngestService> service_;
  workload::TrafficGenerator generator_{workload::TrafficOptions{.seed = 5}};
};

TEST_F(IngestChargeTest, ChargeIsTheDecodedBatchPlusTheRetainedProtobufBody) {
  auto small = generator_.Traces(100);
  auto large = generator_.Traces(400);
  ASSERT_GT(large->spans.size(), small->spans.size());
  const std::string small_proto = otlp::EncodeTracesProto(*small);
  const std::string large_proto = otlp::EncodeTracesProto(*large);
  const uint64_t small_charge = ChargeOf(Signal::kTraces, Encoding::kProtobuf, small_proto);
  const uint64_t large_charge = ChargeOf(Signal::kTraces, Encoding::kProtobuf, large_proto);

  // The protobuf body stays alive with the batch, so it is part of the charge,
  // and the decoded columns come on top of it.
  otlp::TraceBatch decoded;
  ASSERT_TRUE(otlp::DecodeTracesProto(small_proto, &decoded).ok());
  const uint64_t columns = decoded.RetainedBytes();
  EXPECT_GE(small_charge, small_proto.size() + columns);
  EXPECT_LE(small_charge, small_proto.size() + columns + 1024);
  EXPECT_GT(large_charge, small_charge);
  EXPECT_GE(large_charge, large_proto.size());

  // A JSON body is copied out of and freed: only the decoded batch counts.
  const std::string json = otlp::EncodeTracesJson(*small);
  otlp::TraceBatch from_json;
  ASSERT_TRUE(otlp::DecodeTracesJson(json, &from_json).ok());
  EXPECT_EQ(ChargeOf(Signal::kTraces, Encoding::kJson, json), from_json.RetainedBytes());

  auto logs = generator_.Logs(200);
  const std::string logs_proto = otlp::EncodeLogsProto(*logs);
  EXPECT_GE(ChargeOf(Signal::kLogs, Encoding::kProtobuf, logs_proto),
            logs_proto.size() + logs->logs.size() * sizeof(uint64_t) * 2);
  auto metrics = generator_.Metrics(200);
  const std::string metrics_proto = otlp::EncodeMetricsProto(*metrics);
  EXPECT_GE(ChargeOf(Signal::kMetrics, Encoding::kProtobuf, metrics_proto),
            metrics_proto.size() + metrics->point_count() * sizeof(uint64_t) * 2);
}

// Heap bytes in use, from glibc's allocator statistics (every arena, and
// blocks it mapped on their own).
size_t HeapBytesInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// Whether HeapBytesInUse() sees a 1 MiB block that is allocated.
bool HeapStatisticsWork() {
  constexpr size_t kProbe = 1 << 20;
  const size_t before = HeapBytesInUse();
  auto probe = std::make_unique<char[]>(kProbe);
  probe[0] = 1;
  const size_t during = HeapBytesInUse();
  return during >= before + kProbe && probe[0] == 1;
}

// Decodes `body` into a fresh batch and returns {RetainedBytes(), heap
// bytes the decode left allocated}; the body itself is allocated before.
template <typename Batch, typename DecodeFn>
std::pair<size_t, size_t> RetainedAndMeasured(const std::string& body, DecodeFn decode) {
  const size_t before = HeapBytesInUse();
  auto batch = std::make_unique<Batch>();
  EXPECT_TRUE(decode(body, batch.get()).ok());
  const size_t measured = HeapBytesInUse() - before;
  return {batch->RetainedBytes(), measured};
}

TEST(RequestChargeTest, RetainedBytesMatchesTheHeapTheDecodedBatchHolds) {
  // Sanitizer runtimes replace malloc, and their mallinfo2 reports nothing.
  if (!HeapStatisticsWork()) GTEST_SKIP() << "this allocator does not report mallinfo2";
  workload::TrafficGenerator generator{workload::TrafficOptions{.seed = 6}};
  const std::string traces_json = otlp::EncodeTracesJson(*generator.Traces(300));
  const std::string bodies[] = {
      otlp::EncodeTracesProto(*generator.Traces(300)),
      traces_json,
      otlp::EncodeLogsProto(*generator.Logs(500)),
      otlp::EncodeMetricsProto(*generator.Metrics(300)),
  };
  // The JSON decoder keeps a per-thread parser: let it reach its size first.
  {
    otlp::TraceBatch warm_up;
    ASSERT_TRUE(otlp::DecodeTracesJson(traces_json, &warm_up).ok());
  }
  const std::pair<size_t, size_t> results[] = {
      RetainedAndMeasured<otlp::TraceBatch>(bodies[0],
                                            [](std::string_view b, otlp::TraceBatch* out) {
                                              return otlp::DecodeTracesProto(b, out);
                                            }),
      RetainedAndMeasured<otlp::TraceBatch>(
          bodies[1],
          [](std::string_view b, otlp::TraceBatch* out) { return otlp::DecodeTracesJson(b, out); }),
      RetainedAndMeasured<otlp::LogBatch>(
          bodies[2],
          [](std::string_view b, otlp::LogBatch* out) { return otlp::DecodeLogsProto(b, out); }),
      RetainedAndMeasured<otlp::MetricBatch>(bodies[3],
                                             [](std::string_view b, otlp::MetricBatch* out) {
                                               return otlp::DecodeMetricsProto(b, out);
                                             }),
  };
  for (size_t i = 0; i < std::size(results); ++i) {
    const auto [retained, measured] = results[i];
    SCOPED_TRACE(::testing::Message()
                 << "body " << i << " of " << bodies[i].size() << " bytes: retained " << retained
                 << ", measured " << measured);
    // Within 5% either way plus a little: the allocator adds a header to
    // every block and rounds it up, and it hands small blocks out of its
    // per-thread cache, which its statistics count as in use already.
    EXPECT_LE(measured, retained + retained / 20 + 16 * 1024);
    EXPECT_LE(retained, measured + measured / 20 + 16 * 1024);
  }
}

TEST(IngestResponseTest, ResponsesParseWithLibprotobufAndCarryPartialSuccess) {
  EXPECT_EQ(IngestService::EncodeResponse(Signal::kTraces, Encoding::kProtobuf, {}), "");
  EXPECT_EQ(IngestService::EncodeResponse(Signal::kTraces, Encoding::kJson, {}), "{}");
  ExportOutcome partial{.rejected_rows = 300, .partial_message = "spans without a trace id"};
  const std::string proto =
      IngestService::EncodeResponse(Signal::kTraces, Encoding::kProtobuf, partial);
  // The test protos predate partial_success, so read the fields through
  // libprotobuf's unknown-field parser: field 1 holds {1: rejected, 2: message}.
  opentelemetry::proto::collector::trace::v1::ExportTraceServiceResponse response;
  ASSERT_TRUE(response.ParseFromString(proto));
  const google::protobuf::UnknownFieldSet& top =
      response.GetReflection()->GetUnknownFields(response);
  ASSERT_EQ(top.field_count(), 1);
  ASSERT_EQ(top.field(0).number(), 1);
  google::protobuf::UnknownFieldSet partial_success;
  ASSERT_TRUE(partial_success.ParseFromString(top.field(0).length_delimited()));
  ASSERT_EQ(partial_success.field_count(), 2);
  EXPECT_EQ(partial_success.field(0).number(), 1);
  EXPECT_EQ(partial_success.field(0).varint(), 300u);
  EXPECT_EQ(partial_success.field(1).number(), 2);
  EXPECT_EQ(partial_success.field(1).length_delimited(), "spans without a trace id");
  EXPECT_EQ(
      IngestService::EncodeResponse(Signal::kLogs, Encoding::kJson, partial),
      R"({"partialSuccess":{"rejectedLogRecords":"300","errorMessage":"spans without a trace id"}})");
}

TEST(IngestVocabularyTest, NamesPathsAndHttpStatusesRoundTrip) {
  for (Signal s : {Signal::kTraces, Signal::kLogs, Signal::kMetrics}) {
    EXPECT_EQ(SignalForHttpPath(HttpPathFor(s)), s);
    EXPECT_EQ(SignalForGrpcMethod(GrpcMethodFor(s)), s);
  }
  EXPECT_EQ(SignalForHttpPath("/v1/trace"), std::nullopt);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOutOfRange), 413);
  EXPECT_EQ(RejectReasonFor(absl::StatusCode::kResourceExhausted), RejectReason::kOverBudget);
}

TEST(IngestMetricsTest, PrometheusPageCarriesCountersAndWriterStatistics) {
  IngestMetrics metrics;
  metrics.CountIngested(Signal::kLogs, Transport::kGrpc, 42, 1000);
  metrics.CountRejected(Signal::kTraces, Transport::kHttp, RejectReason::kOverBudget);
  metrics.ObserveExportLatency(Transport::kHttp, std::chrono::milliseconds(3));
  storage::GroupCommitWriterStats writer;
  writer.batches_committed = 7;
  writer.inflight_bytes = 123;
  writer.commit_latency.Observe(std::chrono::milliseconds(2));
  const std::string page = metrics.RenderPrometheus(writer);
  EXPECT_THAT(page, HasSubstr("strata_ingest_rows_total{signal=\"logs\",transport=\"grpc\"} 42\n"));
  EXPECT_THAT(page,
              HasSubstr("strata_ingest_bytes_total{signal=\"logs\",transport=\"grpc\"} 1000"));
  EXPECT_THAT(page, HasSubstr("strata_ingest_rejected_total{signal=\"traces\",transport=\"http\","
                              "reason=\"over_budget\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("strata_export_duration_seconds_bucket{transport=\"http\","
                              "le=\"0.0025\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("strata_export_duration_seconds_bucket{transport=\"http\","
                              "le=\"0.005\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("strata_batches_published_total 7\n"));
  EXPECT_THAT(page, HasSubstr("strata_inflight_bytes 123\n"));
  EXPECT_THAT(page, HasSubstr("strata_commit_duration_seconds_count 1\n"));
  EXPECT_THAT(page, HasSubstr("strata_compaction_halted 0\n"));
}

TEST(IngestMetricsTest, PrometheusPageCarriesMaintenanceStatistics) {
  IngestMetrics metrics;
  StorageGauges storage;
  storage.live_batches = 12;
  storage.maintenance.compactions = 3;
  storage.maintenance.compaction_failures = 2;
  storage.maintenance.batches_deleted = 9;
  storage.maintenance.days_dropped = 1;
  storage.maintenance.compaction_halted = true;
  const std::string page = metrics.RenderPrometheus({}, storage);
  EXPECT_THAT(page, HasSubstr("strata_live_batches 12\n"));
  EXPECT_THAT(page, HasSubstr("strata_compactions_total 3\n"));
  EXPECT_THAT(page, HasSubstr("strata_compaction_failures_total 2\n"));
  EXPECT_THAT(page, HasSubstr("strata_batches_deleted_total 9\n"));
  EXPECT_THAT(page, HasSubstr("strata_retention_days_dropped_total 1\n"));
  EXPECT_THAT(page, HasSubstr("# TYPE strata_compaction_halted gauge\n"));
  EXPECT_THAT(page, HasSubstr("strata_compaction_halted 1\n"));
}

}  // namespace
}  // namespace strata::server
