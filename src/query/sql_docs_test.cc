// docs/sql.md's examples and the views' friendly columns and helpers,
// over generated traffic (src/workload, with map bodies, arrays and
// non-ASCII text) written through the storage engine's commit path.
// Every doc example runs through the query pool as user SQL and is
// compared with an answer computed without the friendly columns and
// helpers: a plain DuckDB query over the storage columns of the same
// Parquet files (DuckDB reading them directly, no strata function
// registered), or a count made in C++ from the generated batches where
// only protobuf bytes hold the value.

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "query/sql_helpers.h"
#include "query/view_files.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::query {
namespace {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

constexpr uint64_t kHourNanos = 3'600'000'000'000ULL;
constexpr int kHours = 3;

// The fenced ```sql id=<id> blocks of a Markdown text, by id.
std::map<std::string, std::string> SqlExamples(const std::string& markdown) {
  std::map<std::string, std::string> out;
  std::istringstream in(markdown);
  std::string line, id, sql;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line.rfind("```sql id=", 0) == 0) {
      inside = true;
      id = line.substr(10);
      sql.clear();
    } else if (inside && line == "```") {
      inside = false;
      EXPECT_TRUE(out.emplace(id, sql).second) << "example id repeated: " << id;
    } else if (inside) {
      sql += line + "\n";
    }
  }
  EXPECT_FALSE(inside) << "unterminated example " << id;
  return out;
}

workload::TrafficOptions Traffic(int hour, uint64_t first) {
  return workload::TrafficOptions{.seed = 19 + static_cast<uint64_t>(hour),
                                  .start_time_unix_nano = first + hour * kHourNanos,
                                  .structured_values = true};
}

constexpr int kSpans = 2500;
constexpr int kLogs = 1200;
constexpr int kPoints = 400;

class SqlDocsTest : public ::testing::Test {
 protected:
  struct Shared {
    Shared() {
      const uint64_t now =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
      // Whole hours, so every request's traffic stays inside its hour.
      first = (now - kHours * kHourNanos) / kHourNanos * kHourNanos;
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);
      for (int hour = 0; hour < kHours; ++hour) {
        workload::TrafficGenerator generator(Traffic(hour, first));
        storage::WriteRequest r;
        r.traces = generator.Traces(kSpans);
        r.logs = generator.Logs(kLogs);
        r.metrics = generator.Metrics(kPoints);
        r.rows = r.traces->spans.size() + r.logs->logs.size() + r.metrics->point_count();
        r.bytes = r.rows * 300;
        const absl::Status written = storage->Write(std::move(r));
        EXPECT_TRUE(written.ok()) << written;
      }
      snapshot = storage->Pin();
      files = ViewFilesOf(*snapshot);
      QueryPoolOptions pool_options;
      pool_options.data_dir = data_dir;
      pool_options.max_concurrent = 1;
      pool_options.threads = 2;
      auto opened_pool = QueryPool::Open(pool_options);
      EXPECT_TRUE(opened_pool.ok()) << opened_pool.status();
      pool = *std::move(opened_pool);
      auto opened_engine = DuckDbEngine::Open({.threads = 2});
      EXPECT_TRUE(opened_engine.ok()) << opened_engine.status();
      engine = *std::move(opened_engine);
    }
    ~Shared() {
      pool.reset();
      snapshot.reset();
      if (storage != nullptr) storage->Shutdown(std::chrono::seconds(5));
    }

    PosixFileSystem fs;
    storage::testing::ScopedTempDir tmp{"sql_docs"};
    std::string data_dir;
    uint64_t first = 0;
    std::unique_ptr<storage::Storage> storage;
    std::shared_ptr<const storage::Snapshot> snapshot;  // keeps the files
    ViewFiles files;
    std::unique_ptr<QueryPool> pool;
    std::unique_ptr<DuckDbEngine> engine;
  };

  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  // User SQL through the pool, as POST /api/v1/sql runs it.
  static absl::StatusOr<QueryResult> RunUser(const std::string& sql) {
    return shared_->pool->Run(shared_->files, sql,
                              QueryOptions{.max_rows = 100'000, .user_sql = true});
  }

  // `sql` with SPANS, LOGS and METRICS replaced by the real rows of the
  // files, read by DuckDB directly.
  static std::string OverFiles(std::string sql) {
    const std::pair<const char*, const std::vector<std::string>*> tables[] = {
        {"SPANS", &shared_->files.spans},
        {"LOGS", &shared_->files.logs},
        {"METRICS", &shared_->files.metrics}};
    for (const auto& [name, list] : tables) {
      std::string files;
      for (const std::string& f : *list) files += (files.empty() ? "" : ", ") + SqlLiteral(f);
      const std::string rows =
          fmt::format("(SELECT * FROM read_parquet([{}]) WHERE row_kind = 0)", files);
      for (size_t at = sql.find(name); at != std::string::npos; at = sql.find(name, at)) {
        sql.replace(at, std::strlen(name), rows);
        at += rows.size();
      }
    }
    return sql;
  }

  static Rows Reference(const std::string& sql) {
    absl::StatusOr<QueryResult> result = shared_->engine->Query(OverFiles(sql));
    EXPECT_TRUE(result.ok()) << result.status() << "\n" << sql;
    return result.ok() ? result->rows : Rows{};
  }

  // Generated batches again (the generator is deterministic).
  template <typename Visit>
  static void ForEachGenerated(Visit visit) {
    for (int hour = 0; hour < kHours; ++hour) {
      workload::TrafficGenerator generator(Traffic(hour, shared_->first));
      auto traces = generator.Traces(kSpans);
      auto logs = generator.Logs(kLogs);
      visit(*traces, *logs);
    }
  }

  static std::map<std::string, std::function<Rows()>> References();

  static Shared* shared_;
};

SqlDocsTest::Shared* SqlDocsTest::shared_ = nullptr;

std::string Level() {
  return "CASE (severity_number - 1) // 4 WHEN 0 THEN 'TRACE' WHEN 1 THEN 'DEBUG' WHEN 2 THEN "
         "'INFO' WHEN 3 THEN 'WARN' WHEN 4 THEN 'ERROR' WHEN 5 THEN 'FATAL' END";
}

// `family`_str at `key`'s first position, over the storage lists.
std::string Str(std::string_view family, std::string_view key) {
  return fmt::format("{0}_str[list_position({0}_keys, '{1}')]", family, key);
}

// The nested attribute of `key` among `children` of a kvlist value.
std::optional<uint32_t> FindKey(const otlp::BatchBase& b, otlp::Range children,
                                std::string_view key) {
  for (uint32_t i = children.begin; i < children.end(); ++i) {
    if (b.nested_attributes.key[i] == key) return i;
  }
  return std::nullopt;
}

Rows CountRows(const std::map<std::string, int>& counts) {
  Rows rows;
  for (const auto& [value, count] : counts) rows.push_back({value, std::to_string(count)});
  return rows;
}

std::map<std::string, std::function<Rows()>> SqlDocsTest::References() {
  const std::string route = Str("attr", "http.route");
  auto sql = [](std::string text) { return [text] { return Reference(text); }; };
  return {
      {"slowest_endpoints",
       sql(fmt::format(
           "SELECT {0} AS route, count(*), round(quantile_cont(duration_nano / 1e6, 0.99), 3) "
           "AS p FROM SPANS WHERE kind = 2 AND {0} IS NOT NULL GROUP BY route "
           "ORDER BY p DESC, route LIMIT 5",
           route))},
      {"error_ratio_by_route",
       sql(fmt::format("SELECT {0} AS route, count(*), round(avg(CASE WHEN status_code = 2 THEN "
                       "1 ELSE 0 END), 4) FROM SPANS WHERE kind = 2 AND "
                       "list_contains(attr_keys, 'http.route') GROUP BY route ORDER BY route",
                       route))},
      {"p99_per_operation_per_hour",
       sql("SELECT service_name, name, date_trunc('hour', make_timestamp((start_time_unix_nano "
           "// 1000)::BIGINT)) AS hour, count(*), round(quantile_cont(duration_nano / 1e6, "
           "0.99), 3) FROM SPANS GROUP BY ALL ORDER BY hour, service_name, name")},
      {"logs_of_one_trace",
       sql(fmt::format(
           "SELECT make_timestamp_ns(time_unix_nano::BIGINT)::VARCHAR, {}, lower(hex(span_id)) AS "
           "s "
           "FROM LOGS WHERE trace_id = (SELECT trace_id FROM SPANS WHERE status_code = 2 AND "
           "trace_id IN (SELECT trace_id FROM LOGS) ORDER BY start_time_unix_nano, span_id "
           "LIMIT 1) ORDER BY time_unix_nano, s",
           Level()))},
      {"top_exception_types",
       sql("SELECT exception_type, count(*) AS n FROM SPANS WHERE exception_type IS NOT NULL "
           "GROUP BY 1 ORDER BY n DESC, 1")},
      {"histogram_p90_by_route",
       sql(fmt::format(
           "WITH buckets AS (SELECT {} AS route, b AS bucket, sum(bucket_counts[b]) AS n, "
           "any_value(explicit_bounds) AS bounds FROM METRICS, unnest(range(1, "
           "len(bucket_counts) + 1)) AS t(b) WHERE metric_name = 'http.server.request.duration' "
           "AND metric_type = 9 GROUP BY ALL), running AS (SELECT route, bucket, bounds, sum(n) "
           "OVER (PARTITION BY route ORDER BY bucket) AS below, sum(n) OVER (PARTITION BY "
           "route) AS total FROM buckets) SELECT route, coalesce(bounds[min(bucket)], "
           "'Infinity'::DOUBLE) FROM running WHERE below >= 0.9 * total GROUP BY route, bounds "
           "ORDER BY route",
           route))},
      {"requests_by_method_and_status",
       sql("SELECT attr_str[list_position(attr_keys, 'http.request.method')], "
           "attr_int[list_position(attr_keys, 'http.response.status_code')], count(*) FROM SPANS "
           "WHERE kind = 2 GROUP BY ALL ORDER BY ALL")},
      {"services",
       sql(fmt::format("SELECT {} AS service, {}, count(*) FROM SPANS GROUP BY ALL ORDER BY "
                       "service",
                       Str("resource_attr", "service.name"),
                       Str("resource_attr", "telemetry.sdk.language")))},
      {"database_calls",
       sql(fmt::format("SELECT {} AS t, count(*), round(avg(duration_nano / 1e6), 3) FROM SPANS "
                       "WHERE kind = 3 AND list_contains(attr_keys, 'db.system.name') GROUP BY "
                       "ALL ORDER BY t",
                       Str("attr", "db.collection.name")))},
      {"log_bodies_by_city",
       [] {
         std::map<std::string, int> counts;
         ForEachGenerated([&](const otlp::TraceBatch&, const otlp::LogBatch& logs) {
           for (size_t r = 0; r < logs.logs.size(); ++r) {
             if (logs.logs.body.type[r] != otlp::ValueType::kKvList) continue;
             const otlp::Range top = logs.logs.body.children_at(r);
             if (!FindKey(logs, top, "message").has_value()) continue;
             std::optional<uint32_t> where = FindKey(logs, top, "where");
             std::optional<uint32_t> city =
                 where.has_value()
                     ? FindKey(logs, logs.nested_attributes.value.children_at(*where), "city")
                     : std::nullopt;
             ++counts[city.has_value() ? std::string(logs.nested_attributes.value.str[*city])
                                       : "NULL"];
           }
         });
         return CountRows(counts);
       }},
      {"log_levels_per_service",
       sql(fmt::format("SELECT service_name, {}, count(*) FROM LOGS GROUP BY ALL ORDER BY ALL",
                       Level()))},
      {"error_log_exceptions",
       sql(fmt::format("SELECT {}, count(*) FROM LOGS WHERE severity_number BETWEEN 17 AND 20 "
                       "GROUP BY ALL ORDER BY ALL",
                       Str("attr", "exception.type")))},
      {"spans_with_tags",
       sql(fmt::format("SELECT {} AS route, count(*) FROM SPANS WHERE list_contains(attr_keys, "
                       "'app.tags') GROUP BY route ORDER BY route",
                       route))},
      {"tags",
       [] {
         std::map<std::string, int> counts;
         ForEachGenerated([&](const otlp::TraceBatch& traces, const otlp::LogBatch&) {
           const otlp::AttributeColumns& a = traces.span_attributes;
           for (size_t s = 0; s < traces.spans.size(); ++s) {
             const otlp::Range range = traces.spans.attributes[s];
             for (uint32_t i = range.begin; i < range.end(); ++i) {
               if (a.key[i] != "app.tags" || a.value.type[i] != otlp::ValueType::kArray) continue;
               const otlp::Range items = a.value.children_at(i);
               for (uint32_t k = items.begin; k < items.end(); ++k) {
                 ++counts[std::string(traces.nested_values.str[k])];
               }
               break;
             }
           }
         });
         return CountRows(counts);
       }},
      {"slowest_roots",
       sql("SELECT lower(hex(trace_id)) AS t, service_name, name, duration_nano / 1e6 AS d FROM "
           "SPANS WHERE parent_span_id IS NULL ORDER BY d DESC, t LIMIT 5")},
      {"metric_types",
       sql("SELECT metric_name, CASE metric_type WHEN 5 THEN 'GAUGE' WHEN 7 THEN 'SUM' WHEN 9 "
           "THEN 'HISTOGRAM' WHEN 10 THEN 'EXPONENTIAL_HISTOGRAM' WHEN 11 THEN 'SUMMARY' END, "
           "CASE aggregation_temporality WHEN 1 THEN 'DELTA' WHEN 2 THEN 'CUMULATIVE' END, "
           "count(*) FROM METRICS GROUP BY ALL ORDER BY ALL")},
      {"gauge_average",
       sql("SELECT service_name, round(avg(CASE value_type WHEN 1 THEN value_double WHEN 2 THEN "
           "value_int::DOUBLE END), 4) FROM METRICS WHERE metric_name = "
           "'process.cpu.utilization' GROUP BY ALL ORDER BY ALL")},
      {"exemplars_with_traces",
       sql("SELECT metric_name, count(*) FROM (SELECT metric_name, unnest(exemplar_trace_id) AS "
           "t FROM METRICS) WHERE t IS NOT NULL GROUP BY ALL ORDER BY ALL")},
  };
}

std::string ReadDoc() {
  std::ifstream in(std::string(STRATA_SOURCE_ROOT) + "/docs/sql.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(SqlDocsTest, EveryDocExampleAnswersAsTheStorageColumnsDo) {
  const std::map<std::string, std::string> examples = SqlExamples(ReadDoc());
  const std::map<std::string, std::function<Rows()>> references = References();
  ASSERT_GE(examples.size(), 15u);
  for (const auto& [id, sql] : examples) {
    SCOPED_TRACE(id);
    auto reference = references.find(id);
    ASSERT_NE(reference, references.end()) << "docs/sql.md example without a reference: " << id;
    absl::StatusOr<QueryResult> answer = RunUser(sql);
    ASSERT_TRUE(answer.ok()) << answer.status() << "\n" << sql;
    EXPECT_FALSE(answer->truncated);
    EXPECT_FALSE(answer->rows.empty()) << "the example finds nothing in the generated traffic";
    EXPECT_EQ(answer->rows, reference->second()) << sql;
  }
  for (const auto& [id, reference] : references) {
    EXPECT_TRUE(examples.contains(id)) << "reference without a docs/sql.md example: " << id;
  }
}

TEST_F(SqlDocsTest, AttributesJsonHoldsEveryStoredScalar) {
  // Every key in order, and every string, int, double and bool value, as
  // the lists hold them.
  const std::string check =
      "SELECT count(*) FILTER (WHERE json_keys({0}) IS DISTINCT FROM {1}_keys AND "
      "len(list_distinct({1}_keys)) = len({1}_keys)), count(*) FILTER (WHERE NOT "
      "list_bool_and(list_transform(range(len({1}_keys)), i -> CASE {1}_types[i + 1] "
      "WHEN 1 THEN {0}->>('$.\"' || {1}_keys[i + 1] || '\"') = {1}_str[i + 1] "
      "WHEN 3 THEN ({0}->>('$.\"' || {1}_keys[i + 1] || '\"'))::BIGINT = {1}_int[i + 1] "
      "WHEN 4 THEN ({0}->>('$.\"' || {1}_keys[i + 1] || '\"'))::DOUBLE = {1}_double[i + 1] "
      "WHEN 2 THEN ({0}->>('$.\"' || {1}_keys[i + 1] || '\"'))::BOOLEAN = {1}_bool[i + 1] "
      "ELSE true END))), count(*) FROM {2}";
  const std::tuple<const char*, const char*, const char*> sets[] = {
      {"attributes", "attr", "spans"},   {"resource_attributes", "resource_attr", "spans"},
      {"attributes", "attr", "logs"},    {"scope_attributes", "scope_attr", "logs"},
      {"attributes", "attr", "metrics"},
  };
  for (const auto& [column, family, view] : sets) {
    absl::StatusOr<QueryResult> answer =
        RunUser(fmt::format(fmt::runtime(check), column, family, view));
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_EQ(answer->rows.size(), 1u);
    EXPECT_EQ(answer->rows[0][0], "0") << view << "." << column << ": keys differ";
    EXPECT_EQ(answer->rows[0][1], "0") << view << "." << column << ": values differ";
    EXPECT_NE(answer->rows[0][2], "0");
  }
}

TEST_F(SqlDocsTest, HelpersOnPromotedKeysAgreeWithTheLists) {
  for (const char* view : {"spans", "logs", "metrics"}) {
    absl::StatusOr<QueryResult> answer = RunUser(fmt::format(
        "SELECT count(*) FILTER (WHERE attr_str('http.route') IS DISTINCT FROM {}), "
        "count(*) FILTER (WHERE resource_attr_str('service.name') IS DISTINCT FROM {}), "
        "count(attr_str('http.route')) FROM {}",
        Str("attr", "http.route"), Str("resource_attr", "service.name"), view));
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->rows[0][0], "0") << view;
    EXPECT_EQ(answer->rows[0][1], "0") << view;
  }
}

TEST_F(SqlDocsTest, MapBodiesAndArraysReadAsJson) {
  absl::StatusOr<QueryResult> answer = RunUser(
      "SELECT body_json->>'$.where.tags[1]', (body_json->'$.code')::BIGINT, "
      "attr_json('labels')::VARCHAR, attr('labels'), typeof(body_json) FROM logs "
      "WHERE body_type = 6 ORDER BY time LIMIT 1");
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->rows.size(), 1u);
  EXPECT_EQ(answer->rows[0][0], "ünïcode ✓");
  EXPECT_TRUE(answer->rows[0][1] == "200" || answer->rows[0][1] == "402");
  EXPECT_EQ(answer->rows[0][2], R"(["a","β"])");
  EXPECT_EQ(answer->rows[0][3], R"(["a","β"])");
  EXPECT_EQ(answer->rows[0][4], "JSON");
}

TEST_F(SqlDocsTest, HelperCallsInsideStringsAndCommentsStayText) {
  absl::StatusOr<QueryResult> answer = RunUser(
      "SELECT 'attr_str(''http.route'')' AS s, /* attr_int('x') */ "
      "attr_str ( 'http.route' ) AS r FROM spans WHERE attr_str('http.route') IS NOT NULL "
      "ORDER BY r LIMIT 1 -- has_attr('y')");
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->rows.size(), 1u);
  EXPECT_EQ(answer->rows[0][0], "attr_str('http.route')");
  EXPECT_EQ(answer->columns[1], "r");
}

TEST_F(SqlDocsTest, QualifiedHelpersReadTheirTable) {
  absl::StatusOr<QueryResult> answer = RunUser(
      "SELECT count(*) FROM spans s JOIN logs l ON l.span_id = s.span_id "
      "WHERE s.attr_str('http.route') IS NOT NULL AND l.resource_attr_str('service.name') = "
      "s.resource_attr_str('service.name')");
  ASSERT_TRUE(answer.ok()) << answer.status();
  const Rows reference = Reference(
      std::string("SELECT count(*) FROM SPANS s JOIN LOGS l ON l.span_id = s.span_id WHERE "
                  "s.attr_str[list_position(s.attr_keys, 'http.route')] IS NOT NULL AND "
                  "l.resource_attr_str[list_position(l.resource_attr_keys, 'service.name')] = "
                  "s.resource_attr_str[list_position(s.resource_attr_keys, 'service.name')]"));
  EXPECT_EQ(answer->rows, reference);
}

TEST_F(SqlDocsTest, HelpersNeedOneStringLiteral) {
  for (const char* sql : {"SELECT attr_str(name) FROM spans",
                          "SELECT attr_int('a', 'b') FROM spans", "SELECT has_attr() FROM spans"}) {
    absl::StatusOr<QueryResult> answer = RunUser(sql);
    EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument) << sql;
    EXPECT_NE(answer.status().message().find("string literal"), std::string::npos)
        << answer.status();
  }
}

TEST_F(SqlDocsTest, UserSqlCannotRedefineAHelper) {
  for (const char* sql : {"CREATE MACRO attr_str(k) AS 1",
                          "CREATE OR REPLACE TEMP MACRO attr_str(k) AS 1", "DROP MACRO attr_str"}) {
    absl::StatusOr<QueryResult> answer = RunUser(sql);
    EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument) << sql;
  }
  // And EXPLAIN of a SELECT with helpers passes the read-only check.
  absl::StatusOr<QueryResult> explained =
      RunUser("EXPLAIN SELECT count(*) FROM spans WHERE attr_str('http.route') = '/api/checkout'");
  ASSERT_TRUE(explained.ok()) << explained.status();
  // The plan reads the promoted column, not the attribute lists.
  std::string plan;
  for (const auto& row : explained->rows) {
    for (const auto& value : row) plan += value.value_or("") + "\n";
  }
  EXPECT_NE(plan.find("http_route"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("attr_keys"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("attr_str"), std::string::npos) << plan;
}

TEST(SqlHelpersTest, PromotedKeysBecomeTheirColumn) {
  EXPECT_EQ(*HelperExpansion("attr_str", "", "http.route"), "http_route");
  EXPECT_EQ(*HelperExpansion("resource_attr_str", "s", "service.name"), "\"s\".service_name");
  // A column with several source keys never stands in.
  EXPECT_EQ(*HelperExpansion("attr_str", "", "http.request.method"),
            "attr_str[list_position(attr_keys, 'http.request.method')]");
  EXPECT_EQ(*HelperExpansion("attr_int", "", "it's"),
            "attr_int[list_position(attr_keys, 'it''s')]");
  EXPECT_FALSE(HelperExpansion("attr_nope", "", "k").ok());
}

TEST(SqlHelpersTest, ExpansionChecksTheCallText) {
  HelperCall call{.location = 7,
                  .name = "attr_str",
                  .argument_count = 1,
                  .key_is_string_literal = true,
                  .key_location = 16,
                  .key = "k"};
  absl::StatusOr<std::string> out = ExpandHelperCalls("SELECT attr_str('k') FROM t", {call});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "SELECT (attr_str[list_position(attr_keys, 'k')]) FROM t");
  // A position that does not hold the call is refused, not spliced.
  call.location = 8;
  EXPECT_FALSE(ExpandHelperCalls("SELECT attr_str('k') FROM t", {call}).ok());
  // Several calls, reported in any order; a qualifier is kept, quoted.
  const std::string sql = "SELECT has_attr('a'), s.resource_attr_str('service.name') FROM t s";
  const HelperCall first{.location = 7,
                         .name = "has_attr",
                         .argument_count = 1,
                         .key_is_string_literal = true,
                         .key_location = 16,
                         .key = "a"};
  const HelperCall second{.location = 22,
                          .name = "resource_attr_str",
                          .qualifier = "s",
                          .argument_count = 1,
                          .key_is_string_literal = true,
                          .key_location = 42,
                          .key = "service.name"};
  out = ExpandHelperCalls(sql, {second, first});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "SELECT (list_contains(attr_keys, 'a')), (\"s\".service_name) FROM t s");
}

}  // namespace
}  // namespace strata::query
