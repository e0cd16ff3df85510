#pragma once

// `strata mcp`: the MCP server's stdio transport for agents that launch a
// process (docs/mcp.md). Each line of standard input is one JSON-RPC
// message, relayed as a POST to the server's /mcp with a read token; each
// answer is written to standard output as one line. The Mcp-Session-Id
// that `initialize` returns is kept and sent with every later message, and
// the session is ended (DELETE /mcp) at the end of the input.
//
// Thread-safety: runs on the calling thread. Errors: a message the server
// could not be reached for is answered with a JSON-RPC error (-32603) on
// standard output and a line on standard error; the exit code is 0 at the
// end of the input.

#include <set>
#include <string>

#include "cli/command.h"

namespace strata::cli {

struct McpOptions {
  std::string api_address = "127.0.0.1:7520";
  std::string token;
  int timeout_sec = 120;
};

int RunMcp(const McpOptions& options);

// Adds `mcp` to `app`; its --api-address and --token have STRATA_*
// variables, recorded in `env_names`.
Command RegisterMcp(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
