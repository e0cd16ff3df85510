#pragma once

// Test helper: a real `strata serve` process on loopback with ephemeral
// ports in a data directory the test owns, with the addresses it bound and
// the ingest token it printed at first boot read from its output. Also runs
// other strata commands and reads a data directory's tables through DuckDB.
// Single owner.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/subprocess.h"
#include "query/duckdb_engine.h"

namespace strata::testing {

// A fresh directory under the test's temporary space, removed afterwards.
class TempDir {
 public:
  explicit TempDir(const std::string& label);
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ServerProcess {
 public:
  // Starts `strata serve` on `data_dir` with 127.0.0.1:0 for every listener
  // plus `extra_flags`, and waits (30 s at most) until it says it is ready.
  // `token` is empty unless this boot created the first token.
  ServerProcess(const std::string& data_dir, const std::vector<std::string>& extra_flags = {});
  ~ServerProcess();

  bool ready() const { return ready_; }
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& http_address() const { return http_address_; }
  const std::string& api_address() const { return api_address_; }
  const std::string& first_token() const { return token_; }
  // The first-boot setup link's token; empty once an account exists.
  const std::string& setup_token() const { return setup_token_; }
  std::string output() const { return process_->output(); }

  // Sends `signal` (SIGHUP reloads the TLS certificate).
  void Signal(int signal);
  // Waits until the server's output holds `needle`.
  bool WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout);

  // SIGTERM and wait for the exit code (-1 on timeout).
  int Stop(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // SIGKILL and reap.
  void Kill();

 private:
  std::unique_ptr<Subprocess> process_;
  bool ready_ = false;
  bool exited_ = false;
  std::string grpc_address_, http_address_, api_address_, token_, setup_token_;
};

// The environment strata's child processes get (PATH, HOME, no STRATA_*).
std::vector<std::string> ChildEnvironment();

// Runs the strata binary with `args`; {exit code, output}.
std::pair<int, std::string> RunStrata(const std::vector<std::string>& args);

// Creates a token of `scope` ("ingest", "read") with `strata token create`
// on `data_dir` (initialising it as a first boot would when it is new);
// the token, or "" (and a test failure) on failure. `flags` are added
// (`--catalog <url>`: the PostgreSQL store several servers share).
std::string CreateToken(const std::string& data_dir, const std::string& name,
                        const std::string& scope, const std::vector<std::string>& flags = {});

// Runs curl with `args` plus "-sS -o <body> -w %{http_code}" and returns
// {http status, body}; status 0 when curl itself failed (its exit code and
// error are then appended to the body).
std::pair<int, std::string> Curl(const std::vector<std::string>& args);

// DuckDB over every Parquet file of `table` ("spans", "logs", "metrics") in
// the data directory's batches, as a view of that name; false if none.
bool CreateTableView(query::DuckDbEngine& engine, const std::string& data_dir,
                     const std::string& table);

}  // namespace strata::testing
