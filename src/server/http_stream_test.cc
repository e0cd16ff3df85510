// Streamed responses (HttpResponder::Stream, HttpStream): chunks arrive in
// order and whole, the queue of unwritten bytes never passes its cap while
// a client stops reading (and empties once it reads again), and
// Shutdown() ends open streams with their last chunk. Real sockets on
// loopback; every wait has a deadline.

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "server/http_adapter.h"
#include "server/http_testing.h"
#include "server/testing/sse_client.h"

namespace strata::server {
namespace {

using testing::Curl;
using testing::HttpAnswer;
using testing::SseClient;
using Clock = std::chrono::steady_clock;

constexpr auto kWait = std::chrono::seconds(20);

// A server whose one handler hands each request's stream to the test.
class HttpStreamTest : public ::testing::Test {
 protected:
  void StartServer(uint64_t max_queued_bytes) {
    HttpServerOptions options;
    options.address = "127.0.0.1:0";
    auto started = HttpServer::Start(
        options, [this, max_queued_bytes](HttpRequest request, HttpResponder responder) {
          if (request.path() != "/stream") {
            responder.Respond(HttpResponse::Text(404, "no\n"));
            return;
          }
          HttpResponse head;
          head.content_type = "text/event-stream";
          head.headers.emplace_back("Cache-Control", "no-cache");
          head.body = ": hello\n\n";
          std::shared_ptr<HttpStream> stream =
              responder.Stream(std::move(head), {.max_queued_bytes = max_queued_bytes});
          MutexLock lock(&mu_);
          streams_.push_back(std::move(stream));
          arrived_.SignalAll();
        });
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  // The `index`th stream the handler made, waiting for it.
  std::shared_ptr<HttpStream> StreamNumber(size_t index) {
    const Clock::time_point deadline = Clock::now() + kWait;
    MutexLock lock(&mu_);
    while (streams_.size() <= index && Clock::now() < deadline) arrived_.WaitUntil(&mu_, deadline);
    return streams_.size() > index ? streams_[index] : nullptr;
  }

  // Polls `condition` until it holds or the deadline passes (the server's
  // io thread changes what it reads; nothing signals the test).
  template <typename Condition>
  static bool Eventually(Condition condition) {
    const Clock::time_point deadline = Clock::now() + kWait;
    while (!condition()) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  std::unique_ptr<HttpServer> server_;
  Mutex mu_;
  CondVar arrived_;
  std::vector<std::shared_ptr<HttpStream>> streams_ ABSL_GUARDED_BY(mu_);
};

TEST_F(HttpStreamTest, ChunksArriveInOrderAndEndCleanly) {
  StartServer(1 << 20);
  std::future<HttpAnswer> answer = std::async(std::launch::async, [&] {
    return Curl({"-N", fmt::format("http://127.0.0.1:{}/stream", server_->port())});
  });
  std::shared_ptr<HttpStream> stream = StreamNumber(0);
  ASSERT_NE(stream, nullptr);
  std::string expected = ": hello\n\n";
  for (int i = 0; i < 500; ++i) {
    const std::string event = fmt::format("id: {}\ndata: {}\n\n", i, std::string(i % 97, 'x'));
    // The queue is large enough for all of it: every write is taken.
    ASSERT_EQ(stream->Write(event), HttpStream::WriteResult::kQueued) << i;
    expected += event;
  }
  stream->End();
  const HttpAnswer got = answer.get();
  EXPECT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Header("content-type"), "text/event-stream");
  EXPECT_EQ(got.Header("transfer-encoding"), "chunked");
  EXPECT_EQ(got.body, expected);
  EXPECT_TRUE(Eventually([&] { return stream->closed(); }));
  EXPECT_EQ(stream->Write("late"), HttpStream::WriteResult::kClosed);
}

TEST_F(HttpStreamTest, AClientThatStopsReadingFillsTheQueueOnlyToItsCap) {
  constexpr uint64_t kCap = 64 << 10;
  StartServer(kCap);
  SseClient client(server_->port(), "/stream", {}, kWait, /*receive_buffer_bytes=*/4096);
  ASSERT_TRUE(client.ok());
  std::shared_ptr<HttpStream> stream = StreamNumber(0);
  ASSERT_NE(stream, nullptr);
  // Write until the server refuses: the socket's buffers fill first, then
  // the queue up to its cap, never past it.
  const std::string event = fmt::format("data: {}\n\n", std::string(1000, 'y'));
  uint64_t queued_writes = 0;
  uint64_t peak = 0;
  const Clock::time_point deadline = Clock::now() + kWait;
  HttpStream::WriteResult result = HttpStream::WriteResult::kQueued;
  while (Clock::now() < deadline) {
    result = stream->Write(event);
    if (result != HttpStream::WriteResult::kQueued) break;
    ++queued_writes;
    peak = std::max(peak, stream->queued_bytes());
    ASSERT_LE(stream->queued_bytes(), kCap);
  }
  ASSERT_EQ(result, HttpStream::WriteResult::kFull);
  EXPECT_GT(peak, kCap - event.size() - 1);
  // Reading again drains the queue, and every queued event arrives.
  uint64_t events = 0;
  while (events < queued_writes) {
    std::optional<testing::SseEvent> got = client.NextEvent(kWait);
    ASSERT_TRUE(got.has_value()) << events << " of " << queued_writes;
    ASSERT_EQ(got->data, std::string(1000, 'y'));
    ++events;
  }
  EXPECT_TRUE(Eventually([&] { return stream->queued_bytes() == 0; }));
  EXPECT_EQ(stream->Write(event), HttpStream::WriteResult::kQueued);
}

TEST_F(HttpStreamTest, ShutdownEndsOpenStreamsWithTheirLastChunk) {
  StartServer(1 << 20);
  SseClient client(server_->port(), "/stream", {}, kWait);
  ASSERT_TRUE(client.ok());
  std::shared_ptr<HttpStream> stream = StreamNumber(0);
  ASSERT_NE(stream, nullptr);
  ASSERT_EQ(stream->Write("data: before\n\n"), HttpStream::WriteResult::kQueued);
  std::optional<testing::SseEvent> first = client.NextEvent(kWait);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->data, "before");
  const Clock::time_point start = Clock::now();
  server_->Shutdown(std::chrono::seconds(30));
  // The drain ended the stream at once instead of waiting for its deadline.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(client.WaitEnd(kWait));
  EXPECT_TRUE(client.saw_last_chunk());
  EXPECT_TRUE(stream->closed());
  EXPECT_EQ(stream->Write("data: after\n\n"), HttpStream::WriteResult::kClosed);
}

TEST_F(HttpStreamTest, AStreamAfterTheRequestDeadlineIsClosedAndThe504Stands) {
  HttpServerOptions options;
  options.address = "127.0.0.1:0";
  options.request_timeout = std::chrono::milliseconds(200);
  std::promise<HttpResponder> held;
  auto started = HttpServer::Start(
      options, [&](HttpRequest, HttpResponder responder) { held.set_value(std::move(responder)); });
  ASSERT_TRUE(started.ok());
  server_ = *std::move(started);
  std::future<HttpAnswer> answer = std::async(std::launch::async, [&] {
    return Curl({fmt::format("http://127.0.0.1:{}/late", server_->port())});
  });
  HttpResponder responder = held.get_future().get();
  const HttpAnswer got = answer.get();  // the server's 504
  EXPECT_EQ(got.status, 504);
  std::shared_ptr<HttpStream> stream = responder.Stream(HttpResponse{});
  if (stream != nullptr) {
    EXPECT_TRUE(Eventually([&] { return stream->closed(); }));
  }
}

}  // namespace
}  // namespace strata::server
