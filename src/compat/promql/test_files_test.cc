// Prometheus's own PromQL test files (v2.42.0, Apache-2.0), read where they
// lie and run against strata's engine: every eval must pass unless
// testdata/skipped.txt lists it ("<file>:<line> <reason>"). The files are
// not copied into strata; STRATA_PROMQL_TESTDATA names their directory,
// by default <source root>/../shared/compat/promql-v2.42.0. Without them
// the test fails.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compat/promql/test_file.h"
#include "gtest/gtest.h"

namespace strata::compat::promql {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(PromQLTestFilesTest, EveryEvalOfPrometheusTestFilesPasses) {
  const char* env = std::getenv("STRATA_PROMQL_TESTDATA");
  const std::filesystem::path dir = env != nullptr
                                        ? std::filesystem::path(env)
                                        : std::filesystem::path(STRATA_SOURCE_DIR) / ".." /
                                              "shared" / "compat" / "promql-v2.42.0";
  ASSERT_TRUE(std::filesystem::is_directory(dir))
      << "Prometheus's PromQL test files are not at " << dir << "; set STRATA_PROMQL_TESTDATA";
  // file:line -> reason
  std::map<std::string, std::string> skipped;
  std::istringstream skip_list(ReadFile(std::filesystem::path(STRATA_SOURCE_DIR) /
                                        "src/compat/promql/testdata/skipped.txt"));
  for (std::string line; std::getline(skip_list, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << "a skipped case without a reason: " << line;
    skipped[line.substr(0, space)] = line.substr(space + 1);
  }
  int files = 0, evals = 0, passed = 0;
  std::vector<std::string> failures;
  std::vector<std::string> stale_skips;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".test") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    absl::StatusOr<std::vector<EvalOutcome>> outcomes = RunPromQLTestFile(ReadFile(entry.path()));
    ASSERT_TRUE(outcomes.ok()) << name << ": " << outcomes.status();
    for (const EvalOutcome& o : *outcomes) {
      ++evals;
      const std::string id = absl::StrCat(name, ":", o.line);
      if (o.passed) {
        ++passed;
        if (skipped.contains(id)) stale_skips.push_back(id);
      } else if (!skipped.contains(id)) {
        failures.push_back(absl::StrCat(id, " ", o.expr, "\n    ", o.message));
      }
    }
  }
  std::cout << "PromQL test files: " << files << " files, " << passed << " of " << evals
            << " evals pass, " << skipped.size() << " skipped\n";
  EXPECT_GE(files, 11);
  EXPECT_GE(evals, 500);
  std::string all;
  for (const std::string& f : failures) absl::StrAppend(&all, f, "\n");
  EXPECT_TRUE(failures.empty()) << failures.size() << " evals fail:\n" << all;
  EXPECT_TRUE(stale_skips.empty())
      << "skipped but passing (remove from skipped.txt): " << absl::StrJoin(stale_skips, ", ");
}

}  // namespace
}  // namespace strata::compat::promql
