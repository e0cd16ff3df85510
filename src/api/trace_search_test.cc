// The trace search (SearchTraces, SearchTraceQL) over many batches in
// time order, some traces split across batches and some spans arriving
// late in the newest batches: whatever round of its newest-first passes a
// search stops at, the traces, their starts and their span counts equal
// one reference query over every spans file in DuckDB.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/api_test_server.h"
#include "api/search.h"
#include "api/service_map_testing.h"
#include "api/traceql_search.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/duckdb_engine.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

namespace smt = service_map_testing;
constexpr int64_t kMs = smt::kMs;
constexpr int64_t kT0 = 1'796'205'600'000'000'000;

// "<id> <start> <spans>" per trace, newest first.
using Listing = std::vector<std::string>;

Listing ListingOf(const std::vector<TraceSummary>& summaries) {
  Listing out;
  for (const TraceSummary& s : summaries) {
    out.push_back(fmt::format("{} {} {}", s.trace_id, s.start, s.span_count));
  }
  return out;
}

class TraceSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = tmp_.path() + "/data";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    // Ten stretches of 20 traces, each written as its services export
    // them (apart, shuffled): batches in time order whose traces straddle
    // several of them.
    for (int stretch = 0; stretch < 10; ++stretch) {
      std::vector<smt::Span> spans = smt::Traces(20, kT0 + stretch * 20 * 7'000 * kMs);
      for (smt::Span& span : spans) Renumber(&span, stretch);
      ASSERT_TRUE(smt::WriteExportedApart(*storage_, std::move(spans), 11 + stretch).ok());
    }
    // Late spans: billing spans of the traces of stretches 0 to 8 that
    // start in the time of stretch 9 and arrive after everything else, in
    // the newest batches. Such a trace has matching spans there, but
    // starts long before: the newest batches alone would misjudge it.
    std::vector<smt::Span> late;
    for (int stretch = 0; stretch < 9; ++stretch) {
      for (smt::Span& span : smt::Traces(20, kT0 + stretch * 20 * 7'000 * kMs)) {
        if (span.service != "billing" || span.json.find(R"("parentSpanId")") == std::string::npos) {
          continue;
        }
        Renumber(&span, stretch);
        Shift(&span, (9 - stretch) * 20 * 7'000 * kMs + 3 * kMs);
        late.push_back(std::move(span));
      }
    }
    ASSERT_GT(late.size(), 50u);
    ASSERT_TRUE(smt::WriteExportedApart(*storage_, std::move(late), 99).ok());
    snapshot_ = storage_->Pin();
    ASSERT_GT(snapshot_->size(), 60u);
    pool_ = test_support::OpenTestPool(data_dir_, 2, 2);
    ASSERT_NE(pool_, nullptr);
    auto engine = query::DuckDbEngine::Open({});
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    ASSERT_GT(test_support::CreateTruthViews(*engine_, data_dir_), 60u);
  }

  // Traces(n, t) numbers traces from 1 in each call: the first hex digit
  // of the id tells the stretches apart.
  static void Renumber(smt::Span* span, int stretch) {
    const std::string key = R"("traceId":")";
    const size_t at = span->json.find(key);
    ASSERT_NE(at, std::string::npos);
    span->json[at + key.size()] = "0123456789abcdef"[stretch];
  }

  // Moves the span `delta` ns later.
  static void Shift(smt::Span* span, int64_t delta) {
    for (const std::string key : {R"("startTimeUnixNano":")", R"("endTimeUnixNano":")"}) {
      const size_t at = span->json.find(key);
      ASSERT_NE(at, std::string::npos);
      const size_t from = at + key.size();
      const size_t to = span->json.find('"', from);
      const int64_t value = std::stoll(span->json.substr(from, to - from)) + delta;
      span->json.replace(from, to - from, std::to_string(value));
    }
  }

  // The newest `limit` traces with a span in [start, end) meeting
  // `condition` (SQL over the stored columns), by one query over every
  // spans file; lines as ListingOf's.
  // With `matched`, each line ends with the count of spans meeting it.
  Listing Reference(const std::string& condition, int64_t start, int64_t end, int64_t limit,
                    bool matched = false) {
    const std::string sql = fmt::format(
        "SELECT lower(hex(trace_id)), min(start_time_unix_nano) AS s, count(*),"
        " count(*) FILTER (WHERE {2}) FROM spans"
        " WHERE start_time_unix_nano >= {0} AND start_time_unix_nano < {1}"
        " GROUP BY trace_id HAVING bool_or({2}) ORDER BY s DESC, trace_id LIMIT {3}",
        start, end, condition, limit);
    auto rows = engine_->Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status();
    Listing out;
    if (!rows.ok()) return out;
    for (const auto& row : rows->rows) {
      out.push_back(fmt::format("{} {} {}{}", *row[0], *row[1], *row[2],
                                matched ? " " + *row[3] : std::string()));
    }
    return out;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"trace-search"};
  std::string data_dir_;
  std::unique_ptr<storage::Storage> storage_;
  std::shared_ptr<const storage::Snapshot> snapshot_;
  std::unique_ptr<query::QueryPool> pool_;
  std::unique_ptr<query::DuckDbEngine> engine_;
};

TEST_F(TraceSearchTest, EveryRoundGivesTheReferenceTraces) {
  const int64_t end = kT0 + 200 * 7'000 * kMs + 60'000 * kMs;
  struct Case {
    std::string name;
    TraceSearch search;
    std::string condition;
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, TraceSearch search, std::string condition) {
    cases.push_back({std::move(name), std::move(search), std::move(condition)});
  };
  add("frontend errors", {.service = "frontend", .status = 2},
      "service_name = 'frontend' AND status_code = 2");
  add("billing (late spans)", {.service = "billing"}, "service_name = 'billing'");
  add("billing errors", {.service = "billing", .status = 2},
      "service_name = 'billing' AND status_code = 2");
  add("an operation", {.operation = "op4"}, "name = 'op4'");
  add("long cart spans", {.service = "cart", .min_duration = 20 * kMs},
      "service_name = 'cart' AND duration_nano >= 20000000");
  add("nothing", {.service = "nobody"}, "service_name = 'nobody'");
  int compared = 0;
  for (const Case& c : cases) {
    // The whole range, and windows that cut traces and stretches apart.
    for (const auto& [start, stop] :
         {std::pair<int64_t, int64_t>{kT0, end},
          {kT0 + 333 * 7'000 * kMs / 10, kT0 + 1'555 * 7'000 * kMs / 10},
          {kT0 + 1'990 * 7'000 * kMs / 10, end}}) {
      // The reference is ordered, so each smaller limit takes its first
      // lines.
      const Listing all = Reference(c.condition, start, stop, 1000);
      for (const int64_t limit : {1, 20, 1000}) {
        TraceSearch search = c.search;
        search.start = start;
        search.end = stop;
        search.limit = limit;
        auto found = SearchTraces(*pool_, *snapshot_, data_dir_, search);
        ASSERT_TRUE(found.ok()) << c.name << ": " << found.status();
        const Listing want(all.begin(), all.begin() + std::min<ptrdiff_t>(limit, std::ssize(all)));
        EXPECT_EQ(ListingOf(*found), want)
            << c.name << " in [" << start << ", " << stop << ") limit " << limit;
        compared += want.empty() ? 0 : 1;
      }
    }
  }
  EXPECT_GT(compared, 35);
}

TEST_F(TraceSearchTest, TraceQLWithTraceColumnsGivesTheReferenceTraces) {
  const int64_t end = kT0 + 200 * 7'000 * kMs + 60'000 * kMs;
  // rootServiceName needs the whole trace in the window: the late billing
  // spans of old traces are what the newest batches must not misjudge.
  std::string cte = TraceColumnsCte();
  for (const auto& [param, value] : {std::pair<std::string, int64_t>{"$1", kT0}, {"$2", end}}) {
    cte.replace(cte.find(param), param.size(), std::to_string(value));
  }
  const std::string root_billing = "trace_id IN (SELECT trace_id FROM (WITH " + cte +
                                   " SELECT * FROM trace_columns) WHERE trace_root_service = "
                                   "'billing') AND kind = 5";
  for (const int64_t limit : {1, 5, 20}) {
    TraceQLSearch search{.start = kT0, .end = end};
    search.query = R"({ rootServiceName = "billing" && kind = consumer })";
    search.limit = limit;
    auto found = SearchTraceQL(*pool_, *snapshot_, data_dir_, search);
    ASSERT_TRUE(found.ok()) << found.status();
    Listing got;
    for (const TraceQLTrace& trace : *found) {
      got.push_back(fmt::format("{} {}", ListingOf({trace.summary})[0], trace.matched));
    }
    const Listing want = Reference(root_billing, kT0, end, limit, /*matched=*/true);
    ASSERT_EQ(want.size(), static_cast<size_t>(limit));
    EXPECT_EQ(got, want) << "limit " << limit;
  }
}

// An index that cannot be read costs a round, not the answer: with every
// batch's spans.tidx cut to nothing, a round cannot rule out the batches it
// left out, and the last round (which needs no index) answers.
TEST_F(TraceSearchTest, AnUnreadableTraceIndexCostsARoundNotTheAnswer) {
  const int64_t end = kT0 + 200 * 7'000 * kMs + 60'000 * kMs;
  int cut = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(data_dir_)) {
    if (entry.path().filename() == "spans.tidx") {
      std::filesystem::resize_file(entry.path(), 0);
      ++cut;
    }
  }
  ASSERT_GT(cut, 60);
  for (const auto& [service, condition] :
       {std::pair<std::string, std::string>{"billing", "service_name = 'billing'"},
        {"frontend", "service_name = 'frontend'"}}) {
    TraceSearch search{.start = kT0, .end = end, .service = service};
    search.limit = 20;
    auto found = SearchTraces(*pool_, *snapshot_, data_dir_, search);
    ASSERT_TRUE(found.ok()) << service << ": " << found.status();
    EXPECT_EQ(ListingOf(*found), Reference(condition, kT0, end, 20)) << service;
  }
}

}  // namespace
}  // namespace strata::api
