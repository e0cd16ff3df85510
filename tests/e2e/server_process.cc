#include "e2e/server_process.h"

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <regex>
#include <set>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "storage/commit/batch_committer.h"
#include "storage/commit/recovery.h"

namespace strata::testing {
namespace {

std::string Capture(const std::string& text, const std::string& pattern) {
  std::smatch match;
  const std::regex re(pattern);
  return std::regex_search(text, match, re) ? match[1].str() : std::string();
}

}  // namespace

TempDir::TempDir(const std::string& label) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/strata-{}-XXXXXX", tmp != nullptr ? tmp : "/tmp", label);
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> ChildEnvironment() {
  std::vector<std::string> env;
  for (const char* name : {"PATH", "HOME", "TMPDIR", "LANG"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      env.push_back(fmt::format("{}={}", name, value));
    }
  }
  return env;
}

ServerProcess::ServerProcess(const std::string& data_dir,
                             const std::vector<std::string>& extra_flags) {
  std::vector<std::string> argv = {
      STRATA_BINARY,         "serve",       "--data-dir",          data_dir,
      "--otlp-grpc-address", "127.0.0.1:0", "--otlp-http-address", "127.0.0.1:0",
      "--api-address",       "127.0.0.1:0"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  process_ = std::make_unique<Subprocess>(argv, ChildEnvironment());
  ready_ =
      process_->WaitForOutput("ready; waiting for SIGINT or SIGTERM", std::chrono::seconds(30));
  const std::string out = process_->output();
  grpc_address_ = Capture(out, "OTLP/gRPC listening on ([0-9.]+:[0-9]+)");
  http_address_ = Capture(out, "OTLP/HTTP listening on ([0-9.]+:[0-9]+)");
  api_address_ = Capture(out, "API listening on ([0-9.]+:[0-9]+)");
  // The first boot prints its token on a line of its own after "store it now".
  token_ = Capture(out, "store it now[^\\n]*\\n\\s*(strata_[A-Za-z0-9]+)");
  // While no account exists, the setup link's token.
  setup_token_ = Capture(out, "/setup#token=([0-9a-z]+)");
}

ServerProcess::~ServerProcess() {
  if (!exited_) Kill();
}

void ServerProcess::Signal(int signal) { process_->Signal(signal); }

bool ServerProcess::WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout) {
  return process_->WaitForOutput(needle, timeout);
}

int ServerProcess::Stop(std::chrono::milliseconds timeout) {
  process_->Signal(SIGTERM);
  exited_ = true;
  return process_->Wait(timeout);
}

void ServerProcess::Kill() {
  process_->Signal(SIGKILL);
  exited_ = true;
  process_->Wait(std::chrono::seconds(30));
}

std::pair<int, std::string> RunStrata(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {STRATA_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunToCompletion(argv, ChildEnvironment());
}

std::string CreateToken(const std::string& data_dir, const std::string& name,
                        const std::string& scope, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"token",   "create", "--name",     name,
                                   "--scope", scope,    "--data-dir", data_dir};
  args.insert(args.end(), flags.begin(), flags.end());
  auto [code, output] = RunStrata(args);
  std::smatch match;
  if (code != 0 || !std::regex_search(output, match, std::regex(R"((strata_[0-9A-Za-z]+))"))) {
    ADD_FAILURE() << "strata token create --scope " << scope << ":\n" << output;
    return "";
  }
  return match[1].str();
}

std::pair<int, std::string> Curl(const std::vector<std::string>& args) {
  TempDir dir("curl");
  const std::string body_path = dir.path() + "/body";
  std::vector<std::string> argv = {STRATA_CURL, "-sS", "-o", body_path, "-w", "%{http_code}"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto [code, out] = RunToCompletion(argv, ChildEnvironment());
  std::string body;
  if (std::FILE* f = std::fopen(body_path.c_str(), "rb"); f != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) body.append(buf, n);
    std::fclose(f);
  }
  int status = 0;
  if (code == 0 && out.size() >= 3) status = std::atoi(out.substr(out.size() - 3).c_str());
  // What curl said, for the test's message (-S: its error on stderr).
  if (status == 0) body += fmt::format("\n(curl exited {}: {})", code, out);
  return {status, body};
}

bool CreateTableView(query::DuckDbEngine& engine, const std::string& data_dir,
                     const std::string& table) {
  // A compaction whose output is in days/ but whose inputs are not deleted
  // yet (the server stopped first) leaves both on disk with the marker;
  // boot would delete the inputs (commit.md, "Compaction"), so they are
  // not data.
  std::set<std::string> superseded;
  PosixFileSystem fs;
  auto marker = storage::ReadCompactionMarker(fs, storage::DataDirPaths(data_dir));
  if (!marker.ok()) return false;
  if (marker->has_value()) {
    for (const storage::BatchId& input : (*marker)->inputs) {
      superseded.insert(input.ToString() + ".batch");
    }
  }
  std::vector<std::string> files;
  const std::filesystem::path days = std::filesystem::path(data_dir) / "telemetry" / "days";
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(days, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == table + ".parquet" &&
        !superseded.contains(it->path().parent_path().filename().string())) {
      files.push_back(it->path().string());
    }
  }
  if (files.empty()) return false;
  std::string list;
  for (const std::string& f : files) list += fmt::format("{}'{}'", list.empty() ? "" : ",", f);
  return engine
      .Query(
          fmt::format("CREATE OR REPLACE VIEW {} AS SELECT * FROM read_parquet([{}])", table, list))
      .ok();
}

}  // namespace strata::testing
