// Every RunbookRef("anchor") in src/ must resolve to a heading of
// docs/operations.md (GitHub's anchor rules: lower case, spaces to '-',
// punctuation other than '-' and '_' dropped).

#include "common/runbook.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace strata {
namespace {

std::filesystem::path SourceRoot() {
  const char* dir = std::getenv("TEST_SOURCE_DIR");
  return dir != nullptr ? std::filesystem::path(dir) : std::filesystem::path(STRATA_SOURCE_ROOT);
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Anchor(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

std::set<std::string> RunbookAnchors() {
  std::set<std::string> anchors;
  std::istringstream lines(ReadFile(SourceRoot() / kRunbookPath));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("#", 0) != 0) continue;
    const size_t text = line.find_first_not_of('#');
    if (text == std::string::npos) continue;
    anchors.insert(Anchor(line.substr(line.find_first_not_of(' ', text))));
  }
  return anchors;
}

TEST(RunbookTest, AnchorRulesMatchGitHub) {
  EXPECT_EQ(Anchor("Unknown STRATA_* environment variable"), "unknown-strata_-environment-variable");
  EXPECT_EQ(Anchor("Bad listen address"), "bad-listen-address");
}

TEST(RunbookTest, EveryRunbookRefInTheSourcesNamesAnExistingSection) {
  const std::set<std::string> anchors = RunbookAnchors();
  ASSERT_FALSE(anchors.empty()) << "no headings found in " << (SourceRoot() / kRunbookPath);
  const std::regex ref(R"re(RunbookRef\("([^"]*)"\))re");
  int refs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(SourceRoot() / "src")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
    if (entry.path().filename() == "runbook_test.cc") continue;
    const std::string text = ReadFile(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), ref), end; it != end; ++it) {
      ++refs;
      EXPECT_TRUE(anchors.count((*it)[1].str()) == 1)
          << entry.path() << " points at missing runbook section #" << (*it)[1].str();
    }
  }
  EXPECT_GT(refs, 0) << "no RunbookRef() found; the scan itself is broken";
}

}  // namespace
}  // namespace strata
