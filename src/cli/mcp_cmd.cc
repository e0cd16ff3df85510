#include "cli/mcp_cmd.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "cli/flags.h"
#include "fmt/format.h"
#include "server/http_adapter.h"
#include "simdjson.h"

namespace strata::cli {
namespace {

// The most bytes of one input line (the server takes 1 MiB per message).
constexpr size_t kMaxLineBytes = size_t{1} << 20;

std::string HeaderOf(const server::HttpResponse& response, std::string_view name) {
  for (const auto& [field, value] : response.headers) {
    if (absl::EqualsIgnoreCase(field, absl::string_view(name.data(), name.size()))) return value;
  }
  return "";
}

// A JSON-RPC error line for `id` (its JSON text, "null" when unknown).
std::string ErrorLine(const std::string& id, std::string_view message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) continue;
    escaped.push_back(c);
  }
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"error":{{"code":-32603,"message":"{}"}}}})", id,
                     escaped);
}

server::HttpRequest McpRequest(const McpOptions& options, const std::string& method,
                               const std::string& session, const std::string& version) {
  server::HttpRequest request;
  request.method = method;
  request.target = "/mcp";
  request.headers = {{"Content-Type", "application/json"},
                     {"Accept", "application/json, text/event-stream"},
                     {"Authorization", "Bearer " + options.token}};
  if (!session.empty()) request.headers.emplace_back("Mcp-Session-Id", session);
  if (!version.empty()) request.headers.emplace_back("MCP-Protocol-Version", version);
  return request;
}

}  // namespace

int RunMcp(const McpOptions& options) {
  const auto timeout = std::chrono::seconds(std::max(1, options.timeout_sec));
  std::string session;
  std::string version;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (absl::StripAsciiWhitespace(absl::string_view(line)).empty()) continue;
    std::string id = "null";
    bool is_request = false;
    bool is_initialize = false;
    {
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      if (line.size() <= kMaxLineBytes && parser.parse(line).get(doc) == simdjson::SUCCESS &&
          doc.is_object()) {
        simdjson::dom::element value;
        if (doc["id"].get(value) == simdjson::SUCCESS) {
          id = simdjson::minify(value);
          is_request = true;
        }
        std::string_view method;
        is_initialize =
            doc["method"].get_string().get(method) == simdjson::SUCCESS && method == "initialize";
      }
    }
    server::HttpRequest request = McpRequest(options, "POST", session, version);
    request.body = std::make_shared<std::string>(line);
    absl::StatusOr<server::HttpResponse> response =
        server::HttpCall(options.api_address, request, timeout);
    if (!response.ok()) {
      fmt::print(stderr, "strata mcp: {}\n", std::string(response.status().message()));
      if (is_request) fmt::print("{}\n", ErrorLine(id, std::string(response.status().message())));
      std::fflush(stdout);
      continue;
    }
    if (is_initialize && response->status == 200) {
      session = HeaderOf(*response, "Mcp-Session-Id");
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      std::string_view agreed;
      if (parser.parse(response->body).get(doc) == simdjson::SUCCESS &&
          doc["result"]["protocolVersion"].get_string().get(agreed) == simdjson::SUCCESS) {
        version = std::string(agreed);
      }
    }
    if (response->status == 202 || response->body.empty()) continue;
    if (response->body.find('\n') != std::string::npos || response->body.front() != '{' ||
        response->content_type.find("application/json") == std::string::npos) {
      // Not a JSON-RPC answer (an HTML error page from a proxy, say).
      fmt::print(stderr, "strata mcp: HTTP {}: {}\n", response->status, response->body);
      if (is_request) {
        fmt::print("{}\n", ErrorLine(id, fmt::format("HTTP {} from the server", response->status)));
      }
    } else if (response->status == 401 || response->status == 403) {
      fmt::print(stderr, "strata mcp: HTTP {}: {}\n", response->status, response->body);
      if (is_request) {
        fmt::print("{}\n",
                   ErrorLine(id, fmt::format("HTTP {}: {}", response->status, response->body)));
      }
    } else {
      fmt::print("{}\n", response->body);
    }
    std::fflush(stdout);
  }
  if (!session.empty()) {
    (void)server::HttpCall(options.api_address, McpRequest(options, "DELETE", session, version),
                           timeout);
  }
  return 0;
}

Command RegisterMcp(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<McpOptions>();
  CLI::App* command = app->add_subcommand(
      "mcp", "The MCP server over stdio: relays JSON-RPC lines to a running server's /mcp");
  AddFlag(command, env_names, "api-address", &options->api_address, "The server's API address");
  AddFlag(command, env_names, "token", &options->token, "A token with read scope");
  AddOption(command, "--timeout-sec", &options->timeout_sec, "How long to wait for each answer")
      ->capture_default_str();
  return Command{command, [options] { return RunMcp(*options); }};
}

}  // namespace strata::cli
