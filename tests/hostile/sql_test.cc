// What a client holding a read token can do with POST /api/v1/sql and
// `strata sql` to a real `strata serve`: statements that are not reads,
// answers too large to hold, queries that cannot fit in memory, several
// statements on one line.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "cli/subprocess.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Creates a read token from the shell and waits (20 s at most) until the
// running server accepts it; "" on failure.
std::string ReadToken(const ServerProcess& server, const std::string& data) {
  auto [code, output] =
      RunStrata({"token", "create", "--name", "reader", "--scope", "read", "--data-dir", data});
  std::smatch match;
  if (code != 0 || !std::regex_search(output, match, std::regex(R"((strata_[0-9A-Za-z]+))"))) {
    ADD_FAILURE() << output;
    return "";
  }
  const std::string token = match[1].str();
  // The server loads new tokens within its refresh interval (1 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    const int status = Curl({"-H", "Authorization: Bearer " + token,
                             "http://" + server.api_address() + "/api/v1/services"})
                           .first;
    if (status == 200) return token;
  }
  ADD_FAILURE() << "the server never accepted the read token";
  return "";
}

// POST /api/v1/sql with `sql` as text/plain; {status, body}.
std::pair<int, std::string> PostSql(const ServerProcess& server, const std::string& token,
                                    const std::string& sql, const std::string& query = "",
                                    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"-X",
                                   "POST",
                                   "-H",
                                   "Authorization: Bearer " + token,
                                   "-H",
                                   "Content-Type: text/plain",
                                   "--data-binary",
                                   sql};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("http://" + server.api_address() + "/api/v1/sql" + query);
  return Curl(args);
}

// Every path under `root` (directories end in '/').
std::vector<std::string> Tree(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    out.push_back(entry.path().string() + (entry.is_directory() ? "/" : ""));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The peak resident memory (VmHWM) of the `strata serve` process running
// on `data_dir`, in bytes; 0 when there is none.
uint64_t ServerPeakRssBytes(const std::string& data_dir) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    std::replace(args.begin(), args.end(), '\0', ' ');
    if (args.find(" serve ") == std::string::npos ||
        args.find(" " + data_dir + " ") == std::string::npos) {
      continue;
    }
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;
    }
  }
  return 0;
}

// Every kind of statement DuckDB has that is not a read, aimed at the
// directories a query can reach: the batches (telemetry/days/) and the
// spill directory (query/tmp/).
std::vector<std::string> NotReads(const std::string& data) {
  const std::string days = data + "/telemetry/days";
  const std::string tmp = data + "/query/tmp";
  return {
      "EXPORT DATABASE '" + days + "/junk'",
      "EXPORT DATABASE '" + tmp + "/junk'",
      "IMPORT DATABASE '" + days + "/junk'",
      "COPY (SELECT 1) TO '" + days + "/out.csv'",
      "COPY (SELECT 1) TO '" + tmp + "/out.parquet' (FORMAT parquet)",
      "CREATE TABLE t AS SELECT 1 AS v",
      "CREATE OR REPLACE TEMP VIEW spans AS SELECT 1",
      "CREATE MACRO m(x) AS x + 1",
      "DROP VIEW spans",
      "ALTER VIEW spans RENAME TO s",
      "INSERT INTO t VALUES (1)",
      "UPDATE t SET v = 2",
      "DELETE FROM t",
      "ATTACH '" + days + "/attached.db' AS a",
      "ATTACH '" + tmp + "/attached.db' AS a",
      "DETACH a",
      "INSTALL json",
      "LOAD json",
      "SET memory_limit = '100GB'",
      "RESET memory_limit",
      "PRAGMA database_list",
      "PRAGMA threads = 1",
      "CHECKPOINT",
      "VACUUM",
      "CALL pragma_version()",
      "BEGIN TRANSACTION",
      "COMMIT",
      "ROLLBACK",
      "SELECT 1; SELECT 2",
      "SELECT 1; EXPORT DATABASE '" + days + "/junk'",
      "EXPLAIN EXPORT DATABASE '" + days + "/junk'",
      "EXPLAIN ANALYZE COPY (SELECT 1) TO '" + days + "/out.csv'",
  };
}

TEST(HostileSqlTest, StatementsThatAreNotReadsAreRefusedAndLeaveNoFileAnywhere) {
  TempDir dir("hostile-sql");
  const std::string data = dir.path() + "/data";
  std::vector<std::string> before;
  {
    ServerProcess server(data);
    ASSERT_TRUE(server.ready()) << server.output();
    const std::string token = ReadToken(server, data);
    ASSERT_FALSE(token.empty());
    before = Tree(data);
    for (const std::string& sql : NotReads(data)) {
      const std::vector<std::string> tree = Tree(data);
      auto [status, body] = PostSql(server, token, sql);
      EXPECT_EQ(status, 400) << sql << ": " << body;
      EXPECT_THAT(body, Not(HasSubstr("cannot cap"))) << sql;
      EXPECT_EQ(Tree(data), tree) << "after " << sql;
    }
    EXPECT_EQ(Tree(data), before);
    auto [pragma_status, pragma_body] = PostSql(server, token, "PRAGMA database_list");
    EXPECT_THAT(pragma_body, HasSubstr("not read-only"));
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  // The data directory still boots.
  ServerProcess again(data);
  EXPECT_TRUE(again.ready()) << again.output();
}

TEST(HostileSqlTest, LargeAnswerIsCutAtTheByteCapAndSaysTruncated) {
  TempDir dir("hostile-sql-cap");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data, {"--sql-max-answer-bytes", "1048576"});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string token = ReadToken(server, data);
  ASSERT_FALSE(token.empty());
  // 10,000 rows of 100,000 bytes: 1 GB uncapped.
  auto [status, body] =
      PostSql(server, token, "SELECT repeat('x', 100000) AS x FROM range(10000)", "?limit=10000");
  EXPECT_EQ(status, 200) << body.substr(0, 300);
  EXPECT_LE(body.size(), 1048576u + 4096u);
  EXPECT_THAT(body, HasSubstr("\"truncated\":true"));
  EXPECT_THAT(body, HasSubstr("\"truncated_reason\":\""));
  EXPECT_THAT(body, HasSubstr("1048576"));
  // An answer under the cap is whole.
  auto [small_status, small_body] = PostSql(server, token, "SELECT 42 AS n");
  EXPECT_EQ(small_status, 200) << small_body;
  EXPECT_THAT(small_body, HasSubstr("\"truncated\":false"));
}

TEST(HostileSqlTest, GigabyteAnswerStopsAtTheDefaultCapAndTheServerStaysSmall) {
  TempDir dir("hostile-sql-rss");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string token = ReadToken(server, data);
  ASSERT_FALSE(token.empty());
  // 10,000 rows of 100,000 bytes: 1 GB uncapped (the server then peaked
  // at 1.17 GB resident); the default cap is 64 MiB.
  auto [status, body] =
      PostSql(server, token, "SELECT repeat('x', 100000) AS x FROM range(10000)", "?limit=10000");
  EXPECT_EQ(status, 200) << body.substr(0, 300);
  EXPECT_LE(body.size(), (64u << 20) + 4096u);
  EXPECT_GE(body.size(), 60u << 20);
  EXPECT_THAT(body, HasSubstr("\"truncated\":true"));
  // What the server may hold at once: the kept rows and their JSON (64
  // MiB each) and the chunk each of DuckDB's two threads has in flight
  // (2,048 rows of 100,000 bytes, 195 MiB each), about 520 MiB, far from
  // the 2 GB a whole answer and its JSON would take. How many chunks
  // overlap is up to the scheduler: one ASan run peaked at 441 MiB.
  const uint64_t peak = ServerPeakRssBytes(data);
  EXPECT_GT(peak, 0u);
  EXPECT_LT(peak, uint64_t{640} << 20) << "peak resident memory " << (peak >> 20) << " MiB";
}

TEST(HostileSqlTest, OutOfMemoryIsNotRetryableAndSaysHowToNarrowTheQuery) {
  TempDir dir("hostile-sql-oom");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data, {"--query-memory-limit-bytes", std::to_string(64 << 20)});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string token = ReadToken(server, data);
  ASSERT_FALSE(token.empty());
  // list() holds every value in memory and cannot spill.
  // -i: the answer's headers come first in the body.
  auto [status, headers] =
      PostSql(server, token, "SELECT length(list(i)) FROM range(100000000) t(i)", "", {"-i"});
  EXPECT_EQ(status, 422) << headers;
  EXPECT_THAT(headers, Not(HasSubstr("Retry-After")));
  auto [again, body] = PostSql(server, token, "SELECT length(list(i)) FROM range(100000000) t(i)");
  EXPECT_EQ(again, 422) << body;
  EXPECT_THAT(body, HasSubstr("Out of Memory"));
  EXPECT_THAT(body, HasSubstr("narrow"));
  EXPECT_THAT(body, Not(HasSubstr("SET memory_limit")));
}

TEST(HostileSqlTest, StrataSqlRunsEachStatementOfALineOnItsOwn) {
  TempDir dir("hostile-sql-cli");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string token = ReadToken(server, data);
  ASSERT_FALSE(token.empty());
  // Two statements on one line, a ';' in a string and in comments.
  const std::string input = dir.path() + "/input.sql";
  std::ofstream(input) << "SELECT 11 AS a; SELECT 'x;y' AS b; -- c;\n"
                       << "SELECT 33 /* ; */ AS c;\n";
  auto [code, output] =
      RunToCompletion({"/bin/sh", "-c",
                       fmt::format("{} sql --api-address {} --token {} < {}", STRATA_BINARY,
                                   server.api_address(), token, input)},
                      ChildEnvironment());
  EXPECT_EQ(code, 0) << output;
  EXPECT_THAT(output, HasSubstr("\n11\n"));
  EXPECT_THAT(output, HasSubstr("\nx;y\n"));
  EXPECT_THAT(output, HasSubstr("\n33\n"));
  EXPECT_THAT(output, Not(HasSubstr("exactly one statement")));
  // -c takes several statements the same way.
  auto [c_code, c_output] = RunStrata({"sql", "--api-address", server.api_address(), "--token",
                                       token, "-c", "SELECT 44 AS d; SELECT 55 AS e"});
  EXPECT_EQ(c_code, 0) << c_output;
  EXPECT_THAT(c_output, HasSubstr("\n44\n"));
  EXPECT_THAT(c_output, HasSubstr("\n55\n"));
}

TEST(HostileSqlTest, UnclosedJsonStringReportsTheByteWhereTheStringOpens) {
  TempDir dir("hostile-json");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  ASSERT_FALSE(server.first_token().empty()) << server.output();
  const std::string body = R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name)";
  const size_t opens = body.rfind('"');
  auto [status, answer] = Curl({"-X", "POST", "-H", "Authorization: Bearer " + server.first_token(),
                                "-H", "Content-Type: application/json", "--data-binary", body,
                                "http://" + server.http_address() + "/v1/traces"});
  EXPECT_EQ(status, 400) << answer;
  EXPECT_THAT(answer, HasSubstr(fmt::format("(at byte {})", opens)));
}

}  // namespace
}  // namespace strata::testing
