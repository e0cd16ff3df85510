// OTLP -> Jaeger conversion (jaeger_model.h) and the Jaeger parameters
// (jaeger_params.h): spans with every attribute type, events, links, error
// status, several resources and two traces, converted and read back with
// simdjson, every field compared with what the OTLP request said.

#include "api/jaeger_model.h"

#include <string>
#include <tuple>
#include <vector>

#include "api/jaeger_params.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "simdjson.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTrace[] = "0af7651916cd43dd8448eb211c80319c";
// A trace id whose high half is zero: Jaeger prints it in 16 digits.
constexpr char kShortTrace[] = "00000000000000004bf92f3577b34da6";
constexpr uint64_t kStart = 1'764'800'000'123'456'789;

std::string Resource(std::string_view attributes) {
  return fmt::format(R"({{"attributes":[{}]}})", attributes);
}

// Four resources (the third equal to the first), spans of two traces.
std::string RequestJson() {
  const std::string checkout =
      Resource(R"({"key":"service.name","value":{"stringValue":"checkout"}},)"
               R"({"key":"host.name","value":{"stringValue":"h1"}},)"
               R"({"key":"process.pid","value":{"intValue":"42"}})");
  const std::string nameless = Resource(R"({"key":"k8s.pod.name","value":{"stringValue":"p-1"}})");
  const std::string scope = R"("scope":{"name":"io.test","version":"1.2.3"})";
  const std::string root = fmt::format(
      R"({{"traceId":"{0}","spanId":"0000000000000001","traceState":"k=v","flags":257,)"
      R"("name":"GET /cart","kind":2,"startTimeUnixNano":"{1}","endTimeUnixNano":"{2}",)"
      R"("attributes":[{{"key":"s","value":{{"stringValue":"v\"q"}}}},)"
      R"({{"key":"b","value":{{"boolValue":true}}}},)"
      R"({{"key":"i","value":{{"intValue":"-7"}}}},)"
      R"({{"key":"d","value":{{"doubleValue":2.5}}}},)"
      R"({{"key":"bytes","value":{{"bytesValue":"AQID"}}}},)"
      R"({{"key":"arr","value":{{"arrayValue":{{"values":[{{"stringValue":"a"}},{{"intValue":"1"}},)"
      R"({{"boolValue":true}}]}}}}}},)"
      R"({{"key":"map","value":{{"kvlistValue":{{"values":[{{"key":"x","value":{{"stringValue":"y"}}}},)"
      R"({{"key":"n","value":{{"kvlistValue":{{"values":[{{"key":"z","value":{{"doubleValue":1.5}}}}]}}}}}}]}}}}}},)"
      R"({{"key":"empty","value":{{}}}}],)"
      R"("events":[{{"timeUnixNano":"{3}","name":"exception","attributes":[)"
      R"({{"key":"exception.message","value":{{"stringValue":"bad"}}}}]}},)"
      R"({{"timeUnixNano":"{4}","name":"named","attributes":[)"
      R"({{"key":"event","value":{{"stringValue":"custom"}}}},{{"key":"n","value":{{"intValue":"3"}}}}]}}],)"
      R"("status":{{"code":2,"message":"boom"}}}})",
      kTrace, kStart, kStart + 1'500'000'999, kStart + 1'000'000, kStart + 2'000'000);
  const std::string child = fmt::format(
      R"({{"traceId":"{0}","spanId":"0000000000000002","parentSpanId":"0000000000000001",)"
      R"("name":"SELECT","kind":3,"startTimeUnixNano":"{1}","endTimeUnixNano":"{2}",)"
      R"("links":[{{"traceId":"{3}","spanId":"00000000000000aa","attributes":[)"
      R"({{"key":"l","value":{{"stringValue":"x"}}}}]}},{{"traceId":"{0}","spanId":"00000000000000bb"}}],)"
      R"("status":{{"code":1}}}})",
      kTrace, kStart + 10'000, kStart + 20'000, kShortTrace);
  const std::string grandchild = fmt::format(
      R"({{"traceId":"{0}","spanId":"0000000000000003","parentSpanId":"0000000000000002",)"
      R"("name":"work","startTimeUnixNano":"{1}","endTimeUnixNano":"{1}"}})",
      kTrace, kStart + 30'000);
  const std::string again = fmt::format(
      R"({{"traceId":"{0}","spanId":"0000000000000004","parentSpanId":"0000000000000001",)"
      R"("name":"again","kind":1,"startTimeUnixNano":"{1}","endTimeUnixNano":"{2}"}})",
      kTrace, kStart + 40'000, kStart + 41'000);
  const std::string other =
      fmt::format(R"({{"traceId":"{0}","spanId":"0000000000000009","name":"other","kind":5,)"
                  R"("startTimeUnixNano":"{1}","endTimeUnixNano":"{2}"}})",
                  kShortTrace, kStart, kStart + 5'000);
  return fmt::format(
      R"({{"resourceSpans":[)"
      R"({{"resource":{0},"scopeSpans":[{{{2},"spans":[{3},{4}]}}]}},)"
      R"({{"resource":{1},"scopeSpans":[{{"scope":{{"name":"bare"}},"spans":[{5}]}}]}},)"
      R"({{"resource":{0},"scopeSpans":[{{{2},"spans":[{6}]}}]}},)"
      R"({{"resource":{0},"scopeSpans":[{{"spans":[{7}]}}]}}]}})",
      checkout, nameless, scope, root, child, grandchild, again, other);
}

// A tag or field as (key, type, value as minified JSON).
using Tag = std::tuple<std::string, std::string, std::string>;

std::vector<Tag> Tags(simdjson::dom::array array) {
  std::vector<Tag> out;
  for (simdjson::dom::element e : array) {
    out.emplace_back(std::string(std::string_view(e["key"].get_string().value())),
                     std::string(std::string_view(e["type"].get_string().value())),
                     simdjson::to_string(e["value"].value()));
  }
  return out;
}

std::string Str(simdjson::dom::element e) {
  return std::string(std::string_view(e.get_string().value()));
}

struct Reference {
  std::string type, trace, span;
  bool operator==(const Reference&) const = default;
};
std::vector<Reference> References(simdjson::dom::array array) {
  std::vector<Reference> out;
  for (simdjson::dom::element e : array) {
    out.push_back({Str(e["refType"].value()), Str(e["traceID"].value()), Str(e["spanID"].value())});
  }
  return out;
}
void PrintTo(const Reference& r, std::ostream* os) {
  *os << r.type << " " << r.trace << " " << r.span;
}

class JaegerModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    request_ = RequestJson();
    const absl::Status decoded = otlp::DecodeTracesJson(request_, &batch_);
    ASSERT_TRUE(decoded.ok()) << decoded;
    ASSERT_EQ(batch_.spans.size(), 5u);
    text_ = JaegerTracesResponse(std::span<const otlp::TraceBatch>(&batch_, 1));
    const auto error = parser_.parse(text_).get(doc_);
    ASSERT_FALSE(error) << simdjson::error_message(error) << "\n" << text_;
  }
  simdjson::dom::element Trace(size_t i) { return doc_["data"].at(i).value(); }
  simdjson::dom::element Span(size_t trace, size_t i) {
    return Trace(trace)["spans"].at(i).value();
  }

  std::string request_;
  otlp::TraceBatch batch_;
  std::string text_;
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
};

TEST_F(JaegerModelTest, EnvelopeHoldsEachTraceOnce) {
  EXPECT_EQ(doc_["total"].get_int64().value(), 2);
  EXPECT_EQ(doc_["limit"].get_int64().value(), 0);
  EXPECT_EQ(doc_["offset"].get_int64().value(), 0);
  EXPECT_TRUE(doc_["errors"].is_null());
  EXPECT_EQ(doc_["data"].get_array().size(), 2u);
  EXPECT_EQ(Str(Trace(0)["traceID"].value()), kTrace);
  EXPECT_EQ(Str(Trace(1)["traceID"].value()), "4bf92f3577b34da6");
  EXPECT_EQ(Trace(0)["spans"].get_array().size(), 4u);
  EXPECT_EQ(Trace(1)["spans"].get_array().size(), 1u);
  EXPECT_TRUE(Trace(0)["warnings"].is_null());
}

TEST_F(JaegerModelTest, SpanFieldsInMicroseconds) {
  simdjson::dom::element root = Span(0, 0);
  EXPECT_EQ(Str(root["traceID"].value()), kTrace);
  EXPECT_EQ(Str(root["spanID"].value()), "0000000000000001");
  EXPECT_EQ(Str(root["operationName"].value()), "GET /cart");
  EXPECT_EQ(root["startTime"].get_uint64().value(), kStart / 1000);
  EXPECT_EQ(root["duration"].get_uint64().value(), 1'500'000'999 / 1000);
  // Flags: the low byte (W3C trace flags) of 257.
  EXPECT_EQ(root["flags"].get_uint64().value(), 1u);
  EXPECT_TRUE(root["warnings"].is_null());
  EXPECT_EQ(root["references"].get_array().size(), 0u);
  // A span with no flags has none in the answer, as Jaeger omits zero.
  EXPECT_TRUE(Span(0, 1)["flags"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(Span(0, 2)["duration"].get_uint64().value(), 0u);
}

TEST_F(JaegerModelTest, EveryAttributeTypeBecomesATypedTag) {
  EXPECT_THAT(
      Tags(Span(0, 0)["tags"].get_array().value()),
      ElementsAre(Tag{"s", "string", R"("v\"q")"}, Tag{"b", "bool", "true"},
                  Tag{"i", "int64", "-7"}, Tag{"d", "float64", "2.5"},
                  Tag{"bytes", "binary", R"("AQID")"}, Tag{"arr", "string", R"("[\"a\",1,true]")"},
                  Tag{"map", "string", R"("{\"x\":\"y\",\"n\":{\"z\":1.5}}")"},
                  Tag{"empty", "string", R"("")"}, Tag{"otel.scope.name", "string", R"("io.test")"},
                  Tag{"otel.scope.version", "string", R"("1.2.3")"},
                  Tag{"span.kind", "string", R"("server")"},
                  Tag{"otel.status_code", "string", R"("ERROR")"}, Tag{"error", "bool", "true"},
                  Tag{"otel.status_description", "string", R"("boom")"},
                  Tag{"w3c.tracestate", "string", R"("k=v")"}));
}

TEST_F(JaegerModelTest, KindStatusAndScopeTagsFollowTheSpan) {
  EXPECT_THAT(Tags(Span(0, 1)["tags"].get_array().value()),
              ElementsAre(Tag{"otel.scope.name", "string", R"("io.test")"},
                          Tag{"otel.scope.version", "string", R"("1.2.3")"},
                          Tag{"span.kind", "string", R"("client")"},
                          Tag{"otel.status_code", "string", R"("OK")"}));
  // Unspecified kind and unset status: no tags for them.
  EXPECT_THAT(Tags(Span(0, 2)["tags"].get_array().value()),
              ElementsAre(Tag{"otel.scope.name", "string", R"("bare")"}));
  EXPECT_THAT(Tags(Span(0, 3)["tags"].get_array().value()),
              ElementsAre(Tag{"otel.scope.name", "string", R"("io.test")"},
                          Tag{"otel.scope.version", "string", R"("1.2.3")"},
                          Tag{"span.kind", "string", R"("internal")"}));
  // No scope name or version: no scope tags.
  EXPECT_THAT(Tags(Span(1, 0)["tags"].get_array().value()),
              ElementsAre(Tag{"span.kind", "string", R"("consumer")"}));
}

TEST_F(JaegerModelTest, EventsBecomeLogsWithTheNameAsTheEventField) {
  simdjson::dom::array logs = Span(0, 0)["logs"].get_array().value();
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs.at(0)["timestamp"].get_uint64().value(), (kStart + 1'000'000) / 1000);
  EXPECT_THAT(Tags(logs.at(0)["fields"].get_array().value()),
              ElementsAre(Tag{"event", "string", R"("exception")"},
                          Tag{"exception.message", "string", R"("bad")"}));
  // An attribute called "event" wins over the name.
  EXPECT_EQ(logs.at(1)["timestamp"].get_uint64().value(), (kStart + 2'000'000) / 1000);
  EXPECT_THAT(Tags(logs.at(1)["fields"].get_array().value()),
              ElementsAre(Tag{"event", "string", R"("custom")"}, Tag{"n", "int64", "3"}));
  EXPECT_EQ(Span(0, 1)["logs"].get_array().size(), 0u);
}

TEST_F(JaegerModelTest, ParentIsChildOfAndLinksFollowFrom) {
  EXPECT_THAT(References(Span(0, 1)["references"].get_array().value()),
              ElementsAre(Reference{"CHILD_OF", kTrace, "0000000000000001"},
                          Reference{"FOLLOWS_FROM", "4bf92f3577b34da6", "00000000000000aa"},
                          Reference{"FOLLOWS_FROM", kTrace, "00000000000000bb"}));
  EXPECT_THAT(References(Span(0, 2)["references"].get_array().value()),
              ElementsAre(Reference{"CHILD_OF", kTrace, "0000000000000002"}));
}

TEST_F(JaegerModelTest, ResourcesBecomeProcessesOncePerDistinctContent) {
  EXPECT_EQ(Str(Span(0, 0)["processID"].value()), "p1");
  EXPECT_EQ(Str(Span(0, 1)["processID"].value()), "p1");
  EXPECT_EQ(Str(Span(0, 2)["processID"].value()), "p2");
  // An equal resource sent again is the same process.
  EXPECT_EQ(Str(Span(0, 3)["processID"].value()), "p1");
  simdjson::dom::object processes = Trace(0)["processes"].get_object().value();
  EXPECT_EQ(processes.size(), 2u);
  EXPECT_EQ(Str(processes["p1"]["serviceName"].value()), "checkout");
  EXPECT_THAT(
      Tags(processes["p1"]["tags"].get_array().value()),
      ElementsAre(Tag{"host.name", "string", R"("h1")"}, Tag{"process.pid", "int64", "42"}));
  EXPECT_EQ(Str(processes["p2"]["serviceName"].value()), kJaegerNoServiceName);
  EXPECT_THAT(Tags(processes["p2"]["tags"].get_array().value()),
              ElementsAre(Tag{"k8s.pod.name", "string", R"("p-1")"}));
  // Each trace numbers its own processes.
  EXPECT_EQ(Str(Span(1, 0)["processID"].value()), "p1");
  EXPECT_EQ(Trace(1)["processes"].get_object().size(), 1u);
}

TEST(JaegerAnswersTest, NamesOperationsDependenciesAndErrors) {
  EXPECT_EQ(JaegerNamesResponse({"a", "b\"c"}),
            R"({"data":["a","b\"c"],"total":2,"limit":0,"offset":0,"errors":null})");
  EXPECT_EQ(JaegerOperationsResponse({{"GET /", "server"}, {"x", ""}}),
            R"({"data":[{"name":"GET /","spanKind":"server"},{"name":"x","spanKind":""}],)"
            R"("total":2,"limit":0,"offset":0,"errors":null})");
  EXPECT_EQ(JaegerDependenciesResponse({{"front", "back", 12}}),
            R"({"data":[{"parent":"front","child":"back","callCount":12}],)"
            R"("total":1,"limit":0,"offset":0,"errors":null})");
  EXPECT_EQ(JaegerErrorResponse(404, "trace not found"),
            R"({"data":null,"total":0,"limit":0,"offset":0,)"
            R"("errors":[{"code":404,"msg":"trace not found"}]})");
}

TEST(JaegerParamsTest, TraceIdsArePaddedOnTheLeft) {
  auto id = ParseJaegerTraceId("4bf92f3577b34da6");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(JaegerTraceIdHex(*id), "4bf92f3577b34da6");
  EXPECT_EQ(TraceIdHex(*id), kShortTrace);
  auto full = ParseJaegerTraceId("0AF7651916CD43DD8448EB211C80319C");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(JaegerTraceIdHex(*full), kTrace);
  EXPECT_FALSE(ParseJaegerTraceId("").ok());
  EXPECT_FALSE(ParseJaegerTraceId("0").ok());
  EXPECT_FALSE(ParseJaegerTraceId(std::string(33, 'a')).ok());
  EXPECT_FALSE(ParseJaegerTraceId("xyz").ok());
}

TEST(JaegerParamsTest, TagsMapOntoAttributesStatusAndKind) {
  auto tags = ParseJaegerTags(
      "tags",
      R"({"http.method":"GET","retry":true,"code":200,"error":"true","span.kind":"client"})");
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_EQ(tags->attributes,
            (Attributes{{"http.method", "GET"}, {"retry", "true"}, {"code", "200"}}));
  EXPECT_EQ(tags->status, 2);
  EXPECT_EQ(tags->kind, 3);
  auto ok = ParseJaegerTags("tags", R"({"otel.status_code":"OK"})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 1);
  EXPECT_FALSE(ok->status_negated);
  auto not_error = ParseJaegerTags("tags", R"({"error":false})");
  ASSERT_TRUE(not_error.ok());
  EXPECT_EQ(not_error->status, 2);
  EXPECT_TRUE(not_error->status_negated);
  for (const char* bad :
       {"[]", "{", R"({"a":[1]})", R"({"a":null})", R"({"":"x"})", R"({"error":"no"})",
        R"({"span.kind":"sideways"})", R"({"otel.status_code":"meh"})"}) {
    auto parsed = ParseJaegerTags("tags", bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) EXPECT_THAT(parsed.status().message(), HasSubstr("tags: ")) << bad;
  }
  std::string many = "{";
  for (size_t i = 0; i <= kMaxJaegerTags; ++i)
    many += fmt::format("{}\"k{}\":\"v\"", i ? "," : "", i);
  EXPECT_FALSE(ParseJaegerTags("tags", many + "}").ok());
  // The repeated tag=key:value form: the value after the first ':'.
  JaegerTags pairs;
  ASSERT_TRUE(AddJaegerTagPairs("tag", {"url:http://x:80/a", "span.kind:server"}, &pairs).ok());
  EXPECT_EQ(pairs.attributes, (Attributes{{"url", "http://x:80/a"}}));
  EXPECT_EQ(pairs.kind, 2);
  EXPECT_FALSE(AddJaegerTagPairs("tag", {"no-colon"}, &pairs).ok());
  EXPECT_FALSE(AddJaegerTagPairs("tag", {":empty-key"}, &pairs).ok());
  std::vector<std::string> too_many;
  for (size_t i = 0; i <= kMaxJaegerTags; ++i) too_many.push_back(fmt::format("k{}:v", i));
  JaegerTags full;
  EXPECT_FALSE(AddJaegerTagPairs("tag", too_many, &full).ok());
}

TEST(JaegerParamsTest, SearchTakesJaegerUnits) {
  auto params = QueryParams::Parse(
      "service=cart&operation=GET%20%2F&tags=%7B%22a%22%3A%22b%22%7D&minDuration=1.2ms&"
      "maxDuration=2s&start=1764800000000000&end=1764803600000000&lookback=1h&limit=7&"
      "spanKind=server");
  ASSERT_TRUE(params.ok());
  auto search = TakeJaegerTraceSearch(*params, [] { return int64_t{0}; });
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->service, "cart");
  EXPECT_EQ(search->operation, "GET /");
  EXPECT_EQ(search->attributes, (Attributes{{"a", "b"}}));
  EXPECT_EQ(search->min_duration, 1'200'000);
  EXPECT_EQ(search->max_duration, 2'000'000'000);
  EXPECT_EQ(search->start, 1'764'800'000'000'000'000);
  EXPECT_EQ(search->end, 1'764'803'600'000'000'000);
  EXPECT_EQ(search->limit, 7);
  EXPECT_EQ(search->kind, 2);

  // Empty values are absent; without start, end minus lookback ("2d").
  auto empty =
      QueryParams::Parse("service=&operation=&minDuration=&maxDuration=&lookback=2d&limit=");
  ASSERT_TRUE(empty.ok());
  const int64_t now = 10 * 86'400 * kNanosPerSecond;
  auto defaults = TakeJaegerTraceSearch(*empty, [] { return now; });
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->service.has_value());
  EXPECT_FALSE(defaults->operation.has_value());
  EXPECT_FALSE(defaults->min_duration.has_value());
  EXPECT_EQ(defaults->end, now);
  EXPECT_EQ(defaults->start, now - 2 * 86'400 * kNanosPerSecond);
  EXPECT_EQ(defaults->limit, kJaegerTraceLimit.default_value);

  for (const char* bad :
       {"start=abc", "end=-5", "minDuration=fast", "limit=0", "limit=1001",
        "minDuration=2s&maxDuration=1s", "lookback=-1d", "spanKind=up", "start=2000&end=1000"}) {
    auto p = QueryParams::Parse(bad);
    ASSERT_TRUE(p.ok()) << bad;
    EXPECT_FALSE(TakeJaegerTraceSearch(*p, [] { return now; }).ok()) << bad;
  }
}

}  // namespace
}  // namespace strata::api
