// Tests of the OTLP encoders (encode.h) and their writers.
//
// Protobuf output is parsed with libprotobuf's classes generated from the
// OTLP 0.38 protos; fields newer than 0.38 must then show up as unknown fields
// with the right numbers, wire types and values. JSON output is parsed with
// simdjson. Batches are built by hand and cover every field, all five metric
// types, every AnyValue kind, empty resources and scopes, and unsorted rows.

#include <simdjson.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/unknown_field_set.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"
#include "otlp/batch.h"
#include "otlp/encode.h"
#include "otlp/encoder_test_batches.h"
#include "otlp/json_writer.h"
#include "otlp/proto_writer.h"

namespace strata::otlp {
namespace {

// The shared test batches and their builders.
using namespace encoder_testing;  // NOLINT(google-build-using-namespace)
namespace pb = ::opentelemetry::proto;
using ::google::protobuf::Message;
using ::google::protobuf::RepeatedPtrField;
using ::google::protobuf::UnknownField;
using ::google::protobuf::UnknownFieldSet;
using ::testing::HasSubstr;

// ------------------------------------------------------ protobuf inspection

std::vector<const UnknownField*> Unknown(const Message& message, int number) {
  const UnknownFieldSet& set = message.GetReflection()->GetUnknownFields(message);
  std::vector<const UnknownField*> found;
  for (int i = 0; i < set.field_count(); ++i) {
    if (set.field(i).number() == number) found.push_back(&set.field(i));
  }
  return found;
}

int UnknownCount(const Message& message) {
  return message.GetReflection()->GetUnknownFields(message).field_count();
}

// The fields of an unknown length-delimited field, parsed as a message.
void ParseUnknownMessage(const UnknownField& field, UnknownFieldSet* set) {
  EXPECT_EQ(field.type(), UnknownField::TYPE_LENGTH_DELIMITED);
  EXPECT_TRUE(set->ParseFromString(field.length_delimited()));
}

void ExpectEveryValueKind(const RepeatedPtrField<pb::common::v1::KeyValue>& kvs) {
  using pb::common::v1::AnyValue;
  ASSERT_EQ(kvs.size(), kEveryValueKindCount);
  EXPECT_EQ(kvs[0].key(), "str");
  EXPECT_EQ(kvs[0].value().string_value(), "hello");
  EXPECT_EQ(kvs[1].value().value_case(), AnyValue::kStringValue);
  EXPECT_EQ(kvs[1].value().string_value(), "");
  EXPECT_EQ(kvs[2].value().value_case(), AnyValue::kBoolValue);
  EXPECT_TRUE(kvs[2].value().bool_value());
  EXPECT_EQ(kvs[3].value().value_case(), AnyValue::kBoolValue);
  EXPECT_FALSE(kvs[3].value().bool_value());
  EXPECT_EQ(kvs[4].value().int_value(), -42);
  EXPECT_EQ(kvs[5].value().value_case(), AnyValue::kIntValue);
  EXPECT_EQ(kvs[6].value().double_value(), 3.25);
  EXPECT_EQ(kvs[7].value().value_case(), AnyValue::kDoubleValue);
  EXPECT_EQ(kvs[8].value().bytes_value(), std::string("\x00\x01\xff", 3));
  EXPECT_EQ(kvs[9].key(), "empty");
  EXPECT_TRUE(kvs[9].has_value());
  EXPECT_EQ(kvs[9].value().value_case(), AnyValue::VALUE_NOT_SET);
  const auto& array = kvs[10].value().array_value().values();
  ASSERT_EQ(array.size(), 4);
  EXPECT_EQ(array[0].string_value(), "a");
  EXPECT_EQ(array[1].int_value(), 7);
  ASSERT_EQ(array[2].array_value().values_size(), 1);
  EXPECT_TRUE(array[2].array_value().values(0).bool_value());
  EXPECT_EQ(array[3].value_case(), AnyValue::VALUE_NOT_SET);
  const auto& kvlist = kvs[11].value().kvlist_value().values();
  ASSERT_EQ(kvlist.size(), 2);
  EXPECT_EQ(kvlist[0].key(), "inner");
  EXPECT_EQ(kvlist[0].value().double_value(), 1.5);
  EXPECT_EQ(kvlist[1].key(), "deep");
  ASSERT_EQ(kvlist[1].value().kvlist_value().values_size(), 1);
  EXPECT_EQ(kvlist[1].value().kvlist_value().values(0).key(), "x");
  EXPECT_EQ(kvlist[1].value().kvlist_value().values(0).value().string_value(), "y");
  EXPECT_EQ(kvs[12].value().value_case(), AnyValue::kArrayValue);
  EXPECT_EQ(kvs[12].value().array_value().values_size(), 0);
  EXPECT_EQ(kvs[13].value().value_case(), AnyValue::kKvlistValue);
  EXPECT_EQ(kvs[13].value().kvlist_value().values_size(), 0);
}

// Checks the envelope AddResourcesAndScopes() built: three resources, the
// first with scopes 1 and 2 (in that order), the second empty, the third
// with scope 0, and, with newer fields, their unknown fields.
template <typename Request, typename GetResources, typename GetScopes>
void CheckEnvelope(const Request& request, GetResources resources_of, GetScopes scopes_of,
                   bool newer_fields) {
  const auto& resources = resources_of(request);
  EXPECT_EQ(resources.size(), 3);
  if (resources.size() != 3) return;
  const auto& r0 = resources[0];
  EXPECT_EQ(r0.resource().attributes_size(), 1);
  EXPECT_EQ(r0.resource().attributes(0).key(), "service.name");
  EXPECT_EQ(r0.resource().dropped_attributes_count(), 1u);
  EXPECT_EQ(r0.schema_url(), "res-schema");
  EXPECT_FALSE(resources[1].has_resource());
  EXPECT_EQ(scopes_of(resources[1]).size(), 0);
  EXPECT_EQ(resources[2].resource().attributes(0).value().string_value(), "a");
  EXPECT_EQ(scopes_of(r0).size(), 2);
  EXPECT_EQ(scopes_of(resources[2]).size(), 1);
  if (scopes_of(r0).size() != 2 || scopes_of(resources[2]).size() != 1) return;
  const auto& s1 = scopes_of(r0)[0];
  EXPECT_EQ(s1.scope().name(), "lib-a");
  EXPECT_EQ(s1.scope().version(), "1.0");
  EXPECT_EQ(s1.schema_url(), "scope-schema");
  EXPECT_FALSE(scopes_of(r0)[1].has_scope());
  EXPECT_EQ(scopes_of(resources[2])[0].scope().name(), "idle");
  if (newer_fields) {
    auto refs = Unknown(r0.resource(), 3);  // Resource.entity_refs
    EXPECT_EQ(refs.size(), 1u);
    if (refs.size() != 1) return;
    UnknownFieldSet ref;
    ParseUnknownMessage(*refs[0], &ref);
    EXPECT_EQ(ref.field_count(), 5);
    EXPECT_EQ(ref.field(0).number(), 1);
    EXPECT_EQ(ref.field(0).length_delimited(), "https://opentelemetry.io/schemas/1.26.0");
    EXPECT_EQ(ref.field(1).number(), 2);
    EXPECT_EQ(ref.field(1).length_delimited(), "service");
    EXPECT_EQ(ref.field(2).number(), 3);
    EXPECT_EQ(ref.field(2).length_delimited(), "service.name");
    EXPECT_EQ(ref.field(3).number(), 3);
    EXPECT_EQ(ref.field(3).length_delimited(), "service.namespace");
    EXPECT_EQ(ref.field(4).number(), 4);
    EXPECT_EQ(ref.field(4).length_delimited(), "service.version");
    auto attributes = Unknown(s1.scope(), 3);  // InstrumentationScope.attributes
    ASSERT_EQ(attributes.size(), 1u);
    pb::common::v1::KeyValue kv;
    EXPECT_TRUE(kv.ParseFromString(attributes[0]->length_delimited()));
    EXPECT_EQ(kv.key(), "scope.attr");
    EXPECT_EQ(kv.value().string_value(), "x");
    auto dropped = Unknown(s1.scope(), 4);  // InstrumentationScope.dropped_attributes_count
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0]->type(), UnknownField::TYPE_VARINT);
    EXPECT_EQ(dropped[0]->varint(), 2u);
  } else {
    EXPECT_EQ(UnknownCount(r0.resource()), 0);
    EXPECT_EQ(UnknownCount(s1.scope()), 0);
  }
}

using TraceRequest = pb::collector::trace::v1::ExportTraceServiceRequest;
using LogsRequest = pb::collector::logs::v1::ExportLogsServiceRequest;
using MetricsRequest = pb::collector::metrics::v1::ExportMetricsServiceRequest;

constexpr auto kResourceSpans = [](const auto& m) -> const auto& { return m.resource_spans(); };
constexpr auto kScopeSpans = [](const auto& m) -> const auto& { return m.scope_spans(); };
constexpr auto kResourceLogs = [](const auto& m) -> const auto& { return m.resource_logs(); };
constexpr auto kScopeLogs = [](const auto& m) -> const auto& { return m.scope_logs(); };
constexpr auto kResourceMetrics = [](const auto& m) -> const auto& { return m.resource_metrics(); };
constexpr auto kScopeMetrics = [](const auto& m) -> const auto& { return m.scope_metrics(); };

template <typename Request>
Request Parse(const std::string& bytes) {
  Request request;
  EXPECT_TRUE(request.ParseFromString(bytes));
  return request;
}

// ------------------------------------------------------------ ProtoWriter

TEST(EncodeProtoWriterTest, VarintSizeMatchesEncodedLength) {
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{16383}, uint64_t{16384},
                     uint64_t{1} << 35, ~uint64_t{0}}) {
    std::string out;
    ProtoWriter(&out).AppendVarint(v);
    EXPECT_EQ(out.size(), ProtoWriter::VarintSize(v)) << v;
  }
}

TEST(EncodeProtoWriterTest, SignedIntegersUseSignExtensionOrZigZag) {
  std::string out;
  ProtoWriter w(&out);
  w.Int32(1, -1);   // int32/enum: ten-byte sign-extended varint
  w.SInt32(2, -1);  // sint32: zigzag 1
  w.SInt32(3, 1);   // sint32: zigzag 2
  EXPECT_EQ(out, std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
                             "\x10\x01\x18\x02"));
}

TEST(EncodeProtoWriterTest, DefaultsAreOmittedButNegativeZeroIsWritten) {
  std::string out;
  ProtoWriter w(&out);
  w.UInt32(1, 0);
  w.Fixed64(2, 0);
  w.String(3, "");
  w.Bool(4, false);
  w.Double(5, 0.0);
  EXPECT_EQ(out, "");
  w.Double(5, -0.0);
  EXPECT_EQ(out, std::string("\x29\0\0\0\0\0\0\0\x80", 9));
}

TEST(EncodeProtoWriterTest, NestedLengthsAreMinimalVarintsAtEverySize) {
  for (size_t size : {0, 1, 127, 128, 16383, 16384, 2097152}) {
    std::string out = "x";
    ProtoWriter w(&out);
    ProtoWriter::Mark outer = w.Open(1);
    ProtoWriter::Mark inner = w.Open(2);
    out.append(size, 'y');
    w.Close(inner);
    w.Close(outer);
    size_t inner_size = 1 + ProtoWriter::VarintSize(size) + size;
    ASSERT_EQ(out.size(), 1 + 1 + ProtoWriter::VarintSize(inner_size) + inner_size) << size;
    UnknownFieldSet set;
    ASSERT_TRUE(set.ParseFromString(out.substr(1))) << size;
    UnknownFieldSet inner_set;
    ParseUnknownMessage(set.field(0), &inner_set);
    ASSERT_EQ(inner_set.field_count(), 1);
    EXPECT_EQ(inner_set.field(0).length_delimited(), std::string(size, 'y'));
  }
}

// ----------------------------------------------------------- traces (proto)

TEST(EncodeProtoTest, TracesNestSpansUnderTheirScopeInRowOrder) {
  TraceBatch batch = MakeTraceBatch(/*newer_fields=*/true);
  TraceRequest request = Parse<TraceRequest>(EncodeTracesProto(batch));
  CheckEnvelope(request, kResourceSpans, kScopeSpans, /*newer_fields=*/true);
  ASSERT_EQ(request.resource_spans_size(), 3);
  const auto& r0 = request.resource_spans(0);
  ASSERT_EQ(r0.scope_spans_size(), 2);
  ASSERT_EQ(r0.scope_spans(0).spans_size(), 2);
  EXPECT_EQ(r0.scope_spans(0).spans(0).name(), "GET /cart");
  EXPECT_EQ(r0.scope_spans(0).spans(1).name(), "odd");
  ASSERT_EQ(r0.scope_spans(1).spans_size(), 1);
  EXPECT_EQ(r0.scope_spans(1).spans(0).name(), "minimal");
  EXPECT_EQ(request.resource_spans(2).scope_spans(0).spans_size(), 0);
}

TEST(EncodeProtoTest, SpanKeepsEveryFieldAndNewerFieldsAsUnknownFields) {
  TraceBatch batch = MakeTraceBatch(/*newer_fields=*/true);
  TraceRequest request = Parse<TraceRequest>(EncodeTracesProto(batch));
  ASSERT_EQ(request.resource_spans_size(), 3);
  ASSERT_EQ(request.resource_spans(0).scope_spans_size(), 2);
  ASSERT_EQ(request.resource_spans(0).scope_spans(0).spans_size(), 2);
  const pb::trace::v1::Span& span = request.resource_spans(0).scope_spans(0).spans(0);
  EXPECT_EQ(span.trace_id(), IdBytes(MakeTraceId(0x10)));
  EXPECT_EQ(span.span_id(), IdBytes(MakeSpanId(0x10)));
  EXPECT_EQ(span.trace_state(), "vendor=1");
  EXPECT_EQ(span.parent_span_id(), IdBytes(MakeSpanId(0x70)));
  EXPECT_EQ(span.kind(), pb::trace::v1::Span::SPAN_KIND_SERVER);
  EXPECT_EQ(span.start_time_unix_nano(), kStart);
  EXPECT_EQ(span.end_time_unix_nano(), kEnd);
  ExpectEveryValueKind(span.attributes());
  EXPECT_EQ(span.dropped_attributes_count(), 3u);
  ASSERT_EQ(span.events_size(), 2);
  EXPECT_EQ(span.events(0).time_unix_nano(), kStart + 1);
  EXPECT_EQ(span.events(0).name(), "retry");
  EXPECT_EQ(span.events(0).attributes(0).value().string_value(), "2");
  EXPECT_EQ(span.events(0).dropped_attributes_count(), 6u);
  EXPECT_EQ(span.events(1).ByteSizeLong(), 0u);
  EXPECT_EQ(span.dropped_events_count(), 4u);
  ASSERT_EQ(span.links_size(), 1);
  const auto& link = span.links(0);
  EXPECT_EQ(link.trace_id(), IdBytes(MakeTraceId(0x50)));
  EXPECT_EQ(link.span_id(), IdBytes(MakeSpanId(0x60)));
  EXPECT_EQ(link.trace_state(), "link=state");
  EXPECT_EQ(link.attributes(0).key(), "link.kind");
  EXPECT_EQ(link.dropped_attributes_count(), 7u);
  EXPECT_EQ(span.dropped_links_count(), 5u);
  EXPECT_EQ(span.status().message(), "boom");
  EXPECT_EQ(span.status().code(), pb::trace::v1::Status::STATUS_CODE_ERROR);

  auto span_flags = Unknown(span, 16);  // Span.flags
  ASSERT_EQ(span_flags.size(), 1u);
  EXPECT_EQ(span_flags[0]->type(), UnknownField::TYPE_FIXED32);
  EXPECT_EQ(span_flags[0]->fixed32(), 0x301u);
  EXPECT_EQ(UnknownCount(span), 1);
  auto link_flags = Unknown(link, 6);  // Span.Link.flags
  ASSERT_EQ(link_flags.size(), 1u);
  EXPECT_EQ(link_flags[0]->type(), UnknownField::TYPE_FIXED32);
  EXPECT_EQ(link_flags[0]->fixed32(), 0x101u);
}

TEST(EncodeProtoTest, AbsentParentAndDefaultStatusAreOmittedAndNegativeKindSurvives) {
  TraceBatch batch = MakeTraceBatch(/*newer_fields=*/false);
  TraceRequest request = Parse<TraceRequest>(EncodeTracesProto(batch));
  ASSERT_EQ(request.resource_spans_size(), 3);
  const auto& minimal = request.resource_spans(0).scope_spans(1).spans(0);
  EXPECT_EQ(minimal.parent_span_id(), "");
  EXPECT_FALSE(minimal.has_status());
  EXPECT_EQ(minimal.ByteSizeLong(), 2 + 16 + 2 + 8 + 2 + std::string_view("minimal").size());
  const auto& odd = request.resource_spans(0).scope_spans(0).spans(1);
  EXPECT_EQ(static_cast<int>(odd.kind()), -1);
  ASSERT_TRUE(odd.has_status());
  EXPECT_EQ(odd.status().message(), "only message");
  EXPECT_EQ(odd.status().code(), pb::trace::v1::Status::STATUS_CODE_UNSET);
}

TEST(EncodeProtoTest, MinimalRequestIsExactlyTheExpectedBytes) {
  TraceBatch batch;
  AddEmptyResource(&batch);
  AddEmptyScope(&batch, 0);
  AddSpan(&batch, 0, 1, "a");
  std::string span = "\x0a\x10" + IdBytes(MakeTraceId(1)) + "\x12\x08" + IdBytes(MakeSpanId(1)) +
                     "\x2a\x01"
                     "a";
  std::string scope_spans = "\x12" + std::string(1, static_cast<char>(span.size())) + span;
  std::string resource_spans =
      "\x12" + std::string(1, static_cast<char>(scope_spans.size())) + scope_spans;
  std::string request =
      "\x0a" + std::string(1, static_cast<char>(resource_spans.size())) + resource_spans;
  EXPECT_EQ(EncodeTracesProto(batch), request);
  EXPECT_EQ(EncodeTracesProto(TraceBatch()), "");
}

TEST(EncodeProtoTest, LongValuesGetMultiByteLengthPrefixes) {
  TraceBatch batch;
  AddEmptyResource(&batch);
  AddEmptyScope(&batch, 0);
  AddSpan(&batch, 0, 1, "long");
  std::vector<std::string> values;
  for (size_t size : {127, 128, 16383, 16384, 300000}) values.push_back(std::string(size, 'v'));
  for (const std::string& v : values) AddKey(&batch.span_attributes, "k").AppendString(v);
  batch.spans.attributes[0] = Range{0, static_cast<uint32_t>(values.size())};
  std::string bytes = EncodeTracesProto(batch);
  TraceRequest request = Parse<TraceRequest>(bytes);
  const auto& span = request.resource_spans(0).scope_spans(0).spans(0);
  ASSERT_EQ(span.attributes_size(), static_cast<int>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(span.attributes(static_cast<int>(i)).value().string_value(), values[i]);
  }
  EXPECT_EQ(request.SerializeAsString(), bytes);
}

// Without the fields 0.38 lacks, every field is known to libprotobuf, which
// writes fields in number order and omits defaults: the bytes must match.
TEST(EncodeProtoTest, MatchesLibprotobufSerializationByteForByte) {
  std::string traces = EncodeTracesProto(MakeTraceBatch(/*newer_fields=*/false));
  EXPECT_EQ(Parse<TraceRequest>(traces).SerializeAsString(), traces);
  std::string logs = EncodeLogsProto(MakeLogBatch(/*newer_fields=*/false));
  EXPECT_EQ(Parse<LogsRequest>(logs).SerializeAsString(), logs);
  std::string metrics = EncodeMetricsProto(MakeMetricBatch(/*newer_fields=*/false));
  EXPECT_EQ(Parse<MetricsRequest>(metrics).SerializeAsString(), metrics);
}

// ------------------------------------------------------------- logs (proto)

TEST(EncodeProtoTest, LogRecordsKeepEveryFieldAndEventNameAsUnknownField) {
  LogBatch batch = MakeLogBatch(/*newer_fields=*/true);
  LogsRequest request = Parse<LogsRequest>(EncodeLogsProto(batch));
  CheckEnvelope(request, kResourceLogs, kScopeLogs, /*newer_fields=*/true);
  ASSERT_EQ(request.resource_logs_size(), 3);
  const auto& scope1 = request.resource_logs(0).scope_logs(0);
  ASSERT_EQ(scope1.log_records_size(), 3);
  const pb::logs::v1::LogRecord& full = scope1.log_records(0);
  EXPECT_EQ(full.time_unix_nano(), kStart);
  EXPECT_EQ(full.observed_time_unix_nano(), kEnd);
  EXPECT_EQ(full.severity_number(), pb::logs::v1::SEVERITY_NUMBER_ERROR);
  EXPECT_EQ(full.severity_text(), "ERROR");
  ASSERT_EQ(full.body().kvlist_value().values_size(), 1);
  EXPECT_EQ(full.body().kvlist_value().values(0).key(), "user");
  ExpectEveryValueKind(full.attributes());
  EXPECT_EQ(full.dropped_attributes_count(), 2u);
  EXPECT_EQ(full.flags(), 1u);
  EXPECT_EQ(full.trace_id(), IdBytes(MakeTraceId(0xa0)));
  EXPECT_EQ(full.span_id(), IdBytes(MakeSpanId(0xb0)));
  auto event_name = Unknown(full, 12);  // LogRecord.event_name
  ASSERT_EQ(event_name.size(), 1u);
  EXPECT_EQ(event_name[0]->type(), UnknownField::TYPE_LENGTH_DELIMITED);
  EXPECT_EQ(event_name[0]->length_delimited(), "user.login");

  const auto& empty_body = scope1.log_records(1);
  EXPECT_FALSE(empty_body.has_body());
  EXPECT_EQ(empty_body.trace_id(), "");
  EXPECT_EQ(empty_body.span_id(), "");
  EXPECT_EQ(empty_body.observed_time_unix_nano(), 5u);
  const auto& bytes_body = scope1.log_records(2);
  EXPECT_EQ(bytes_body.body().bytes_value(), "\x7f\x80");
  EXPECT_EQ(bytes_body.trace_id(), "");
  EXPECT_EQ(bytes_body.span_id(), IdBytes(MakeSpanId(0xc0)));
  const auto& scope2 = request.resource_logs(0).scope_logs(1);
  ASSERT_EQ(scope2.log_records_size(), 1);
  EXPECT_EQ(scope2.log_records(0).body().string_value(), "plain");
}

// ---------------------------------------------------------- metrics (proto)

TEST(EncodeProtoTest, MetricsKeepAllFiveTypesPresenceAndExemplars) {
  using pb::metrics::v1::Metric;
  MetricBatch batch = MakeMetricBatch(/*newer_fields=*/true);
  MetricsRequest request = Parse<MetricsRequest>(EncodeMetricsProto(batch));
  CheckEnvelope(request, kResourceMetrics, kScopeMetrics, /*newer_fields=*/true);
  ASSERT_EQ(request.resource_metrics_size(), 3);
  ASSERT_EQ(request.resource_metrics(0).scope_metrics_size(), 2);
  const auto& metrics = request.resource_metrics(0).scope_metrics(0).metrics();
  ASSERT_EQ(metrics.size(), 6);
  const auto& unset = request.resource_metrics(0).scope_metrics(1).metrics();
  ASSERT_EQ(unset.size(), 1);
  EXPECT_EQ(unset[0].name(), "u");
  EXPECT_EQ(unset[0].data_case(), Metric::DATA_NOT_SET);

  const Metric& gauge = metrics[0];
  EXPECT_EQ(gauge.description(), "d");
  EXPECT_EQ(gauge.unit(), "ms");
  ASSERT_EQ(gauge.gauge().data_points_size(), 2);
  const auto& p0 = gauge.gauge().data_points(0);
  EXPECT_EQ(p0.value_case(), pb::metrics::v1::NumberDataPoint::kAsDouble);
  EXPECT_EQ(p0.as_double(), 0.0);
  EXPECT_EQ(p0.start_time_unix_nano(), kStart);
  EXPECT_EQ(p0.time_unix_nano(), kEnd);
  ExpectEveryValueKind(p0.attributes());
  ASSERT_EQ(p0.exemplars_size(), 2);
  EXPECT_EQ(p0.exemplars(0).filtered_attributes(0).key(), "ex");
  EXPECT_EQ(p0.exemplars(0).time_unix_nano(), kStart);
  EXPECT_EQ(p0.exemplars(0).as_double(), 2.5);
  EXPECT_EQ(p0.exemplars(0).trace_id(), IdBytes(MakeTraceId(0xd0)));
  EXPECT_EQ(p0.exemplars(0).span_id(), IdBytes(MakeSpanId(0xe0)));
  EXPECT_EQ(p0.exemplars(1).as_int(), -3);
  EXPECT_EQ(p0.exemplars(1).trace_id(), "");
  const auto& p1 = gauge.gauge().data_points(1);
  EXPECT_EQ(p1.value_case(), pb::metrics::v1::NumberDataPoint::kAsInt);
  EXPECT_EQ(p1.as_int(), 0);
  EXPECT_EQ(p1.flags(), 1u);
  auto metadata = Unknown(gauge, 12);  // Metric.metadata
  ASSERT_EQ(metadata.size(), 1u);
  pb::common::v1::KeyValue kv;
  ASSERT_TRUE(kv.ParseFromString(metadata[0]->length_delimited()));
  EXPECT_EQ(kv.key(), "m");
  EXPECT_EQ(kv.value().string_value(), "v");

  const Metric& sum = metrics[1];
  EXPECT_TRUE(sum.sum().is_monotonic());
  EXPECT_EQ(sum.sum().aggregation_temporality(),
            pb::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE);
  EXPECT_EQ(sum.sum().data_points(0).as_int(), -5);

  const auto& h = metrics[2].histogram();
  EXPECT_EQ(h.aggregation_temporality(), pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA);
  const auto& hp = h.data_points(0);
  EXPECT_EQ(hp.count(), 10u);
  EXPECT_TRUE(hp.has_sum());
  EXPECT_EQ(hp.sum(), 0.0);
  EXPECT_FALSE(hp.has_min());
  EXPECT_TRUE(hp.has_max());
  EXPECT_EQ(hp.max(), 9.5);
  EXPECT_THAT(hp.bucket_counts(), ::testing::ElementsAre(1, 2, 7));
  EXPECT_THAT(hp.explicit_bounds(), ::testing::ElementsAre(0.5, 1.0));
  ASSERT_EQ(hp.exemplars_size(), 1);
  EXPECT_EQ(hp.exemplars(0).as_int(), 9);
  EXPECT_EQ(hp.exemplars(0).trace_id(), IdBytes(MakeTraceId(0xd0)));
  EXPECT_EQ(hp.exemplars(0).span_id(), "");

  const auto& e = metrics[3].exponential_histogram();
  EXPECT_EQ(e.aggregation_temporality(), pb::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE);
  const auto& ep = e.data_points(0);
  EXPECT_EQ(ep.count(), 5u);
  EXPECT_FALSE(ep.has_sum());
  EXPECT_TRUE(ep.has_min());
  EXPECT_EQ(ep.min(), -1.5);
  EXPECT_FALSE(ep.has_max());
  EXPECT_EQ(ep.scale(), -3);
  EXPECT_EQ(ep.zero_count(), 1u);
  EXPECT_EQ(ep.positive().offset(), -2);
  EXPECT_THAT(ep.positive().bucket_counts(), ::testing::ElementsAre(1, 2));
  EXPECT_FALSE(ep.has_negative());
  auto zero_threshold = Unknown(ep, 14);  // ExponentialHistogramDataPoint.zero_threshold
  ASSERT_EQ(zero_threshold.size(), 1u);
  EXPECT_EQ(zero_threshold[0]->type(), UnknownField::TYPE_FIXED64);
  EXPECT_EQ(std::bit_cast<double>(zero_threshold[0]->fixed64()), 1e-9);

  const auto& q = metrics[4].summary().data_points(0);
  EXPECT_EQ(q.count(), 3u);
  EXPECT_EQ(q.sum(), 6.5);
  ASSERT_EQ(q.quantile_values_size(), 3);
  EXPECT_EQ(q.quantile_values(0).quantile(), 0.0);
  EXPECT_EQ(q.quantile_values(1).quantile(), 0.5);
  EXPECT_EQ(q.quantile_values(2).value(), 3.0);

  EXPECT_EQ(metrics[5].name(), "empty");
  EXPECT_EQ(metrics[5].data_case(), Metric::kGauge);
  EXPECT_EQ(metrics[5].gauge().data_points_size(), 0);
}

// ---------------------------------------------------------------- JSON

class JsonDoc {
 public:
  explicit JsonDoc(const std::string& json) {
    simdjson::error_code error = parser_.parse(json).get(root_);
    EXPECT_EQ(error, simdjson::SUCCESS) << simdjson::error_message(error) << "\n" << json;
    // Invalid JSON has failed the test; continue with an empty object.
    if (error != simdjson::SUCCESS) (void)parser_.parse(std::string("{}")).get(root_);
  }

  bool Has(std::string_view pointer) {
    return root_.at_pointer(pointer).error() == simdjson::SUCCESS;
  }
  std::string_view Str(std::string_view pointer) { return Get<std::string_view>(pointer); }
  int64_t Int(std::string_view pointer) { return Get<int64_t>(pointer); }
  double Double(std::string_view pointer) { return Get<double>(pointer); }
  bool Bool(std::string_view pointer) { return Get<bool>(pointer); }
  size_t Size(std::string_view pointer) {
    simdjson::dom::element e;
    if (root_.at_pointer(pointer).get(e) != simdjson::SUCCESS) {
      ADD_FAILURE() << pointer << " is missing";
      return 0;
    }
    if (e.is_array()) return simdjson::dom::array(e).size();
    if (e.is_object()) return simdjson::dom::object(e).size();
    ADD_FAILURE() << pointer << " is neither an array nor an object";
    return 0;
  }

 private:
  template <typename T>
  T Get(std::string_view pointer) {
    T value{};
    simdjson::error_code error = root_.at_pointer(pointer).get(value);
    EXPECT_EQ(error, simdjson::SUCCESS) << pointer << ": " << simdjson::error_message(error);
    return value;
  }

  simdjson::dom::parser parser_;
  simdjson::dom::element root_;
};

// AddEveryValueKind()'s attributes in OTLP/JSON.
constexpr std::string_view kEveryValueKindJson =
    R"("attributes":[{"key":"str","value":{"stringValue":"hello"}},)"
    R"({"key":"empty_str","value":{"stringValue":""}},)"
    R"({"key":"true","value":{"boolValue":true}},{"key":"false","value":{"boolValue":false}},)"
    R"({"key":"int","value":{"intValue":"-42"}},{"key":"zero_int","value":{"intValue":"0"}},)"
    R"({"key":"double","value":{"doubleValue":3.25}},)"
    R"({"key":"zero_double","value":{"doubleValue":0.0}},)"
    R"({"key":"bytes","value":{"bytesValue":"AAH/"}},{"key":"empty","value":{}},)"
    R"({"key":"array","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"7"},)"
    R"({"arrayValue":{"values":[{"boolValue":true}]}},{}]}}},)"
    R"({"key":"kvlist","value":{"kvlistValue":{"values":[)"
    R"({"key":"inner","value":{"doubleValue":1.5}},)"
    R"({"key":"deep","value":{"kvlistValue":{"values":[{"key":"x","value":{"stringValue":"y"}}]}}})"
    R"(]}}},{"key":"empty_array","value":{"arrayValue":{}}},)"
    R"({"key":"empty_kvlist","value":{"kvlistValue":{}}}])";

TEST(EncodeJsonTest, MinimalRequestIsExactlyTheExpectedText) {
  TraceBatch batch;
  AddEmptyResource(&batch);
  AddEmptyScope(&batch, 0);
  AddSpan(&batch, 0, 1, "a");
  EXPECT_EQ(EncodeTracesJson(batch),
            R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":)"
            R"("0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"a"}]}]}]})");
  EXPECT_EQ(EncodeTracesJson(TraceBatch()), "{}");
  EXPECT_EQ(EncodeLogsJson(LogBatch()), "{}");
  EXPECT_EQ(EncodeMetricsJson(MetricBatch()), "{}");
}

TEST(EncodeJsonTest, TracesUseOtlpJsonNamesIdsAndIntegerEncodings) {
  TraceBatch batch = MakeTraceBatch(/*newer_fields=*/true);
  std::string json = EncodeTracesJson(batch);
  JsonDoc doc(json);
  EXPECT_EQ(doc.Size("/resourceSpans"), 3u);
  EXPECT_EQ(doc.Str("/resourceSpans/0/schemaUrl"), "res-schema");
  EXPECT_EQ(doc.Int("/resourceSpans/0/resource/droppedAttributesCount"), 1);
  EXPECT_EQ(doc.Str("/resourceSpans/0/resource/entityRefs/0/type"), "service");
  EXPECT_EQ(doc.Str("/resourceSpans/0/resource/entityRefs/0/idKeys/1"), "service.namespace");
  EXPECT_EQ(doc.Str("/resourceSpans/0/resource/entityRefs/0/descriptionKeys/0"), "service.version");
  EXPECT_EQ(doc.Size("/resourceSpans/1"), 0u);  // empty resource: {}
  EXPECT_EQ(doc.Str("/resourceSpans/2/scopeSpans/0/scope/name"), "idle");
  EXPECT_FALSE(doc.Has("/resourceSpans/2/scopeSpans/0/spans"));
  EXPECT_EQ(doc.Str("/resourceSpans/0/scopeSpans/0/scope/attributes/0/key"), "scope.attr");
  EXPECT_EQ(doc.Int("/resourceSpans/0/scopeSpans/0/scope/droppedAttributesCount"), 2);
  EXPECT_EQ(doc.Str("/resourceSpans/0/scopeSpans/1/spans/0/name"), "minimal");
  EXPECT_FALSE(doc.Has("/resourceSpans/0/scopeSpans/1/scope"));

  const std::string span = "/resourceSpans/0/scopeSpans/0/spans/0";
  EXPECT_EQ(doc.Str(span + "/traceId"), "101112131415161718191a1b1c1d1e1f");
  EXPECT_EQ(doc.Str(span + "/spanId"), "1011121314151617");
  EXPECT_EQ(doc.Str(span + "/parentSpanId"), "7071727374757677");
  EXPECT_EQ(doc.Str(span + "/traceState"), "vendor=1");
  EXPECT_EQ(doc.Int(span + "/flags"), 0x301);
  EXPECT_EQ(doc.Int(span + "/kind"), 2);
  EXPECT_EQ(doc.Str(span + "/startTimeUnixNano"), "1700000000123456789");
  EXPECT_EQ(doc.Str(span + "/endTimeUnixNano"), "1700000000987654321");
  EXPECT_EQ(doc.Int(span + "/droppedAttributesCount"), 3);
  EXPECT_EQ(doc.Str(span + "/events/0/timeUnixNano"), "1700000000123456790");
  EXPECT_EQ(doc.Int(span + "/events/0/droppedAttributesCount"), 6);
  EXPECT_EQ(doc.Size(span + "/events/1"), 0u);
  EXPECT_EQ(doc.Int(span + "/droppedEventsCount"), 4);
  EXPECT_EQ(doc.Str(span + "/links/0/traceId"), "505152535455565758595a5b5c5d5e5f");
  EXPECT_EQ(doc.Str(span + "/links/0/spanId"), "6061626364656667");
  EXPECT_EQ(doc.Int(span + "/links/0/flags"), 0x101);
  EXPECT_EQ(doc.Int(span + "/links/0/droppedAttributesCount"), 7);
  EXPECT_EQ(doc.Int(span + "/droppedLinksCount"), 5);
  EXPECT_EQ(doc.Str(span + "/status/message"), "boom");
  EXPECT_EQ(doc.Int(span + "/status/code"), 2);
  EXPECT_THAT(json, HasSubstr(kEveryValueKindJson));

  const std::string odd = "/resourceSpans/0/scopeSpans/0/spans/1";
  EXPECT_EQ(doc.Int(odd + "/kind"), -1);
  EXPECT_FALSE(doc.Has(odd + "/parentSpanId"));
  EXPECT_FALSE(doc.Has(odd + "/status/code"));
  EXPECT_FALSE(doc.Has(odd + "/startTimeUnixNano"));
}

TEST(EncodeJsonTest, LogsUseOtlpJsonNamesAndOmitAbsentBodyAndIds) {
  LogBatch batch = MakeLogBatch(/*newer_fields=*/true);
  std::string json = EncodeLogsJson(batch);
  JsonDoc doc(json);
  const std::string full = "/resourceLogs/0/scopeLogs/0/logRecords/0";
  EXPECT_EQ(doc.Str(full + "/timeUnixNano"), "1700000000123456789");
  EXPECT_EQ(doc.Str(full + "/observedTimeUnixNano"), "1700000000987654321");
  EXPECT_EQ(doc.Int(full + "/severityNumber"), 17);
  EXPECT_EQ(doc.Str(full + "/severityText"), "ERROR");
  EXPECT_EQ(doc.Str(full + "/body/kvlistValue/values/0/value/stringValue"), "ada");
  EXPECT_EQ(doc.Int(full + "/droppedAttributesCount"), 2);
  EXPECT_EQ(doc.Int(full + "/flags"), 1);
  EXPECT_EQ(doc.Str(full + "/traceId"), "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
  EXPECT_EQ(doc.Str(full + "/spanId"), "b0b1b2b3b4b5b6b7");
  EXPECT_EQ(doc.Str(full + "/eventName"), "user.login");
  EXPECT_THAT(json, HasSubstr(kEveryValueKindJson));
  const std::string empty = "/resourceLogs/0/scopeLogs/0/logRecords/1";
  EXPECT_EQ(doc.Size(empty), 1u);  // only observedTimeUnixNano
  EXPECT_EQ(doc.Str(empty + "/observedTimeUnixNano"), "5");
  const std::string bytes = "/resourceLogs/0/scopeLogs/0/logRecords/2";
  EXPECT_EQ(doc.Str(bytes + "/body/bytesValue"), "f4A=");
  EXPECT_FALSE(doc.Has(bytes + "/traceId"));
  EXPECT_EQ(doc.Str(bytes + "/spanId"), "c0c1c2c3c4c5c6c7");
  EXPECT_EQ(doc.Str("/resourceLogs/0/scopeLogs/1/logRecords/0/body/stringValue"), "plain");
}

TEST(EncodeJsonTest, MetricsUseOtlpJsonNamesForAllFiveTypes) {
  MetricBatch batch = MakeMetricBatch(/*newer_fields=*/true);
  std::string json = EncodeMetricsJson(batch);
  JsonDoc doc(json);
  const std::string m = "/resourceMetrics/0/scopeMetrics/0/metrics/";
  EXPECT_EQ(doc.Str(m + "0/unit"), "ms");
  EXPECT_EQ(doc.Str(m + "0/metadata/0/key"), "m");
  const std::string g = m + "0/gauge/dataPoints/";
  EXPECT_EQ(doc.Double(g + "0/asDouble"), 0.0);
  EXPECT_EQ(doc.Str(g + "0/startTimeUnixNano"), "1700000000123456789");
  EXPECT_EQ(doc.Str(g + "0/exemplars/0/filteredAttributes/0/key"), "ex");
  EXPECT_EQ(doc.Double(g + "0/exemplars/0/asDouble"), 2.5);
  EXPECT_EQ(doc.Str(g + "0/exemplars/0/traceId"), "d0d1d2d3d4d5d6d7d8d9dadbdcdddedf");
  EXPECT_EQ(doc.Str(g + "0/exemplars/0/spanId"), "e0e1e2e3e4e5e6e7");
  EXPECT_EQ(doc.Str(g + "0/exemplars/1/asInt"), "-3");
  EXPECT_FALSE(doc.Has(g + "0/exemplars/1/traceId"));
  EXPECT_EQ(doc.Str(g + "1/asInt"), "0");
  EXPECT_EQ(doc.Int(g + "1/flags"), 1);
  EXPECT_TRUE(doc.Bool(m + "1/sum/isMonotonic"));
  EXPECT_EQ(doc.Int(m + "1/sum/aggregationTemporality"), 2);
  EXPECT_EQ(doc.Str(m + "1/sum/dataPoints/0/asInt"), "-5");
  const std::string h = m + "2/histogram/dataPoints/0/";
  EXPECT_EQ(doc.Int(m + "2/histogram/aggregationTemporality"), 1);
  EXPECT_EQ(doc.Str(h + "count"), "10");
  EXPECT_EQ(doc.Double(h + "sum"), 0.0);
  EXPECT_FALSE(doc.Has(h + "min"));
  EXPECT_EQ(doc.Double(h + "max"), 9.5);
  EXPECT_THAT(json, HasSubstr(R"("bucketCounts":["1","2","7"],"explicitBounds":[0.5,1.0])"));
  EXPECT_EQ(doc.Str(h + "exemplars/0/asInt"), "9");
  const std::string e = m + "3/exponentialHistogram/dataPoints/0/";
  EXPECT_FALSE(doc.Has(e + "sum"));
  EXPECT_EQ(doc.Double(e + "min"), -1.5);
  EXPECT_EQ(doc.Int(e + "scale"), -3);
  EXPECT_EQ(doc.Str(e + "zeroCount"), "1");
  EXPECT_EQ(doc.Int(e + "positive/offset"), -2);
  EXPECT_EQ(doc.Str(e + "positive/bucketCounts/1"), "2");
  EXPECT_FALSE(doc.Has(e + "negative"));
  EXPECT_EQ(doc.Double(e + "zeroThreshold"), 1e-9);
  const std::string q = m + "4/summary/dataPoints/0/";
  EXPECT_EQ(doc.Str(q + "count"), "3");
  EXPECT_EQ(doc.Double(q + "sum"), 6.5);
  EXPECT_THAT(json, HasSubstr(R"("quantileValues":[{"value":1.0},{"quantile":0.5,"value":2.0},)"
                              R"({"quantile":1.0,"value":3.0}])"));
  EXPECT_EQ(doc.Size(m + "5/gauge"), 0u);  // type kept without points
  EXPECT_EQ(doc.Size("/resourceMetrics/0/scopeMetrics/1/metrics/0"), 1u);  // name only
}

// libprotobuf's JSON parser reads bytes fields as base64, while OTLP/JSON
// writes trace and span ids as hex: rewrite every id to base64 first.
std::string HexIdsToBase64(std::string_view json) {
  std::string out;
  for (size_t i = 0; i < json.size();) {
    size_t key = std::string::npos;
    for (std::string_view name : {"\"traceId\":\"", "\"spanId\":\"", "\"parentSpanId\":\""}) {
      if (json.substr(i, name.size()) == name) key = name.size();
    }
    if (key == std::string::npos) {
      out.push_back(json[i++]);
      continue;
    }
    out.append(json.substr(i, key));
    i += key;
    size_t end = json.find('"', i);
    std::string bytes;
    for (size_t h = i; h + 1 < end; h += 2) {
      bytes.push_back(static_cast<char>(std::stoi(std::string(json.substr(h, 2)), nullptr, 16)));
    }
    JsonWriter::AppendBase64(bytes, &out);
    i = end;
  }
  return out;
}

template <typename Request>
void ExpectJsonAgreesWithProto(const std::string& json, const std::string& proto) {
  Request from_json;
  google::protobuf::util::Status status =
      google::protobuf::util::JsonStringToMessage(HexIdsToBase64(json), &from_json);
  ASSERT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  Request from_proto = Parse<Request>(proto);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(from_json, from_proto))
      << from_json.DebugString() << "\nvs\n"
      << from_proto.DebugString();
}

// libprotobuf's JSON parser knows every name and encoding of the 0.38
// fields, and rejects unknown names: the JSON and protobuf outputs of one
// batch must parse to equal messages.
TEST(EncodeJsonTest, AgreesWithLibprotobufJsonParserOnEveryField) {
  TraceBatch traces = MakeTraceBatch(/*newer_fields=*/false);
  ExpectJsonAgreesWithProto<TraceRequest>(EncodeTracesJson(traces), EncodeTracesProto(traces));
  LogBatch logs = MakeLogBatch(/*newer_fields=*/false);
  ExpectJsonAgreesWithProto<LogsRequest>(EncodeLogsJson(logs), EncodeLogsProto(logs));
  MetricBatch metrics = MakeMetricBatch(/*newer_fields=*/false);
  ExpectJsonAgreesWithProto<MetricsRequest>(EncodeMetricsJson(metrics),
                                            EncodeMetricsProto(metrics));
}

// A batch with one resource, one scope and one log whose body is `body`.
LogBatch LogWithBody(auto append_body) {
  LogBatch b;
  AddEmptyResource(&b);
  AddEmptyScope(&b, 0);
  ValueColumns body;
  append_body(&body);
  b.logs.Append({.body = {body.type[0], body.str[0], body.bits[0]}});
  return b;
}

constexpr std::string_view kBodyPointer = "/resourceLogs/0/scopeLogs/0/logRecords/0/body";

TEST(EncodeJsonTest, StringsEscapeQuotesBackslashesAndControlCharacters) {
  const std::string text = std::string("q\"b\\s/\b\f\n\r\t\x01\x1f\x7f", 14) +
                           std::string(1, '\0') + "h\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80";
  LogBatch batch = LogWithBody([&](ValueColumns* body) { body->AppendString(text); });
  std::string json = EncodeLogsJson(batch);
  EXPECT_THAT(json, HasSubstr(R"("stringValue":"q\"b\\s/\b\f\n\r\t\u0001\u001f)"
                              "\x7f"
                              R"(\u0000h)"
                              "\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\""));
  JsonDoc doc(json);
  EXPECT_EQ(doc.Str(std::string(kBodyPointer) + "/stringValue"), text);
}

TEST(EncodeJsonTest, MalformedUtf8BecomesReplacementCharacter) {
  // A lone continuation byte, an overlong '/', a UTF-16 surrogate, a code
  // point above U+10FFFF and a truncated sequence at the end.
  std::string out;
  JsonWriter::AppendEscaped(
      "a\x80"
      "b\xc0\xaf"
      "c\xed\xa0\x80"
      "d\xf4\x90\x80\x80"
      "e\xe2\x9c",
      &out);
  const std::string r = "\xef\xbf\xbd";
  EXPECT_EQ(out, "a" + r + "b" + r + r + "c" + r + r + r + "d" + r + r + r + r + "e" + r + r);
  std::string json = "\"" + out + "\"";
  simdjson::dom::parser parser;
  EXPECT_EQ(parser.parse(json).error(), simdjson::SUCCESS);
}

TEST(EncodeJsonTest, Base64MatchesRfc4648Vectors) {
  const std::pair<std::string_view, std::string_view> vectors[] = {{"", ""},
                                                                   {"f", "Zg=="},
                                                                   {"fo", "Zm8="},
                                                                   {"foo", "Zm9v"},
                                                                   {"foob", "Zm9vYg=="},
                                                                   {"fooba", "Zm9vYmE="},
                                                                   {"foobar", "Zm9vYmFy"},
                                                                   {"\xff\xfe", "//4="}};
  for (const auto& [input, expected] : vectors) {
    std::string out;
    JsonWriter::AppendBase64(input, &out);
    EXPECT_EQ(out, expected) << input;
  }
}

TEST(EncodeJsonTest, DoublesRoundTripBitExactly) {
  const double values[] = {0.1,
                           -0.0,
                           1.0 / 3.0,
                           123.0,
                           9007199254740993.0,
                           1e22,
                           1e-7,
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           -std::numeric_limits<double>::max(),
                           2.2250738585072009e-308};
  for (double v : values) {
    LogBatch batch = LogWithBody([&](ValueColumns* body) { body->AppendDouble(v); });
    std::string json = EncodeLogsJson(batch);
    JsonDoc doc(json);
    double parsed = doc.Double(std::string(kBodyPointer) + "/doubleValue");
    EXPECT_EQ(std::bit_cast<uint64_t>(parsed), std::bit_cast<uint64_t>(v)) << json;
  }
}

TEST(EncodeJsonTest, NonFiniteDoublesAreStrings) {
  const std::pair<double, std::string_view> cases[] = {
      {std::numeric_limits<double>::quiet_NaN(), R"({"doubleValue":"NaN"})"},
      {std::numeric_limits<double>::infinity(), R"({"doubleValue":"Infinity"})"},
      {-std::numeric_limits<double>::infinity(), R"({"doubleValue":"-Infinity"})"}};
  for (const auto& c : cases) {
    const double v = c.first;
    const std::string_view expected = c.second;
    LogBatch batch = LogWithBody([&](ValueColumns* body) { body->AppendDouble(v); });
    EXPECT_THAT(EncodeLogsJson(batch), HasSubstr(std::string("\"body\":") + std::string(expected)));
  }
}

}  // namespace
}  // namespace strata::otlp
