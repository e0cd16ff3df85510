#include "compat/logql/pipeline.h"

#include <string>

#include "compat/logql/parser.h"
#include "gtest/gtest.h"

namespace strata::compat::logql {
namespace {

// Runs the pipeline of log query `query` over `line`; nullopt when the
// line is filtered out.
std::optional<LogLine> Piped(const std::string& query, const std::string& text,
                             Labels stream = {{"service_name", "api"}}, Labels metadata = {}) {
  auto expr = ParseLogQL(query);
  EXPECT_TRUE(expr.ok()) << expr.status();
  if (!expr.ok()) return std::nullopt;
  auto pipeline = LogPipeline::Compile((*expr)->log.stages);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  if (!pipeline.ok()) return std::nullopt;
  LogLine line;
  line.line = text;
  line.stream = std::move(stream);
  line.metadata = std::move(metadata);
  if (!pipeline->Process(&line)) return std::nullopt;
  return line;
}

TEST(LogPipelineTest, LineFiltersWithOrAndNegation) {
  EXPECT_TRUE(Piped(R"({a="b"} |= "err" or "fatal")", "a fatal thing").has_value());
  EXPECT_FALSE(Piped(R"({a="b"} |= "err" or "fatal")", "all good").has_value());
  EXPECT_FALSE(Piped(R"({a="b"} != "debug" or "trace")", "a trace line").has_value());
  EXPECT_TRUE(Piped(R"({a="b"} |~ "time(d)?out")", "timedout").has_value());
  EXPECT_FALSE(Piped(R"({a="b"} !~ "^GET")", "GET /").has_value());
  EXPECT_TRUE(Piped(R"({a="b"} |> "<_> took <_>ms")", "GET / took 5ms").has_value());
  EXPECT_FALSE(Piped(R"({a="b"} !> "<_> took <_>ms")", "GET / took 5ms").has_value());
}

TEST(LogPipelineTest, JsonFlattensAndRenamesClashes) {
  auto line =
      Piped(R"({a="b"} | json)",
            R"({"level":"warn","http":{"status":503,"ok":false},"tags":[1],"service_name":"x"})");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->parsed.at("level"), "warn");
  EXPECT_EQ(line->parsed.at("http_status"), "503");
  EXPECT_EQ(line->parsed.at("http_ok"), "false");
  EXPECT_EQ(line->parsed.count("tags"), 0u);
  EXPECT_EQ(line->parsed.at("service_name_extracted"), "x");
  auto picked = Piped(R"({a="b"} | json code="http.status", first="tags[0]")",
                      R"({"http":{"status":503},"tags":["t1","t2"]})");
  ASSERT_TRUE(picked.has_value());
  EXPECT_EQ(picked->parsed.at("code"), "503");
  EXPECT_EQ(picked->parsed.at("first"), "t1");
  auto bad = Piped(R"({a="b"} | json)", "not json");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->parsed.at("__error__"), "JSONParserErr");
  EXPECT_FALSE(Piped(R"({a="b"} | json | __error__="")", "not json").has_value());
}

TEST(LogPipelineTest, LogfmtWithFlags) {
  auto line = Piped(R"({a="b"} | logfmt)", R"(level=info msg="hello \"world\"" empty= alone)");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->parsed.at("msg"), "hello \"world\"");
  EXPECT_EQ(line->parsed.count("empty"), 0u);
  EXPECT_EQ(line->parsed.count("alone"), 0u);
  auto kept = Piped(R"({a="b"} | logfmt --keep-empty)", "level=info alone");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->parsed.at("alone"), "");
  auto strict = Piped(R"({a="b"} | logfmt --strict)", R"(level=info msg="unterminated)");
  ASSERT_TRUE(strict.has_value());
  EXPECT_EQ(strict->parsed.at("__error__"), "LogfmtParserErr");
}

TEST(LogPipelineTest, LabelFiltersConvertAndMarkErrors) {
  const std::string text = "status=503 latency=250ms size=2KB";
  EXPECT_TRUE(Piped(R"({a="b"} | logfmt | status >= 500 and latency > 200ms)", text).has_value());
  EXPECT_FALSE(Piped(R"({a="b"} | logfmt | latency > 1s)", text).has_value());
  EXPECT_TRUE(Piped(R"({a="b"} | logfmt | size > 1KiB)", text).has_value());
  EXPECT_TRUE(Piped(R"({a="b"} | logfmt | status > 600 or size == 2KB)", text).has_value());
  // A label that is no number keeps the line and marks it.
  auto marked = Piped(R"({a="b"} | logfmt | latency > 5)", text);
  ASSERT_TRUE(marked.has_value());
  EXPECT_EQ(marked->parsed.at("__error__"), "LabelFilterErr");
  // A missing label fails a numeric filter.
  EXPECT_FALSE(Piped(R"({a="b"} | logfmt | missing > 5)", text).has_value());
  // Metadata and stream labels are filtered on too.
  EXPECT_TRUE(
      Piped(R"({a="b"} | detected_level="error")", "x", {{"a", "b"}}, {{"detected_level", "error"}})
          .has_value());
}

TEST(LogPipelineTest, RegexpPatternAndFormatting) {
  auto line = Piped(
      R"q({a="b"} | regexp "(?P<method>\\w+) (?P<path>\\S+)" | line_format "{{.method | lower}} {{ .path }}" | label_format route=path, shout="{{.method | upper}}!")q",
      "GET /cart took 5ms");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->line, "get /cart");
  EXPECT_EQ(line->parsed.at("route"), "/cart");
  EXPECT_EQ(line->parsed.count("path"), 0u);
  EXPECT_EQ(line->parsed.at("shout"), "GET!");
  auto pattern = Piped(R"({a="b"} | pattern "<ip> - <_> \"<method> <uri>\"")",
                       R"(10.0.0.1 - frank "POST /login")");
  ASSERT_TRUE(pattern.has_value());
  EXPECT_EQ(pattern->parsed.at("ip"), "10.0.0.1");
  EXPECT_EQ(pattern->parsed.at("uri"), "/login");
  auto colored = Piped(R"({a="b"} | decolorize)", "\x1b[31mred\x1b[0m plain");
  ASSERT_TRUE(colored.has_value());
  EXPECT_EQ(colored->line, "red plain");
}

TEST(LogPipelineTest, DropAndKeep) {
  auto dropped = Piped(R"({a="b"} | logfmt | drop level, env="dev")", "level=info env=dev x=1",
                       {{"service_name", "api"}, {"env", "prod"}});
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(dropped->parsed.count("level"), 0u);
  EXPECT_EQ(dropped->parsed.count("x"), 1u);
  auto kept = Piped(R"({a="b"} | logfmt | keep x, service_name)", "level=info x=1");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->parsed.size(), 1u);
  EXPECT_EQ(kept->stream.size(), 1u);
}

TEST(LogPipelineTest, RefusesWhatStrataDoesNotRun) {
  auto expr = ParseLogQL(R"({a="b"} | line_format "{{ printf \"%d\" .x }}")");
  ASSERT_TRUE(expr.ok());
  EXPECT_TRUE(absl::IsUnimplemented(LogPipeline::Compile((*expr)->log.stages).status()));
  expr = ParseLogQL(R"({a="b"} |= ip("10.0.0.0/8"))");
  ASSERT_TRUE(expr.ok());
  EXPECT_TRUE(absl::IsUnimplemented(LogPipeline::Compile((*expr)->log.stages).status()));
}

TEST(LogPipelineTest, GoDurationsAndHumanBytes) {
  EXPECT_EQ(ParseGoDurationSeconds("1h2m3.5s"), 3723.5);
  EXPECT_EQ(ParseGoDurationSeconds("250ms"), 0.25);
  EXPECT_EQ(ParseGoDurationSeconds("-1.5s"), -1.5);
  EXPECT_FALSE(ParseGoDurationSeconds("5").has_value());
  EXPECT_EQ(ParseHumanBytes("2 KiB"), 2048);
  EXPECT_EQ(ParseHumanBytes("1.5MB"), 1.5e6);
  EXPECT_EQ(ParseHumanBytes("42"), 42);
  EXPECT_EQ(SanitizeLabelName("service.name"), "service_name");
  EXPECT_EQ(SanitizeLabelName("1x-y"), "_1x_y");
}

}  // namespace
}  // namespace strata::compat::logql
