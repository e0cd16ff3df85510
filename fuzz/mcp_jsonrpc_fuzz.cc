// Fuzz target for the MCP endpoint's JSON-RPC message parser
// (src/api/mcp_jsonrpc.cc): any bytes give a message or an error, never a
// crash; an error carries a JSON-RPC code and an id that is valid JSON; a
// message's id, params and the answers built around them parse again as
// JSON.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "api/mcp_jsonrpc.h"
#include "simdjson.h"

namespace {

bool IsJson(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(text).get(doc) == simdjson::SUCCESS;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::api;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::variant<JsonRpcMessage, JsonRpcError> parsed = ParseJsonRpc(input);
  if (const JsonRpcError* error = std::get_if<JsonRpcError>(&parsed)) {
    if (error->code != kJsonRpcParseError && error->code != kJsonRpcInvalidRequest) {
      __builtin_trap();
    }
    if (!IsJson(JsonRpcErrorJson(error->id, error->code, error->message))) __builtin_trap();
    return 0;
  }
  const JsonRpcMessage& message = std::get<JsonRpcMessage>(parsed);
  if (!IsJson(message.params)) __builtin_trap();
  const bool has_id = !message.id.empty();
  if (has_id != (message.kind != JsonRpcMessage::Kind::kNotification)) __builtin_trap();
  if (has_id && !IsJson(JsonRpcResultJson(message.id, message.params))) __builtin_trap();
  return 0;
}
