// The WebSocket upgrade handshake (websocket_frame.h): apart from the frame
// codec so that the codec's fuzz target needs nothing of the HTTP server.

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "server/http_adapter.h"
#include "server/websocket_frame.h"

namespace strata::server {
namespace {

// Whether a comma-separated header value lists `token` (any letter case).
bool ListsToken(std::string_view value, std::string_view token) {
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(value.data(), value.size()), ',')) {
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(part),
                               absl::string_view(token.data(), token.size()))) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool IsWebSocketUpgrade(const HttpRequest& request) {
  return request.method == "GET" && ListsToken(request.Header("Upgrade"), "websocket") &&
         ListsToken(request.Header("Connection"), "upgrade");
}

absl::StatusOr<HttpResponse> WebSocketUpgradeHead(const HttpRequest& request) {
  if (!IsWebSocketUpgrade(request)) {
    return absl::InvalidArgumentError(
        "this endpoint is a WebSocket: send GET with Upgrade: websocket and Connection: upgrade");
  }
  if (request.Header("Sec-WebSocket-Version") != "13") {
    return absl::InvalidArgumentError("Sec-WebSocket-Version must be 13");
  }
  const std::string_view key = request.Header("Sec-WebSocket-Key");
  // The key is 16 random bytes in base64: 24 characters.
  if (key.size() != 24)
    return absl::InvalidArgumentError("Sec-WebSocket-Key is missing or malformed");
  HttpResponse head;
  head.status = 101;
  head.content_type.clear();
  head.headers.emplace_back("Upgrade", "websocket");
  head.headers.emplace_back("Connection", "Upgrade");
  head.headers.emplace_back("Sec-WebSocket-Accept", WebSocketAcceptValue(key));
  return head;
}

}  // namespace strata::server
