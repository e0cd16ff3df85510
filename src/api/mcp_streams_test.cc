// McpStreams on its own (docs/mcp.md, "Server-initiated stream"): event ids
// per session, the priming event, resuming with Last-Event-ID, the replay
// buffer's bounds in messages and bytes, one stream per session, the
// per-credential and total caps, the keepalive thread's expiry of sessions
// that are gone, End() and Stop(), and the log level filter. A real
// HttpServer on loopback hands each GET to McpStreams::Open with the
// session, credential and Last-Event-ID the request names; the test reads
// the events with SseClient. Every wait has a deadline.

#include "api/mcp_streams.h"

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "server/http_adapter.h"
#include "server/testing/sse_client.h"

namespace strata::api {
namespace {

using server::testing::SseClient;
using server::testing::SseEvent;
using Clock = std::chrono::steady_clock;

constexpr auto kWait = std::chrono::seconds(20);
// How long a test waits to be sure something does not arrive.
constexpr auto kQuiet = std::chrono::milliseconds(300);

class McpStreamsTest : public ::testing::Test {
 protected:
  // Starts McpStreams with `limits` and a server whose GET /stream opens
  // the stream of the session in X-Session for the credential in
  // X-Credential.
  void Start(McpStreamLimits limits) {
    streams_ =
        std::make_unique<McpStreams>(limits, [this](std::string_view session, bool streaming) {
          MutexLock lock(&mu_);
          if (streaming) streaming_asked_.insert(std::string(session));
          return gone_.count(std::string(session)) == 0;
        });
    server::HttpServerOptions options;
    options.address = "127.0.0.1:0";
    auto started = server::HttpServer::Start(
        options, [this](server::HttpRequest request, server::HttpResponder responder) {
          streams_->Open(std::string(request.Header("X-Session")),
                         std::string(request.Header("X-Credential")),
                         request.Header("Last-Event-ID"), std::move(responder));
        });
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  void TearDown() override {
    if (streams_ != nullptr) streams_->Stop();
    if (server_ != nullptr) server_->Shutdown(std::chrono::seconds(1));
  }

  std::unique_ptr<SseClient> Get(const std::string& session, const std::string& credential = "c",
                                 const std::string& last_event_id = "",
                                 int receive_buffer_bytes = 0) {
    SseClient::Headers headers = {{"X-Session", session}, {"X-Credential", credential}};
    if (!last_event_id.empty()) headers.emplace_back("Last-Event-ID", last_event_id);
    auto client = std::make_unique<SseClient>(
        server_->port(), "/stream", headers,
        std::chrono::duration_cast<std::chrono::milliseconds>(kWait), receive_buffer_bytes);
    EXPECT_TRUE(client->ok()) << "GET /stream of " << session;
    return client;
  }

  // The next `count` events' "id:data" (or fewer when they stop coming),
  // skipping the `retry:` block that opens every stream.
  static std::vector<std::string> Events(SseClient& client, int count) {
    std::vector<std::string> events;
    for (int i = 0; i < count; ++i) {
      std::optional<SseEvent> event = client.NextEvent(kWait);
      if (!event.has_value()) break;
      // The head's `retry:` block: no id, no data.
      if (event->id.empty() && event->data.empty()) {
        --i;
        continue;
      }
      events.push_back(event->id + ":" + event->data);
    }
    return events;
  }

  // Polls the stats until `condition` holds (the io thread and the
  // keepalive thread change them; nothing signals the test).
  template <typename Condition>
  bool Eventually(Condition condition) {
    const Clock::time_point deadline = Clock::now() + kWait;
    while (!condition(streams_->Stats())) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  void MarkGone(const std::string& session) {
    MutexLock lock(&mu_);
    gone_.insert(session);
  }
  bool AskedWhileStreaming(const std::string& session) {
    MutexLock lock(&mu_);
    return streaming_asked_.count(session) > 0;
  }

  std::unique_ptr<McpStreams> streams_;
  std::unique_ptr<server::HttpServer> server_;
  Mutex mu_;
  std::set<std::string> gone_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> streaming_asked_ ABSL_GUARDED_BY(mu_);
};

TEST_F(McpStreamsTest, AStreamIsPrimedThenCarriesMessagesWithIncreasingIds) {
  Start({});
  std::unique_ptr<SseClient> client = Get("s1");
  EXPECT_EQ(client->head().status, 200);
  EXPECT_EQ(client->head().Header("content-type"), "text/event-stream");
  EXPECT_EQ(client->head().Header("mcp-session-id"), "s1");
  // Priming: an id to resume from, no data.
  EXPECT_EQ(Events(*client, 1), std::vector<std::string>{"1:"});
  streams_->Send("s1", R"({"n":1})");
  streams_->Send("s1", R"({"n":2})");
  // Another session's messages have their own ids and never reach s1.
  streams_->Send("s2", R"({"other":1})");
  streams_->Send("s1", R"({"n":3})");
  EXPECT_EQ(Events(*client, 3),
            (std::vector<std::string>{R"(2:{"n":1})", R"(3:{"n":2})", R"(4:{"n":3})"}));
  EXPECT_FALSE(client->NextEvent(kQuiet).has_value());
  const McpStreamStats stats = streams_->Stats();
  EXPECT_EQ(stats.streams, 1);
  EXPECT_EQ(stats.messages, 4u);
}

TEST_F(McpStreamsTest, LastEventIdReplaysOnlyLaterMessagesThenLiveOnes) {
  Start({});
  // Sent while no stream is open: held for replay.
  for (int i = 1; i <= 5; ++i) streams_->Send("s1", fmt::format(R"({{"n":{}}})", i));
  std::unique_ptr<SseClient> client = Get("s1", "c", "2");
  EXPECT_EQ(client->head().status, 200);
  EXPECT_EQ(Events(*client, 3),
            (std::vector<std::string>{R"(3:{"n":3})", R"(4:{"n":4})", R"(5:{"n":5})"}));
  streams_->Send("s1", R"({"n":6})");
  EXPECT_EQ(Events(*client, 1), std::vector<std::string>{R"(6:{"n":6})"});
  const McpStreamStats stats = streams_->Stats();
  EXPECT_EQ(stats.replayed, 3u);
  EXPECT_EQ(stats.replays_incomplete, 0u);
}

TEST_F(McpStreamsTest, AClientThatIsUpToDateIsPrimedWithAFreshId) {
  Start({});
  streams_->Send("s1", R"({"n":1})");
  std::unique_ptr<SseClient> client = Get("s1", "c", "1");
  EXPECT_EQ(Events(*client, 1), std::vector<std::string>{"2:"});
  EXPECT_EQ(streams_->Stats().replayed, 0u);
}

TEST_F(McpStreamsTest, LastEventIdsThatWereNeverGivenAreRefused) {
  Start({});
  streams_->Send("s1", R"({"n":1})");
  for (const std::string& bad : {"x", "-1", "1.5", "2", "99999999999999999999999"}) {
    std::unique_ptr<SseClient> client = Get("s1", "c", bad);
    EXPECT_EQ(client->head().status, 400) << bad;
  }
  // Ids are per session: s2 never gave 1.
  EXPECT_EQ(Get("s2", "c", "1")->head().status, 400);
  EXPECT_EQ(streams_->Stats().streams, 0);
  // The refusals left s1 as it was: resuming from 0 replays its message.
  std::unique_ptr<SseClient> client = Get("s1", "c", "0");
  EXPECT_EQ(Events(*client, 1), std::vector<std::string>{R"(1:{"n":1})"});
}

TEST_F(McpStreamsTest, TheReplayBufferKeepsTheLastMessagesWithinItsCount) {
  Start({.replay_events = 3});
  for (int i = 1; i <= 5; ++i) streams_->Send("s1", fmt::format(R"({{"n":{}}})", i));
  std::unique_ptr<SseClient> client = Get("s1", "c", "1");
  // 2 was dropped: what is held is replayed, and the loss is counted.
  EXPECT_EQ(Events(*client, 3),
            (std::vector<std::string>{R"(3:{"n":3})", R"(4:{"n":4})", R"(5:{"n":5})"}));
  EXPECT_EQ(streams_->Stats().replays_incomplete, 1u);
  // Resuming from the last lost id is complete.
  std::unique_ptr<SseClient> again = Get("s1", "c", "2");
  EXPECT_EQ(Events(*again, 3).size(), 3u);
  EXPECT_EQ(streams_->Stats().replays_incomplete, 1u);
}

TEST_F(McpStreamsTest, TheReplayBufferKeepsTheLastMessagesWithinItsBytes) {
  // Each message is 9 bytes: 25 bytes hold two.
  Start({.replay_bytes = 25});
  for (int i = 1; i <= 4; ++i) streams_->Send("s1", fmt::format("message-{}", i));
  std::unique_ptr<SseClient> client = Get("s1", "c", "0");
  EXPECT_EQ(Events(*client, 2), (std::vector<std::string>{"3:message-3", "4:message-4"}));
  EXPECT_FALSE(client->NextEvent(kQuiet).has_value());
  EXPECT_EQ(streams_->Stats().replays_incomplete, 1u);
}

TEST_F(McpStreamsTest, ASecondGetOfASessionReplacesItsStream) {
  Start({.max_streams_per_credential = 1});
  std::unique_ptr<SseClient> first = Get("s1");
  EXPECT_EQ(Events(*first, 1), std::vector<std::string>{"1:"});
  // The session's own stream does not count against the credential's cap.
  std::unique_ptr<SseClient> second = Get("s1", "c", "1");
  EXPECT_EQ(second->head().status, 200);
  EXPECT_TRUE(first->WaitEnd(kWait));
  EXPECT_TRUE(first->saw_last_chunk());
  EXPECT_EQ(streams_->Stats().streams, 1);
  streams_->Send("s1", R"({"n":1})");
  EXPECT_EQ(Events(*second, 2), (std::vector<std::string>{"2:", R"(3:{"n":1})"}));
}

TEST_F(McpStreamsTest, StreamsAreCappedPerCredentialAndInAll) {
  Start({.max_streams = 3, .max_streams_per_credential = 2});
  std::unique_ptr<SseClient> a = Get("a", "alice");
  std::unique_ptr<SseClient> b = Get("b", "alice");
  std::unique_ptr<SseClient> c = Get("c", "alice");
  EXPECT_EQ(a->head().status, 200);
  EXPECT_EQ(b->head().status, 200);
  EXPECT_EQ(c->head().status, 429);
  EXPECT_EQ(c->head().Header("retry-after"), "5");
  std::unique_ptr<SseClient> d = Get("d", "bob");
  EXPECT_EQ(d->head().status, 200);
  std::unique_ptr<SseClient> e = Get("e", "carol");
  EXPECT_EQ(e->head().status, 503);
  EXPECT_EQ(e->head().Header("retry-after"), "5");
  EXPECT_EQ(streams_->Stats().streams, 3);
  // A stream that ends makes room again.
  streams_->End("a");
  EXPECT_TRUE(a->WaitEnd(kWait));
  EXPECT_EQ(Get("c", "alice")->head().status, 200);
}

TEST_F(McpStreamsTest, AClosedClientStreamFreesItsPlace) {
  Start({.max_streams = 1, .keepalive = std::chrono::milliseconds(40)});
  Get("a").reset();  // connects, then goes away
  // The keepalive thread (or the next open) sees the stream closed.
  ASSERT_TRUE(Eventually([](const McpStreamStats& s) { return s.streams == 0; }));
  EXPECT_EQ(Get("b")->head().status, 200);
}

TEST_F(McpStreamsTest, KeepalivesGoOutAndGoneSessionsAreDropped) {
  Start({.keepalive = std::chrono::milliseconds(40)});
  std::unique_ptr<SseClient> client = Get("s1");
  streams_->Send("s1", R"({"n":1})");
  streams_->Send("idle", R"({"n":1})");
  EXPECT_EQ(Events(*client, 2).size(), 2u);
  // Nothing to send: comments keep the connection alive.
  const Clock::time_point deadline = Clock::now() + kWait;
  while (client->comments() < 3 && Clock::now() < deadline) client->NextEvent(kQuiet);
  EXPECT_GE(client->comments(), 3);
  EXPECT_TRUE(AskedWhileStreaming("s1"));
  EXPECT_FALSE(AskedWhileStreaming("idle"));
  // The session expired: its stream ends and its ids are forgotten.
  MarkGone("s1");
  MarkGone("idle");
  EXPECT_TRUE(client->WaitEnd(kWait));
  EXPECT_TRUE(client->saw_last_chunk());
  EXPECT_EQ(streams_->Stats().streams, 0);
  EXPECT_EQ(Get("s1", "c", "1")->head().status, 400);
  // "idle" may be dropped in the keepalive thread's next round.
  const Clock::time_point idle_deadline = Clock::now() + kWait;
  int status = 0;
  while ((status = Get("idle", "c", "1")->head().status) != 400 && Clock::now() < idle_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(status, 400);
}

TEST_F(McpStreamsTest, EndClosesTheStreamAndForgetsTheSession) {
  Start({});
  std::unique_ptr<SseClient> client = Get("s1");
  streams_->Send("s1", R"({"n":1})");
  EXPECT_EQ(Events(*client, 2).size(), 2u);
  streams_->End("s1");
  EXPECT_TRUE(client->WaitEnd(kWait));
  EXPECT_TRUE(client->saw_last_chunk());
  EXPECT_EQ(streams_->Stats().streams, 0);
  EXPECT_EQ(Get("s1", "c", "2")->head().status, 400);
}

TEST_F(McpStreamsTest, StopEndsEveryStreamAndRefusesNewOnes) {
  Start({});
  std::unique_ptr<SseClient> a = Get("a");
  std::unique_ptr<SseClient> b = Get("b", "other");
  EXPECT_EQ(Events(*a, 1).size(), 1u);
  EXPECT_EQ(Events(*b, 1).size(), 1u);
  streams_->Stop();
  EXPECT_TRUE(a->WaitEnd(kWait));
  EXPECT_TRUE(b->WaitEnd(kWait));
  EXPECT_TRUE(a->saw_last_chunk());
  EXPECT_EQ(streams_->Stats().streams, 0);
  std::unique_ptr<SseClient> late = Get("c");
  EXPECT_EQ(late->head().status, 503);
  // Sends after Stop() are dropped, not held.
  const uint64_t messages = streams_->Stats().messages;
  streams_->Send("a", "{}");
  EXPECT_EQ(streams_->Stats().messages, messages);
}

TEST_F(McpStreamsTest, LogMessagesFollowTheSessionsLevel) {
  Start({});
  std::unique_ptr<SseClient> client = Get("s1");
  EXPECT_EQ(Events(*client, 1).size(), 1u);
  // No logging/setLevel yet: nothing.
  streams_->Log("s1", "emergency", "t", "1");
  streams_->SetLogLevel("s1", "warning");
  streams_->Log("s1", "info", "t", "2");
  streams_->Log("s1", "warning", "t\"q", "3");
  streams_->Log("s1", "error", "t", R"({"x":4})");
  EXPECT_EQ(
      Events(*client, 2),
      (std::vector<std::string>{
          R"(2:{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"t\"q","data":3}})",
          R"(3:{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"t","data":{"x":4}}})"}));
  EXPECT_FALSE(client->NextEvent(kQuiet).has_value());
  EXPECT_EQ(McpLogLevelRank("debug"), 0);
  EXPECT_EQ(McpLogLevelRank("emergency"), 7);
  EXPECT_EQ(McpLogLevelRank("warn"), -1);
}

TEST_F(McpStreamsTest, AClientThatStopsReadingLosesItsStreamNotItsMessages) {
  Start({.max_queued_bytes = 64 << 10});
  std::unique_ptr<SseClient> client = Get("s1", "c", "", /*receive_buffer_bytes=*/4096);
  EXPECT_EQ(Events(*client, 1), std::vector<std::string>{"1:"});
  // The client reads nothing while messages of 1 KiB go out: the socket's
  // buffers fill, then the stream's queue, and the stream is ended.
  const std::string payload = fmt::format(R"("{}")", std::string(1022, 'x'));
  int sent = 0;
  while (streams_->Stats().slow_closed == 0 && sent < 100'000) {
    streams_->Send("s1", payload);
    ++sent;
    if (sent % 64 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(streams_->Stats().slow_closed, 1u);
  EXPECT_EQ(streams_->Stats().streams, 0);
  // Reconnecting from the last id it read replays the held messages (the
  // buffer keeps 64 KiB: the newest 64 of them), the newest last.
  std::unique_ptr<SseClient> again = Get("s1", "c", "1");
  std::vector<std::string> events = Events(*again, 64);
  ASSERT_EQ(events.size(), 64u);
  EXPECT_EQ(events.front(), fmt::format("{}:{}", sent + 1 - 63, payload));
  EXPECT_EQ(events.back(), fmt::format("{}:{}", sent + 1, payload));
}

}  // namespace
}  // namespace strata::api
