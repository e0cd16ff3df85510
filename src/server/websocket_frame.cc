#include "server/websocket_frame.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace strata::server {
namespace {

bool IsKnownOpcode(uint8_t opcode) { return opcode <= 0x2 || (opcode >= 0x8 && opcode <= 0xA); }

}  // namespace

std::string WebSocketFrame(WebSocketOpcode opcode, std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 10);
  out.push_back(static_cast<char>(0x80 | static_cast<uint8_t>(opcode)));
  const uint64_t size = payload.size();
  if (size < 126) {
    out.push_back(static_cast<char>(size));
  } else if (size <= 0xFFFF) {
    out.push_back(static_cast<char>(126));
    out.push_back(static_cast<char>(size >> 8));
    out.push_back(static_cast<char>(size & 0xFF));
  } else {
    out.push_back(static_cast<char>(127));
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((size >> shift) & 0xFF));
    }
  }
  out.append(payload);
  return out;
}

std::string WebSocketCloseFrame(uint16_t code, std::string_view reason) {
  size_t keep = std::min(reason.size(), kWebSocketMaxControlPayload - 2);
  // Do not cut a UTF-8 character in two: back up over continuation bytes.
  while (keep > 0 && keep < reason.size() && (static_cast<uint8_t>(reason[keep]) & 0xC0) == 0x80) {
    --keep;
  }
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code & 0xFF));
  payload.append(reason.substr(0, keep));
  return WebSocketFrame(WebSocketOpcode::kClose, payload);
}

absl::StatusOr<std::optional<WebSocketClientFrame>> ParseClientFrame(std::string_view bytes,
                                                                     uint64_t max_payload) {
  if (bytes.size() < 2) return std::nullopt;
  const auto b0 = static_cast<uint8_t>(bytes[0]);
  const auto b1 = static_cast<uint8_t>(bytes[1]);
  if ((b0 & 0x70) != 0) {
    return absl::InvalidArgumentError("a WebSocket frame sets reserved bits (no extension agreed)");
  }
  const uint8_t opcode = b0 & 0x0F;
  if (!IsKnownOpcode(opcode)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown WebSocket opcode ", opcode));
  }
  const bool fin = (b0 & 0x80) != 0;
  const bool control = opcode >= 0x8;
  if ((b1 & 0x80) == 0) {
    return absl::InvalidArgumentError("a client's WebSocket frame must be masked");
  }
  uint64_t size = b1 & 0x7F;
  size_t at = 2;
  if (size == 126) {
    if (bytes.size() < at + 2) return std::nullopt;
    size = (static_cast<uint64_t>(static_cast<uint8_t>(bytes[2])) << 8) |
           static_cast<uint8_t>(bytes[3]);
    at += 2;
    if (size < 126) return absl::InvalidArgumentError("a WebSocket length is not minimal");
  } else if (size == 127) {
    if (bytes.size() < at + 8) return std::nullopt;
    size = 0;
    for (size_t i = 0; i < 8; ++i) size = (size << 8) | static_cast<uint8_t>(bytes[at + i]);
    at += 8;
    if ((size >> 63) != 0) return absl::InvalidArgumentError("a WebSocket length sets its top bit");
    if (size <= 0xFFFF) return absl::InvalidArgumentError("a WebSocket length is not minimal");
  }
  if (control && (!fin || size > kWebSocketMaxControlPayload)) {
    return absl::InvalidArgumentError("a WebSocket control frame is fragmented or too long");
  }
  if (size > max_payload) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a WebSocket frame of ", size, " bytes is over the limit of ", max_payload));
  }
  if (bytes.size() < at + 4) return std::nullopt;
  const std::string_view mask = bytes.substr(at, 4);
  at += 4;
  if (bytes.size() - at < size) return std::nullopt;
  WebSocketClientFrame frame;
  frame.opcode = static_cast<WebSocketOpcode>(opcode);
  frame.fin = fin;
  frame.payload.assign(bytes.substr(at, size));
  for (size_t i = 0; i < frame.payload.size(); ++i) frame.payload[i] ^= mask[i % 4];
  frame.consumed = at + size;
  return frame;
}

absl::StatusOr<WebSocketClose> ParseClosePayload(std::string_view payload) {
  WebSocketClose out;
  if (payload.empty()) return out;
  if (payload.size() == 1) return absl::InvalidArgumentError("a WebSocket close payload of 1 byte");
  out.code = static_cast<uint16_t>((static_cast<uint8_t>(payload[0]) << 8) |
                                   static_cast<uint8_t>(payload[1]));
  // RFC 6455 7.4: 1000-1003, 1007-1011 and 3000-4999 may be sent.
  const bool allowed = (out.code >= 1000 && out.code <= 1003) ||
                       (out.code >= 1007 && out.code <= 1011) ||
                       (out.code >= 3000 && out.code <= 4999);
  if (!allowed) return absl::InvalidArgumentError(absl::StrCat("WebSocket close code ", out.code));
  out.reason.assign(payload.substr(2));
  return out;
}

}  // namespace strata::server
