// The WebSocket frame codec (websocket_frame.h) against RFC 6455's rules and
// examples: server frames' length encodings, masked client frames parsed
// whole or asked to wait for more bytes, what a client must not send
// refused, close payloads, and the handshake's accept value.

#include "server/websocket_frame.h"

#include <string>

#include "gtest/gtest.h"
#include "server/http_adapter.h"

namespace strata::server {
namespace {

// A client frame: FIN, `opcode`, masked with `mask`.
std::string ClientFrame(uint8_t opcode, const std::string& payload, bool fin = true,
                        std::string mask = std::string("\x11\x22\x33\x44", 4)) {
  std::string out;
  out.push_back(static_cast<char>((fin ? 0x80 : 0) | opcode));
  const size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(0x80 | n));
  } else if (n <= 0xFFFF) {
    out.push_back(static_cast<char>(0x80 | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  } else {
    out.push_back(static_cast<char>(0x80 | 127));
    for (int shift = 56; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((n >> shift) & 0xFF));
  }
  out += mask;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  return out;
}

TEST(WebSocketFrameTest, ServerFramesUseTheShortestLengthEncoding) {
  EXPECT_EQ(WebSocketFrame(WebSocketOpcode::kText, "Hello"), std::string("\x81\x05Hello"));
  const std::string medium = WebSocketFrame(WebSocketOpcode::kText, std::string(300, 'a'));
  EXPECT_EQ(medium.substr(0, 4), std::string("\x81\x7e\x01\x2c", 4));
  EXPECT_EQ(medium.size(), 4u + 300u);
  const std::string large = WebSocketFrame(WebSocketOpcode::kBinary, std::string(70000, 'a'));
  EXPECT_EQ(large.substr(0, 10), std::string("\x82\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10));
  EXPECT_EQ(WebSocketFrame(WebSocketOpcode::kPing, ""), std::string("\x89\x00", 2));
}

TEST(WebSocketFrameTest, CloseFramesCarryTheCodeAndACutReason) {
  EXPECT_EQ(WebSocketCloseFrame(1001, "bye"), std::string("\x88\x05\x03\xe9"
                                                          "bye",
                                                          7));
  // 125 bytes at most, not cutting a UTF-8 character ("é" is 2 bytes).
  std::string reason;
  for (int i = 0; i < 100; ++i) reason += "\xc3\xa9";
  const std::string frame = WebSocketCloseFrame(1000, reason);
  ASSERT_LE(frame.size(), 2u + 125u);
  const std::string kept = frame.substr(4);
  EXPECT_EQ(kept.size() % 2, 0u);
  EXPECT_EQ(kept, reason.substr(0, kept.size()));
}

TEST(WebSocketFrameTest, MaskedClientFramesParseAndPartialOnesWait) {
  const std::string wire = ClientFrame(0x9, "ping!") + ClientFrame(0x1, std::string(200, 'x'));
  auto first = ParseClientFrame(wire, 1024);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->opcode, WebSocketOpcode::kPing);
  EXPECT_EQ((*first)->payload, "ping!");
  const std::string rest = wire.substr((*first)->consumed);
  auto second = ParseClientFrame(rest, 1024);
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->payload, std::string(200, 'x'));
  EXPECT_EQ((*second)->consumed, rest.size());
  // Every proper prefix waits for more.
  for (size_t n = 0; n < rest.size(); ++n) {
    auto partial = ParseClientFrame(std::string_view(rest).substr(0, n), 1024);
    ASSERT_TRUE(partial.ok()) << n;
    EXPECT_FALSE(partial->has_value()) << n;
  }
}

TEST(WebSocketFrameTest, WhatAClientMustNotSendIsRefused) {
  // Unmasked.
  EXPECT_TRUE(absl::IsInvalidArgument(ParseClientFrame("\x81\x02hi", 1024).status()));
  // Reserved bits without an extension.
  std::string rsv = ClientFrame(0x1, "hi");
  rsv[0] = static_cast<char>(rsv[0] | 0x40);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseClientFrame(rsv, 1024).status()));
  // Unknown opcode.
  EXPECT_TRUE(absl::IsInvalidArgument(ParseClientFrame(ClientFrame(0x3, ""), 1024).status()));
  // A fragmented or long control frame.
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseClientFrame(ClientFrame(0x9, "", false), 1024).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseClientFrame(ClientFrame(0x9, std::string(126, 'p')), 1024).status()));
  // Over the limit: refused from the header alone, before the payload came.
  const std::string big = ClientFrame(0x2, std::string(5000, 'b'));
  EXPECT_TRUE(absl::IsResourceExhausted(ParseClientFrame(big.substr(0, 8), 4096).status()));
  // A length that is not minimal.
  std::string padded("\x81\xfe\x00\x05\x00\x00\x00\x00hello", 13);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseClientFrame(padded, 1024).status()));
}

TEST(WebSocketFrameTest, ClosePayloads) {
  EXPECT_EQ(ParseClosePayload("")->code, 1005);
  auto normal =
      ParseClosePayload(std::string("\x03\xe8"
                                    "done",
                                    6));
  ASSERT_TRUE(normal.ok());
  EXPECT_EQ(normal->code, 1000);
  EXPECT_EQ(normal->reason, "done");
  EXPECT_FALSE(ParseClosePayload("\x03").ok());
  EXPECT_FALSE(ParseClosePayload(std::string("\x03\xed", 2)).ok());  // 1005 is never sent
}

TEST(WebSocketFrameTest, HandshakeAcceptsAsRfc6455Says) {
  // RFC 6455 section 1.3's example.
  EXPECT_EQ(WebSocketAcceptValue("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  HttpRequest request;
  request.method = "GET";
  request.headers = {{"Upgrade", "WebSocket"},
                     {"Connection", "keep-alive, Upgrade"},
                     {"Sec-WebSocket-Version", "13"},
                     {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
  absl::StatusOr<HttpResponse> head = WebSocketUpgradeHead(request);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->status, 101);
  request.headers[2].second = "8";
  EXPECT_FALSE(WebSocketUpgradeHead(request).ok());
  request.headers[2].second = "13";
  request.headers[1].second = "keep-alive";
  EXPECT_FALSE(WebSocketUpgradeHead(request).ok());
}

}  // namespace
}  // namespace strata::server
