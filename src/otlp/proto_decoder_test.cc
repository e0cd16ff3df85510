// Tests of the protobuf OTLP decoders (decode.h: Decode*Proto) and of
// ValidateBatch.
//
// Valid requests are built with libprotobuf's classes (OTLP 0.38 protos);
// fields newer than 0.38 and malformed input are built with the small wire
// writer below. Every error case checks the code, the field path and the
// byte offset in the message.

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp_reference/generator.h"

namespace strata::otlp {
namespace {

namespace pb = ::opentelemetry::proto;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ------------------------------------------------------------ wire writer

// Builds protobuf wire bytes field by field, including malformed ones.
class Wire {
 public:
  Wire& Varint(uint32_t field, uint64_t v) {
    Key(field, 0);
    RawVarint(v);
    return *this;
  }
  Wire& Fixed64(uint32_t field, uint64_t v) {
    Key(field, 1);
    bytes_.append(reinterpret_cast<const char*>(&v), 8);
    return *this;
  }
  Wire& Double(uint32_t field, double v) { return Fixed64(field, std::bit_cast<uint64_t>(v)); }
  Wire& Fixed32(uint32_t field, uint32_t v) {
    Key(field, 5);
    bytes_.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
  Wire& Bytes(uint32_t field, std::string_view s) {
    Key(field, 2);
    RawVarint(s.size());
    bytes_.append(s);
    return *this;
  }
  Wire& Message(uint32_t field, const Wire& m) { return Bytes(field, m.str()); }
  Wire& StartGroup(uint32_t field) {
    Key(field, 3);
    return *this;
  }
  Wire& EndGroup(uint32_t field) {
    Key(field, 4);
    return *this;
  }
  Wire& Key(uint32_t field, uint32_t wire_type) {
    RawVarint(uint64_t{field} << 3 | wire_type);
    return *this;
  }
  Wire& RawVarint(uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
    return *this;
  }
  Wire& Raw(std::string_view s) {
    bytes_.append(s);
    return *this;
  }
  const std::string& str() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  std::string bytes_;
};

const std::string kTraceId(16, '\x11');
const std::string kSpanId(8, '\x22');

Wire MinimalSpan() { return Wire().Bytes(1, kTraceId).Bytes(2, kSpanId); }

// ExportTraceServiceRequest{resource_spans{scope_spans{spans: span}}}.
Wire TraceRequest(const Wire& span) {
  return Wire().Message(1, Wire().Message(2, Wire().Message(2, span)));
}
Wire LogRequest(const Wire& record) {
  return Wire().Message(1, Wire().Message(2, Wire().Message(2, record)));
}
Wire MetricRequest(const Wire& metric) {
  return Wire().Message(1, Wire().Message(2, Wire().Message(2, metric)));
}
// A span whose first attribute has `value` (an AnyValue message).
Wire SpanWithValue(const Wire& value) {
  return MinimalSpan().Message(9, Wire().Bytes(1, "k").Message(2, value));
}

std::string Str(std::string_view s) { return std::string(s); }
std::string Str(absl::string_view s) { return std::string(s); }

// The decode failed with InvalidArgument naming `path` and a byte offset.
void ExpectRejected(const absl::Status& status, std::string_view path,
                    std::string_view detail = {}) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr(Str(path)));
  EXPECT_THAT(message, HasSubstr("(at byte "));
  if (!detail.empty()) EXPECT_THAT(message, HasSubstr(Str(detail)));
}

absl::Status DecodeTraces(const std::string& bytes, TraceBatch* batch = nullptr,
                          const DecodeLimits& limits = {}) {
  TraceBatch local;
  if (batch == nullptr) batch = &local;
  absl::Status status = DecodeTracesProto(bytes, batch, limits);
  if (status.ok()) {
    absl::Status valid = ValidateBatch(*batch);
    EXPECT_TRUE(valid.ok()) << valid;
  }
  return status;
}

// ------------------------------------------------------------------ traces

void SetAnyValues(pb::trace::v1::Span* span) {
  auto add = [span](const std::string& key) {
    auto* kv = span->add_attributes();
    kv->set_key(key);
    return kv->mutable_value();
  };
  add("str")->set_string_value("hello");
  add("bool")->set_bool_value(true);
  add("int")->set_int_value(-42);
  add("double")->set_double_value(2.5);
  add("bytes")->set_bytes_value(std::string("\x00\xff", 2));
  // ["a", {"x": [7, 8]}, 3]
  auto* array = add("array")->mutable_array_value();
  array->add_values()->set_string_value("a");
  auto* inner = array->add_values()->mutable_kvlist_value()->add_values();
  inner->set_key("x");
  auto* inner_array = inner->mutable_value()->mutable_array_value();
  inner_array->add_values()->set_int_value(7);
  inner_array->add_values()->set_int_value(8);
  array->add_values()->set_int_value(3);
  span->add_attributes()->set_key("empty");
}

pb::collector::trace::v1::ExportTraceServiceRequest SampleTraceRequest() {
  pb::collector::trace::v1::ExportTraceServiceRequest req;
  auto* rs = req.add_resource_spans();
  rs->set_schema_url("https://schema/r");
  auto* res = rs->mutable_resource();
  res->set_dropped_attributes_count(3);
  auto* attr = res->add_attributes();
  attr->set_key("service.name");
  attr->mutable_value()->set_string_value("checkout");
  auto* ss = rs->add_scope_spans();
  ss->set_schema_url("https://schema/s");
  ss->mutable_scope()->set_name("lib");
  ss->mutable_scope()->set_version("1.2");
  auto* span = ss->add_spans();
  span->set_trace_id(std::string(16, '\x01'));
  span->set_span_id(std::string(8, '\x02'));
  span->set_parent_span_id(std::string(8, '\x03'));
  span->set_trace_state("k=v");
  span->set_name("GET /cart");
  span->set_kind(pb::trace::v1::Span::SPAN_KIND_SERVER);
  span->set_start_time_unix_nano(1700000000123456789);
  span->set_end_time_unix_nano(1700000000223456789);
  span->set_dropped_attributes_count(1);
  span->set_dropped_events_count(2);
  span->set_dropped_links_count(4);
  span->mutable_status()->set_code(pb::trace::v1::Status::STATUS_CODE_ERROR);
  span->mutable_status()->set_message("boom");
  SetAnyValues(span);
  auto* event = span->add_events();
  event->set_name("exception");
  event->set_time_unix_nano(1700000000150000000);
  event->set_dropped_attributes_count(5);
  auto* ea = event->add_attributes();
  ea->set_key("exception.type");
  ea->mutable_value()->set_string_value("E");
  auto* link = span->add_links();
  link->set_trace_id(std::string(16, '\x04'));
  link->set_span_id(std::string(8, '\x05'));
  link->set_trace_state("l=1");
  link->set_dropped_attributes_count(6);
  link->add_attributes()->set_key("link.attr");
  // A second span in a second resource, without parent or status.
  auto* rs2 = req.add_resource_spans();
  auto* span2 = rs2->add_scope_spans()->add_spans();
  span2->set_trace_id(std::string(16, '\x07'));
  span2->set_span_id(std::string(8, '\x08'));
  span2->set_kind(static_cast<pb::trace::v1::Span::SpanKind>(99));
  return req;
}

TEST(ProtoDecoderTraces, LibprotobufRequestDecodesToColumns) {
  const std::string bytes = SampleTraceRequest().SerializeAsString();
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(bytes, &b).ok());

  ASSERT_EQ(b.resources.size(), 2u);
  EXPECT_EQ(b.resources.schema_url[0], "https://schema/r");
  EXPECT_EQ(b.resources.dropped_attributes_count[0], 3u);
  EXPECT_EQ(b.resources.attributes[0], (Range{0, 1}));
  EXPECT_EQ(b.resource_attributes.key[0], "service.name");
  EXPECT_EQ(b.resource_attributes.value.str[0], "checkout");
  EXPECT_EQ(b.resources.attributes[1].count, 0u);  // absent Resource is empty
  ASSERT_EQ(b.scopes.size(), 2u);
  EXPECT_EQ(b.scopes.resource[0], 0u);
  EXPECT_EQ(b.scopes.resource[1], 1u);
  EXPECT_EQ(b.scopes.name[0], "lib");
  EXPECT_EQ(b.scopes.version[0], "1.2");
  EXPECT_EQ(b.scopes.schema_url[0], "https://schema/s");
  EXPECT_EQ(b.scopes.name[1], "");

  ASSERT_EQ(b.spans.size(), 2u);
  const SpanColumns& s = b.spans;
  EXPECT_EQ(s.scope[0], 0u);
  EXPECT_EQ(s.scope[1], 1u);
  EXPECT_EQ(s.trace_id[0], (TraceId{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(s.span_id[0], (SpanId{2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(s.parent_span_id[0], (SpanId{3, 3, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(s.has_parent_span_id[0], 1);
  EXPECT_EQ(s.has_parent_span_id[1], 0);
  EXPECT_EQ(s.parent_span_id[1], SpanId{});
  EXPECT_EQ(s.trace_state[0], "k=v");
  EXPECT_EQ(s.name[0], "GET /cart");
  EXPECT_EQ(s.kind[0], 2);
  EXPECT_EQ(s.kind[1], 99);  // enum values outside the enum are kept as sent
  EXPECT_EQ(s.start_time_unix_nano[0], 1700000000123456789u);
  EXPECT_EQ(s.end_time_unix_nano[0], 1700000000223456789u);
  EXPECT_EQ(s.dropped_attributes_count[0], 1u);
  EXPECT_EQ(s.dropped_events_count[0], 2u);
  EXPECT_EQ(s.dropped_links_count[0], 4u);
  EXPECT_EQ(s.status_code[0], 2);
  EXPECT_EQ(s.status_message[0], "boom");
  EXPECT_EQ(s.status_code[1], 0);
  EXPECT_EQ(s.flags[0], 0u);

  EXPECT_EQ(s.attributes[0], (Range{0, 7}));
  EXPECT_EQ(s.attributes[1], (Range{7, 0}));
  const AttributeColumns& a = b.span_attributes;
  EXPECT_THAT(a.key, ElementsAre("str", "bool", "int", "double", "bytes", "array", "empty"));
  EXPECT_EQ(a.value.type[0], ValueType::kString);
  EXPECT_EQ(a.value.str[0], "hello");
  EXPECT_EQ(a.value.type[1], ValueType::kBool);
  EXPECT_TRUE(a.value.bool_at(1));
  EXPECT_EQ(a.value.int_at(2), -42);
  EXPECT_EQ(a.value.double_at(3), 2.5);
  EXPECT_EQ(a.value.type[4], ValueType::kBytes);
  EXPECT_EQ(a.value.str[4], std::string_view("\x00\xff", 2));
  EXPECT_EQ(a.value.type[6], ValueType::kEmpty);  // KeyValue without value

  // Nested: the array's three elements are contiguous although the second
  // holds a kvlist that holds another array.
  ASSERT_EQ(a.value.type[5], ValueType::kArray);
  const Range elems = a.value.children_at(5);
  ASSERT_EQ(elems.count, 3u);
  const ValueColumns& nv = b.nested_values;
  EXPECT_EQ(nv.str[elems.begin], "a");
  EXPECT_EQ(nv.int_at(elems.begin + 2), 3);
  ASSERT_EQ(nv.type[elems.begin + 1], ValueType::kKvList);
  const Range entries = nv.children_at(elems.begin + 1);
  ASSERT_EQ(entries.count, 1u);
  EXPECT_EQ(b.nested_attributes.key[entries.begin], "x");
  ASSERT_EQ(b.nested_attributes.value.type[entries.begin], ValueType::kArray);
  const Range inner = b.nested_attributes.value.children_at(entries.begin);
  ASSERT_EQ(inner.count, 2u);
  EXPECT_EQ(nv.int_at(inner.begin), 7);
  EXPECT_EQ(nv.int_at(inner.begin + 1), 8);

  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(s.events[0], (Range{0, 1}));
  EXPECT_EQ(b.events.name[0], "exception");
  EXPECT_EQ(b.events.time_unix_nano[0], 1700000000150000000u);
  EXPECT_EQ(b.events.dropped_attributes_count[0], 5u);
  EXPECT_EQ(b.event_attributes.key[b.events.attributes[0].begin], "exception.type");
  ASSERT_EQ(b.links.size(), 1u);
  EXPECT_EQ(b.links.trace_id[0][0], 4);
  EXPECT_EQ(b.links.span_id[0][7], 5);
  EXPECT_EQ(b.links.trace_state[0], "l=1");
  EXPECT_EQ(b.links.dropped_attributes_count[0], 6u);
  EXPECT_EQ(b.links.attributes[0], (Range{0, 1}));
  EXPECT_EQ(s.links[1], (Range{1, 0}));
}

TEST(ProtoDecoderTraces, SecondRequestAppendsToTheSameBatch) {
  const std::string bytes = SampleTraceRequest().SerializeAsString();
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(bytes, &b).ok());
  ASSERT_TRUE(DecodeTraces(bytes, &b).ok());
  ASSERT_EQ(b.spans.size(), 4u);
  EXPECT_EQ(b.resources.size(), 4u);
  EXPECT_EQ(b.spans.scope[2], 2u);
  EXPECT_EQ(b.scopes.resource[2], 2u);
  EXPECT_EQ(b.spans.attributes[2], (Range{7, 7}));
  EXPECT_EQ(b.span_attributes.key[7], "str");
  EXPECT_EQ(b.spans.name[2], "GET /cart");
}

TEST(ProtoDecoderTraces, NewerSpanAndLinkFieldsDecode) {
  // Span.flags = 16 (fixed32), Link.flags = 6 (fixed32), scope attributes =
  // 3 and dropped_attributes_count = 4, Resource.entity_refs = 3.
  Wire link = Wire().Bytes(1, kTraceId).Bytes(2, kSpanId).Fixed32(6, 0x301);
  Wire span = MinimalSpan().Fixed32(16, 0x101).Message(13, link);
  Wire scope = Wire().Bytes(1, "lib").Message(3, Wire().Bytes(1, "sk").Message(2, Wire().Varint(3, 5)))
                   .Varint(4, 9);
  Wire entity = Wire()
                    .Bytes(1, "https://schema/e")
                    .Bytes(2, "service")
                    .Bytes(3, "service.name")
                    .Bytes(4, "service.version")  // interleaved with id_keys
                    .Bytes(3, "service.namespace");
  Wire resource = Wire().Message(3, entity).Message(1, Wire().Bytes(1, "service.name"));
  Wire req = Wire().Message(
      1, Wire().Message(1, resource).Message(2, Wire().Message(1, scope).Message(2, span)));
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(req.str(), &b).ok());
  EXPECT_EQ(b.spans.flags[0], 0x101u);
  EXPECT_EQ(b.links.flags[0], 0x301u);
  EXPECT_EQ(b.scopes.dropped_attributes_count[0], 9u);
  ASSERT_EQ(b.scopes.attributes[0].count, 1u);
  EXPECT_EQ(b.scope_attributes.key[0], "sk");
  EXPECT_EQ(b.scope_attributes.value.int_at(0), 5);
  ASSERT_EQ(b.resources.entity_refs[0], (Range{0, 1}));
  EXPECT_EQ(b.entity_refs.schema_url[0], "https://schema/e");
  EXPECT_EQ(b.entity_refs.type[0], "service");
  const Range ids = b.entity_refs.id_keys[0];
  const Range descriptions = b.entity_refs.description_keys[0];
  ASSERT_EQ(ids.count, 2u);
  ASSERT_EQ(descriptions.count, 1u);
  EXPECT_EQ(b.entity_keys[ids.begin], "service.name");
  EXPECT_EQ(b.entity_keys[ids.begin + 1], "service.namespace");
  EXPECT_EQ(b.entity_keys[descriptions.begin], "service.version");
  EXPECT_EQ(b.resources.attributes[0].count, 1u);
}

TEST(ProtoDecoderTraces, UnknownFieldsOfEveryWireTypeAreSkipped) {
  Wire unknown = Wire()
                     .Varint(100, 1)
                     .Fixed64(101, 2)
                     .Bytes(102, "xyz")
                     .Fixed32(103, 3)
                     .StartGroup(104)
                     .Varint(1, 5)
                     .StartGroup(2)
                     .Bytes(3, "in group")
                     .EndGroup(2)
                     .EndGroup(104);
  Wire span = MinimalSpan().Raw(unknown.str()).Bytes(5, "after");
  // Also at the request, resource and scope levels, plus the deprecated
  // instrumentation_library_spans (1000), which is skipped.
  Wire req = Wire().Raw(unknown.str()).Message(
      1, Wire()
             .Raw(unknown.str())
             .Message(1000, Wire().Message(2, MinimalSpan()))
             .Message(2, Wire().Raw(unknown.str()).Message(2, span)));
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(req.str(), &b).ok());
  ASSERT_EQ(b.spans.size(), 1u);
  EXPECT_EQ(b.spans.name[0], "after");
}

TEST(ProtoDecoderTraces, RepeatedScalarLastOneWins) {
  Wire span = MinimalSpan().Bytes(5, "first").Bytes(5, "second").Varint(6, 1).Varint(6, 3);
  const Wire req = TraceRequest(span);
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(req.str(), &b).ok());
  EXPECT_EQ(b.spans.name[0], "second");
  EXPECT_EQ(b.spans.kind[0], 3);
}

TEST(ProtoDecoderTraces, EmptyRequestDecodesToEmptyBatch) {
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces("", &b).ok());
  EXPECT_EQ(b.spans.size(), 0u);
  EXPECT_EQ(b.resources.size(), 0u);
}

// ------------------------------------------------------------- malformed

// ------------------------------------------------------------ rejected rows

TEST(ProtoDecoderRejectedRows, SpanWithTraceIdOfWrongLengthIsLeftOutAndCounted) {
  Wire ok_span = MinimalSpan().Bytes(5, "kept");
  Wire bad_span = Wire().Bytes(1, std::string(15, 'x')).Bytes(2, kSpanId).Bytes(5, "dropped");
  Wire scope = Wire().Message(2, ok_span).Message(2, bad_span);
  Wire req = Wire().Message(1, Wire().Message(2, Wire()).Message(2, scope));
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(req.str(), &b).ok());
  ASSERT_EQ(b.spans.size(), 1u);
  EXPECT_EQ(b.spans.name[0], "kept");
  EXPECT_EQ(b.rejected.rows, 1u);
  EXPECT_EQ(b.rejected.by_reason[static_cast<size_t>(RowRejectReason::kTraceId)], 1u);
  EXPECT_EQ(b.rejected.first_message, "span 1: trace_id has 15 bytes, want 16");
  EXPECT_TRUE(ValidateBatch(b).ok());
}

TEST(ProtoDecoderRejectedRows, EachInvalidIdRejectsItsSpanWithItsReason) {
  const Wire bad_link = Wire().Bytes(1, kTraceId).Bytes(2, "123");
  const struct {
    Wire span;
    RowRejectReason reason;
    std::string_view message;
  } cases[] = {
      {Wire().Bytes(2, kSpanId), RowRejectReason::kTraceId, "trace_id is missing"},
      {Wire().Bytes(1, std::string(16, '\0')).Bytes(2, kSpanId), RowRejectReason::kTraceId,
       "trace_id is all zero"},
      {Wire().Bytes(1, kTraceId), RowRejectReason::kSpanId, "span_id is missing"},
      {Wire().Bytes(1, kTraceId).Bytes(2, ""), RowRejectReason::kSpanId, "span_id is missing"},
      {Wire().Bytes(1, kTraceId).Bytes(2, std::string(8, '\0')), RowRejectReason::kSpanId,
       "span_id is all zero"},
      {MinimalSpan().Bytes(4, "1234"), RowRejectReason::kParentSpanId,
       "parent_span_id has 4 bytes, want 0 or 8"},
      {MinimalSpan().Message(13, bad_link), RowRejectReason::kLinkId,
       "links[0].span_id has 3 bytes, want 8"},
      {MinimalSpan().Message(13, Wire().Bytes(2, kSpanId)), RowRejectReason::kLinkId,
       "links[0].trace_id is missing"},
  };
  for (const auto& c : cases) {
    TraceBatch b;
    ASSERT_TRUE(DecodeTraces(TraceRequest(c.span).str(), &b).ok()) << c.message;
    EXPECT_EQ(b.spans.size(), 0u) << c.message;
    EXPECT_EQ(b.rejected.rows, 1u) << c.message;
    EXPECT_EQ(b.rejected.by_reason[static_cast<size_t>(c.reason)], 1u) << c.message;
    EXPECT_EQ(b.rejected.first_message, "span 0: " + std::string(c.message));
  }
}

TEST(ProtoDecoderRejectedRows, ChildRowsOfARejectedSpanDoNotStayInTheBatch) {
  // The bad span carries attributes (one with a kvlist, so nested rows),
  // an event with attributes and a link with attributes.
  Wire kv = Wire().Bytes(1, "k").Message(2, Wire().Bytes(1, "v"));
  Wire kvlist = Wire().Message(1, kv);
  Wire nested_attribute = Wire().Bytes(1, "map").Message(2, Wire().Message(6, kvlist));
  Wire event = Wire().Bytes(2, "ev").Message(3, kv);
  Wire link = Wire().Bytes(1, kTraceId).Bytes(2, kSpanId).Message(4, kv);
  Wire bad = Wire()
                 .Bytes(2, kSpanId)
                 .Message(9, kv)
                 .Message(9, nested_attribute)
                 .Message(11, event)
                 .Message(13, link);
  Wire good = MinimalSpan().Message(9, kv);
  Wire scope = Wire().Message(2, bad).Message(2, good);
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(Wire().Message(1, Wire().Message(2, scope)).str(), &b).ok());
  ASSERT_EQ(b.spans.size(), 1u);
  EXPECT_EQ(b.span_attributes.size(), 1u);
  EXPECT_EQ(b.spans.attributes[0], (Range{0, 1}));
  EXPECT_EQ(b.events.size(), 0u);
  EXPECT_EQ(b.event_attributes.size(), 0u);
  EXPECT_EQ(b.links.size(), 0u);
  EXPECT_EQ(b.link_attributes.size(), 0u);
  EXPECT_EQ(b.nested_attributes.size(), 0u);
  EXPECT_EQ(b.nested_values.size(), 0u);
  EXPECT_TRUE(ValidateBatch(b).ok());
}

TEST(ProtoDecoderRejectedRows, HistogramPointWithMismatchedBucketsIsLeftOut) {
  // Two bounds: three counts (or none) are valid, two are not.
  auto point = [](int counts) {
    Wire p = Wire().Fixed64(7, 0).Fixed64(7, 0);
    for (int i = 0; i < counts; ++i) p.Fixed64(6, 1);
    return p;
  };
  Wire histogram =
      Wire().Message(1, point(3)).Message(1, point(2)).Message(1, point(0)).Varint(2, 2);
  Wire metric = Wire().Bytes(1, "h").Message(9, histogram);
  MetricBatch b;
  ASSERT_TRUE(DecodeMetricsProto(MetricRequest(metric).str(), &b).ok());
  ASSERT_EQ(b.histogram_points.size(), 2u);
  EXPECT_EQ(b.histogram_points.bucket_counts[0].count, 3u);
  EXPECT_EQ(b.histogram_points.bucket_counts[1].count, 0u);
  EXPECT_EQ(b.bucket_counts.size(), 3u);
  EXPECT_EQ(b.explicit_bounds.size(), 4u);
  EXPECT_EQ(b.metrics.points[0], (Range{0, 2}));
  EXPECT_EQ(b.rejected.rows, 1u);
  EXPECT_EQ(b.rejected.first_message,
            "metric 0: a histogram data point has 2 bucket_counts and 2 explicit_bounds; want no "
            "bucket_counts or explicit_bounds + 1");
  EXPECT_TRUE(ValidateBatch(b).ok());
}

// ------------------------------------------------------------- malformed

TEST(ProtoDecoderMalformed, ExemplarIdsOfWrongLengthAreRejected) {
  // Log record ids of the wrong length are cleared instead (ProtoDecoderLogs).
  MetricBatch metrics;
  Wire exemplar = Wire().Bytes(4, std::string(9, 's'));
  Wire point = Wire().Message(5, exemplar);
  Wire metric = Wire().Message(5, Wire().Message(1, point));
  ExpectRejected(DecodeMetricsProto(MetricRequest(metric).str(), &metrics),
                 "metrics[0].gauge.data_points[0].exemplars[0].span_id", "want 0 or 8");
}

TEST(ProtoDecoderMalformed, TruncatedVarintIsRejected) {
  Wire span = MinimalSpan().Key(6, 0).Raw("\x80");  // kind: varint cut short
  ExpectRejected(DecodeTraces(TraceRequest(span).str()), "spans[0].kind", "truncated varint");
  // A truncated tag at the top level names the request.
  ExpectRejected(DecodeTraces("\x8a"), "ExportTraceServiceRequest", "truncated varint");
}

TEST(ProtoDecoderMalformed, VarintLongerThanTenBytesIsRejected) {
  Wire span = MinimalSpan().Key(6, 0).Raw(std::string(10, '\xff')).Raw("\x01");
  ExpectRejected(DecodeTraces(TraceRequest(span).str()), "spans[0].kind",
                 "varint longer than 10 bytes");
}

TEST(ProtoDecoderMalformed, WrongWireTypeForKnownFieldIsRejected) {
  Wire span = MinimalSpan().Varint(5, 7);  // name is a string, sent as varint
  ExpectRejected(DecodeTraces(TraceRequest(span).str()), "spans[0].name", "wire type 0");
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().Fixed64(16, 1)).str()), "spans[0].flags",
                 "wire type 1");
}

TEST(ProtoDecoderMalformed, LengthPastEndIsRejected) {
  Wire span = MinimalSpan().Key(5, 2).RawVarint(50).Raw("short");
  ExpectRejected(DecodeTraces(TraceRequest(span).str()), "spans[0].name",
                 "length past end of message");
  Wire req = Wire().Key(1, 2).RawVarint(1000);
  ExpectRejected(DecodeTraces(req.str()), "resource_spans[0]", "length past end");
}

TEST(ProtoDecoderMalformed, BadUnknownFieldsAreRejected) {
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().Key(0, 0).RawVarint(1)).str()),
                 "spans[0].field 0", "field number 0");
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().Key(99, 6)).str()), "spans[0].field 99",
                 "invalid wire type");
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().StartGroup(99).Varint(1, 1)).str()),
                 "spans[0].field 99", "truncated group");
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().EndGroup(99)).str()),
                 "spans[0].field 99", "end-group");
  Wire deep;
  for (int i = 0; i < 40; ++i) deep.StartGroup(99);
  for (int i = 0; i < 40; ++i) deep.EndGroup(99);
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().Raw(deep.str())).str()),
                 "spans[0].field 99", "nested too deeply");
}

TEST(ProtoDecoderMalformed, NestingPastMaxValueDepthIsRejected) {
  // depth 1: array holding a kvlist is depth 2 (decode.h).
  auto nested = [](int depth) {
    Wire v = Wire().Varint(3, 1);
    for (int i = 0; i < depth; ++i) v = Wire().Message(5, Wire().Message(1, v));
    return v;
  };
  DecodeLimits limits;
  limits.max_value_depth = 4;
  EXPECT_TRUE(DecodeTraces(TraceRequest(SpanWithValue(nested(4))).str(), nullptr, limits).ok());
  ExpectRejected(DecodeTraces(TraceRequest(SpanWithValue(nested(5))).str(), nullptr, limits),
                 "spans[0].attributes[0].value.array_value.values[0].array_value.values[0]"
                 ".array_value.values[0].array_value.values[0].array_value",
                 "max_value_depth");
  // The default limit applies too.
  ExpectRejected(DecodeTraces(TraceRequest(SpanWithValue(nested(17))).str()), "array_value",
                 "max_value_depth (16)");
}

TEST(ProtoDecoderMalformed, InvalidUtf8IsRejected) {
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().Bytes(5, "ab\xc3")).str()),
                 "spans[0].name", "invalid UTF-8");
  ExpectRejected(
      DecodeTraces(TraceRequest(MinimalSpan().Message(9, Wire().Bytes(1, "\xff\xfe"))).str()),
      "spans[0].attributes[0].key", "invalid UTF-8");
  ExpectRejected(DecodeTraces(TraceRequest(SpanWithValue(Wire().Bytes(1, "long ascii \xed\xa0\x80")))
                                  .str()),
                 "spans[0].attributes[0].value.string_value", "invalid UTF-8");
  // Valid multi-byte UTF-8 and arbitrary bytes_value pass.
  EXPECT_TRUE(DecodeTraces(TraceRequest(MinimalSpan().Bytes(5, "caf\xc3\xa9 \xe2\x82\xac")).str())
                  .ok());
  EXPECT_TRUE(DecodeTraces(TraceRequest(SpanWithValue(Wire().Bytes(7, "\xff\xfe"))).str()).ok());
}

TEST(ProtoDecoderMalformed, ProfilesStringIndexFieldsAreRejected) {
  Wire kv = Wire().Varint(3, 4).Message(2, Wire().Bytes(1, "v"));
  ExpectRejected(DecodeTraces(TraceRequest(MinimalSpan().Message(9, kv)).str()),
                 "spans[0].attributes[0].key_strindex", "profiles");
  ExpectRejected(DecodeTraces(TraceRequest(SpanWithValue(Wire().Varint(8, 1))).str()),
                 "spans[0].attributes[0].value.string_value_strindex", "profiles");
}

TEST(ProtoDecoderMalformed, SubMessageTwiceIsRejected) {
  Wire rs = Wire().Message(1, Wire()).Message(1, Wire());
  ExpectRejected(DecodeTraces(Wire().Message(1, rs).str()), "resource_spans[0].resource",
                 "merge");
  Wire ss = Wire().Message(1, Wire()).Message(1, Wire());
  ExpectRejected(DecodeTraces(Wire().Message(1, Wire().Message(2, ss)).str()),
                 "resource_spans[0].scope_spans[0].scope", "merge");
  Wire metric = Wire().Message(5, Wire()).Message(7, Wire());
  MetricBatch b;
  ExpectRejected(DecodeMetricsProto(MetricRequest(metric).str(), &b), "metrics[0].sum",
                 "more than once");
}

// -------------------------------------------------------------------- logs

TEST(ProtoDecoderLogs, LibprotobufRequestDecodesBodiesOfEveryType) {
  pb::collector::logs::v1::ExportLogsServiceRequest req;
  auto* sl = req.add_resource_logs()->add_scope_logs();
  sl->mutable_scope()->set_name("logger");
  auto add = [sl]() { return sl->add_log_records(); };
  auto* r0 = add();
  r0->set_time_unix_nano(11);
  r0->set_observed_time_unix_nano(12);
  r0->set_severity_number(pb::logs::v1::SEVERITY_NUMBER_WARN);
  r0->set_severity_text("WARN");
  r0->mutable_body()->set_string_value("disk full");
  r0->set_dropped_attributes_count(2);
  r0->set_flags(1);
  r0->set_trace_id(std::string(16, '\x09'));
  r0->set_span_id(std::string(8, '\x0a'));
  auto* la = r0->add_attributes();
  la->set_key("path");
  la->mutable_value()->set_string_value("/var");
  add()->mutable_body()->set_int_value(7);
  add()->mutable_body()->set_double_value(0.5);
  add()->mutable_body()->set_bool_value(true);
  add()->mutable_body()->set_bytes_value("\x01\x02");
  auto* kv = add()->mutable_body()->mutable_kvlist_value()->add_values();
  kv->set_key("k");
  kv->mutable_value()->set_string_value("v");
  auto* array = add()->mutable_body()->mutable_array_value();
  array->add_values()->set_int_value(1);
  array->add_values()->set_int_value(2);
  add();  // no body
  const std::string bytes = req.SerializeAsString();  // the batch's views point into it
  LogBatch b;
  ASSERT_TRUE(DecodeLogsProto(bytes, &b).ok());
  ASSERT_TRUE(ValidateBatch(b).ok());
  ASSERT_EQ(b.logs.size(), 8u);
  const LogRecordColumns& l = b.logs;
  EXPECT_EQ(l.time_unix_nano[0], 11u);
  EXPECT_EQ(l.observed_time_unix_nano[0], 12u);
  EXPECT_EQ(l.severity_number[0], 13);
  EXPECT_EQ(l.severity_text[0], "WARN");
  EXPECT_EQ(l.dropped_attributes_count[0], 2u);
  EXPECT_EQ(l.flags[0], 1u);
  EXPECT_EQ(l.has_trace_id[0], 1);
  EXPECT_EQ(l.trace_id[0][15], 9);
  EXPECT_EQ(l.has_span_id[0], 1);
  EXPECT_EQ(l.span_id[0][0], 10);
  EXPECT_EQ(l.has_trace_id[1], 0);
  EXPECT_EQ(l.trace_id[1], TraceId{});
  EXPECT_EQ(b.log_attributes.key[l.attributes[0].begin], "path");
  EXPECT_EQ(b.scopes.name[l.scope[0]], "logger");
  EXPECT_THAT(l.body.type, ElementsAre(ValueType::kString, ValueType::kInt, ValueType::kDouble,
                                       ValueType::kBool, ValueType::kBytes, ValueType::kKvList,
                                       ValueType::kArray, ValueType::kEmpty));
  EXPECT_EQ(l.body.str[0], "disk full");
  EXPECT_EQ(l.body.int_at(1), 7);
  EXPECT_EQ(l.body.double_at(2), 0.5);
  EXPECT_TRUE(l.body.bool_at(3));
  EXPECT_EQ(l.body.str[4], "\x01\x02");
  const Range entries = l.body.children_at(5);
  ASSERT_EQ(entries.count, 1u);
  EXPECT_EQ(b.nested_attributes.key[entries.begin], "k");
  EXPECT_EQ(b.nested_attributes.value.str[entries.begin], "v");
  const Range elems = l.body.children_at(6);
  ASSERT_EQ(elems.count, 2u);
  EXPECT_EQ(b.nested_values.int_at(elems.begin + 1), 2);
}

TEST(ProtoDecoderLogs, EventNameDecodes) {
  const Wire req = LogRequest(Wire().Bytes(12, "user.login"));
  LogBatch b;
  ASSERT_TRUE(DecodeLogsProto(req.str(), &b).ok());
  EXPECT_EQ(b.logs.event_name[0], "user.login");
}

TEST(ProtoDecoderLogs, BodyTwiceIsRejected) {
  LogBatch b;
  Wire record = Wire().Message(5, Wire().Bytes(1, "a")).Message(5, Wire().Bytes(1, "b"));
  ExpectRejected(DecodeLogsProto(LogRequest(record).str(), &b), "log_records[0].body", "merge");
}

TEST(ProtoDecoderLogs, InvalidIdsAreClearedEachOnItsOwnAndTheRecordKept) {
  namespace l = pb::logs::v1;
  pb::collector::logs::v1::ExportLogsServiceRequest req;
  auto* sl = req.add_resource_logs()->add_scope_logs();
  // Valid ids with a zero byte each, kept byte for byte.
  std::string trace_id(16, '\0');
  for (size_t i = 0; i + 1 < trace_id.size(); ++i) trace_id[i] = static_cast<char>(i + 1);
  const std::string span_id("\x00\x12\x13\x14\x15\x16\x17\x18", 8);
  auto add = [sl](const std::string& trace, const std::string& span) {
    l::LogRecord* record = sl->add_log_records();
    record->set_trace_id(trace);
    record->set_span_id(span);
    record->set_severity_text(std::to_string(sl->log_records_size() - 1));
  };
  add(trace_id, span_id);                             // 0: both valid, kept as sent
  add(trace_id.substr(0, 15), span_id + "\x19");      // 1: wrong lengths
  add(std::string(16, '\0'), span_id);                // 2: all-zero trace_id
  add(trace_id, std::string(8, '\0'));                // 3: all-zero span_id
  add(std::string(32, '\x7f'), std::string(1, 'x'));  // 4: wrong lengths again
  add("", "");                                        // 5: absent, not counted
  const std::string bytes = req.SerializeAsString();  // the batch's strings view into it
  LogBatch b;
  ASSERT_TRUE(DecodeLogsProto(bytes, &b).ok());
  ASSERT_TRUE(ValidateBatch(b).ok());
  ASSERT_EQ(b.logs.size(), 6u);
  EXPECT_TRUE(b.rejected.empty());
  EXPECT_EQ(b.cleared_ids.trace_id, 3u);
  EXPECT_EQ(b.cleared_ids.span_id, 3u);
  auto id_bytes = [](const auto& id) { return std::string(id.begin(), id.end()); };
  const std::vector<uint8_t> want_trace = {1, 0, 0, 1, 0, 0};
  const std::vector<uint8_t> want_span = {1, 0, 1, 0, 0, 0};
  EXPECT_EQ(b.logs.has_trace_id, want_trace);
  EXPECT_EQ(b.logs.has_span_id, want_span);
  for (size_t i = 0; i < b.logs.size(); ++i) {
    EXPECT_EQ(b.logs.severity_text[i], std::to_string(i));
    EXPECT_EQ(id_bytes(b.logs.trace_id[i]),
              b.logs.has_trace_id[i] ? trace_id : std::string(16, '\0'))
        << i;
    EXPECT_EQ(id_bytes(b.logs.span_id[i]), b.logs.has_span_id[i] ? span_id : std::string(8, '\0'))
        << i;
  }
}

TEST(ProtoDecoderLogs, AnEmptyIdIsAbsentAndTheLastOccurrenceDecides) {
  // Explicit empty ids (libprotobuf never writes them) are absent, not cleared.
  LogBatch b;
  ASSERT_TRUE(DecodeLogsProto(LogRequest(Wire().Bytes(9, "").Bytes(10, "")).str(), &b).ok());
  // A repeated id field: the last one wins, as in libprotobuf.
  const Wire twice = Wire().Bytes(9, "short").Bytes(9, kTraceId).Bytes(10, kSpanId).Bytes(10, "");
  ASSERT_TRUE(DecodeLogsProto(LogRequest(twice).str(), &b).ok());
  ASSERT_EQ(b.logs.size(), 2u);
  EXPECT_THAT(b.logs.has_trace_id, ElementsAre(0, 1));
  EXPECT_THAT(b.logs.has_span_id, ElementsAre(0, 0));
  EXPECT_EQ(std::string(b.logs.trace_id[1].begin(), b.logs.trace_id[1].end()), kTraceId);
  EXPECT_TRUE(b.cleared_ids.empty());
}

// ----------------------------------------------------------------- metrics

pb::collector::metrics::v1::ExportMetricsServiceRequest SampleMetricsRequest() {
  namespace m = pb::metrics::v1;
  pb::collector::metrics::v1::ExportMetricsServiceRequest req;
  auto* sm = req.add_resource_metrics()->add_scope_metrics();
  auto* gauge = sm->add_metrics();
  gauge->set_name("temp");
  gauge->set_description("temperature");
  gauge->set_unit("Cel");
  auto* gp = gauge->mutable_gauge()->add_data_points();
  gp->set_as_double(21.5);
  gp->set_time_unix_nano(100);
  gp->set_start_time_unix_nano(50);
  gp->set_flags(1);
  auto* gpa = gp->add_attributes();
  gpa->set_key("room");
  gpa->mutable_value()->set_string_value("kitchen");
  auto* ex = gp->add_exemplars();
  ex->set_as_int(-3);
  ex->set_time_unix_nano(99);
  ex->set_trace_id(std::string(16, '\x0c'));
  ex->set_span_id(std::string(8, '\x0d'));
  ex->add_filtered_attributes()->set_key("user");
  gauge->mutable_gauge()->add_data_points()->set_as_int(-7);
  gauge->mutable_gauge()->add_data_points();  // no value
  auto* sum = sm->add_metrics();
  sum->set_name("requests");
  sum->mutable_sum()->set_aggregation_temporality(m::AGGREGATION_TEMPORALITY_CUMULATIVE);
  sum->mutable_sum()->set_is_monotonic(true);
  sum->mutable_sum()->add_data_points()->set_as_int(1000);
  auto* hist = sm->add_metrics();
  hist->set_name("latency");
  hist->mutable_histogram()->set_aggregation_temporality(m::AGGREGATION_TEMPORALITY_DELTA);
  auto* hp = hist->mutable_histogram()->add_data_points();
  hp->set_count(6);
  hp->set_sum(12.5);
  hp->set_min(0.5);
  for (uint64_t c : {1, 2, 3}) hp->add_bucket_counts(c);
  for (double bound : {1.0, 5.0}) hp->add_explicit_bounds(bound);
  hist->mutable_histogram()->add_data_points()->set_count(0);  // no sum/min/max
  auto* exp = sm->add_metrics();
  exp->set_name("exp");
  exp->mutable_exponential_histogram()->set_aggregation_temporality(
      m::AGGREGATION_TEMPORALITY_CUMULATIVE);
  auto* ep = exp->mutable_exponential_histogram()->add_data_points();
  ep->set_count(9);
  ep->set_scale(-2);
  ep->set_zero_count(1);
  ep->set_max(100);
  ep->mutable_positive()->set_offset(-5);
  for (uint64_t c : {4, 300}) ep->mutable_positive()->add_bucket_counts(c);
  ep->mutable_negative()->set_offset(3);
  ep->mutable_negative()->add_bucket_counts(2);
  ep->add_exemplars()->set_as_double(1.5);
  auto* summary = sm->add_metrics();
  summary->set_name("summary");
  auto* sp = summary->mutable_summary()->add_data_points();
  sp->set_count(10);
  sp->set_sum(20);
  auto* q = sp->add_quantile_values();
  q->set_quantile(0.99);
  q->set_value(7);
  sp->add_quantile_values()->set_quantile(0.5);
  sm->add_metrics()->set_name("no data");
  return req;
}

TEST(ProtoDecoderMetrics, LibprotobufRequestDecodesAllFiveTypes) {
  const std::string bytes = SampleMetricsRequest().SerializeAsString();
  MetricBatch b;
  ASSERT_TRUE(DecodeMetricsProto(bytes, &b).ok());
  ASSERT_TRUE(ValidateBatch(b).ok());
  const MetricColumns& m = b.metrics;
  ASSERT_EQ(m.size(), 6u);
  EXPECT_THAT(m.type, ElementsAre(MetricType::kGauge, MetricType::kSum, MetricType::kHistogram,
                                  MetricType::kExponentialHistogram, MetricType::kSummary,
                                  MetricType::kUnset));
  EXPECT_EQ(m.name[0], "temp");
  EXPECT_EQ(m.description[0], "temperature");
  EXPECT_EQ(m.unit[0], "Cel");
  EXPECT_EQ(m.points[5].count, 0u);

  // Gauge and sum share number_points.
  const NumberPointColumns& n = b.number_points;
  EXPECT_EQ(m.points[0], (Range{0, 3}));
  EXPECT_EQ(m.points[1], (Range{3, 1}));
  EXPECT_THAT(n.metric, ElementsAre(0u, 0u, 0u, 1u));
  EXPECT_THAT(n.value_type,
              ElementsAre(NumberType::kDouble, NumberType::kInt, NumberType::kNone, NumberType::kInt));
  EXPECT_EQ(n.double_at(0), 21.5);
  EXPECT_EQ(n.int_at(1), -7);
  EXPECT_EQ(n.int_at(3), 1000);
  EXPECT_EQ(n.time_unix_nano[0], 100u);
  EXPECT_EQ(n.start_time_unix_nano[0], 50u);
  EXPECT_EQ(n.flags[0], 1u);
  EXPECT_EQ(b.point_attributes.key[n.attributes[0].begin], "room");
  EXPECT_EQ(m.aggregation_temporality[1], 2);
  EXPECT_EQ(m.is_monotonic[1], 1);
  ASSERT_EQ(n.exemplars[0].count, 1u);
  const ExemplarColumns& e = b.exemplars;
  EXPECT_EQ(e.value_type[0], NumberType::kInt);
  EXPECT_EQ(static_cast<int64_t>(e.value_bits[0]), -3);
  EXPECT_EQ(e.time_unix_nano[0], 99u);
  EXPECT_EQ(e.has_trace_id[0], 1);
  EXPECT_EQ(e.trace_id[0][0], 12);
  EXPECT_EQ(e.span_id[0][0], 13);
  EXPECT_EQ(b.exemplar_attributes.key[e.filtered_attributes[0].begin], "user");

  const HistogramPointColumns& h = b.histogram_points;
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(m.aggregation_temporality[2], 1);
  EXPECT_EQ(h.count[0], 6u);
  EXPECT_EQ(h.sum[0], 12.5);
  EXPECT_EQ(h.min[0], 0.5);
  EXPECT_EQ(h.present[0], kHasSum | kHasMin);
  EXPECT_EQ(h.present[1], 0);
  const Range counts = h.bucket_counts[0];
  ASSERT_EQ(counts.count, 3u);
  EXPECT_EQ(b.bucket_counts[counts.begin + 2], 3u);
  const Range bounds = h.explicit_bounds[0];
  ASSERT_EQ(bounds.count, 2u);
  EXPECT_EQ(b.explicit_bounds[bounds.begin + 1], 5.0);

  const ExponentialPointColumns& x = b.exponential_points;
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x.count[0], 9u);
  EXPECT_EQ(x.scale[0], -2);
  EXPECT_EQ(x.zero_count[0], 1u);
  EXPECT_EQ(x.max[0], 100);
  EXPECT_EQ(x.present[0], kHasMax);
  EXPECT_EQ(x.positive_offset[0], -5);
  EXPECT_EQ(x.negative_offset[0], 3);
  ASSERT_EQ(x.positive_bucket_counts[0].count, 2u);
  EXPECT_EQ(b.bucket_counts[x.positive_bucket_counts[0].begin + 1], 300u);
  ASSERT_EQ(x.negative_bucket_counts[0].count, 1u);
  EXPECT_EQ(b.bucket_counts[x.negative_bucket_counts[0].begin], 2u);
  ASSERT_EQ(x.exemplars[0].count, 1u);
  EXPECT_EQ(e.value_type[x.exemplars[0].begin], NumberType::kDouble);

  const SummaryPointColumns& s = b.summary_points;
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.count[0], 10u);
  EXPECT_EQ(s.sum[0], 20);
  ASSERT_EQ(s.quantiles[0].count, 2u);
  EXPECT_EQ(b.quantiles.quantile[0], 0.99);
  EXPECT_EQ(b.quantiles.value[0], 7);
  EXPECT_EQ(b.quantiles.quantile[1], 0.5);
}

TEST(ProtoDecoderMetrics, NewerFieldsDecode) {
  // Metric.metadata = 12; ExponentialHistogramDataPoint.zero_threshold = 14.
  Wire point = Wire().Fixed64(4, 3).Double(14, 0.001);
  Wire metric = Wire()
                    .Bytes(1, "exp")
                    .Message(10, Wire().Message(1, point))
                    .Message(12, Wire().Bytes(1, "prometheus.type").Message(2, Wire().Bytes(1, "gauge")));
  const Wire req = MetricRequest(metric);
  MetricBatch b;
  ASSERT_TRUE(DecodeMetricsProto(req.str(), &b).ok());
  ASSERT_TRUE(ValidateBatch(b).ok());
  EXPECT_EQ(b.exponential_points.zero_threshold[0], 0.001);
  EXPECT_EQ(b.exponential_points.count[0], 3u);
  ASSERT_EQ(b.metrics.metadata[0], (Range{0, 1}));
  EXPECT_EQ(b.metadata_attributes.key[0], "prometheus.type");
  EXPECT_EQ(b.metadata_attributes.value.str[0], "gauge");
}

TEST(ProtoDecoderMetrics, PackedAndUnpackedRepeatedScalarsBothDecode) {
  // Histogram: bucket_counts unpacked then packed, explicit_bounds unpacked.
  std::string packed_counts;
  for (uint64_t c : {20, 30}) packed_counts.append(reinterpret_cast<const char*>(&c), 8);
  Wire hp = Wire().Fixed64(6, 10).Bytes(6, packed_counts).Double(7, 1.5).Double(7, 2.5);
  // Exponential buckets: bucket_counts unpacked varints then a packed run.
  Wire buckets = Wire().Varint(2, 1).Bytes(2, Wire().RawVarint(300).RawVarint(2).str());
  Wire ep = Wire().Message(8, buckets);
  Wire req = MetricRequest(Wire().Message(9, Wire().Message(1, hp)))
                 .Raw(MetricRequest(Wire().Message(10, Wire().Message(1, ep))).str());
  MetricBatch b;
  ASSERT_TRUE(DecodeMetricsProto(req.str(), &b).ok());
  ASSERT_TRUE(ValidateBatch(b).ok());
  const Range counts = b.histogram_points.bucket_counts[0];
  ASSERT_EQ(counts.count, 3u);
  EXPECT_EQ(b.bucket_counts[counts.begin], 10u);
  EXPECT_EQ(b.bucket_counts[counts.begin + 2], 30u);
  const Range bounds = b.histogram_points.explicit_bounds[0];
  ASSERT_EQ(bounds.count, 2u);
  EXPECT_EQ(b.explicit_bounds[bounds.begin + 1], 2.5);
  const Range positive = b.exponential_points.positive_bucket_counts[0];
  ASSERT_EQ(positive.count, 3u);
  EXPECT_EQ(b.bucket_counts[positive.begin], 1u);
  EXPECT_EQ(b.bucket_counts[positive.begin + 1], 300u);
  EXPECT_EQ(b.bucket_counts[positive.begin + 2], 2u);
}

TEST(ProtoDecoderMetrics, PackedRunOfBadLengthIsRejected) {
  Wire hp = Wire().Bytes(6, "1234567");  // 7 bytes: not a whole fixed64
  MetricBatch b;
  ExpectRejected(DecodeMetricsProto(MetricRequest(Wire().Message(9, Wire().Message(1, hp))).str(), &b),
                 "metrics[0].histogram.data_points[0].bucket_counts", "multiple of 8");
}

TEST(ProtoDecoderMalformed, ErrorsDeepInsideNestedValuesAndBucketsNameTheirPath) {
  Wire entry = Wire().Bytes(1, "ok").Message(2, Wire().Bytes(1, "v"));
  Wire bad_entry = Wire().Bytes(1, "bad\xff");
  Wire kvlist = Wire().Message(1, entry).Message(1, bad_entry);
  ExpectRejected(
      DecodeTraces(TraceRequest(SpanWithValue(Wire().Message(6, kvlist))).str()),
      "spans[0].attributes[0].value.kvlist_value.values[1].key", "invalid UTF-8");
  Wire buckets = Wire().Bytes(2, "\x01\x80");  // packed varints, the last one cut short
  Wire point = Wire().Message(9, buckets);
  MetricBatch b;
  ExpectRejected(
      DecodeMetricsProto(MetricRequest(Wire().Message(10, Wire().Message(1, point))).str(), &b),
      "metrics[0].exponential_histogram.data_points[0].negative.bucket_counts",
      "truncated varint");
}

// ------------------------------------------------ seeded reference requests

// Every request of the reference generator's random mode (all 0.38 fields,
// corner cases included) decodes into a valid batch with the same number of
// rows that libprotobuf sees.
TEST(ProtoDecoderReference, RandomRequestsDecodeWithMatchingRowCounts) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    const auto traces = otlp_reference::RandomTraceRequest(seed);
    const std::string trace_bytes = traces.SerializeAsString();
    TraceBatch tb;
    ASSERT_TRUE(DecodeTraces(trace_bytes, &tb).ok());
    size_t spans = 0, attributes = 0, events = 0;
    for (const auto& rs : traces.resource_spans()) {
      for (const auto& ss : rs.scope_spans()) {
        for (const auto& span : ss.spans()) {
          ++spans;
          attributes += span.attributes_size();
          events += span.events_size();
        }
      }
    }
    EXPECT_EQ(tb.spans.size(), spans);
    EXPECT_EQ(tb.span_attributes.size(), attributes);
    EXPECT_EQ(tb.events.size(), events);
    EXPECT_EQ(tb.resources.size(), static_cast<size_t>(traces.resource_spans_size()));

    const auto logs = otlp_reference::RandomLogsRequest(seed);
    const std::string log_bytes = logs.SerializeAsString();
    LogBatch lb;
    ASSERT_TRUE(DecodeLogsProto(log_bytes, &lb).ok());
    ASSERT_TRUE(ValidateBatch(lb).ok());
    size_t records = 0;
    for (const auto& rl : logs.resource_logs()) {
      for (const auto& sl : rl.scope_logs()) records += sl.log_records_size();
    }
    EXPECT_EQ(lb.logs.size(), records);

    const auto metrics = otlp_reference::RandomMetricsRequest(seed);
    const std::string metric_bytes = metrics.SerializeAsString();
    MetricBatch mb;
    ASSERT_TRUE(DecodeMetricsProto(metric_bytes, &mb).ok());
    ASSERT_TRUE(ValidateBatch(mb).ok());
    size_t metric_count = 0;
    for (const auto& rm : metrics.resource_metrics()) {
      for (const auto& sm : rm.scope_metrics()) metric_count += sm.metrics_size();
    }
    EXPECT_EQ(mb.metrics.size(), metric_count);
  }
}

// ------------------------------------------------------------ ValidateBatch

TEST(ProtoValidateBatch, AcceptsDecodedBatchAndCatchesHandBrokenOnes) {
  const std::string traces = SampleTraceRequest().SerializeAsString();
  const std::string metrics = SampleMetricsRequest().SerializeAsString();
  TraceBatch b;
  ASSERT_TRUE(DecodeTraces(traces, &b).ok());
  ASSERT_TRUE(ValidateBatch(b).ok());

  {
    TraceBatch broken;
    ASSERT_TRUE(DecodeTraces(traces, &broken).ok());
    broken.spans.kind.pop_back();
    absl::Status s = ValidateBatch(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(Str(s.message()), HasSubstr("spans: columns differ in length"));
  }
  {
    TraceBatch broken;
    ASSERT_TRUE(DecodeTraces(traces, &broken).ok());
    broken.spans.attributes[1] = Range{5, 4};  // overlaps span 0's attributes, past the end
    absl::Status s = ValidateBatch(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(Str(s.message()), HasSubstr("spans.attributes[1]"));
  }
  {
    TraceBatch broken;
    ASSERT_TRUE(DecodeTraces(traces, &broken).ok());
    broken.spans.attributes[1] = Range{5, 2};  // in bounds, but overlaps span 0's
    absl::Status s = ValidateBatch(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(Str(s.message()), HasSubstr("span_attributes: rows 5"));
  }
  {
    TraceBatch broken;
    ASSERT_TRUE(DecodeTraces(traces, &broken).ok());
    broken.scopes.resource[1] = 7;
    absl::Status s = ValidateBatch(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(Str(s.message()), HasSubstr("scopes.resource[1] = 7"));
  }
  {
    TraceBatch broken;
    ASSERT_TRUE(DecodeTraces(traces, &broken).ok());
    // The array attribute's children now reach past nested_values.
    broken.span_attributes.value.SetChildren(5, Range{0, 100});
    absl::Status s = ValidateBatch(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(Str(s.message()), HasSubstr("span_attributes[5]"));
    EXPECT_THAT(Str(s.message()), HasSubstr("nested_values"));
  }
  {
    MetricBatch broken;
    ASSERT_TRUE(DecodeMetricsProto(metrics, &broken).ok());
    broken.number_points.metric[3] = 0;  // the sum's point claims the gauge
    absl::Status s = ValidateBatch(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(Str(s.message()), HasSubstr("metrics[1]: point 3 belongs to metric 0"));
  }
}

}  // namespace
}  // namespace strata::otlp
