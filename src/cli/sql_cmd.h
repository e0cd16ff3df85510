#pragma once

// `strata sql`: read-only SQL over the views spans, logs and metrics of a
// running server, through its API (POST /api/v1/sql with a read token).
// With -c it runs one statement and exits; otherwise it reads statements
// (each ended by ';' at the end of a line) from standard input, prompting
// when that is a terminal. Results print as a table, or as the API's JSON
// with --json.
//
// Thread-safety: runs on the calling thread. Errors: the server's message
// on standard error; the exit code is 1 when any statement failed.

#include <string>

namespace strata::cli {

struct SqlOptions {
  std::string api_address = "127.0.0.1:7520";
  std::string token;
  std::string command;  // -c
  int limit = 1000;
  int timeout_sec = 60;
  bool json = false;
};

int RunSql(const SqlOptions& options);

// The API's JSON result ({"columns":[{"name","type"}...],"rows":[[...]...],
// "truncated":bool}) as an aligned text table with a row-count footer.
// InvalidArgument when `json` is not such a result.
[[nodiscard]] std::string FormatSqlTable(std::string_view json, std::string* error);

}  // namespace strata::cli
