#include "api/mcp_jsonrpc.h"

#include "absl/strings/str_cat.h"
#include "otlp/json_writer.h"
#include "simdjson.h"

namespace strata::api {
namespace {

JsonRpcError Error(int code, std::string message, std::string id = "null") {
  return JsonRpcError{.code = code, .message = std::move(message), .id = std::move(id)};
}

}  // namespace

std::variant<JsonRpcMessage, JsonRpcError> ParseJsonRpc(std::string_view body) {
  if (body.size() > kMaxJsonRpcMessageBytes) {
    return Error(kJsonRpcInvalidRequest,
                 absl::StrCat("the message is larger than ", kMaxJsonRpcMessageBytes, " bytes"));
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto error = parser.parse(body.data(), body.size()).get(doc); error) {
    return Error(kJsonRpcParseError,
                 absl::StrCat("not valid JSON: ", simdjson::error_message(error)));
  }
  if (doc.is_array()) {
    return Error(kJsonRpcInvalidRequest,
                 "JSON-RPC batches are not part of this MCP version; send one message per POST");
  }
  simdjson::dom::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) {
    return Error(kJsonRpcInvalidRequest, "a JSON-RPC message is a JSON object");
  }
  JsonRpcMessage message;
  bool has_id = false;
  bool has_result = false;
  std::optional<std::string_view> version;
  std::optional<std::string_view> method;
  for (simdjson::dom::key_value_pair member : object) {
    if (member.key == "id") {
      if (!member.value.is_string() && !member.value.is_int64() && !member.value.is_uint64()) {
        return Error(kJsonRpcInvalidRequest, "id: must be a string or an integer");
      }
      message.id = simdjson::minify(member.value);
      has_id = true;
    }
  }
  const std::string id = has_id ? message.id : "null";
  for (simdjson::dom::key_value_pair member : object) {
    if (member.key == "jsonrpc") {
      std::string_view text;
      if (member.value.get_string().get(text) != simdjson::SUCCESS) {
        return Error(kJsonRpcInvalidRequest, "jsonrpc: must be the string \"2.0\"", id);
      }
      version = text;
    } else if (member.key == "method") {
      std::string_view text;
      if (member.value.get_string().get(text) != simdjson::SUCCESS) {
        return Error(kJsonRpcInvalidRequest, "method: must be a string", id);
      }
      method = text;
    } else if (member.key == "params") {
      if (!member.value.is_object()) {
        return Error(kJsonRpcInvalidRequest, "params: must be an object", id);
      }
      message.params = simdjson::minify(member.value);
    } else if (member.key == "result" || member.key == "error") {
      has_result = true;
    }
  }
  if (!version.has_value() || *version != "2.0") {
    return Error(kJsonRpcInvalidRequest, "jsonrpc: must be \"2.0\"", id);
  }
  if (has_result) {
    if (!has_id || method.has_value()) {
      return Error(kJsonRpcInvalidRequest, "a response has an id and no method", id);
    }
    message.kind = JsonRpcMessage::Kind::kResponse;
    return message;
  }
  if (!method.has_value()) return Error(kJsonRpcInvalidRequest, "method: required", id);
  message.method = std::string(*method);
  message.kind = has_id ? JsonRpcMessage::Kind::kRequest : JsonRpcMessage::Kind::kNotification;
  return message;
}

std::string JsonRpcResultJson(std::string_view id, std::string_view result_json) {
  return absl::StrCat("{\"jsonrpc\":\"2.0\",\"id\":", std::string(id),
                      ",\"result\":", std::string(result_json), "}");
}

std::string JsonRpcErrorJson(std::string_view id, int code, std::string_view message) {
  std::string out = absl::StrCat("{\"jsonrpc\":\"2.0\",\"id\":", std::string(id),
                                 ",\"error\":{\"code\":", code, ",\"message\":\"");
  otlp::JsonWriter::AppendEscaped(message, &out);
  out.append("\"}}");
  return out;
}

}  // namespace strata::api
