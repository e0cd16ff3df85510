#pragma once

// The WebSocket (RFC 6455) frames strata's server side writes and reads,
// without Boost: the HTTP adapter (http_adapter.cc) upgrades a connection
// and then frames what a streamed response (HttpStream) is given, and reads
// what the client sends with ParseClientFrame().
//
// A strata WebSocket only sends: a client is expected to send control
// frames (close, ping, pong) and nothing else. Data frames are read and
// discarded so that a client library's stray message does not break the
// stream, but a frame whose payload is over the caller's limit ends the
// connection (1009), and anything RFC 6455 forbids (an unmasked client
// frame, reserved bits, an unknown opcode, a fragmented or oversized control
// frame) ends it with 1002.
//
// Thread-safety: reentrant. Errors: ParseClientFrame returns
// InvalidArgument for a protocol error and ResourceExhausted for a payload
// over the limit; WebSocketUpgradeHead InvalidArgument for a request that is
// not a version-13 upgrade.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::server {

struct HttpRequest;
struct HttpResponse;

enum class WebSocketOpcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// Close codes (RFC 6455 section 7.4.1) strata sends.
inline constexpr uint16_t kWebSocketNormalClose = 1000;
inline constexpr uint16_t kWebSocketGoingAway = 1001;
inline constexpr uint16_t kWebSocketProtocolError = 1002;
inline constexpr uint16_t kWebSocketPolicyViolation = 1008;
inline constexpr uint16_t kWebSocketMessageTooBig = 1009;
inline constexpr uint16_t kWebSocketInternalError = 1011;
inline constexpr uint16_t kWebSocketTryAgainLater = 1013;

// A control frame's payload is at most this long (RFC 6455 5.5).
inline constexpr size_t kWebSocketMaxControlPayload = 125;

// One unfragmented server frame (FIN set, unmasked) carrying `payload`.
std::string WebSocketFrame(WebSocketOpcode opcode, std::string_view payload);

// A close frame: the code, then `reason` cut to fit a control frame (at a
// UTF-8 character boundary).
std::string WebSocketCloseFrame(uint16_t code, std::string_view reason);

struct WebSocketClientFrame {
  WebSocketOpcode opcode = WebSocketOpcode::kClose;
  bool fin = true;
  std::string payload;  // unmasked
  size_t consumed = 0;  // bytes of the input the frame took
};

// The first frame of `bytes` (what the client sent and is not yet
// consumed); nullopt when `bytes` holds only part of one. A header whose
// payload length is over `max_payload` is refused as soon as it is read,
// so the caller never buffers more than a header plus `max_payload`.
[[nodiscard]] absl::StatusOr<std::optional<WebSocketClientFrame>> ParseClientFrame(
    std::string_view bytes, uint64_t max_payload);

// The code and reason of a close frame's payload: 1005 (no code) for an
// empty payload; InvalidArgument for a payload of one byte or a code a
// peer must not send.
struct WebSocketClose {
  uint16_t code = 1005;
  std::string reason;
};
[[nodiscard]] absl::StatusOr<WebSocketClose> ParseClosePayload(std::string_view payload);

// Whether `request` asks for a WebSocket (GET with Upgrade: websocket,
// Connection: upgrade, Sec-WebSocket-Version: 13 and a key).
bool IsWebSocketUpgrade(const HttpRequest& request);

// The 101 Switching Protocols head that accepts `request`'s upgrade (with
// Sec-WebSocket-Accept), for HttpResponder::Stream() with
// HttpStreamOptions::websocket. InvalidArgument when the request is not a
// valid upgrade (the message says what is missing).
[[nodiscard]] absl::StatusOr<HttpResponse> WebSocketUpgradeHead(const HttpRequest& request);

// base64(SHA-1(key + RFC 6455's GUID)): the Sec-WebSocket-Accept of a
// Sec-WebSocket-Key (http_adapter.cc, which has the SHA-1).
std::string WebSocketAcceptValue(std::string_view key);

}  // namespace strata::server
