#pragma once

// JSON-RPC 2.0 messages as the MCP Streamable HTTP transport carries them
// (docs/mcp.md): one message per POST body, a request (with an id), a
// notification (no id) or a response (result or error, sent by a client
// only to answer a server request, which strata never makes). Batches
// (a JSON array) are not part of MCP since 2025-06-18 and are refused.
//
// Thread-safety: stateless functions. Errors: ParseJsonRpc returns a
// JsonRpcError with the code JSON-RPC assigns (-32700 parse error, -32600
// invalid request) and, when the message had a usable id, that id.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace strata::api {

inline constexpr int kJsonRpcParseError = -32700;
inline constexpr int kJsonRpcInvalidRequest = -32600;
inline constexpr int kJsonRpcMethodNotFound = -32601;
inline constexpr int kJsonRpcInvalidParams = -32602;
inline constexpr int kJsonRpcInternalError = -32603;

// The most bytes of one message strata reads (a POST /mcp body).
inline constexpr size_t kMaxJsonRpcMessageBytes = size_t{1} << 20;

struct JsonRpcMessage {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  // The id as minified JSON text (a string or an integer); "" for a
  // notification.
  std::string id;
  std::string method;
  // The params object as minified JSON text; "{}" when absent.
  std::string params = "{}";
};

struct JsonRpcError {
  int code = kJsonRpcInvalidRequest;
  std::string message;
  // Minified JSON text of the request's id, "null" when it had none that
  // could be read.
  std::string id = "null";
};

// Parses one JSON-RPC 2.0 message.
std::variant<JsonRpcMessage, JsonRpcError> ParseJsonRpc(std::string_view body);

// {"jsonrpc":"2.0","id":<id>,"result":<result_json>}
std::string JsonRpcResultJson(std::string_view id, std::string_view result_json);
// {"jsonrpc":"2.0","id":<id>,"error":{"code":...,"message":...}}
std::string JsonRpcErrorJson(std::string_view id, int code, std::string_view message);

}  // namespace strata::api
