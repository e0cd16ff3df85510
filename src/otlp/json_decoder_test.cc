// Tests of the OTLP/JSON decoders (DecodeTracesJson, DecodeLogsJson,
// DecodeMetricsJson) on hand-written documents: every field of the current
// OTLP protos, the spellings the proto3 JSON mapping allows, and every kind
// of malformed input, each of which must fail with InvalidArgument naming
// the field path and a byte offset. The random differential against
// libprotobuf lives in tests/otlp/differential_test.cc.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp_reference/compare.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"
#include "otlp_reference/to_message.h"

namespace strata::otlp {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

// ------------------------------------------------------------- helpers

template <size_t N>
std::string Hex(const std::array<uint8_t, N>& id) {
  std::string out;
  char buf[3];
  for (uint8_t b : id) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

std::string HexBytes(std::string_view bytes) {
  std::string out;
  char buf[3];
  for (char c : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<uint8_t>(c));
    out += buf;
  }
  return out;
}

std::string RenderDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}

std::string RenderAttributes(const BatchBase& b, const AttributeColumns& table, Range range);

// Renders value `i` of `c`, following array and kvlist children, e.g.
// [1,"a",{k:true}].
std::string RenderValue(const BatchBase& b, const ValueColumns& c, size_t i) {
  switch (c.type[i]) {
    case ValueType::kEmpty:
      return "empty";
    case ValueType::kString:
      return "\"" + std::string(c.str[i]) + "\"";
    case ValueType::kBool:
      return c.bool_at(i) ? "true" : "false";
    case ValueType::kInt:
      return std::to_string(c.int_at(i));
    case ValueType::kDouble:
      return "d:" + RenderDouble(c.double_at(i));
    case ValueType::kBytes:
      return "bytes:" + HexBytes(c.str[i]);
    case ValueType::kArray: {
      std::string out = "[";
      const Range r = c.children_at(i);
      for (uint32_t k = r.begin; k < r.end(); ++k) {
        if (k > r.begin) out += ",";
        out += RenderValue(b, b.nested_values, k);
      }
      return out + "]";
    }
    case ValueType::kKvList:
      return RenderAttributes(b, b.nested_attributes, c.children_at(i));
  }
  return "?";
}

std::string RenderAttributes(const BatchBase& b, const AttributeColumns& table, Range range) {
  std::string out = "{";
  for (uint32_t k = range.begin; k < range.end(); ++k) {
    if (k > range.begin) out += ",";
    out += std::string(table.key[k]) + ":" + RenderValue(b, table.value, k);
  }
  return out + "}";
}

std::string RenderKeys(const BatchBase& b, Range range) {
  std::string out;
  for (uint32_t k = range.begin; k < range.end(); ++k) {
    if (k > range.begin) out += ",";
    out += b.entity_keys[k];
  }
  return out;
}

// Decodes and requires success and a batch that passes ValidateBatch().
template <typename Batch>
void DecodeOk(absl::Status (*decode)(std::string_view, Batch*, const DecodeLimits&),
              std::string_view json, Batch* batch, const DecodeLimits& limits = {}) {
  absl::Status s = decode(json, batch, limits);
  ASSERT_TRUE(s.ok()) << s << "\n" << json;
  absl::Status valid = ValidateBatch(*batch);
  ASSERT_TRUE(valid.ok()) << valid;
}

// Requires InvalidArgument whose message contains `expected` (path and
// description) and ends with a byte offset.
void ExpectInvalid(const absl::Status& s, std::string_view expected) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  const std::string message(s.message());
  EXPECT_THAT(message, HasSubstr(std::string(expected)));
  EXPECT_THAT(message, ContainsRegex("\\(at byte [0-9]+\\)$"));
}

absl::Status Traces(std::string_view json, const DecodeLimits& limits = {}) {
  TraceBatch batch;
  absl::Status s = DecodeTracesJson(json, &batch, limits);
  if (s.ok()) {
    absl::Status valid = ValidateBatch(batch);
    EXPECT_TRUE(valid.ok()) << valid;
  }
  return s;
}

absl::Status Logs(std::string_view json) {
  LogBatch batch;
  return DecodeLogsJson(json, &batch);
}

absl::Status Metrics(std::string_view json) {
  MetricBatch batch;
  return DecodeMetricsJson(json, &batch);
}

constexpr std::string_view kIds =
    R"("traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718")";

// A request with one span whose fields are `span_fields`.
std::string OneSpan(std::string_view span_fields) {
  return R"({"resourceSpans":[{"scopeSpans":[{"spans":[{)" + std::string(span_fields) + "}]}]}]}";
}

// A request with one span whose only attribute has value `any_value`.
std::string SpanAttribute(std::string_view any_value) {
  return OneSpan(std::string(kIds) + R"(,"attributes":[{"key":"a","value":)" +
                 std::string(any_value) + "}]");
}

constexpr std::string_view kSpanAttributePath =
    "resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value";

// A request with one log record whose fields are `fields`.
std::string OneLog(std::string_view fields) {
  return R"({"resourceLogs":[{"scopeLogs":[{"logRecords":[{)" + std::string(fields) + "}]}]}]}";
}

// A request with one metric whose fields are `fields`.
std::string OneMetric(std::string_view fields) {
  return R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{)" + std::string(fields) + "}]}]}]}";
}

// The first value of the only span attribute of `json`, rendered.
std::string DecodedSpanAttribute(std::string_view any_value, const DecodeLimits& limits = {}) {
  TraceBatch batch;
  absl::Status s = DecodeTracesJson(SpanAttribute(any_value), &batch, limits);
  if (!s.ok()) return std::string(s.message());
  absl::Status valid = ValidateBatch(batch);
  if (!valid.ok()) return std::string(valid.message());
  return RenderValue(batch, batch.span_attributes.value, 0);
}

// -------------------------------------------------------------- traces

constexpr std::string_view kFullTraceJson = R"json({
  "resourceSpans": [{
    "resource": {
      "attributes": [{"key": "service.name", "value": {"stringValue": "checkout"}}],
      "droppedAttributesCount": 2,
      "entityRefs": [
        {"schemaUrl": "https://e/1", "type": "service", "idKeys": ["service.name", "service.namespace"],
         "descriptionKeys": ["service.version"]},
        {"type": "host", "idKeys": ["host.id"]}
      ]
    },
    "schemaUrl": "https://opentelemetry.io/schemas/1.26.0",
    "scopeSpans": [{
      "scope": {"name": "io.strata.http", "version": "1.2.3",
                "attributes": [{"key": "scope.k", "value": {"intValue": "5"}}],
                "droppedAttributesCount": 1},
      "schemaUrl": "https://scope/schema",
      "spans": [{
        "traceId": "5B8EFFF798038103D269B633813FC60C",
        "spanId": "EEE19B7EC3C1B174",
        "traceState": "rojo=00f067aa0ba902b7",
        "parentSpanId": "eee19b7ec3c1b173",
        "flags": 257,
        "name": "GET /cart",
        "kind": 2,
        "startTimeUnixNano": "1544712660000000000",
        "endTimeUnixNano": 1544712661000000000,
        "attributes": [
          {"key": "http.method", "value": {"stringValue": "GET"}},
          {"key": "http.status_code", "value": {"intValue": 200}}
        ],
        "droppedAttributesCount": 3,
        "events": [
          {"timeUnixNano": "1544712660300000000", "name": "ev1",
           "attributes": [{"key": "e", "value": {"boolValue": true}}], "droppedAttributesCount": 4},
          {"timeUnixNano": "1544712660400000000", "name": "ev2"}
        ],
        "droppedEventsCount": 5,
        "links": [{
          "traceId": "0102030405060708090a0b0c0d0e0f10",
          "spanId": "1112131415161718",
          "traceState": "k=v",
          "attributes": [{"key": "l", "value": {"doubleValue": 0.5}}],
          "droppedAttributesCount": 6,
          "flags": 1
        }],
        "droppedLinksCount": 7,
        "status": {"message": "boom", "code": 2}
      }]
    }]
  }]
})json";

TEST(JsonTracesTest, EveryFieldOfAFullRequestReachesItsColumn) {
  TraceBatch b;
  DecodeOk(DecodeTracesJson, kFullTraceJson, &b);

  ASSERT_EQ(b.resources.size(), 1u);
  EXPECT_EQ(RenderAttributes(b, b.resource_attributes, b.resources.attributes[0]),
            R"({service.name:"checkout"})");
  EXPECT_EQ(b.resources.dropped_attributes_count[0], 2u);
  EXPECT_EQ(b.resources.schema_url[0], "https://opentelemetry.io/schemas/1.26.0");
  ASSERT_EQ(b.resources.entity_refs[0], (Range{0, 2}));
  EXPECT_EQ(b.entity_refs.schema_url[0], "https://e/1");
  EXPECT_EQ(b.entity_refs.type[0], "service");
  EXPECT_EQ(RenderKeys(b, b.entity_refs.id_keys[0]), "service.name,service.namespace");
  EXPECT_EQ(RenderKeys(b, b.entity_refs.description_keys[0]), "service.version");
  EXPECT_EQ(b.entity_refs.schema_url[1], "");
  EXPECT_EQ(b.entity_refs.type[1], "host");
  EXPECT_EQ(RenderKeys(b, b.entity_refs.id_keys[1]), "host.id");
  EXPECT_EQ(b.entity_refs.description_keys[1].count, 0u);

  ASSERT_EQ(b.scopes.size(), 1u);
  EXPECT_EQ(b.scopes.resource[0], 0u);
  EXPECT_EQ(b.scopes.name[0], "io.strata.http");
  EXPECT_EQ(b.scopes.version[0], "1.2.3");
  EXPECT_EQ(RenderAttributes(b, b.scope_attributes, b.scopes.attributes[0]), "{scope.k:5}");
  EXPECT_EQ(b.scopes.dropped_attributes_count[0], 1u);
  EXPECT_EQ(b.scopes.schema_url[0], "https://scope/schema");

  ASSERT_EQ(b.spans.size(), 1u);
  const SpanColumns& s = b.spans;
  EXPECT_EQ(s.scope[0], 0u);
  EXPECT_EQ(Hex(s.trace_id[0]), "5b8efff798038103d269b633813fc60c");
  EXPECT_EQ(Hex(s.span_id[0]), "eee19b7ec3c1b174");
  EXPECT_EQ(s.trace_state[0], "rojo=00f067aa0ba902b7");
  EXPECT_EQ(Hex(s.parent_span_id[0]), "eee19b7ec3c1b173");
  EXPECT_EQ(s.has_parent_span_id[0], 1);
  EXPECT_EQ(s.flags[0], 257u);
  EXPECT_EQ(s.name[0], "GET /cart");
  EXPECT_EQ(s.kind[0], 2);
  EXPECT_EQ(s.start_time_unix_nano[0], 1544712660000000000u);
  EXPECT_EQ(s.end_time_unix_nano[0], 1544712661000000000u);
  EXPECT_EQ(RenderAttributes(b, b.span_attributes, s.attributes[0]),
            R"({http.method:"GET",http.status_code:200})");
  EXPECT_EQ(s.dropped_attributes_count[0], 3u);
  EXPECT_EQ(s.dropped_events_count[0], 5u);
  EXPECT_EQ(s.dropped_links_count[0], 7u);
  EXPECT_EQ(s.status_message[0], "boom");
  EXPECT_EQ(s.status_code[0], 2);

  ASSERT_EQ(s.events[0], (Range{0, 2}));
  EXPECT_EQ(b.events.time_unix_nano[0], 1544712660300000000u);
  EXPECT_EQ(b.events.name[0], "ev1");
  EXPECT_EQ(RenderAttributes(b, b.event_attributes, b.events.attributes[0]), "{e:true}");
  EXPECT_EQ(b.events.dropped_attributes_count[0], 4u);
  EXPECT_EQ(b.events.name[1], "ev2");
  EXPECT_EQ(b.events.attributes[1].count, 0u);

  ASSERT_EQ(s.links[0], (Range{0, 1}));
  EXPECT_EQ(Hex(b.links.trace_id[0]), "0102030405060708090a0b0c0d0e0f10");
  EXPECT_EQ(Hex(b.links.span_id[0]), "1112131415161718");
  EXPECT_EQ(b.links.trace_state[0], "k=v");
  EXPECT_EQ(RenderAttributes(b, b.link_attributes, b.links.attributes[0]), "{l:d:0.5}");
  EXPECT_EQ(b.links.dropped_attributes_count[0], 6u);
  EXPECT_EQ(b.links.flags[0], 1u);
}

TEST(JsonTracesTest, SnakeCaseNamesAndEnumNamesMeanTheSame) {
  constexpr std::string_view json = R"json({"resource_spans": [{
    "schema_url": "s",
    "resource": {"dropped_attributes_count": "2", "entity_refs": [{"id_keys": ["a"],
                 "description_keys": ["b"], "schema_url": "u"}]},
    "scope_spans": [{"scope": {"dropped_attributes_count": 1}, "spans": [{
      "trace_id": "0102030405060708090a0b0c0d0e0f10", "span_id": "1112131415161718",
      "parent_span_id": "2122232425262728", "trace_state": "ts",
      "kind": "SPAN_KIND_SERVER", "start_time_unix_nano": 10, "end_time_unix_nano": "20",
      "dropped_attributes_count": 1, "dropped_events_count": 2, "dropped_links_count": 3,
      "events": [{"time_unix_nano": 5, "dropped_attributes_count": 9}],
      "links": [{"trace_id": "0102030405060708090a0b0c0d0e0f10", "span_id": "1112131415161718",
                 "trace_state": "x", "dropped_attributes_count": 8}],
      "status": {"code": "STATUS_CODE_ERROR"}}]}]}]})json";
  TraceBatch b;
  DecodeOk(DecodeTracesJson, json, &b);
  ASSERT_EQ(b.spans.size(), 1u);
  EXPECT_EQ(b.resources.schema_url[0], "s");
  EXPECT_EQ(b.resources.dropped_attributes_count[0], 2u);
  EXPECT_EQ(RenderKeys(b, b.entity_refs.id_keys[0]), "a");
  EXPECT_EQ(RenderKeys(b, b.entity_refs.description_keys[0]), "b");
  EXPECT_EQ(b.entity_refs.schema_url[0], "u");
  EXPECT_EQ(b.scopes.dropped_attributes_count[0], 1u);
  EXPECT_EQ(Hex(b.spans.parent_span_id[0]), "2122232425262728");
  EXPECT_EQ(b.spans.trace_state[0], "ts");
  EXPECT_EQ(b.spans.kind[0], 2);
  EXPECT_EQ(b.spans.start_time_unix_nano[0], 10u);
  EXPECT_EQ(b.spans.end_time_unix_nano[0], 20u);
  EXPECT_EQ(b.spans.dropped_attributes_count[0], 1u);
  EXPECT_EQ(b.spans.dropped_events_count[0], 2u);
  EXPECT_EQ(b.spans.dropped_links_count[0], 3u);
  EXPECT_EQ(b.events.time_unix_nano[0], 5u);
  EXPECT_EQ(b.events.dropped_attributes_count[0], 9u);
  EXPECT_EQ(b.links.trace_state[0], "x");
  EXPECT_EQ(b.links.dropped_attributes_count[0], 8u);
  EXPECT_EQ(b.spans.status_code[0], 2);
}

TEST(JsonTracesTest, EveryEnumNameMapsToItsNumberAndUnknownNumbersAreKept) {
  const std::pair<std::string_view, int32_t> cases[] = {
      {R"("SPAN_KIND_UNSPECIFIED")", 0},
      {R"("SPAN_KIND_INTERNAL")", 1},
      {R"("SPAN_KIND_SERVER")", 2},
      {R"("SPAN_KIND_CLIENT")", 3},
      {R"("SPAN_KIND_PRODUCER")", 4},
      {R"("SPAN_KIND_CONSUMER")", 5},
      {"17", 17},
      {R"("-3")", -3},
      {"-2147483648", -2147483648},
  };
  for (const auto& [kind, want] : cases) {
    TraceBatch b;
    DecodeOk(DecodeTracesJson, OneSpan(std::string(kIds) + R"(,"kind":)" + std::string(kind)), &b);
    ASSERT_EQ(b.spans.size(), 1u);
    EXPECT_EQ(b.spans.kind[0], want) << kind;
  }
  const std::pair<std::string_view, int32_t> codes[] = {
      {R"("STATUS_CODE_UNSET")", 0}, {R"("STATUS_CODE_OK")", 1}, {R"("STATUS_CODE_ERROR")", 2}};
  for (const auto& [code, want] : codes) {
    TraceBatch b;
    DecodeOk(DecodeTracesJson,
             OneSpan(std::string(kIds) + R"(,"status":{"code":)" + std::string(code) + "}"), &b);
    EXPECT_EQ(b.spans.status_code[0], want) << code;
  }
}

TEST(JsonTracesTest, IntegersAcceptNumbersDecimalStringsAndExactExponentForms) {
  const std::pair<std::string_view, uint64_t> cases[] = {
      {"0", 0},
      {"\"0\"", 0},
      {"1700000000123456789", 1700000000123456789u},
      {"\"1700000000123456789\"", 1700000000123456789u},
      {"\"18446744073709551615\"", std::numeric_limits<uint64_t>::max()},
      {"18446744073709551615", std::numeric_limits<uint64_t>::max()},
      {"1e3", 1000},
      {"\"1.5e3\"", 1500},
      {"2.0", 2},
      {"-0", 0},
      {"1.8446744073709551615e19", std::numeric_limits<uint64_t>::max()},
  };
  for (const auto& [text, want] : cases) {
    TraceBatch b;
    DecodeOk(DecodeTracesJson,
             OneSpan(std::string(kIds) + R"(,"startTimeUnixNano":)" + std::string(text)), &b);
    ASSERT_EQ(b.spans.size(), 1u);
    EXPECT_EQ(b.spans.start_time_unix_nano[0], want) << text;
  }
}

TEST(JsonTracesTest, UnknownFieldsAreSkippedAtEveryLevel) {
  constexpr std::string_view json = R"json({"future": {"a": [1, "x", null, true, {"b": []}]},
    "resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [{"name": "old"}]}],
      "resource": {"newThing": 1.5e300, "attributes": []},
      "scopeSpans": [{"extra": "x", "scope": {"name": "n", "other": {}},
        "spans": [{"traceId": "0102030405060708090a0b0c0d0e0f10", "spanId": "1112131415161718",
                   "unknownArray": [[[]]], "name": "kept", "zzz": false,
                   "status": {"deprecatedCode": 1, "code": 1},
                   "events": [{"name": "e", "what": "ever"}]}]}]}],
    "trailer": -12.5e-3})json";
  TraceBatch b;
  DecodeOk(DecodeTracesJson, json, &b);
  ASSERT_EQ(b.spans.size(), 1u);
  EXPECT_EQ(b.spans.name[0], "kept");
  EXPECT_EQ(b.spans.status_code[0], 1);
  EXPECT_EQ(b.scopes.name[0], "n");
  EXPECT_EQ(b.events.name[0], "e");
}

TEST(JsonTracesTest, NullMeansAbsentForMessagesListsAndScalars) {
  TraceBatch b;
  DecodeOk(DecodeTracesJson,
           OneSpan(std::string(kIds) +
                   R"(,"parentSpanId":null,"status":null,"attributes":null,"events":null,)"
                   R"("name":null,"kind":null,"startTimeUnixNano":null,"links":null)"),
           &b);
  ASSERT_EQ(b.spans.size(), 1u);
  EXPECT_EQ(b.spans.has_parent_span_id[0], 0);
  EXPECT_EQ(b.spans.name[0], "");
  EXPECT_EQ(b.spans.kind[0], 0);
  EXPECT_EQ(b.spans.start_time_unix_nano[0], 0u);
  EXPECT_EQ(b.spans.attributes[0].count, 0u);
  EXPECT_EQ(b.spans.events[0].count, 0u);
}

TEST(JsonTracesTest, EmptyParentSpanIdIsAbsentAndHexIsCaseInsensitive) {
  TraceBatch b;
  DecodeOk(DecodeTracesJson,
           OneSpan(R"("traceId":"ABCDEFabcdef0123456789aBcDeF0000","spanId":"00000000000000Ff",)"
                   R"("parentSpanId":"")"),
           &b);
  EXPECT_EQ(Hex(b.spans.trace_id[0]), "abcdefabcdef0123456789abcdef0000");
  EXPECT_EQ(Hex(b.spans.span_id[0]), "00000000000000ff");
  EXPECT_EQ(b.spans.has_parent_span_id[0], 0);
}

TEST(JsonTracesTest, ResourcesAndScopesIndexTheirRowsAcrossSeveralEnvelopes) {
  const std::string span = "{" + std::string(kIds) + "}";
  const std::string json = R"({"resourceSpans":[)"
                           R"({"scopeSpans":[{"spans":[)" +
                           span + "," + span + R"(]},{"scope":{"name":"s1"},"spans":[)" + span +
                           R"(]}]},)"
                           R"({"schemaUrl":"r1","scopeSpans":[{"scope":{"name":"s2"},"spans":[)" +
                           span + R"(]}]}]})";
  TraceBatch b;
  DecodeOk(DecodeTracesJson, json, &b);
  ASSERT_EQ(b.resources.size(), 2u);
  ASSERT_EQ(b.scopes.size(), 3u);
  EXPECT_EQ(b.scopes.resource[0], 0u);
  EXPECT_EQ(b.scopes.resource[1], 0u);
  EXPECT_EQ(b.scopes.resource[2], 1u);
  EXPECT_EQ(b.scopes.name[2], "s2");
  EXPECT_EQ(b.resources.schema_url[1], "r1");
  ASSERT_EQ(b.spans.size(), 4u);
  EXPECT_EQ(b.spans.scope[0], 0u);
  EXPECT_EQ(b.spans.scope[1], 0u);
  EXPECT_EQ(b.spans.scope[2], 1u);
  EXPECT_EQ(b.spans.scope[3], 2u);
}

TEST(JsonTracesTest, SecondRequestAppendsToTheSameBatch) {
  TraceBatch b;
  DecodeOk(DecodeTracesJson, kFullTraceJson, &b);
  DecodeOk(DecodeTracesJson, kFullTraceJson, &b);
  ASSERT_EQ(b.spans.size(), 2u);
  EXPECT_EQ(b.resources.size(), 2u);
  EXPECT_EQ(b.scopes.resource[1], 1u);
  EXPECT_EQ(b.spans.scope[1], 1u);
  EXPECT_EQ(b.spans.events[1], (Range{2, 2}));
  EXPECT_EQ(RenderAttributes(b, b.span_attributes, b.spans.attributes[1]),
            R"({http.method:"GET",http.status_code:200})");
}

TEST(JsonTracesTest, EmptyRequestsDecodeToNoRows) {
  for (std::string_view json : {"{}", R"({"resourceSpans":[]})", R"( {"resourceSpans":null} )",
                                R"({"resourceSpans":[{}]})"}) {
    TraceBatch b;
    DecodeOk(DecodeTracesJson, json, &b);
    EXPECT_EQ(b.spans.size(), 0u) << json;
  }
}

TEST(JsonTracesTest, StringsAreCopiedSoTheInputMayBeReleased) {
  std::string json = OneSpan(std::string(kIds) + R"(,"name":"a\u00e9\n\"b\"","traceState":"t")");
  TraceBatch b;
  DecodeOk(DecodeTracesJson, json, &b);
  json.assign(json.size(), 'x');
  EXPECT_EQ(b.spans.name[0], "a\xc3\xa9\n\"b\"");
  EXPECT_EQ(b.spans.trace_state[0], "t");
}

// ---------------------------------------------------------- AnyValues

TEST(JsonValuesTest, EveryAnyValueKindDecodes) {
  EXPECT_EQ(DecodedSpanAttribute(R"({"stringValue":"s"})"), R"("s")");
  EXPECT_EQ(DecodedSpanAttribute(R"({"boolValue":false})"), "false");
  EXPECT_EQ(DecodedSpanAttribute(R"({"intValue":"-9223372036854775808"})"), "-9223372036854775808");
  EXPECT_EQ(DecodedSpanAttribute(R"({"intValue":9223372036854775807})"), "9223372036854775807");
  EXPECT_EQ(DecodedSpanAttribute(R"({"doubleValue":-1.25e-3})"), "d:-0.00125");
  EXPECT_EQ(DecodedSpanAttribute(R"({"doubleValue":"NaN"})"), "d:NaN");
  EXPECT_EQ(DecodedSpanAttribute(R"({"doubleValue":"Infinity"})"), "d:Infinity");
  EXPECT_EQ(DecodedSpanAttribute(R"({"doubleValue":"-Infinity"})"), "d:-Infinity");
  EXPECT_EQ(DecodedSpanAttribute(R"({"doubleValue":"2.5"})"), "d:2.5");
  EXPECT_EQ(DecodedSpanAttribute(R"({"doubleValue":3})"), "d:3");
  EXPECT_EQ(DecodedSpanAttribute(R"({"bytesValue":"AAEC/w=="})"), "bytes:000102ff");
  EXPECT_EQ(DecodedSpanAttribute(R"({"bytesValue":"AAEC_w"})"), "bytes:000102ff");
  EXPECT_EQ(DecodedSpanAttribute(R"({"bytesValue":"-_8"})"), "bytes:fbff");
  EXPECT_EQ(DecodedSpanAttribute(R"({"bytesValue":"aGk="})"), "bytes:6869");
  EXPECT_EQ(DecodedSpanAttribute(R"({"bytesValue":""})"), "bytes:");
  EXPECT_EQ(DecodedSpanAttribute(R"({})"), "empty");
  EXPECT_EQ(DecodedSpanAttribute(R"(null)"), "empty");
  EXPECT_EQ(DecodedSpanAttribute(R"({"stringValue":null})"), "empty");
  EXPECT_EQ(DecodedSpanAttribute(R"({"arrayValue":{}})"), "[]");
  EXPECT_EQ(DecodedSpanAttribute(R"({"kvlistValue":{"values":[]}})"), "{}");
  EXPECT_EQ(DecodedSpanAttribute(R"({"string_value":"snake","unknown":1})"), R"("snake")");
}

TEST(JsonValuesTest, NestedChildrenStayContiguousPerParent) {
  constexpr std::string_view value = R"json({"arrayValue":{"values":[
      {"intValue":"1"},
      {"arrayValue":{"values":[{"intValue":2},
                               {"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}},
                                                         {"key":"e"}]}}]}},
      {"kvlistValue":{"values":[{"key":"x","value":{"arrayValue":{"values":[{"boolValue":true}]}}}]}},
      {"doubleValue":4.5}]}})json";
  EXPECT_EQ(DecodedSpanAttribute(value), R"([1,[2,{k:"v",e:empty}],{x:[true]},d:4.5])");
}

TEST(JsonValuesTest, LogBodyAndAttributesShareNestedTablesWithoutOverlap) {
  constexpr std::string_view json = R"json({"resourceLogs":[{
    "resource":{"attributes":[{"key":"r","value":{"arrayValue":{"values":[{"intValue":1},{"intValue":2}]}}}]},
    "scopeLogs":[{"scope":{"attributes":[{"key":"s","value":{"kvlistValue":{"values":[{"key":"a","value":{"intValue":3}}]}}}]},
    "logRecords":[
      {"body":{"arrayValue":{"values":[{"arrayValue":{"values":[{"intValue":4}]}},{"intValue":5}]}},
       "attributes":[{"key":"l","value":{"arrayValue":{"values":[{"intValue":6}]}}}]},
      {"body":{"kvlistValue":{"values":[{"key":"b","value":{"kvlistValue":{"values":[{"key":"c","value":{"intValue":7}}]}}}]}}}
    ]}]}]})json";
  LogBatch b;
  DecodeOk(DecodeLogsJson, json, &b);
  EXPECT_EQ(RenderAttributes(b, b.resource_attributes, b.resources.attributes[0]), "{r:[1,2]}");
  EXPECT_EQ(RenderAttributes(b, b.scope_attributes, b.scopes.attributes[0]), "{s:{a:3}}");
  EXPECT_EQ(RenderValue(b, b.logs.body, 0), "[[4],5]");
  EXPECT_EQ(RenderAttributes(b, b.log_attributes, b.logs.attributes[0]), "{l:[6]}");
  EXPECT_EQ(RenderValue(b, b.logs.body, 1), "{b:{c:7}}");
}

TEST(JsonValuesTest, ValueNestingUpToTheLimitDecodesAndOneDeeperFails) {
  DecodeLimits limits;
  limits.max_value_depth = 2;
  // An array holding a kvlist is depth 2.
  EXPECT_EQ(DecodedSpanAttribute(
                R"({"arrayValue":{"values":[{"kvlistValue":{"values":[{"key":"k"}]}}]}})", limits),
            "[{k:empty}]");
  const absl::Status s = Traces(
      SpanAttribute(R"({"arrayValue":{"values":[{"arrayValue":{"values":[{"arrayValue":{}}]}}]}})"),
      limits);
  ExpectInvalid(s, std::string(kSpanAttributePath) +
                       ".arrayValue.values[0].arrayValue.values[0].arrayValue: AnyValue nesting "
                       "deeper than 2");
}

TEST(JsonValuesTest, JsonNestingLimitAppliesToSkippedUnknownFieldsToo) {
  DecodeLimits limits;
  limits.max_json_depth = 8;
  // root {} is depth 1, resourceSpans [] 2, its element {} 3, x's arrays 4 and up.
  EXPECT_TRUE(Traces(R"({"resourceSpans":[{"x":[[[[[]]]]]}]})", limits).ok());
  ExpectInvalid(Traces(R"({"resourceSpans":[{"x":[[[[[[]]]]]]}]})", limits),
                "resourceSpans[0].x[0][0][0][0][0]: JSON nesting deeper than 8");
  // The default limit stops a hostile document long before the stack does.
  std::string hostile = R"({"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  ExpectInvalid(Traces(hostile), "JSON nesting deeper than 128");
}

TEST(JsonValuesTest, OneofWithTwoMembersIsInvalid) {
  ExpectInvalid(Traces(SpanAttribute(R"({"stringValue":"a","intValue":1})")),
                std::string(kSpanAttributePath) +
                    ".intValue: more than one member of the AnyValue oneof is set");
}

TEST(JsonValuesTest, ProfileOnlyStringIndexesAreRejected) {
  ExpectInvalid(Traces(SpanAttribute(R"({"stringValueStrindex":3})")),
                std::string(kSpanAttributePath) +
                    ".stringValueStrindex: stringValueStrindex is "
                    "only valid in profiles");
  ExpectInvalid(
      Traces(OneSpan(std::string(kIds) + R"(,"attributes":[{"keyStrindex":1,"value":{}}])")),
      "resourceSpans[0].scopeSpans[0].spans[0].attributes[0].keyStrindex: keyStrindex is only "
      "valid in profiles");
}

TEST(JsonValuesTest, MalformedScalarsNameTheirField) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"bytesValue":"a"})", ".bytesValue: invalid base64"},
      {R"({"bytesValue":"a=b="})", ".bytesValue: invalid base64"},
      {R"({"bytesValue":"ab!c"})", ".bytesValue: invalid base64"},
      {R"({"bytesValue":"abc=="})", ".bytesValue: invalid base64"},
      {R"({"intValue":"9223372036854775808"})", ".intValue: integer out of range"},
      {R"({"intValue":-9223372036854775809})", ".intValue: integer out of range"},
      {R"({"intValue":"1.5"})", ".intValue: not an integer"},
      {R"({"intValue":"12abc"})", ".intValue: expected an integer"},
      {R"({"intValue":" 1"})", ".intValue: expected an integer"},
      {R"({"intValue":true})", ".intValue: expected an integer"},
      {R"({"doubleValue":"nan"})", ".doubleValue: expected a number"},
      {R"({"doubleValue":"1e400"})", ".doubleValue: invalid or out-of-range number"},
      {R"({"doubleValue":{}})", ".doubleValue: expected a number"},
      {R"({"boolValue":"true"})", ".boolValue: expected true or false"},
      {R"({"stringValue":5})", ".stringValue: expected a string"},
      {R"({"stringValue":"\ud800"})", ".stringValue: invalid string escape"},
      {R"({"arrayValue":{"values":{}}})", ".arrayValue.values: expected an array"},
      {R"({"arrayValue":{"values":[null]}})", ".arrayValue.values[0]: expected an object"},
      {R"("text")", ": expected an object"},
  };
  for (const auto& [value, what] : cases) {
    ExpectInvalid(Traces(SpanAttribute(value)),
                  std::string(kSpanAttributePath) + std::string(what));
  }
}

// ---------------------------------------------------------------- logs

constexpr std::string_view kFullLogJson = R"json({"resourceLogs":[{
  "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"api"}}]},
  "schemaUrl":"rs",
  "scopeLogs":[{"scope":{"name":"logger","version":"2"},"schemaUrl":"ss","logRecords":[
    {"timeUnixNano":"1700000000000000001","observedTimeUnixNano":1700000000000000002,
     "severityNumber":"SEVERITY_NUMBER_INFO","severityText":"INFO",
     "body":{"kvlistValue":{"values":[{"key":"msg","value":{"stringValue":"hello"}}]}},
     "attributes":[{"key":"user","value":{"intValue":"42"}}],"droppedAttributesCount":3,
     "flags":1,"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
     "eventName":"session.start"},
    {"severity_number":21,"body":{"stringValue":"plain"},"trace_id":"","span_id":"",
     "event_name":"e2","observed_time_unix_nano":"5","dropped_attributes_count":"7"},
    {"body":{"boolValue":true}},
    {"body":{"intValue":-1}},
    {"body":{"doubleValue":"-Infinity"}},
    {"body":{"bytesValue":"3q2+7w=="}},
    {"body":{"arrayValue":{"values":[{"stringValue":"a"},{}]}}},
    {}
  ]}]}]})json";

TEST(JsonLogsTest, EveryFieldOfAFullRequestReachesItsColumn) {
  LogBatch b;
  DecodeOk(DecodeLogsJson, kFullLogJson, &b);
  ASSERT_EQ(b.logs.size(), 8u);
  const LogRecordColumns& l = b.logs;
  EXPECT_EQ(b.resources.schema_url[0], "rs");
  EXPECT_EQ(b.scopes.name[0], "logger");
  EXPECT_EQ(b.scopes.version[0], "2");
  EXPECT_EQ(b.scopes.schema_url[0], "ss");
  EXPECT_EQ(l.scope[7], 0u);
  EXPECT_EQ(l.time_unix_nano[0], 1700000000000000001u);
  EXPECT_EQ(l.observed_time_unix_nano[0], 1700000000000000002u);
  EXPECT_EQ(l.severity_number[0], 9);
  EXPECT_EQ(l.severity_text[0], "INFO");
  EXPECT_EQ(RenderValue(b, l.body, 0), R"({msg:"hello"})");
  EXPECT_EQ(RenderAttributes(b, b.log_attributes, l.attributes[0]), "{user:42}");
  EXPECT_EQ(l.dropped_attributes_count[0], 3u);
  EXPECT_EQ(l.flags[0], 1u);
  EXPECT_EQ(l.has_trace_id[0], 1);
  EXPECT_EQ(Hex(l.trace_id[0]), "5b8efff798038103d269b633813fc60c");
  EXPECT_EQ(l.has_span_id[0], 1);
  EXPECT_EQ(Hex(l.span_id[0]), "eee19b7ec3c1b174");
  EXPECT_EQ(l.event_name[0], "session.start");

  EXPECT_EQ(l.severity_number[1], 21);
  EXPECT_EQ(l.has_trace_id[1], 0);
  EXPECT_EQ(Hex(l.trace_id[1]), std::string(32, '0'));
  EXPECT_EQ(l.has_span_id[1], 0);
  EXPECT_EQ(l.event_name[1], "e2");
  EXPECT_EQ(l.observed_time_unix_nano[1], 5u);
  EXPECT_EQ(l.dropped_attributes_count[1], 7u);

  EXPECT_EQ(RenderValue(b, l.body, 1), R"("plain")");
  EXPECT_EQ(RenderValue(b, l.body, 2), "true");
  EXPECT_EQ(RenderValue(b, l.body, 3), "-1");
  EXPECT_EQ(RenderValue(b, l.body, 4), "d:-Infinity");
  EXPECT_EQ(RenderValue(b, l.body, 5), "bytes:deadbeef");
  EXPECT_EQ(RenderValue(b, l.body, 6), R"(["a",empty])");
  EXPECT_EQ(RenderValue(b, l.body, 7), "empty");
}

TEST(JsonLogsTest, EverySeverityNameMapsToItsNumber) {
  const char* levels[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
  for (int level = 0; level < 6; ++level) {
    for (int sub = 1; sub <= 4; ++sub) {
      std::string name = std::string("SEVERITY_NUMBER_") + levels[level];
      if (sub > 1) name += std::to_string(sub);
      LogBatch b;
      DecodeOk(DecodeLogsJson, OneLog(R"("severityNumber":")" + name + "\""), &b);
      EXPECT_EQ(b.logs.severity_number[0], level * 4 + sub) << name;
    }
  }
  LogBatch b;
  DecodeOk(DecodeLogsJson, OneLog(R"("severityNumber":"SEVERITY_NUMBER_UNSPECIFIED")"), &b);
  EXPECT_EQ(b.logs.severity_number[0], 0);
}

TEST(JsonLogsTest, MalformedLogFieldsNameTheirPath) {
  constexpr std::string_view base = "resourceLogs[0].scopeLogs[0].logRecords[0].";
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"("traceId":12)", "traceId: expected a string"},
      {R"("spanId":{})", "spanId: expected a string"},
      {R"("severityNumber":"SEVERITY_NUMBER_LOUD")",
       "severityNumber: unknown enum value name \"SEVERITY_NUMBER_LOUD\""},
      {R"("severityNumber":2147483648)", "severityNumber: integer out of range"},
      {R"("flags":-1)", "flags: integer out of range"},
      {R"("timeUnixNano":"-1")", "timeUnixNano: integer out of range"},
      {R"("body":[])", "body: expected an object"},
      {R"("eventName":{})", "eventName: expected a string"},
  };
  for (const auto& [fields, what] : cases) {
    ExpectInvalid(Logs(OneLog(fields)), std::string(base) + std::string(what));
  }
}

TEST(JsonLogsTest, InvalidIdsAreClearedEachOnItsOwnAndTheRecordKept) {
  // As the protobuf decoder (ProtoDecoderLogs): an id of the wrong length
  // or all zero is stored as absent and counted; so is text that is not
  // hex, which JSON adds. The other id of the record is decided alone.
  constexpr std::string_view trace = "0102030405060708090a0b0c0d0e0f00";
  constexpr std::string_view span = "0012131415161718";
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"0102", span},                                // short
      {"0102030405060708090a0b0c0d0e0f0011", span},  // long
      {"0102030405060708090a0b0c0d0e0f0", span},     // odd length
      {"0102030405060708090a0b0c0d0e0fXX", span},    // not hex
      {"AQIDBAUGBwgJCgsMDQ4PAA==", span},            // base64, as protobuf JSON would have it
      {"00000000000000000000000000000000", span},    // all zero
      {trace, "00000000000000"},
      {trace, "zz12131415161718"},
      {trace, "0000000000000000"},
  };
  for (const auto& [trace_hex, span_hex] : cases) {
    const std::string fields = R"("traceId":")" + std::string(trace_hex) + R"(","spanId":")" +
                               std::string(span_hex) + R"(","severityText":"kept")";
    LogBatch b;
    DecodeOk(DecodeLogsJson, OneLog(fields), &b);
    ASSERT_EQ(b.logs.size(), 1u) << fields;
    EXPECT_EQ(b.logs.severity_text[0], "kept");
    EXPECT_TRUE(b.rejected.empty());
    const bool trace_kept = trace_hex == trace;
    const bool span_kept = span_hex == span;
    EXPECT_EQ(b.logs.has_trace_id[0], trace_kept ? 1 : 0) << fields;
    EXPECT_EQ(b.logs.has_span_id[0], span_kept ? 1 : 0) << fields;
    EXPECT_EQ(b.cleared_ids.trace_id, trace_kept ? 0u : 1u) << fields;
    EXPECT_EQ(b.cleared_ids.span_id, span_kept ? 0u : 1u) << fields;
    const TraceId want_trace{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0};
    const SpanId want_span{0, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};
    EXPECT_EQ(b.logs.trace_id[0], trace_kept ? want_trace : TraceId{}) << fields;
    EXPECT_EQ(b.logs.span_id[0], span_kept ? want_span : SpanId{}) << fields;
  }
  // Empty means absent: nothing cleared.
  LogBatch b;
  DecodeOk(DecodeLogsJson, OneLog(R"("traceId":"","spanId":"")"), &b);
  EXPECT_EQ(b.logs.has_trace_id[0] + b.logs.has_span_id[0], 0);
  EXPECT_TRUE(b.cleared_ids.empty());
}

// ------------------------------------------------------------- metrics

constexpr std::string_view kFullMetricJson = R"json({"resourceMetrics":[{
  "resource":{},
  "scopeMetrics":[{"scope":{"name":"meter"},"metrics":[
    {"name":"g","description":"a gauge","unit":"1",
     "metadata":[{"key":"m","value":{"stringValue":"v"}}],
     "gauge":{"dataPoints":[
       {"attributes":[{"key":"p","value":{"intValue":1}}],"startTimeUnixNano":"1","timeUnixNano":"2",
        "asDouble":1.5,"flags":1,
        "exemplars":[{"filteredAttributes":[{"key":"f","value":{"boolValue":true}}],
                      "timeUnixNano":"3","asInt":"-7",
                      "spanId":"1112131415161718","traceId":"0102030405060708090a0b0c0d0e0f10"},
                     {"asDouble":"NaN"}]},
       {"asInt":"9223372036854775807"},
       {}]}},
    {"name":"s","sum":{"dataPoints":[{"asInt":3}],"aggregationTemporality":"AGGREGATION_TEMPORALITY_CUMULATIVE","isMonotonic":true}},
    {"name":"h","histogram":{"aggregationTemporality":1,"dataPoints":[
       {"count":"6","sum":10.5,"bucketCounts":["1",2,"3"],"explicitBounds":[1,"2.5"],"min":0.5,"max":"Infinity",
        "exemplars":[{"asDouble":2}],"timeUnixNano":"9"},
       {"count":0}]}},
    {"name":"e","exponentialHistogram":{"aggregationTemporality":"AGGREGATION_TEMPORALITY_DELTA","dataPoints":[
       {"count":"12","sum":3.25,"scale":-3,"zeroCount":"2","zeroThreshold":1e-9,
        "positive":{"offset":-2,"bucketCounts":["4","5"]},
        "negative":{"offset":"7","bucketCounts":[1]},
        "min":-1,"max":8,"flags":1},
       {"scale":"20"}]}},
    {"name":"q","summary":{"dataPoints":[
       {"count":"5","sum":12.5,"quantileValues":[{"quantile":0.5,"value":2},{"quantile":1,"value":"9"}],
        "attributes":[{"key":"x","value":{"stringValue":"y"}}],"startTimeUnixNano":4}]}},
    {"name":"nodata"}
  ]}]}]})json";

TEST(JsonMetricsTest, AllFiveMetricTypesAndTheirPointsDecode) {
  MetricBatch b;
  DecodeOk(DecodeMetricsJson, kFullMetricJson, &b);
  const MetricColumns& m = b.metrics;
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m.type[0], MetricType::kGauge);
  EXPECT_EQ(m.type[1], MetricType::kSum);
  EXPECT_EQ(m.type[2], MetricType::kHistogram);
  EXPECT_EQ(m.type[3], MetricType::kExponentialHistogram);
  EXPECT_EQ(m.type[4], MetricType::kSummary);
  EXPECT_EQ(m.type[5], MetricType::kUnset);
  EXPECT_EQ(m.points[5].count, 0u);
  EXPECT_EQ(m.name[0], "g");
  EXPECT_EQ(m.description[0], "a gauge");
  EXPECT_EQ(m.unit[0], "1");
  EXPECT_EQ(RenderAttributes(b, b.metadata_attributes, m.metadata[0]), R"({m:"v"})");
  EXPECT_EQ(m.aggregation_temporality[1], 2);
  EXPECT_EQ(m.is_monotonic[1], 1);
  EXPECT_EQ(m.aggregation_temporality[2], 1);
  EXPECT_EQ(m.aggregation_temporality[3], 1);
  EXPECT_EQ(m.is_monotonic[0], 0);

  // Gauge and sum points share number_points.
  const NumberPointColumns& n = b.number_points;
  ASSERT_EQ(m.points[0], (Range{0, 3}));
  ASSERT_EQ(m.points[1], (Range{3, 1}));
  EXPECT_EQ(n.metric[0], 0u);
  EXPECT_EQ(n.metric[3], 1u);
  EXPECT_EQ(RenderAttributes(b, b.point_attributes, n.attributes[0]), "{p:1}");
  EXPECT_EQ(n.start_time_unix_nano[0], 1u);
  EXPECT_EQ(n.time_unix_nano[0], 2u);
  EXPECT_EQ(n.flags[0], 1u);
  EXPECT_EQ(n.value_type[0], NumberType::kDouble);
  EXPECT_EQ(n.double_at(0), 1.5);
  EXPECT_EQ(n.value_type[1], NumberType::kInt);
  EXPECT_EQ(n.int_at(1), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(n.value_type[2], NumberType::kNone);
  EXPECT_EQ(n.value_type[3], NumberType::kInt);
  EXPECT_EQ(n.int_at(3), 3);

  const ExemplarColumns& x = b.exemplars;
  ASSERT_EQ(n.exemplars[0], (Range{0, 2}));
  EXPECT_EQ(RenderAttributes(b, b.exemplar_attributes, x.filtered_attributes[0]), "{f:true}");
  EXPECT_EQ(x.time_unix_nano[0], 3u);
  EXPECT_EQ(x.value_type[0], NumberType::kInt);
  EXPECT_EQ(static_cast<int64_t>(x.value_bits[0]), -7);
  EXPECT_EQ(x.has_span_id[0], 1);
  EXPECT_EQ(Hex(x.span_id[0]), "1112131415161718");
  EXPECT_EQ(x.has_trace_id[0], 1);
  EXPECT_EQ(Hex(x.trace_id[0]), "0102030405060708090a0b0c0d0e0f10");
  EXPECT_EQ(x.value_type[1], NumberType::kDouble);
  EXPECT_TRUE(std::isnan(std::bit_cast<double>(x.value_bits[1])));
  EXPECT_EQ(x.has_span_id[1], 0);
  EXPECT_EQ(x.has_trace_id[1], 0);

  const HistogramPointColumns& h = b.histogram_points;
  ASSERT_EQ(m.points[2], (Range{0, 2}));
  EXPECT_EQ(h.metric[0], 2u);
  EXPECT_EQ(h.count[0], 6u);
  EXPECT_EQ(h.present[0], kHasSum | kHasMin | kHasMax);
  EXPECT_EQ(h.sum[0], 10.5);
  EXPECT_EQ(h.min[0], 0.5);
  EXPECT_EQ(h.max[0], std::numeric_limits<double>::infinity());
  ASSERT_EQ(h.bucket_counts[0].count, 3u);
  EXPECT_EQ(b.bucket_counts[h.bucket_counts[0].begin + 2], 3u);
  ASSERT_EQ(h.explicit_bounds[0].count, 2u);
  EXPECT_EQ(b.explicit_bounds[h.explicit_bounds[0].begin + 1], 2.5);
  EXPECT_EQ(h.time_unix_nano[0], 9u);
  EXPECT_EQ(h.exemplars[0], (Range{2, 1}));
  EXPECT_EQ(h.present[1], 0);
  EXPECT_EQ(h.count[1], 0u);

  const ExponentialPointColumns& e = b.exponential_points;
  ASSERT_EQ(m.points[3], (Range{0, 2}));
  EXPECT_EQ(e.count[0], 12u);
  EXPECT_EQ(e.present[0], kHasSum | kHasMin | kHasMax);
  EXPECT_EQ(e.sum[0], 3.25);
  EXPECT_EQ(e.min[0], -1.0);
  EXPECT_EQ(e.max[0], 8.0);
  EXPECT_EQ(e.scale[0], -3);
  EXPECT_EQ(e.zero_count[0], 2u);
  EXPECT_EQ(e.zero_threshold[0], 1e-9);
  EXPECT_EQ(e.positive_offset[0], -2);
  ASSERT_EQ(e.positive_bucket_counts[0].count, 2u);
  EXPECT_EQ(b.bucket_counts[e.positive_bucket_counts[0].begin + 1], 5u);
  EXPECT_EQ(e.negative_offset[0], 7);
  ASSERT_EQ(e.negative_bucket_counts[0].count, 1u);
  EXPECT_EQ(b.bucket_counts[e.negative_bucket_counts[0].begin], 1u);
  EXPECT_EQ(e.flags[0], 1u);
  EXPECT_EQ(e.scale[1], 20);
  EXPECT_EQ(e.present[1], 0);

  const SummaryPointColumns& q = b.summary_points;
  ASSERT_EQ(m.points[4], (Range{0, 1}));
  EXPECT_EQ(q.count[0], 5u);
  EXPECT_EQ(q.sum[0], 12.5);
  EXPECT_EQ(q.start_time_unix_nano[0], 4u);
  EXPECT_EQ(RenderAttributes(b, b.point_attributes, q.attributes[0]), R"({x:"y"})");
  ASSERT_EQ(q.quantiles[0], (Range{0, 2}));
  EXPECT_EQ(b.quantiles.quantile[1], 1.0);
  EXPECT_EQ(b.quantiles.value[1], 9.0);
}

TEST(JsonMetricsTest, SnakeCaseMetricFieldsDecode) {
  constexpr std::string_view json = R"json({"resource_metrics":[{"scope_metrics":[{"metrics":[
    {"name":"e","exponential_histogram":{"aggregation_temporality":2,"data_points":[
      {"zero_count":1,"zero_threshold":"0.5","start_time_unix_nano":1,"time_unix_nano":2,
       "positive":{"bucket_counts":[3]}}]}},
    {"name":"s","sum":{"is_monotonic":true,"data_points":[{"as_double":"1.5",
      "exemplars":[{"filtered_attributes":[{"key":"k"}],"as_int":2,"span_id":"1112131415161718"}]}]}},
    {"name":"h","histogram":{"data_points":[{"bucket_counts":[1],"explicit_bounds":[]}]}},
    {"name":"q","summary":{"data_points":[{"quantile_values":[{"quantile":0.9,"value":1}]}]}}
  ]}]}]})json";
  MetricBatch b;
  DecodeOk(DecodeMetricsJson, json, &b);
  ASSERT_EQ(b.metrics.size(), 4u);
  EXPECT_EQ(b.metrics.aggregation_temporality[0], 2);
  EXPECT_EQ(b.exponential_points.zero_count[0], 1u);
  EXPECT_EQ(b.exponential_points.zero_threshold[0], 0.5);
  EXPECT_EQ(b.exponential_points.positive_bucket_counts[0].count, 1u);
  EXPECT_EQ(b.metrics.is_monotonic[1], 1);
  EXPECT_EQ(b.number_points.double_at(0), 1.5);
  EXPECT_EQ(b.exemplars.value_type[0], NumberType::kInt);
  EXPECT_EQ(b.exemplars.has_span_id[0], 1);
  EXPECT_EQ(b.exemplar_attributes.size(), 1u);
  EXPECT_EQ(b.histogram_points.bucket_counts[0].count, 1u);
  EXPECT_EQ(b.quantiles.quantile[0], 0.9);
}

TEST(JsonMetricsTest, OneofViolationsAreInvalid) {
  ExpectInvalid(Metrics(OneMetric(R"("gauge":{},"sum":{})")),
                "resourceMetrics[0].scopeMetrics[0].metrics[0].sum: more than one member of the "
                "Metric data oneof is set");
  ExpectInvalid(Metrics(OneMetric(R"("gauge":{"dataPoints":[{"asInt":1,"asDouble":2}]})")),
                "metrics[0].gauge.dataPoints[0].asDouble: both asDouble and asInt are set");
  ExpectInvalid(
      Metrics(OneMetric(R"("sum":{"dataPoints":[{"exemplars":[{"asDouble":1,"as_int":2}]}]})")),
      "metrics[0].sum.dataPoints[0].exemplars[0].asInt: both asDouble and asInt are set");
  // A member that is null is not set.
  MetricBatch b;
  DecodeOk(DecodeMetricsJson, OneMetric(R"("gauge":null,"summary":{})"), &b);
  EXPECT_EQ(b.metrics.type[0], MetricType::kSummary);
}

TEST(JsonMetricsTest, MalformedMetricFieldsNameTheirPath) {
  constexpr std::string_view base = "resourceMetrics[0].scopeMetrics[0].metrics[0].";
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"("histogram":{"dataPoints":[{"bucketCounts":[1,"x"]}]})",
       "histogram.dataPoints[0].bucketCounts[1]: expected an integer"},
      {R"("histogram":{"dataPoints":[{"bucketCounts":[1,-1]}]})",
       "histogram.dataPoints[0].bucketCounts[1]: integer out of range"},
      {R"("histogram":{"dataPoints":[{"explicitBounds":[true]}]})",
       "histogram.dataPoints[0].explicitBounds[0]: expected a number"},
      {R"("exponentialHistogram":{"dataPoints":[{"scale":2147483648}]})",
       "exponentialHistogram.dataPoints[0].scale: integer out of range"},
      {R"("exponentialHistogram":{"dataPoints":[{"positive":{"offset":"1.5"}}]})",
       "exponentialHistogram.dataPoints[0].positive.offset: not an integer"},
      {R"("sum":{"aggregationTemporality":"AGGREGATION_TEMPORALITY_WEEKLY"})",
       "sum.aggregationTemporality: unknown enum value name"},
      {R"("sum":{"isMonotonic":1})", "sum.isMonotonic: expected true or false"},
      {R"("gauge":{"dataPoints":[{"exemplars":[{"traceId":"01"}]}]})",
       "gauge.dataPoints[0].exemplars[0].traceId: invalid hex id"},
      {R"("summary":{"dataPoints":[{"quantileValues":[{"quantile":"x"}]}]})",
       "summary.dataPoints[0].quantileValues[0].quantile: expected a number"},
      {R"("gauge":[])", "gauge: expected an object"},
      {R"("name":"a","name":"b")", "name: duplicate field"},
  };
  for (const auto& [fields, what] : cases) {
    ExpectInvalid(Metrics(OneMetric(fields)), std::string(base) + std::string(what));
  }
}

// -------------------------------------------------------------- errors

TEST(JsonErrorsTest, BadTraceIdNamesItsPathAndTheByteOfItsKey) {
  // Four spans in the second scope; the fourth has a non-hex trace id.
  const std::string good = "{" + std::string(kIds) + "}";
  const std::string bad =
      R"({"spanId":"1112131415161718","traceId":"0102030405060708090a0b0c0d0e0fXX"})";
  const std::string json = R"({"resourceSpans":[{"scopeSpans":[{"spans":[]},{"spans":[)" + good +
                           "," + good + "," + good + "," + bad + "]}]}]}";
  const absl::Status s = Traces(json);
  const size_t key_offset = json.rfind("\"traceId\"");
  EXPECT_EQ(s.message(),
            "otlp/json: resourceSpans[0].scopeSpans[1].spans[3].traceId: invalid "
            "hex (at byte " +
                std::to_string(key_offset) + ")");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(JsonErrorsTest, IdLengthAndPresenceRulesMatchTheProtobufDecoder) {
  // Ids of the wrong length, missing or all zero reject the span only
  // (docs/otlp.md, "Rejected rows"), with the protobuf decoder's message.
  const std::string trace = R"("traceId":"0102030405060708090a0b0c0d0e0f10")";
  const std::string spanid = R"("spanId":"1112131415161718")";
  const std::pair<std::string, std::string_view> rejected[] = {
      {spanid, "trace_id is missing"},
      {R"("traceId":"",)" + spanid, "trace_id is missing"},
      {R"("traceId":"00000000000000000000000000000000",)" + spanid, "trace_id is all zero"},
      {trace, "span_id is missing"},
      {trace + R"(,"spanId":"11121314151617")", "span_id has 7 bytes, want 8"},
      {std::string(kIds) + R"(,"parentSpanId":"111213141516171819")",
       "parent_span_id has 9 bytes, want 0 or 8"},
      {std::string(kIds) + R"(,"links":[{)" + trace + "}]", "links[0].span_id is missing"},
      {std::string(kIds) + R"(,"links":[{)" + spanid + "}]", "links[0].trace_id is missing"},
  };
  for (const auto& [fields, message] : rejected) {
    TraceBatch b;
    DecodeOk(DecodeTracesJson, OneSpan(fields), &b);
    EXPECT_EQ(b.spans.size(), 0u) << fields;
    EXPECT_EQ(b.links.size(), 0u) << fields;
    EXPECT_EQ(b.rejected.rows, 1u) << fields;
    EXPECT_EQ(b.rejected.first_message, "span 0: " + std::string(message)) << fields;
  }
  // What is not valid hex stays an error of the whole request.
  constexpr std::string_view span = "resourceSpans[0].scopeSpans[0].spans[0]";
  ExpectInvalid(Traces(OneSpan(trace + R"(,"spanId":"111213141516171")")),
                std::string(span) + ".spanId: invalid hex id: an odd number (15) of characters");
  ExpectInvalid(Traces(OneSpan(R"("traceId":"AAECAwQFBgcICQoLDA0ODw==",)" + spanid)),
                std::string(span) + ".traceId: invalid hex");
  ExpectInvalid(Traces(OneSpan(R"("traceId":12,)" + spanid)),
                std::string(span) + ".traceId: expected a string");
}

TEST(JsonErrorsTest, WrongJsonTypesNameTheField) {
  const std::pair<std::string, std::string_view> cases[] = {
      {R"({"resourceSpans":{}})", "resourceSpans: expected an array"},
      {R"({"resourceSpans":["x"]})", "resourceSpans[0]: expected an object"},
      {R"({"resourceSpans":[null]})", "resourceSpans[0]: expected an object"},
      {R"({"resourceSpans":[{"resource":[]}]})", "resourceSpans[0].resource: expected an object"},
      {R"({"resourceSpans":[{"scopeSpans":[{"spans":"x"}]}]})",
       "resourceSpans[0].scopeSpans[0].spans: expected an array"},
      {OneSpan(std::string(kIds) + R"(,"name":1)"),
       "resourceSpans[0].scopeSpans[0].spans[0].name: expected a string"},
      {OneSpan(std::string(kIds) + R"(,"status":"ok")"),
       "resourceSpans[0].scopeSpans[0].spans[0].status: expected an object"},
      {OneSpan(std::string(kIds) + R"(,"droppedAttributesCount":4294967296)"),
       "resourceSpans[0].scopeSpans[0].spans[0].droppedAttributesCount: integer out of range"},
      {OneSpan(std::string(kIds) + R"(,"startTimeUnixNano":1.5)"),
       "resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: not an integer"},
      {OneSpan(std::string(kIds) + R"(,"endTimeUnixNano":"18446744073709551616")"),
       "resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: integer out of range"},
      {OneSpan(std::string(kIds) + R"(,"endTimeUnixNano":1e20)"),
       "resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: integer out of range"},
      {OneSpan(std::string(kIds) + R"(,"kind":"SPAN_KIND_WEIRD")"),
       "resourceSpans[0].scopeSpans[0].spans[0].kind: unknown enum value name"},
      {OneSpan(std::string(kIds) + R"(,"name":"a","name":"b")"),
       "resourceSpans[0].scopeSpans[0].spans[0].name: duplicate field"},
      {OneSpan(std::string(kIds) + R"(,"trace_state":"a","traceState":"b")"),
       "resourceSpans[0].scopeSpans[0].spans[0].traceState: duplicate field"},
      {R"({"resourceSpans":[{"resource":{"entityRefs":[{"idKeys":[1]}]}}]})",
       "resourceSpans[0].resource.entityRefs[0].idKeys[0]: expected a string"},
      {"[]", "otlp/json: expected an object"},
      {"5", "otlp/json: "},
  };
  for (const auto& [json, what] : cases) ExpectInvalid(Traces(json), what);
}

TEST(JsonErrorsTest, EveryTruncationOfAValidDocumentIsInvalid) {
  const std::string json(kFullTraceJson);
  for (size_t n = 0; n < json.size(); ++n) {
    const absl::Status s = Traces(std::string_view(json).substr(0, n));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << n;
    EXPECT_THAT(std::string(s.message()), HasSubstr("byte")) << n;
  }
  EXPECT_TRUE(Traces(json).ok());
}

TEST(JsonErrorsTest, TrailingContentAfterTheDocumentIsInvalid) {
  for (std::string_view json : {R"({"resourceSpans":[]} x)", R"({"resourceSpans":[]}})", R"({} {})",
                                R"({}])", R"({},)", R"({"a":1}1)"}) {
    ExpectInvalid(Traces(json), "otlp/json: ");
  }
  const absl::Status s = Traces(R"({"resourceSpans":[]}   }  )");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("unexpected content after the JSON document (at byte 23)"));
  EXPECT_TRUE(Traces(" \n\t{ } \r\n ").ok());
}

TEST(JsonErrorsTest, MalformedSyntaxIsInvalidWherePossibleNamingTheEnclosingField) {
  for (std::string_view json : {
           "",
           "   ",
           R"({"resourceSpans":[{},]})",
           R"({"resourceSpans":[{} {}]})",
           R"({"resourceSpans" [] })",
           R"({"resourceSpans":[{"x":tru}]})",
           R"({"resourceSpans":[{"x":nul}]})",
           R"({"resourceSpans":[{"x":01}]})",
           R"({"resourceSpans":[{"x":1.}]})",
           R"({"resourceSpans":[{"x":"\q"}]})",
           R"({"resourceSpans":[{"x":[1,]}]})",
           R"({"resourceSpans":[{"x":{"a"}}]})",
           R"({"resourceSpans":[}])",
           R"({'resourceSpans':[]})",
           R"({"resourceSpans":[]]})",
       }) {
    const absl::Status s = Traces(json);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(std::string(s.message()), ContainsRegex("^otlp/json: .*\\(at byte [0-9]+\\)$"))
        << json;
  }
  ExpectInvalid(Traces(R"({"resourceSpans":[{"x":[1,tru]}]})"), "resourceSpans[0].x[1]");
  ExpectInvalid(Traces(R"({"resourceSpans":[{"x":{"y":01}}]})"),
                "resourceSpans[0].x.y: malformed JSON number");
}

TEST(JsonErrorsTest, UnclosedStringReportsTheByteWhereItOpens) {
  for (const std::string& json : {
           std::string(R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name)"),
           std::string(R"({"resourceSpans":[{"x":"a\"b)"),
           std::string(R"({"resourceSpans":[{"x":"done","y":"a\\)"),
       }) {
    const absl::Status s = Traces(json);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(std::string(s.message()), HasSubstr("never closed. (at byte " +
                                                    std::to_string(json.rfind("\":\"") + 2) + ")"))
        << json;
  }
}

TEST(JsonErrorsTest, InvalidUtf8NamesTheFieldThatHoldsIt) {
  const std::string json = OneSpan(std::string(kIds) + ",\"name\":\"ab\xff\xfe\"");
  const absl::Status s = Traces(json);
  EXPECT_EQ(s.message(),
            "otlp/json: resourceSpans[0].scopeSpans[0].spans[0].name: invalid "
            "UTF-8 (at byte " +
                std::to_string(json.find('\xff')) + ")");
  // In a key, in a skipped unknown field, and an overlong encoding.
  ExpectInvalid(Traces(OneSpan(std::string(kIds) + ",\"n\xc3\":1")),
                "resourceSpans[0].scopeSpans[0].spans[0]: invalid UTF-8 in a field name");
  ExpectInvalid(Traces(OneSpan(std::string(kIds) + ",\"other\":[\"\xc0\xaf\"]")),
                "resourceSpans[0].scopeSpans[0].spans[0].other[0]: invalid UTF-8");
  ExpectInvalid(Logs(OneLog("\"body\":{\"stringValue\":\"\xed\xa0\x80\"}")),
                "resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue: invalid UTF-8");
}

TEST(JsonErrorsTest, ErrorsDoNotDependOnWhatWasDecodedBefore) {
  // A batch that already holds rows: a failing decode reports the same.
  TraceBatch b;
  DecodeOk(DecodeTracesJson, kFullTraceJson, &b);
  const absl::Status s =
      DecodeTracesJson(OneSpan(R"("spanId":"1112131415161718","traceId":"zz")"), &b);
  ExpectInvalid(s, "resourceSpans[0].scopeSpans[0].spans[0].traceId: invalid hex");
}

// ------------------------------------------------ against libprotobuf

// The hand-written JSON below uses forms libprotobuf's own printer never
// produces (snake_case, enum names, numbers for 64-bit ints, uppercase hex);
// its decoding must equal the message built with libprotobuf's classes.
TEST(JsonReferenceTest, AlternativeSpellingsDecodeToTheLibprotobufMessage) {
  otlp_reference::TraceRequest expected;
  auto* rs = expected.add_resource_spans();
  rs->set_schema_url("r");
  auto* kv = rs->mutable_resource()->add_attributes();
  kv->set_key("service.name");
  kv->mutable_value()->set_string_value("svc");
  auto* ss = rs->add_scope_spans();
  ss->mutable_scope()->set_name("lib");
  auto* span = ss->add_spans();
  span->set_trace_id(
      std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\xab", 16));
  span->set_span_id(std::string("\x11\x12\x13\x14\x15\x16\x17\xcd", 8));
  span->set_name("op");
  span->set_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_CLIENT);
  span->set_start_time_unix_nano(1700000000000000000u);
  span->set_end_time_unix_nano(1700000000000000999u);
  auto* attr = span->add_attributes();
  attr->set_key("list");
  auto* list = attr->mutable_value()->mutable_array_value();
  list->add_values()->set_int_value(-5);
  list->add_values()->set_double_value(0.25);
  list->add_values()->set_bytes_value(std::string("\xff\x00", 2));
  auto* event = span->add_events();
  event->set_name("e");
  event->set_time_unix_nano(7);
  span->mutable_status()->set_code(opentelemetry::proto::trace::v1::Status::STATUS_CODE_OK);
  otlp_reference::Normalize(&expected);

  constexpr std::string_view json = R"json({"resource_spans":[{"schema_url":"r",
    "resource":{"attributes":[{"key":"service.name","value":{"string_value":"svc"}}]},
    "scope_spans":[{"scope":{"name":"lib"},"spans":[{
      "trace_id":"0102030405060708090A0B0C0D0E0FAB","span_id":"11121314151617CD",
      "name":"op","kind":"SPAN_KIND_CLIENT",
      "start_time_unix_nano":1700000000000000000,"end_time_unix_nano":"1700000000000000999",
      "attributes":[{"key":"list","value":{"array_value":{"values":[
        {"int_value":-5},{"double_value":"0.25"},{"bytes_value":"_wA"}]}}}],
      "events":[{"name":"e","time_unix_nano":"7"}],
      "status":{"code":"STATUS_CODE_OK"}}]}]}]})json";
  TraceBatch b;
  DecodeOk(DecodeTracesJson, json, &b);
  absl::StatusOr<otlp_reference::TraceRequest> actual = otlp_reference::ToTraceRequest(b);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(otlp_reference::MessageDifferences(expected, *actual), "");
}

TEST(JsonReferenceTest, MetricSpellingsDecodeToTheLibprotobufMessage) {
  otlp_reference::MetricsRequest expected;
  auto* sm = expected.add_resource_metrics()->add_scope_metrics();
  auto* metric = sm->add_metrics();
  metric->set_name("latency");
  auto* hist = metric->mutable_histogram();
  hist->set_aggregation_temporality(
      opentelemetry::proto::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE);
  auto* point = hist->add_data_points();
  point->set_count(3);
  point->set_sum(1.5);
  point->add_bucket_counts(1);
  point->add_bucket_counts(2);
  point->add_explicit_bounds(0.5);
  point->set_max(std::numeric_limits<double>::infinity());
  auto* exemplar = point->add_exemplars();
  exemplar->set_as_int(-2);
  exemplar->set_span_id(std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  otlp_reference::Normalize(&expected);

  constexpr std::string_view json = R"json({"resource_metrics":[{"scope_metrics":[{"metrics":[{
    "name":"latency","histogram":{"aggregation_temporality":"AGGREGATION_TEMPORALITY_CUMULATIVE",
    "data_points":[{"count":3,"sum":"1.5","bucket_counts":[1,"2"],"explicit_bounds":["5e-1"],
      "max":"Infinity","exemplars":[{"as_int":"-2","span_id":"0102030405060708"}]}]}}]}]}]})json";
  MetricBatch b;
  DecodeOk(DecodeMetricsJson, json, &b);
  absl::StatusOr<otlp_reference::MetricsRequest> actual = otlp_reference::ToMetricsRequest(b);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(otlp_reference::MessageDifferences(expected, *actual), "");
}

}  // namespace
}  // namespace strata::otlp
