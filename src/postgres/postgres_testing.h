#pragma once

// A throwaway PostgreSQL server for tests, each test asking for a fresh
// database. Under ctest the server is the one the `postgres` fixture
// started for the whole run (tests/CMakeLists.txt), named by the file
// STRATA_TEST_POSTGRES_URL_FILE; a test binary run by hand, or one whose
// file holds no URL, starts its own with scripts/postgres.sh on first use
// and stops it when it exits. Databases are named after the process and
// dropped when it exits. Needs STRATA_SOURCE_ROOT defined to the checkout
// (to find the script). Single owner: the test thread.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "postgres/pg_connection.h"

namespace strata::postgres::testing {

class PostgresServer {
 public:
  static PostgresServer& Get() {
    if (Instance() == nullptr) Instance() = new PostgresServer();
    return *Instance();
  }
  // Drops this process's databases, and stops the server when this
  // process started it.
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
    // one is made here from the process id, a random number (a process id
    // may come again within one run) and a counter.
    const std::string name = "t" + std::to_string(getpid()) + "_" + process_tag_ + "_" +
                             std::to_string(databases_.size() + 1);
    absl::Status created = (*admin)->Exec("CREATE DATABASE " + name);
    if (!created.ok()) {
      *error = std::string(created.message());
      return "";
    }
    databases_.push_back(name);
    return base_url_.substr(0, base_url_.rfind('/') + 1) + name;
  }
  void Stop() {
    if (dir_.empty()) {
      // The run's shared server: leave it running, without this process's
      // databases (WITH (FORCE) closes connections a test left open).
      auto admin = base_url_.empty() ? nullptr : PgConnection::Connect(base_url_).value_or(nullptr);
      for (const std::string& name : databases_) {
        if (admin != nullptr)
          (void)admin->Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      }
      databases_.clear();
      return;
    }
    (void)std::system(("bash " + Script() + " stop " + dir_).c_str());
    dir_.clear();
  }

 private:
  static PostgresServer*& Instance() {
    static PostgresServer* server = nullptr;
    return server;
  }
  static std::string Script() { return std::string(STRATA_SOURCE_ROOT) + "/scripts/postgres.sh"; }
  PostgresServer() : process_tag_(std::to_string(std::random_device()() % 1'000'000)) {
    if (const char* file = std::getenv("STRATA_TEST_POSTGRES_URL_FILE");
        file != nullptr && *file != '\0') {
      std::ifstream in(file);
      std::string url;
      std::getline(in, url);
      if (url.rfind("postgres://", 0) == 0) {
        base_url_ = url;
        return;
      }
    }
    dir_ = std::string(::testing::TempDir()) + "/strata-postgres-" + std::to_string(getpid());
    FILE* pipe = popen(("bash " + Script() + " start " + dir_ + " 2>&1").c_str(), "r");
    char buffer[512];
    while (pipe != nullptr && fgets(buffer, sizeof(buffer), pipe) != nullptr)
      start_output_ += buffer;
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    while (!start_output_.empty() && start_output_.back() == '\n') start_output_.pop_back();
    if (status == 0 && start_output_.rfind("postgres://", 0) == 0) base_url_ = start_output_;
  }
  const std::string process_tag_;
  // Empty when the server is the run's shared one.
  std::string dir_;
  std::string start_output_;
  std::string base_url_;
  std::vector<std::string> databases_;
};

class StopPostgresAtExit : public ::testing::Environment {
 public:
  void TearDown() override { PostgresServer::StopIfStarted(); }
};
// Registers StopPostgresAtExit once, from any test file that includes this.
inline const auto* const kStopPostgres =
    ::testing::AddGlobalTestEnvironment(new StopPostgresAtExit);

}  // namespace strata::postgres::testing
