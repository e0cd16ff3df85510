#pragma once

// A throwaway PostgreSQL server for tests: scripts/postgres.sh started once
// per test binary (on first use), each test asking for a fresh database, and
// stopped when the binary exits. Needs STRATA_SOURCE_ROOT defined to the
// checkout (to find the script). Single owner: the test thread.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "postgres/pg_connection.h"

namespace strata::postgres::testing {

class PostgresServer {
 public:
  static PostgresServer& Get() {
    if (Instance() == nullptr) Instance() = new PostgresServer();
    return *Instance();
  }
  // Stops the server when a test started one.
  static void StopIfStarted() {
    if (Instance() != nullptr) Instance()->Stop();
  }
  static bool BinariesPresent() {
    return std::filesystem::exists("/usr/lib/postgresql/15/bin/initdb");
  }
  // The URL of a new, empty database, or "" (with `error` set) when the
  // server could not start.
  std::string NewDatabase(std::string* error) {
    if (base_url_.empty()) {
      *error = "scripts/postgres.sh start failed: " + start_output_;
      return "";
    }
    auto admin = PgConnection::Connect(base_url_);
    if (!admin.ok()) {
      *error = std::string(admin.status().message());
      return "";
    }
    // A database name is an identifier, which cannot be a parameter; this
    // one is made here from a counter.
    const std::string name = "conformance_" + std::to_string(++databases_);
    absl::Status created = (*admin)->Exec("CREATE DATABASE " + name);
    if (!created.ok()) {
      *error = std::string(created.message());
      return "";
    }
    return base_url_.substr(0, base_url_.rfind('/') + 1) + name;
  }
  void Stop() {
    if (dir_.empty()) return;
    (void)std::system(("bash " + Script() + " stop " + dir_).c_str());
    dir_.clear();
  }

 private:
  static PostgresServer*& Instance() {
    static PostgresServer* server = nullptr;
    return server;
  }
  static std::string Script() { return std::string(STRATA_SOURCE_ROOT) + "/scripts/postgres.sh"; }
  PostgresServer() {
    dir_ = std::string(::testing::TempDir()) + "/strata-postgres-" + std::to_string(getpid());
    FILE* pipe = popen(("bash " + Script() + " start " + dir_ + " 2>&1").c_str(), "r");
    char buffer[512];
    while (pipe != nullptr && fgets(buffer, sizeof(buffer), pipe) != nullptr)
      start_output_ += buffer;
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    while (!start_output_.empty() && start_output_.back() == '\n') start_output_.pop_back();
    if (status == 0 && start_output_.rfind("postgres://", 0) == 0) base_url_ = start_output_;
  }
  std::string dir_;
  std::string start_output_;
  std::string base_url_;
  int databases_ = 0;
};

class StopPostgresAtExit : public ::testing::Environment {
 public:
  void TearDown() override { PostgresServer::StopIfStarted(); }
};
// Registers StopPostgresAtExit once, from any test file that includes this.
inline const auto* const kStopPostgres =
    ::testing::AddGlobalTestEnvironment(new StopPostgresAtExit);

}  // namespace strata::postgres::testing
