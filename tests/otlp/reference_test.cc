// Tests of the differential-test harness itself (otlp_reference): the
// generator covers every field of the 0.38 protos and replays by seed, the
// converters refuse what 0.38 cannot hold, the comparison sees what it must,
// and OTLP/JSON ids are hex. A harness that cannot fail proves nothing.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp_reference/compare.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"
#include "otlp_reference/otlp_json.h"
#include "otlp_reference/to_message.h"

namespace strata::otlp_reference {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// ------------------------------------------------------------ coverage

// What a walk over generated messages saw: "set:<field>" and "unset:<field>"
// for fields, "none:<oneof>" for oneofs with no member set, and "value:<tag>"
// for corner-case values.
using Seen = std::set<std::string>;

void NoteDouble(double v, Seen* seen) {
  if (std::isnan(v)) seen->insert("value:nan");
  if (std::isinf(v)) seen->insert(v > 0 ? "value:+inf" : "value:-inf");
  if (v == 0 && std::signbit(v)) seen->insert("value:-0");
}

void NoteScalar(const Message& m, const FieldDescriptor* f, int i, Seen* seen) {
  const Reflection* r = m.GetReflection();
  bool repeated = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      NoteDouble(repeated ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f), seen);
      break;
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v = repeated ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f);
      if (v == std::numeric_limits<uint64_t>::max()) seen->insert("value:max-uint64");
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v = repeated ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f);
      if (v == std::numeric_limits<int64_t>::min()) seen->insert("value:min-int64");
      if (v < 0) seen->insert("value:negative-int64");
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string v = repeated ? r->GetRepeatedString(m, f, i) : r->GetString(m, f);
      for (unsigned char c : v) {
        if (c >= 0xf0) seen->insert("value:4-byte-utf8");
      }
      break;
    }
    default:
      break;
  }
}

void Walk(const Message& m, Seen* seen) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->oneof_decl_count(); ++i) {
    if (!r->HasOneof(m, d->oneof_decl(i))) seen->insert("none:" + d->oneof_decl(i)->full_name());
  }
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    int n = f->is_repeated() ? r->FieldSize(m, f) : (r->HasField(m, f) ? 1 : 0);
    seen->insert((n > 0 ? "set:" : "unset:") + f->full_name());
    for (int k = 0; k < n; ++k) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        Walk(f->is_repeated() ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f), seen);
      } else {
        NoteScalar(m, f, f->is_repeated() ? k : -1, seen);
      }
    }
  }
}

// Every non-deprecated field reachable from `d`.
void ReachableFields(const Descriptor* d, std::set<const Descriptor*>* visited,
                     std::set<const FieldDescriptor*>* out) {
  if (!visited->insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->options().deprecated()) continue;
    out->insert(f);
    if (f->message_type() != nullptr) ReachableFields(f->message_type(), visited, out);
  }
}

template <typename Request>
void ExpectEveryFieldCovered(Request (*generate)(uint64_t)) {
  Seen seen;
  for (uint64_t seed = 1; seed <= 400; ++seed) Walk(generate(seed), &seen);
  std::set<const Descriptor*> visited;
  std::set<const FieldDescriptor*> fields;
  ReachableFields(Request::descriptor(), &visited, &fields);
  for (const FieldDescriptor* f : fields) {
    EXPECT_TRUE(seen.count("set:" + f->full_name())) << f->full_name() << " never set";
    // Absent messages, optionals and oneof members are corner cases too.
    if (!f->is_repeated() && f->has_presence()) {
      EXPECT_TRUE(seen.count("unset:" + f->full_name())) << f->full_name() << " always set";
    }
  }
  for (const Descriptor* d : visited) {
    for (int i = 0; i < d->oneof_decl_count(); ++i) {
      if (d->oneof_decl(i)->is_synthetic()) continue;
      EXPECT_TRUE(seen.count("none:" + d->oneof_decl(i)->full_name()))
          << d->oneof_decl(i)->full_name() << " never left unset";
    }
  }
  for (const char* tag : {"value:nan", "value:+inf", "value:-inf", "value:-0", "value:max-uint64",
                          "value:min-int64", "value:negative-int64", "value:4-byte-utf8"}) {
    EXPECT_TRUE(seen.count(tag)) << tag << " never generated";
  }
}

TEST(GeneratorTest, RandomTracesCoverEveryFieldAndCornerCase) {
  ExpectEveryFieldCovered(&RandomTraceRequest);
}

TEST(GeneratorTest, RandomLogsCoverEveryFieldAndCornerCase) {
  ExpectEveryFieldCovered(&RandomLogsRequest);
}

TEST(GeneratorTest, RandomMetricsCoverEveryFieldAndCornerCase) {
  ExpectEveryFieldCovered(&RandomMetricsRequest);
}

TEST(GeneratorTest, SameSeedReplaysSameRequestAndSeedsDiffer) {
  EXPECT_EQ(RandomTraceRequest(42).SerializeAsString(), RandomTraceRequest(42).SerializeAsString());
  EXPECT_EQ(RandomMetricsRequest(7).SerializeAsString(),
            RandomMetricsRequest(7).SerializeAsString());
  std::set<std::string> distinct;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    distinct.insert(RandomLogsRequest(seed).SerializeAsString());
  }
  EXPECT_GT(distinct.size(), 40u);
}

TEST(GeneratorTest, RealisticRequestsHaveTheRequestedSize) {
  TraceRequest traces = RealisticTraceRequest(1, 500);
  int spans = 0;
  for (const auto& rs : traces.resource_spans()) {
    EXPECT_EQ(rs.resource().attributes_size(), 8);
    for (const auto& ss : rs.scope_spans()) spans += ss.spans_size();
  }
  EXPECT_EQ(spans, 500);
  EXPECT_EQ(traces.resource_spans_size(), 5);
  LogsRequest logs = RealisticLogsRequest(1, 300);
  int records = 0;
  for (const auto& rl : logs.resource_logs()) records += rl.scope_logs(0).log_records_size();
  EXPECT_EQ(records, 300);
  MetricsRequest metrics = RealisticMetricsRequest(1, 400);
  int points = 0;
  for (const auto& rm : metrics.resource_metrics()) {
    for (const auto& m : rm.scope_metrics(0).metrics()) {
      points += m.gauge().data_points_size() + m.sum().data_points_size() +
                m.histogram().data_points_size();
    }
  }
  EXPECT_EQ(points, 400);
}

// ----------------------------------------------------------- to_message

void AddResourceAndScope(otlp::BatchBase* b) {
  b->resources.attributes.push_back({});
  b->resources.dropped_attributes_count.push_back(0);
  b->resources.entity_refs.push_back({});
  b->resources.schema_url.push_back("https://example.com/schema");
  b->scopes.resource.push_back(0);
  b->scopes.name.push_back("scope");
  b->scopes.version.push_back("1.0");
  b->scopes.attributes.push_back({});
  b->scopes.dropped_attributes_count.push_back(0);
  b->scopes.schema_url.push_back("");
}

otlp::TraceBatch OneSpanBatch() {
  otlp::TraceBatch b;
  AddResourceAndScope(&b);
  otlp::SpanColumns& s = b.spans;
  s.scope.push_back(0);
  s.trace_id.push_back({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  s.span_id.push_back({1, 2, 3, 4, 5, 6, 7, 8});
  s.trace_state.push_back("");
  s.parent_span_id.push_back({});
  s.has_parent_span_id.push_back(0);
  s.flags.push_back(0);
  s.name.push_back("GET /");
  s.kind.push_back(2);
  s.start_time_unix_nano.push_back(1);
  s.end_time_unix_nano.push_back(2);
  s.attributes.push_back({0, 1});
  s.dropped_attributes_count.push_back(0);
  s.events.push_back({});
  s.dropped_events_count.push_back(0);
  s.links.push_back({});
  s.dropped_links_count.push_back(0);
  s.status_message.push_back("");
  s.status_code.push_back(0);
  b.span_attributes.key.push_back("http.response.status_code");
  b.span_attributes.value.AppendInt(200);
  return b;
}

otlp::LogBatch OneLogBatch() {
  otlp::LogBatch b;
  AddResourceAndScope(&b);
  otlp::LogRecordColumns& l = b.logs;
  l.scope.push_back(0);
  l.time_unix_nano.push_back(5);
  l.observed_time_unix_nano.push_back(6);
  l.severity_number.push_back(9);
  l.severity_text.push_back("INFO");
  l.body.AppendString("hello");
  l.attributes.push_back({});
  l.dropped_attributes_count.push_back(0);
  l.flags.push_back(0);
  l.trace_id.push_back({});
  l.has_trace_id.push_back(0);
  l.span_id.push_back({});
  l.has_span_id.push_back(0);
  l.event_name.push_back("");
  return b;
}

otlp::MetricBatch OneExponentialHistogramBatch() {
  otlp::MetricBatch b;
  AddResourceAndScope(&b);
  otlp::MetricColumns& m = b.metrics;
  m.scope.push_back(0);
  m.name.push_back("latency");
  m.description.push_back("");
  m.unit.push_back("ms");
  m.metadata.push_back({});
  m.type.push_back(otlp::MetricType::kExponentialHistogram);
  m.aggregation_temporality.push_back(1);
  m.is_monotonic.push_back(0);
  m.points.push_back({0, 1});
  otlp::ExponentialPointColumns& p = b.exponential_points;
  p.metric.push_back(0);
  p.attributes.push_back({});
  p.start_time_unix_nano.push_back(1);
  p.time_unix_nano.push_back(2);
  p.flags.push_back(0);
  p.exemplars.push_back({});
  p.count.push_back(3);
  p.sum.push_back(4.5);
  p.min.push_back(0);
  p.max.push_back(0);
  p.present.push_back(otlp::kHasSum);
  p.scale.push_back(-2);
  p.zero_count.push_back(1);
  p.zero_threshold.push_back(0.0);
  p.positive_offset.push_back(-3);
  p.positive_bucket_counts.push_back({0, 2});
  p.negative_offset.push_back(0);
  p.negative_bucket_counts.push_back({});
  b.bucket_counts = {1, 1};
  return b;
}

TEST(ToMessageTest, ConvertsHandBuiltBatches) {
  absl::StatusOr<TraceRequest> traces = ToTraceRequest(OneSpanBatch());
  ASSERT_TRUE(traces.ok()) << traces.status();
  const auto& span = traces->resource_spans(0).scope_spans(0).spans(0);
  EXPECT_EQ(span.name(), "GET /");
  EXPECT_EQ(span.attributes(0).value().int_value(), 200);
  EXPECT_TRUE(span.parent_span_id().empty());
  EXPECT_TRUE(span.has_status());
  absl::StatusOr<LogsRequest> logs = ToLogsRequest(OneLogBatch());
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_EQ(logs->resource_logs(0).scope_logs(0).log_records(0).body().string_value(), "hello");
  absl::StatusOr<MetricsRequest> metrics = ToMetricsRequest(OneExponentialHistogramBatch());
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const auto& point =
      metrics->resource_metrics(0).scope_metrics(0).metrics(0).exponential_histogram().data_points(
          0);
  EXPECT_EQ(point.positive().offset(), -3);
  EXPECT_EQ(point.positive().bucket_counts_size(), 2);
  EXPECT_TRUE(point.has_sum());
  EXPECT_FALSE(point.has_min());
}

TEST(ToMessageTest, RefusesFieldsThe038ProtosCannotHold) {
  otlp::TraceBatch span_flags = OneSpanBatch();
  span_flags.spans.flags[0] = 1;
  EXPECT_EQ(ToTraceRequest(span_flags).status().code(), absl::StatusCode::kInvalidArgument);
  otlp::TraceBatch scope_dropped = OneSpanBatch();
  scope_dropped.scopes.dropped_attributes_count[0] = 2;
  EXPECT_EQ(ToTraceRequest(scope_dropped).status().code(), absl::StatusCode::kInvalidArgument);
  otlp::TraceBatch scope_attributes = OneSpanBatch();
  scope_attributes.scope_attributes.key.push_back("k");
  scope_attributes.scope_attributes.value.AppendBool(true);
  scope_attributes.scopes.attributes[0] = {0, 1};
  EXPECT_EQ(ToTraceRequest(scope_attributes).status().code(), absl::StatusCode::kInvalidArgument);
  otlp::LogBatch event_name = OneLogBatch();
  event_name.logs.event_name[0] = "device.app.lifecycle";
  EXPECT_EQ(ToLogsRequest(event_name).status().code(), absl::StatusCode::kInvalidArgument);
  otlp::MetricBatch zero_threshold = OneExponentialHistogramBatch();
  zero_threshold.exponential_points.zero_threshold[0] = 1e-9;
  EXPECT_EQ(ToMetricsRequest(zero_threshold).status().code(), absl::StatusCode::kInvalidArgument);
  otlp::MetricBatch metadata = OneExponentialHistogramBatch();
  metadata.metadata_attributes.key.push_back("k");
  metadata.metadata_attributes.value.AppendEmpty();
  metadata.metrics.metadata[0] = {0, 1};
  EXPECT_EQ(ToMetricsRequest(metadata).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ToMessageTest, ReportsBrokenBatchInvariantsAsInternal) {
  otlp::TraceBatch out_of_range = OneSpanBatch();
  out_of_range.spans.attributes[0] = {0, 2};
  EXPECT_EQ(ToTraceRequest(out_of_range).status().code(), absl::StatusCode::kInternal);
  otlp::TraceBatch short_column = OneSpanBatch();
  short_column.spans.kind.clear();
  EXPECT_EQ(ToTraceRequest(short_column).status().code(), absl::StatusCode::kInternal);
  otlp::LogBatch absent_but_set = OneLogBatch();
  absent_but_set.logs.trace_id[0][3] = 1;
  EXPECT_EQ(ToLogsRequest(absent_but_set).status().code(), absl::StatusCode::kInternal);
  otlp::MetricBatch wrong_owner = OneExponentialHistogramBatch();
  wrong_owner.exponential_points.metric[0] = 1;
  EXPECT_EQ(ToMetricsRequest(wrong_owner).status().code(), absl::StatusCode::kInternal);
}

// ------------------------------------------------- comparison and JSON

TEST(CompareTest, NegativeZeroDiffersAndNaNEqualsNaN) {
  opentelemetry::proto::common::v1::AnyValue a, b;
  a.set_double_value(0.0);
  b.set_double_value(-0.0);
  EXPECT_NE(MessageDifferences(a, b), "");
  a.set_double_value(std::numeric_limits<double>::quiet_NaN());
  b.set_double_value(-std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(MessageDifferences(a, b), "");
  b.set_int_value(0);
  EXPECT_NE(MessageDifferences(a, b), "");
}

TEST(NormalizeTest, SetsOnlyPresenceThatCarriesNoMeaning) {
  TraceRequest request;
  auto* span = request.add_resource_spans()->add_scope_spans()->add_spans();
  span->add_attributes()->set_key("no value");
  MetricsRequest metrics;
  auto* point = metrics.add_resource_metrics()
                    ->add_scope_metrics()
                    ->add_metrics()
                    ->mutable_histogram()
                    ->add_data_points();
  Normalize(&request);
  Normalize(&metrics);
  EXPECT_TRUE(request.resource_spans(0).has_resource());
  EXPECT_TRUE(request.resource_spans(0).scope_spans(0).has_scope());
  EXPECT_TRUE(span->has_status());
  EXPECT_TRUE(span->attributes(0).has_value());
  EXPECT_EQ(span->attributes(0).value().value_case(),
            opentelemetry::proto::common::v1::AnyValue::VALUE_NOT_SET);
  EXPECT_FALSE(point->has_sum());
  EXPECT_FALSE(point->has_min());
}

TEST(OtlpJsonTest, IdsAreLowercaseHexAndEnumsAreIntegers) {
  TraceRequest request;
  auto* span = request.add_resource_spans()->add_scope_spans()->add_spans();
  span->set_trace_id(
      std::string("\x5b\x8e\xff\xf7\x98\x03\x81\x03\xd2\x69\xb6\x33\x81\x3f\xc6\x0c", 16));
  span->set_span_id(std::string("\xee\xe1\x9b\x7e\xc3\xc1\xb1\x74", 8));
  span->set_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_SERVER);
  span->add_attributes()->mutable_value()->set_bytes_value("\xff");
  absl::StatusOr<std::string> json = ToOtlpJson(request);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"traceId\":\"5b8efff798038103d269b633813fc60c\""), std::string::npos)
      << *json;
  EXPECT_NE(json->find("\"spanId\":\"eee19b7ec3c1b174\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"kind\":2"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"bytesValue\":\"/w==\""), std::string::npos) << *json;
  TraceRequest parsed;
  ASSERT_TRUE(FromOtlpJson(*json, &parsed).ok());
  EXPECT_EQ(MessageDifferences(request, parsed), "");
  EXPECT_FALSE(
      FromOtlpJson(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]})", &parsed)
          .ok());
}

TEST(OtlpJsonTest, Int64AsNumbersUnquotesOnlyInt64Values) {
  LogsRequest request;
  auto* record = request.add_resource_logs()->add_scope_logs()->add_log_records();
  record->set_time_unix_nano(std::numeric_limits<uint64_t>::max());
  record->mutable_body()->set_string_value("123");
  auto* attribute = record->add_attributes();
  attribute->set_key("count");
  attribute->mutable_value()->set_int_value(-5);
  absl::StatusOr<std::string> json = ToOtlpJson(request, {.int64_as_numbers = true});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"timeUnixNano\":18446744073709551615"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"stringValue\":\"123\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"key\":\"count\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"intValue\":-5"), std::string::npos) << *json;
  LogsRequest parsed;
  ASSERT_TRUE(FromOtlpJson(*json, &parsed).ok());
  EXPECT_EQ(MessageDifferences(request, parsed), "");
}

}  // namespace
}  // namespace strata::otlp_reference
