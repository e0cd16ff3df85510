// POST, GET and DELETE /mcp: the MCP server's Streamable HTTP transport
// (docs/mcp.md). A POST is answered with plain JSON (one JSON-RPC response
// per request); GET opens the session's stream of server-initiated
// messages (mcp_streams.h), which carries the log notifications of
// logging/setLevel.

#include <chrono>
#include <optional>
#include <set>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/mcp_jsonrpc.h"
#include "api/mcp_streams.h"
#include "api/mcp_tools.h"
#include "api/params.h"
#include "api/service_health.h"
#include "control/token.h"
#include "otlp/json_writer.h"
#include "simdjson.h"
#include "storage/storage.h"

namespace strata::api {
namespace {

constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";

server::HttpResponse JsonRpcAnswer(int status, std::string body) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  return response;
}

// A JSON-RPC error in an HTTP error: for requests the transport refuses
// before any method runs.
server::HttpResponse TransportError(int status, std::string_view message,
                                    std::string_view id = "null") {
  return JsonRpcAnswer(status, JsonRpcErrorJson(id, kJsonRpcInvalidRequest, message));
}

void AppendParam(std::string_view name, std::string_view value, std::string* query) {
  if (!query->empty()) query->push_back('&');
  PercentEncode(name, query);
  query->push_back('=');
  PercentEncode(value, query);
}

// A tool's arguments as the query parameters of the REST endpoints: each
// member's string, integer or boolean text under its name, and each member
// of `attributes` as attr.<key>. InvalidArgument for other shapes.
absl::StatusOr<QueryParams> ArgumentsToParams(simdjson::dom::element arguments) {
  std::string query;
  simdjson::dom::object object;
  if (arguments.get_object().get(object) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("arguments: must be an object");
  }
  for (simdjson::dom::key_value_pair member : object) {
    const std::string_view name = member.key;
    if (name == "attributes") {
      simdjson::dom::object attributes;
      if (member.value.get_object().get(attributes) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError("attributes: must be an object of strings");
      }
      for (simdjson::dom::key_value_pair attribute : attributes) {
        std::string_view value;
        if (attribute.value.get_string().get(value) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError(
              absl::StrCat("attributes.", std::string(attribute.key), ": must be a string"));
        }
        AppendParam(absl::StrCat("attr.", std::string(attribute.key)), value, &query);
      }
      continue;
    }
    std::string_view text;
    int64_t integer = 0;
    bool flag = false;
    if (member.value.get_string().get(text) == simdjson::SUCCESS) {
      AppendParam(name, text, &query);
    } else if (member.value.get_int64().get(integer) == simdjson::SUCCESS) {
      AppendParam(name, absl::StrCat(integer), &query);
    } else if (member.value.get_bool().get(flag) == simdjson::SUCCESS) {
      AppendParam(name, flag ? "true" : "false", &query);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(name), ": must be a string, an integer or a boolean"));
    }
  }
  return QueryParams::Parse(query);
}

// The credential a session is bound to: the hash of the token presented,
// the browser session's id, or the OAuth grant an access token belongs to
// (so a refreshed access token keeps the session).
std::string McpCredentialKey(const server::HttpRequest& request, const Caller& caller) {
  switch (caller.kind) {
    case Caller::Kind::kToken: {
      if (caller.oauth_grant != 0) return absl::StrCat("oauth:", caller.oauth_grant);
      const control::TokenHash hash = control::HashToken(PresentedToken(request));
      return absl::StrCat("token:", absl::BytesToHexString(absl::string_view(
                                        reinterpret_cast<const char*>(hash.data()), hash.size())));
    }
    case Caller::Kind::kSession:
      return absl::StrCat("session:", caller.session.session_id);
    case Caller::Kind::kAnonymous:
      break;
  }
  return "anonymous";
}

// True for the names a browser uses for this machine: localhost,
// 127.0.0.0/8 and [::1], with or without a port.
bool IsLoopbackHost(std::string_view host) {
  if (host.starts_with("[")) {
    const size_t end = host.find(']');
    return end != std::string_view::npos && host.substr(1, end - 1) == "::1";
  }
  host = host.substr(0, host.find(':'));
  if (absl::EqualsIgnoreCase(absl::string_view(host.data(), host.size()), "localhost")) return true;
  static const std::vector<IpNetwork> kLoopback = *ParseTrustedProxies("127.0.0.0/8");
  return AddressIn(host, kLoopback);
}

// The host of an Origin ("http://host:port"), or "" when it has no scheme.
std::string_view OriginHost(std::string_view origin) {
  const size_t scheme = origin.find("://");
  return scheme == std::string_view::npos ? std::string_view() : origin.substr(scheme + 3);
}

std::string TextContent(std::string_view text, bool is_error) {
  std::string out = R"({"content":[{"type":"text","text":")";
  otlp::JsonWriter::AppendEscaped(text, &out);
  out.append(R"("}],"isError":)");
  out.append(is_error ? "true}" : "false}");
  return out;
}

}  // namespace

absl::Status Api::CheckOwnOrigin(const server::HttpRequest& request) const {
  // DNS rebinding: a browser page of another origin must not reach a
  // local strata, so an Origin header must name this server.
  if (const std::string_view origin = request.Header("Origin"); !origin.empty()) {
    const RequestView view = View(request);
    const std::string expected = absl::StrCat(view.secure ? "https://" : "http://", view.host);
    if (!absl::EqualsIgnoreCase(absl::string_view(origin.data(), origin.size()), expected)) {
      return absl::PermissionDeniedError(
          absl::StrCat("Origin ", QuoteForError(origin), " is not this server's (", expected, ")"));
    }
    // DNS rebinding proper: a page of evil.example whose name now resolves
    // to 127.0.0.1 sends Host and Origin evil.example, which agree. A
    // browser on this machine reaches strata by a loopback name, so a
    // loopback client whose Origin names another host is refused.
    static const std::vector<IpNetwork> kLoopbackPeers = *ParseTrustedProxies("127.0.0.0/8, ::1");
    if (AddressIn(view.address, kLoopbackPeers) && !IsLoopbackHost(OriginHost(origin))) {
      return absl::PermissionDeniedError(
          absl::StrCat("Origin ", QuoteForError(origin),
                       " is not a loopback name, from a client on this machine: refused "
                       "as DNS rebinding"));
    }
  }
  return absl::OkStatus();
}

void Api::McpStreamEndpoint(server::HttpRequest request, server::HttpResponder responder) {
  const absl::StatusOr<Caller> caller = Admit(request);
  if (!caller.ok()) {
    responder.Respond(RefusalOf(request, caller.status()));
    return;
  }
  if (absl::Status own = CheckOwnOrigin(request); !own.ok()) {
    responder.Respond(TransportError(403, std::string(own.message())));
    return;
  }
  const std::string_view version = request.Header(kVersionHeader);
  if (!version.empty() && !IsMcpProtocolVersion(version)) {
    responder.Respond(TransportError(
        400, absl::StrCat("MCP-Protocol-Version: ", QuoteForError(version), " is not supported")));
    return;
  }
  const std::string session(request.Header(kSessionHeader));
  if (session.empty()) {
    responder.Respond(TransportError(400, "Mcp-Session-Id: required (send initialize first)"));
    return;
  }
  const std::string credential = McpCredentialKey(request, *caller);
  if (!mcp_sessions_->Touch(session, options_.now(), credential)) {
    responder.Respond(
        TransportError(404, "no such session (it ended or expired); initialize again"));
    return;
  }
  mcp_streams_->Open(session, credential, request.Header("Last-Event-ID"), std::move(responder));
}

server::HttpResponse Api::McpEndpoint(const server::HttpRequest& request, const Caller& caller) {
  if (absl::Status own = CheckOwnOrigin(request); !own.ok()) {
    return TransportError(403, std::string(own.message()));
  }
  const std::string session(request.Header(kSessionHeader));
  const std::string credential = McpCredentialKey(request, caller);
  if (request.method == "DELETE") {
    if (session.empty()) return TransportError(400, "Mcp-Session-Id: required");
    if (!mcp_sessions_->End(session, credential)) return TransportError(404, "no such session");
    mcp_streams_->End(session);
    return JsonRpcAnswer(200, "{}");
  }
  const std::string_view body = request.body != nullptr ? *request.body : std::string_view();
  if (body.size() > kMaxJsonRpcMessageBytes) {
    return TransportError(
        413, absl::StrCat("the message is larger than ", kMaxJsonRpcMessageBytes, " bytes"));
  }
  std::variant<JsonRpcMessage, JsonRpcError> parsed = ParseJsonRpc(body);
  if (const JsonRpcError* error = std::get_if<JsonRpcError>(&parsed)) {
    return JsonRpcAnswer(400, JsonRpcErrorJson(error->id, error->code, error->message));
  }
  const JsonRpcMessage& message = std::get<JsonRpcMessage>(parsed);
  const std::string_view version = request.Header(kVersionHeader);
  if (!version.empty() && !IsMcpProtocolVersion(version)) {
    return TransportError(
        400, absl::StrCat("MCP-Protocol-Version: ", QuoteForError(version), " is not supported"),
        message.id.empty() ? "null" : message.id);
  }
  const int64_t now = options_.now();
  if (message.kind == JsonRpcMessage::Kind::kRequest && message.method == "initialize") {
    simdjson::dom::parser parser;
    simdjson::dom::element params;
    std::string agreed(kMcpProtocolVersions[0]);
    if (parser.parse(message.params).get(params) == simdjson::SUCCESS) {
      std::string_view asked;
      if (params["protocolVersion"].get_string().get(asked) == simdjson::SUCCESS &&
          IsMcpProtocolVersion(asked)) {
        agreed = std::string(asked);
      }
    }
    const std::string id = mcp_sessions_->Create(now, agreed, credential);
    const std::string result = absl::StrCat(
        R"({"protocolVersion":")", agreed,
        R"(","capabilities":{"tools":{"listChanged":false},"resources":{"listChanged":false},)"
        R"("prompts":{"listChanged":false},"logging":{},"completions":{}},"serverInfo":{"name":"strata","title":"strata",)"
        R"("version":"1"},"instructions":"strata holds OpenTelemetry traces, logs and metrics. )"
        R"(Start with services_overview, then service_performance or find_traces, get_trace )"
        R"(and search_logs. Times are RFC 3339 UTC; durations are in ms."})");
    server::HttpResponse response = JsonRpcAnswer(200, JsonRpcResultJson(message.id, result));
    response.headers.emplace_back(std::string(kSessionHeader), id);
    return response;
  }
  if (session.empty()) {
    return TransportError(400, "Mcp-Session-Id: required (send initialize first)",
                          message.id.empty() ? "null" : message.id);
  }
  if (!mcp_sessions_->Touch(session, now, credential)) {
    return TransportError(404, "no such session (it ended or expired); initialize again",
                          message.id.empty() ? "null" : message.id);
  }
  if (message.kind != JsonRpcMessage::Kind::kRequest) {
    server::HttpResponse accepted = JsonRpcAnswer(202, "");
    return accepted;
  }
  const auto started = std::chrono::steady_clock::now();
  McpOutcome outcome = McpRequest(message.method, message.params);
  if (outcome.error_code != 0) {
    return JsonRpcAnswer(200,
                         JsonRpcErrorJson(message.id, outcome.error_code, outcome.error_message));
  }
  if (message.method == "logging/setLevel" || message.method == "tools/call") {
    simdjson::dom::parser parser;
    simdjson::dom::element params;
    std::string_view text;
    if (parser.parse(message.params).get(params) != simdjson::SUCCESS) {
      // McpRequest parsed it already: not reached.
    } else if (message.method == "logging/setLevel") {
      if (params["level"].get_string().get(text) == simdjson::SUCCESS) {
        mcp_streams_->SetLogLevel(session, text);
      }
    } else if (params["name"].get_string().get(text) == simdjson::SUCCESS) {
      // One log message per tool call: which tool, how long, how large.
      const bool failed = outcome.result.ends_with(R"("isError":true})");
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      std::string data = R"({"tool":")";
      otlp::JsonWriter::AppendEscaped(text, &data);
      absl::StrAppend(&data, R"(","duration_ms":)", static_cast<int64_t>(ms + 0.5),
                      R"(,"result_bytes":)", outcome.result.size(), R"(,"is_error":)",
                      failed ? "true" : "false", "}");
      mcp_streams_->Log(session, failed ? "warning" : "info", "strata.tools", data);
    }
  }
  return JsonRpcAnswer(200, JsonRpcResultJson(message.id, outcome.result));
}

Api::McpOutcome Api::McpComplete(std::string_view params_json) {
  // Completes the prompts' `service` argument from the services with
  // spans in the last 7 days (as Jaeger's service list); anything else
  // has no completions.
  constexpr size_t kMaxValues = 100;  // the specification's cap
  constexpr int64_t kWindowNanos = int64_t{7} * 86'400 * 1'000'000'000;
  simdjson::dom::parser parser;
  simdjson::dom::element params;
  if (parser.parse(params_json.data(), params_json.size()).get(params) != simdjson::SUCCESS) {
    return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "params: not JSON"};
  }
  std::string_view type;
  std::string_view name;
  std::string_view argument;
  std::string_view value;
  if (params["ref"]["type"].get_string().get(type) != simdjson::SUCCESS ||
      params["argument"]["name"].get_string().get(argument) != simdjson::SUCCESS ||
      params["argument"]["value"].get_string().get(value) != simdjson::SUCCESS) {
    return McpOutcome{.error_code = kJsonRpcInvalidParams,
                      .error_message = "ref.type, argument.name and argument.value: required"};
  }
  std::vector<std::string> values;
  size_t total = 0;
  storage::Storage* storage = options_.storage ? options_.storage() : nullptr;
  if (type == "ref/prompt" && params["ref"]["name"].get_string().get(name) == simdjson::SUCCESS &&
      !McpPromptText(name, "-").empty() && argument == "service" && storage != nullptr &&
      options_.fs != nullptr) {
    const std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
    const int64_t end = options_.now() + int64_t{60} * 1'000'000'000;
    const MinuteWindow minutes =
        MinutesOf(static_cast<uint64_t>(std::max<int64_t>(0, end - kWindowNanos)),
                  static_cast<uint64_t>(std::max<int64_t>(1, end)));
    absl::StatusOr<RollupSet> rows = rollups_->ForWindow(*options_.fs, *snapshot, minutes);
    if (!rows.ok()) {
      return McpOutcome{.error_code = kJsonRpcInternalError,
                        .error_message = std::string(rows.status().message())};
    }
    std::set<std::string> names;
    for (const ServiceRed& service : ServicesRed(*rows, minutes)) {
      if (service.spans.count() > 0 && service.name.starts_with(value)) {
        names.insert(service.name);
      }
    }
    total = names.size();
    for (const std::string& service : names) {
      if (values.size() == kMaxValues) break;
      values.push_back(service);
    }
  }
  std::string out = R"({"completion":{"values":[)";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    otlp::JsonWriter::AppendEscaped(values[i], &out);
    out.push_back('"');
  }
  absl::StrAppend(&out, R"(],"total":)", total, R"(,"hasMore":)",
                  total > values.size() ? "true" : "false", "}}");
  return McpOutcome{.result = std::move(out)};
}

Api::McpOutcome Api::McpRequest(std::string_view method, std::string_view params_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element params;
  if (parser.parse(params_json.data(), params_json.size()).get(params) != simdjson::SUCCESS) {
    return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "params: not JSON"};
  }
  if (method == "ping") return McpOutcome{.result = "{}"};
  if (method == "logging/setLevel") {
    // McpEndpoint records the level for the session; its log messages go
    // out on the session's GET stream (mcp_streams.h).
    std::string_view level;
    if (params["level"].get_string().get(level) != simdjson::SUCCESS) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "level: required"};
    }
    if (McpLogLevelRank(level) < 0) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams,
                        .error_message = absl::StrCat("level: ", QuoteForError(level),
                                                      " is not an MCP log level (debug, info, "
                                                      "notice, warning, error, critical, alert, "
                                                      "emergency)")};
    }
    return McpOutcome{.result = "{}"};
  }
  if (method == "completion/complete") return McpComplete(params_json);
  if (method == "tools/list") return McpOutcome{.result = std::string(McpToolsListJson())};
  if (method == "resources/list") {
    return McpOutcome{.result = std::string(McpResourcesListJson())};
  }
  if (method == "resources/templates/list")
    return McpOutcome{.result = R"({"resourceTemplates":[]})"};
  if (method == "prompts/list") return McpOutcome{.result = std::string(McpPromptsListJson())};
  if (method == "prompts/get") {
    std::string_view name;
    std::string_view service;
    if (params["name"].get_string().get(name) != simdjson::SUCCESS) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "name: required"};
    }
    if (McpPromptText(name, "-").empty()) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams,
                        .error_message = absl::StrCat("no such prompt: ", std::string(name))};
    }
    if (params["arguments"]["service"].get_string().get(service) != simdjson::SUCCESS) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams,
                        .error_message = "arguments.service: required"};
    }
    const std::string text = McpPromptText(name, service);
    if (text.empty()) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "no such prompt"};
    }
    std::string out = R"({"messages":[{"role":"user","content":{"type":"text","text":")";
    otlp::JsonWriter::AppendEscaped(text, &out);
    out.append(R"("}}]})");
    return McpOutcome{.result = std::move(out)};
  }
  const bool is_tool = method == "tools/call";
  if (!is_tool && method != "resources/read") {
    return McpOutcome{.error_code = kJsonRpcMethodNotFound,
                      .error_message = absl::StrCat("no such method: ", std::string(method))};
  }
  std::string_view name;
  simdjson::dom::element arguments;
  simdjson::dom::parser empty_parser;
  if (is_tool) {
    if (params["name"].get_string().get(name) != simdjson::SUCCESS) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "name: required"};
    }
    if (params["arguments"].get(arguments) != simdjson::SUCCESS &&
        empty_parser.parse(std::string_view("{}")).get(arguments) != simdjson::SUCCESS) {
      return McpOutcome{.error_code = kJsonRpcInternalError, .error_message = "internal"};
    }
  } else {
    std::string_view uri;
    if (params["uri"].get_string().get(uri) != simdjson::SUCCESS) {
      return McpOutcome{.error_code = kJsonRpcInvalidParams, .error_message = "uri: required"};
    }
    name = uri;
  }
  if (is_tool && !IsMcpTool(name)) {
    return McpOutcome{.error_code = kJsonRpcInvalidParams,
                      .error_message = absl::StrCat("no such tool: ", std::string(name))};
  }
  storage::Storage* storage = options_.storage ? options_.storage() : nullptr;
  const bool ready = storage != nullptr && options_.pool != nullptr && options_.fs != nullptr;
  if (!is_tool) {
    std::string text;
    std::string mime = "text/markdown";
    if (name == "strata://docs/sql") {
      text = std::string(McpSqlHelpText());
    } else if (name == "strata://services" && ready) {
      const std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
      absl::StatusOr<QueryParams> none = QueryParams::Parse("");
      absl::StatusOr<std::string> services = McpServicesOverview(*none, *snapshot);
      if (!services.ok()) {
        return McpOutcome{.error_code = kJsonRpcInternalError,
                          .error_message = std::string(services.status().message())};
      }
      text = *std::move(services);
      mime = "application/json";
    } else {
      // -32002: the code the MCP specification gives a resource not found.
      return McpOutcome{.error_code = -32002,
                        .error_message = absl::StrCat("no such resource: ", std::string(name))};
    }
    std::string out = R"({"contents":[{"uri":")";
    otlp::JsonWriter::AppendEscaped(name, &out);
    out.append(R"(","mimeType":")").append(mime).append(R"(","text":")");
    otlp::JsonWriter::AppendEscaped(text, &out);
    out.append(R"("}]})");
    return McpOutcome{.result = std::move(out)};
  }
  if (!ready) return McpOutcome{.result = TextContent("strata is recovering; retry shortly", true)};
  absl::StatusOr<QueryParams> args = ArgumentsToParams(arguments);
  if (!args.ok()) {
    return McpOutcome{.result = TextContent(std::string(args.status().message()), true)};
  }
  // Pinned until the answer is built: nothing the tool reads is deleted.
  const std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
  absl::StatusOr<std::string> text = McpCallTool(name, *args, *snapshot);
  if (!text.ok()) {
    return McpOutcome{.result =
                          TextContent(absl::StrCat(absl::StatusCodeToString(text.status().code()),
                                                   ": ", text.status().message()),
                                      true)};
  }
  return McpOutcome{.result = TextContent(*text, false)};
}

}  // namespace strata::api
