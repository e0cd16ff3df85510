// ParseTracePath, ParseSpanId, ParseTraceForm and AcceptsGzip on their own.

#include "api/trace_path.h"

#include "api/accept_encoding.h"
#include "api/params.h"
#include "gtest/gtest.h"

namespace strata::api {
namespace {

constexpr char kTrace[] = "5eed00005eed00005eed00005eed0001";

TEST(TracePathTest, TraceAndSpanPaths) {
  absl::StatusOr<TracePath> trace = ParseTracePath(kTrace);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(TraceIdHex(trace->trace_id), kTrace);
  EXPECT_FALSE(trace->span_id.has_value());

  absl::StatusOr<TracePath> span =
      ParseTracePath(std::string("5EED00005eed00005eed00005eed0001/spans/00000000000000Dd"));
  ASSERT_TRUE(span.ok()) << span.status();
  EXPECT_EQ(TraceIdHex(span->trace_id), kTrace);
  ASSERT_TRUE(span->span_id.has_value());
  EXPECT_EQ(SpanIdHex(*span->span_id), "00000000000000dd");

  // Segments are percent-decoded one at a time.
  absl::StatusOr<TracePath> escaped =
      ParseTracePath(std::string("5eed00005eed00005eed00005eed0001/spans/%30%30000000000000dd"));
  ASSERT_TRUE(escaped.ok()) << escaped.status();
  EXPECT_EQ(SpanIdHex(*escaped->span_id), "00000000000000dd");

  // The spans of a trace, for span search.
  absl::StatusOr<TracePath> spans = ParseTracePath(std::string(kTrace) + "/spans");
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_TRUE(spans->span_search);
  EXPECT_FALSE(spans->span_id.has_value());
  EXPECT_FALSE(trace->span_search);
  EXPECT_FALSE(span->span_search);
}

TEST(TracePathTest, OtherShapesAreNotFound) {
  const std::string trace = kTrace;
  for (const std::string& rest :
       {trace + "/", trace + "/links/00000000000000dd", trace + "/spans/00000000000000dd/",
        trace + "/spans/00000000000000dd/x", trace + "//x"}) {
    absl::StatusOr<TracePath> path = ParseTracePath(rest);
    EXPECT_EQ(path.status().code(), absl::StatusCode::kNotFound) << rest;
  }
}

TEST(TracePathTest, BadIdsAreInvalidArgumentNamingTheId) {
  const std::string trace = kTrace;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "trace_id: not 32 hex digits: \"\""},
      {"xyz", "trace_id: not 32 hex digits: \"xyz\""},
      {"00000000000000000000000000000000", "trace_id: the all-zero trace id is invalid"},
      {trace + "/spans/0dd", "span_id: not 16 hex digits: \"0dd\""},
      {trace + "/spans/00000000000000dg", "span_id: not 16 hex digits: \"00000000000000dg\""},
      {trace + "/spans/0000000000000000", "span_id: the all-zero span id is invalid"},
      {trace + "/spans/", "span_id: not 16 hex digits: \"\""},
      {trace + "/spans/%zz", "span_id: bad percent escape in \"%zz\""},
      {trace + "/spans/00000000000000d%", "span_id: bad percent escape in \"00000000000000d%\""},
  };
  for (const auto& [rest, message] : cases) {
    absl::StatusOr<TracePath> path = ParseTracePath(rest);
    EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument) << rest;
    EXPECT_EQ(path.status().message(), message) << rest;
  }
}

TEST(TracePathTest, TraceForms) {
  EXPECT_EQ(*ParseTraceForm("format", "otlp"), TraceForm::kOtlp);
  EXPECT_EQ(*ParseTraceForm("format", "columns"), TraceForm::kColumns);
  EXPECT_EQ(ParseTraceForm("format", "Columns").status().message(),
            "format: not otlp or columns: \"Columns\"");
}

TEST(GzipAnswerTest, AcceptEncodingWeights) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"", false},
      {"gzip", true},
      {"GZip", true},
      {"x-gzip", true},
      {"deflate, gzip, br", true},
      {"br;q=1.0, gzip;q=0.5", true},
      {" gzip ; q=0.001 ", true},
      {"gzip;q=0", false},
      {"gzip;q=0.000", false},
      {"gzip;Q=0.0", false},
      {"*", true},
      {"*;q=0", false},
      {"gzip;q=0, *", false},
      {"*, gzip;q=0", false},
      {"deflate, br", false},
      {"identity", false},
      {"gzipx", false},
      {",,;;,", false},
  };
  for (const auto& [header, accepted] : cases) {
    EXPECT_EQ(AcceptsGzip(header), accepted) << "\"" << header << "\"";
  }
}

}  // namespace
}  // namespace strata::api
