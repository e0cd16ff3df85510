// SIGTERM while MCP clients hold GET /mcp streams open: the drain ends each
// stream cleanly (its last chunk) as it begins, rather than letting the
// streams hold it open, and the process exits 0 within its bound. One
// stream's client reads; the other's has stopped reading with a small
// receive buffer; neither closes its socket after the end, so the server's
// linger after a last chunk (linger_timeout, 2 s) is what remains: with a
// long drain the exit comes after at most that, not at the drain's
// deadline; with a drain shorter than the linger, within the drain plus the
// 1 s that serve's backstop allows (past it, serve aborts).

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "e2e/server_process.h"
#include "gtest/gtest.h"
#include "server/testing/sse_client.h"

namespace strata::testing {
namespace {

using server::testing::SseClient;
using Clock = std::chrono::steady_clock;
constexpr auto kWait = std::chrono::milliseconds(30'000);

uint16_t PortOf(const std::string& address) {
  return static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

// POSTs initialize to /mcp with `token`; the Mcp-Session-Id it answers, or
// "" (with the reason in `why`).
std::string Initialize(const std::string& api, const std::string& token, const std::string& dir,
                       std::string* why) {
  const std::string headers_file = dir + "/initialize-headers";
  auto [status, body] = Curl(
      {"-D", headers_file, "-H", "Authorization: Bearer " + token, "-H",
       "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
       "--data-binary",
       R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
       R"("capabilities":{},"clientInfo":{"name":"drain-test","version":"1"}}})",
       "http://" + api + "/mcp"});
  *why = std::to_string(status) + " " + body;
  if (status != 200) return "";
  std::ifstream in(headers_file);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name != "mcp-session-id") continue;
    std::string value = line.substr(colon + 1);
    while (!value.empty() &&
           (value.front() == ' ' || value.back() == '\r' || value.back() == ' ')) {
      if (value.front() == ' ')
        value.erase(0, 1);
      else
        value.pop_back();
    }
    return value;
  }
  return "";
}

std::unique_ptr<SseClient> OpenStream(const std::string& api, const std::string& token,
                                      const std::string& session, int receive_buffer_bytes) {
  const SseClient::Headers headers = {{"Authorization", "Bearer " + token},
                                      {"Accept", "text/event-stream"},
                                      {"Mcp-Session-Id", session},
                                      {"MCP-Protocol-Version", "2025-06-18"}};
  return std::make_unique<SseClient>(PortOf(api), "/mcp", headers, kWait, receive_buffer_bytes);
}

// Runs the scenario with --drain-timeout-sec `drain_timeout_sec`; the time
// from SIGTERM to the process's exit.
Clock::duration SigtermWithOpenStreams(int drain_timeout_sec) {
  TempDir dir("e2e-mcp-drain");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data, {"--drain-timeout-sec", std::to_string(drain_timeout_sec)});
  EXPECT_TRUE(server.ready()) << server.output();
  if (!server.ready()) return {};
  const std::string api = server.api_address();
  const std::string reader = CreateToken(data, "mcp-drain", "read");
  EXPECT_FALSE(reader.empty());

  // The read token is accepted once the server reloads tokens.
  std::string why;
  std::string session;
  const Clock::time_point deadline = Clock::now() + kWait;
  while (session.empty() && Clock::now() < deadline) {
    session = Initialize(api, reader, dir.path(), &why);
    if (session.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(session.empty()) << why;
  const std::string second = Initialize(api, reader, dir.path(), &why);
  EXPECT_FALSE(second.empty()) << why;
  if (session.empty() || second.empty()) return {};

  std::unique_ptr<SseClient> reading = OpenStream(api, reader, session, 0);
  EXPECT_EQ(reading->head().status, 200);
  // The priming event: the stream is registered and live.
  std::optional<server::testing::SseEvent> primed;
  do {
    primed = reading->NextEvent(kWait);
  } while (primed.has_value() && primed->id.empty());
  EXPECT_TRUE(primed.has_value());
  std::unique_ptr<SseClient> idle = OpenStream(api, reader, second, 4096);
  EXPECT_EQ(idle->head().status, 200);

  const Clock::time_point sigterm = Clock::now();
  server.Signal(SIGTERM);
  EXPECT_TRUE(reading->WaitEnd(kWait));
  const auto stream_ended = Clock::now() - sigterm;
  EXPECT_TRUE(reading->saw_last_chunk()) << "the stream was cut, not ended";
  EXPECT_TRUE(idle->WaitEnd(kWait));
  EXPECT_TRUE(idle->saw_last_chunk()) << "the stream was cut, not ended";
  EXPECT_EQ(server.Stop(kWait), 0) << server.output();
  const auto exited = Clock::now() - sigterm;
  std::cout << "--drain-timeout-sec " << drain_timeout_sec << ": SIGTERM to stream end "
            << std::chrono::duration_cast<std::chrono::milliseconds>(stream_ended).count()
            << " ms, to exit "
            << std::chrono::duration_cast<std::chrono::milliseconds>(exited).count() << " ms\n";
  EXPECT_NE(server.output().find("strata serve: stopped"), std::string::npos) << server.output();
  return exited;
}

TEST(McpDrainTest, OpenGetStreamsEndCleanlyAndDoNotHoldALongDrain) {
  // Nothing else runs: only the linger (2 s) may delay the exit, never the
  // drain's deadline.
  EXPECT_LT(SigtermWithOpenStreams(20), std::chrono::seconds(5));
}

TEST(McpDrainTest, OpenGetStreamsEndCleanlyWithinADrainShorterThanTheLinger) {
  EXPECT_LT(SigtermWithOpenStreams(1), std::chrono::seconds(2));
}

}  // namespace
}  // namespace strata::testing
