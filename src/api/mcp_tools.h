#pragma once

// The MCP server's catalogue (docs/mcp.md): the tools with their JSON
// Schema inputs, the resources and the prompts, as the JSON that
// tools/list, resources/list and prompts/list answer, and the protocol
// versions the /mcp endpoint speaks.
//
// Thread-safety: constants. Errors: none.

#include <string>
#include <string_view>

namespace strata::api {

// Newest first; `initialize` agrees on the client's version when it is one
// of these, else on the first. 2025-03-26 is left out: it requires
// JSON-RPC batches, which the endpoint does not take.
inline constexpr std::string_view kMcpProtocolVersions[] = {"2025-11-25", "2025-06-18"};
bool IsMcpProtocolVersion(std::string_view version);

// Whether `name` is one of the tools of McpToolsListJson().
bool IsMcpTool(std::string_view name);
// {"tools":[...]}
std::string_view McpToolsListJson();
// {"resources":[...]}
std::string_view McpResourcesListJson();
// {"prompts":[...]}
std::string_view McpPromptsListJson();
// The text of prompt `name` with its `service` argument, or "" when there
// is no such prompt.
std::string McpPromptText(std::string_view name, std::string_view service);
// The SQL help resource (strata://docs/sql).
std::string_view McpSqlHelpText();

}  // namespace strata::api
