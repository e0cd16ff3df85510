#pragma once

// `strata sql`: read-only SQL over the views spans, logs and metrics of a
// running server, through its API (POST /api/v1/sql with a read token).
// It reads statements from -c's text, or else from standard input, each
// ended by ';' (several may share a line; a ';' in a string, a quoted name
// or a comment ends nothing) or by the end of the input, and sends each as
// its own request, prompting when standard input is a terminal. Results
// print as a table, or as the API's JSON with --json.
//
// Thread-safety: runs on the calling thread. Errors: the server's message
// on standard error; the exit code is 1 when any statement failed.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"

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

// Adds `sql` to `app`; its --api-address and --token have STRATA_*
// variables, recorded in `env_names`.
Command RegisterSql(CLI::App* app, std::set<std::string>* env_names);

// Appends to `statements` each statement of `text` that a ';' ends (the
// ';' included), and returns the rest, an unfinished statement. A ';'
// inside a string literal ('...', '' for a quote, E'...' with backslash
// escapes), a quoted identifier ("..."), a dollar-quoted string
// ($tag$...$tag$), a line comment (-- to the end of the line) or a block
// comment (/* */, nested) does not end a statement. Statements that hold
// only white space and comments are dropped.
std::string SplitSqlStatements(std::string_view text, std::vector<std::string>* statements);

// The API's JSON result ({"columns":[{"name","type"}...],"rows":[[...]...],
// "truncated":bool, "truncated_reason":"..."}) as an aligned text table with
// a row-count footer that says why rows were left out.
// InvalidArgument when `json` is not such a result.
[[nodiscard]] std::string FormatSqlTable(std::string_view json, std::string* error);

}  // namespace strata::cli
