// GET /loki/api/v1/tail against what was sent, with a real WebSocket client
// (Boost.Beast's, server/testing/websocket_client.h) on loopback sockets.
// Log records are exported through strata's ingest service after the tail
// opened (an OK is the acknowledgement); the tail must deliver them in
// acknowledgement order, each under its labels, and only those its query
// selects. Refusals happen before the upgrade, as plain HTTP: no token,
// another origin, a metric query, a request that is not an upgrade, one
// tail too many. Stopping the tails and draining the server close the
// socket with 1001. Waits are on conditions with deadlines; a sentinel
// record marks "everything before it was handled".

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "api/api_server.h"
#include "api/api_test_server.h"
#include "api/log_tail_metrics.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/query_pool.h"
#include "server/http_adapter.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "server/testing/sse_client.h"
#include "server/testing/websocket_client.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

using server::testing::WebSocketClient;
using Clock = std::chrono::steady_clock;

constexpr char kReadToken[] = "read-token";
constexpr char kOtherToken[] = "other-token";
constexpr auto kWait = std::chrono::milliseconds(30'000);

std::pair<std::string, std::string> Header(std::string name, std::string value) {
  return {std::move(name), std::move(value)};
}

struct Entry {
  std::string time;
  std::string line;
  std::map<std::string, std::string> labels;
};

// One OTLP/JSON request: a record per body, of service `service`, with
// attribute k=<attr> when not empty.
std::string RequestJson(const std::string& service, const std::vector<std::string>& bodies,
                        const std::string& attr, int64_t time) {
  std::string records;
  for (const std::string& body : bodies) {
    const std::string attributes =
        attr.empty() ? "" : fmt::format(R"({{"key":"k","value":{{"stringValue":"{}"}}}})", attr);
    records += fmt::format(R"({}{{"timeUnixNano":"{}","severityNumber":9,)"
                           R"("body":{{"stringValue":"{}"}},"attributes":[{}]}})",
                           records.empty() ? "" : ",", time, body, attributes);
  }
  return fmt::format(
      R"({{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"{}"}}}}]}},"scopeLogs":[{{"logRecords":[{}]}}]}}]}})",
      service, records);
}

// The entries of one tail message, stream by stream in the message's order.
std::vector<Entry> EntriesOf(const std::string& message, size_t* dropped = nullptr) {
  std::vector<Entry> out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(message).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not JSON: " << message;
    return out;
  }
  simdjson::dom::array streams;
  if (doc["streams"].get_array().get(streams) != simdjson::SUCCESS) {
    ADD_FAILURE() << "no streams: " << message;
    return out;
  }
  for (simdjson::dom::element stream : streams) {
    std::map<std::string, std::string> labels;
    simdjson::dom::object object;
    EXPECT_EQ(stream["stream"].get_object().get(object), simdjson::SUCCESS);
    for (auto field : object) {
      std::string_view value;
      EXPECT_EQ(field.value.get_string().get(value), simdjson::SUCCESS);
      labels[std::string(field.key)] = std::string(value);
    }
    simdjson::dom::array values;
    EXPECT_EQ(stream["values"].get_array().get(values), simdjson::SUCCESS);
    for (simdjson::dom::element value : values) {
      std::string_view time;
      std::string_view line;
      EXPECT_EQ(value.at(0).get_string().get(time), simdjson::SUCCESS);
      EXPECT_EQ(value.at(1).get_string().get(line), simdjson::SUCCESS);
      out.push_back(Entry{std::string(time), std::string(line), labels});
    }
  }
  if (dropped != nullptr) {
    simdjson::dom::array list;
    if (doc["dropped_entries"].get_array().get(list) == simdjson::SUCCESS) *dropped += list.size();
  }
  return out;
}

class LokiTailTest : public ::testing::Test {
 protected:
  void StartServer(LogTailOptions tail_options = {}) {
    data_dir_ = tmp_.path() + "/data";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    ingest_ = std::make_unique<server::IngestService>(
        *storage_, [](std::string_view) { return absl::OkStatus(); }, metrics_,
        server::IngestService::Options{});
    pool_ = test_support::OpenTestPool(data_dir_, 2, 1);
    ASSERT_NE(pool_, nullptr);
    ApiOptions options;
    options.storage = [this] { return storage_.get(); };
    options.pool = pool_.get();
    options.fs = &fs_;
    options.data_dir = data_dir_;
    options.authenticate = [](std::string_view presented) -> absl::StatusOr<control::TokenScope> {
      if (presented == kReadToken || presented == kOtherToken) return control::TokenScope::kRead;
      return absl::UnauthenticatedError("unknown or revoked token");
    };
    options.log_tail = tail_options;
    api_ = std::make_unique<Api>(std::move(options));
    server::HttpRouter router;
    api_->AddRoutes(&router);
    server::HttpServerOptions http;
    http.address = "127.0.0.1:0";
    auto started = server::HttpServer::Start(http, std::move(router).ToHandler());
    ASSERT_TRUE(started.ok()) << started.status();
    http_server_ = *std::move(started);
  }

  void TearDown() override {
    if (http_server_ != nullptr) http_server_->Shutdown(std::chrono::seconds(5));
    http_server_.reset();
    api_.reset();
    pool_.reset();
    ingest_.reset();
    if (storage_ != nullptr) storage_->Shutdown(std::chrono::seconds(5));
    storage_.reset();
  }

  void Export(const std::string& service, const std::vector<std::string>& bodies,
              const std::string& attr = "") {
    ExportAt(service, bodies, SystemNowUnixNano(), attr);
  }

  // As Export(), the records timed `time` (unix ns).
  void ExportAt(const std::string& service, const std::vector<std::string>& bodies, int64_t time,
                const std::string& attr = "") {
    std::promise<server::ExportOutcome> outcome;
    std::string body = RequestJson(service, bodies, attr, time);
    const uint64_t wire_bytes = body.size();
    ingest_->Export(server::Signal::kLogs, server::Encoding::kJson, server::Transport::kHttp,
                    std::make_shared<const std::string>(std::move(body)), wire_bytes,
                    [&](server::ExportOutcome o) { outcome.set_value(std::move(o)); });
    const server::ExportOutcome done = outcome.get_future().get();
    ASSERT_TRUE(done.status.ok()) << done.status;
  }

  static std::string Escape(std::string_view text) {
    std::string out;
    for (char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
        out.push_back(c);
      } else {
        out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
      }
    }
    return out;
  }

  // A tail of `query`; `params` ("&limit=3...") follow it in the target.
  // Without `start` and `limit` the replay is of the last hour, which is
  // empty unless a test exported records before the tail.
  std::unique_ptr<WebSocketClient> Tail(const std::string& query,
                                        WebSocketClient::Headers headers = {},
                                        const char* token = kReadToken,
                                        int receive_buffer_bytes = 0,
                                        const std::string& params = "") {
    if (token != nullptr) headers.emplace_back("Authorization", std::string("Bearer ") + token);
    return std::make_unique<WebSocketClient>(http_server_->port(),
                                             "/loki/api/v1/tail?query=" + Escape(query) + params,
                                             headers, kWait, receive_buffer_bytes);
  }
  std::unique_ptr<WebSocketClient> TailWith(const std::string& query, const std::string& params) {
    return Tail(query, {}, kReadToken, 0, params);
  }

  // Entries up to and including the one whose line is `sentinel`.
  // The entries read up to `sentinel`; with `dropped`, the dropped entries
  // the messages reported are added to it.
  static std::vector<Entry> EntriesThrough(WebSocketClient& client, const std::string& sentinel,
                                           size_t* dropped = nullptr) {
    std::vector<Entry> entries;
    const Clock::time_point deadline = Clock::now() + kWait;
    while (Clock::now() < deadline) {
      std::optional<std::string> message = client.Read(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!message.has_value()) break;
      for (Entry& e : EntriesOf(*message, dropped)) {
        entries.push_back(std::move(e));
        if (entries.back().line == sentinel) return entries;
      }
    }
    ADD_FAILURE() << "no entry " << sentinel << " after " << entries.size();
    return entries;
  }

  static std::vector<std::string> Lines(const std::vector<Entry>& entries) {
    std::vector<std::string> out;
    for (const Entry& e : entries) out.push_back(e.line);
    return out;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"loki_tail"};
  std::string data_dir_;
  server::IngestMetrics metrics_;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<server::IngestService> ingest_;
  std::unique_ptr<query::QueryPool> pool_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<server::HttpServer> http_server_;
};

TEST_F(LokiTailTest, RecordsIngestedAfterTheTailOpensArriveInOrderWithTheirLabels) {
  StartServer();
  std::unique_ptr<WebSocketClient> client = Tail(R"({service_name="checkout"})");
  ASSERT_TRUE(client->ok()) << client->status() << " " << client->body();
  const int64_t before = SystemNowUnixNano();
  for (int i = 0; i < 5; ++i) Export("checkout", {fmt::format("line-{}", i)}, "v");
  Export("checkout", {"line-5", "line-6", "end"});
  const std::vector<Entry> entries = EntriesThrough(*client, "end");
  EXPECT_EQ(Lines(entries), (std::vector<std::string>{"line-0", "line-1", "line-2", "line-3",
                                                      "line-4", "line-5", "line-6", "end"}));
  for (const Entry& e : entries) {
    EXPECT_EQ(e.labels.at("service_name"), "checkout") << e.line;
    EXPECT_EQ(e.labels.at("detected_level"), "info") << e.line;
    EXPECT_GE(std::stoll(e.time), before) << e.line;
  }
  // The attribute is structured metadata, shown among the labels as in the
  // plain query_range answer.
  EXPECT_EQ(entries[0].labels.at("k"), "v");
  EXPECT_EQ(entries[5].labels.count("k"), 0u);
  EXPECT_TRUE(client->Close(kWait));  // the server echoes the close
}

TEST_F(LokiTailTest, SelectorAndLineFiltersApply) {
  StartServer();
  std::unique_ptr<WebSocketClient> client =
      Tail(R"({service_name="api"} |= "keep" != "secret" |~ "k.*[0-9]$")");
  ASSERT_TRUE(client->ok()) << client->status() << " " << client->body();
  Export("api", {"drop-1", "keep-1", "keep-secret-2", "keep-x"});
  Export("web", {"keep-2"});
  Export("api", {"keep-3", "drop-4"});
  Export("api", {"keep-9"});
  EXPECT_EQ(Lines(EntriesThrough(*client, "keep-9")),
            (std::vector<std::string>{"keep-1", "keep-3", "keep-9"}));
}

TEST_F(LokiTailTest, PipelineStagesAfterTheFiltersApply) {
  StartServer();
  std::unique_ptr<WebSocketClient> client =
      Tail(R"({service_name="api"} | k="yes" | line_format "{{.k}}:{{__line__}}")");
  ASSERT_TRUE(client->ok()) << client->status() << " " << client->body();
  Export("api", {"a"}, "no");
  Export("api", {"b"}, "yes");
  Export("api", {"end"}, "yes");
  EXPECT_EQ(Lines(EntriesThrough(*client, "yes:end")),
            (std::vector<std::string>{"yes:b", "yes:end"}));
}

TEST_F(LokiTailTest, ASlowClientGetsDroppedEntriesAndTheQueueStaysUnderItsCap) {
  LogTailOptions options;
  options.max_queued_bytes = 16 << 10;
  options.chunk_bytes = 4 << 10;
  StartServer(options);
  // A small receive window, and no reads until the tail has dropped records.
  std::unique_ptr<WebSocketClient> client =
      Tail(R"({service_name="slow"})", {}, kReadToken, /*receive_buffer_bytes=*/4096);
  ASSERT_TRUE(client->ok());
  uint64_t sent = 0;
  const Clock::time_point deadline = Clock::now() + kWait;
  while (api_->LogTailStatistics().records_missed == 0 && Clock::now() < deadline) {
    std::vector<std::string> bodies;
    for (int k = 0; k < 200; ++k)
      bodies.push_back(fmt::format("{:05}-{}", sent++, std::string(400, 'z')));
    Export("slow", bodies);
    // The tail handles each export before the next is sent, so that what
    // it still has to handle below stays one export, however slow the
    // machine: unpaced, a loaded machine sent 45,000 records before the
    // first miss, more than the tail then handled in kWait.
    while (Clock::now() < deadline) {
      const LogTailStats stats = api_->LogTailStatistics();
      if (stats.records_sent + stats.records_missed >= sent) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ASSERT_GT(api_->LogTailStatistics().records_missed, 0u);
  // Every record the tail handled is delivered or missed; read until the
  // delivered ones add up.
  std::vector<Entry> delivered;
  size_t reported = 0;
  const Clock::time_point read_deadline = Clock::now() + kWait;
  while (Clock::now() < read_deadline) {
    const LogTailStats stats = api_->LogTailStatistics();
    if (stats.records_missed + delivered.size() == sent) break;
    std::optional<std::string> message = client->Read(
        std::chrono::duration_cast<std::chrono::milliseconds>(read_deadline - Clock::now()));
    ASSERT_TRUE(message.has_value())
        << delivered.size() << " of " << sent << "; the tail sent " << stats.records_sent
        << ", missed " << stats.records_missed << (client->closed() ? ", closed" : "");
    for (Entry& e : EntriesOf(*message, &reported)) delivered.push_back(std::move(e));
  }
  // The tail thread counts a message after handing it over, so the client
  // may read it first.
  const Clock::time_point count_deadline = Clock::now() + kWait;
  while (api_->LogTailStatistics().records_sent != delivered.size() &&
         Clock::now() < count_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const LogTailStats stats = api_->LogTailStatistics();
  EXPECT_EQ(stats.records_sent, delivered.size());
  EXPECT_EQ(delivered.size() + stats.records_missed, sent);
  EXPECT_LE(stats.max_queued_bytes, options.max_queued_bytes);
  for (size_t i = 1; i < delivered.size(); ++i) {
    EXPECT_LT(delivered[i - 1].line, delivered[i].line);
  }
  // And the tail goes on live.
  Export("slow", {"zzzzz-live"});
  EXPECT_EQ(EntriesThrough(*client, "zzzzz-live", &reported).back().line, "zzzzz-live");
  // The client was told, by the time the live entry came (dropped_entries
  // lists up to 100 a message, on the messages after the misses).
  EXPECT_GE(reported, 1u);
  EXPECT_LE(reported, stats.records_missed);
  // /metrics says the same.
  const LogTailStats now = api_->LogTailStatistics();
  EXPECT_EQ(now.formatted_records_dropped, stats.records_missed);
  EXPECT_NE(
      LogTailMetricsText(now).find(fmt::format(
          "strata_log_tail_records_dropped_total{{api=\"loki\"}} {}\n", stats.records_missed)),
      std::string::npos)
      << LogTailMetricsText(now);
}

// ---- the replay of the past (start, limit) ----

TEST_F(LokiTailTest, TheReplayIsTheNewestLimitMatchingEntriesSinceStartOldestFirst) {
  StartServer({.formatted_max_per_owner = 8});
  const int64_t now = SystemNowUnixNano();
  constexpr int64_t kMinute = 60'000'000'000;
  ExportAt("h", {"h-0"}, now - 180 * kMinute);  // before both starts below
  for (int i = 1; i <= 5; ++i) ExportAt("h", {fmt::format("h-{}", i)}, now - 30 * kMinute + i);
  ExportAt("h", {"h-skip"}, now - 20 * kMinute);       // the line filter drops it
  ExportAt("other", {"h-other"}, now - 20 * kMinute);  // the selector does
  ExportAt("h", {"h-6"}, now - 10 * kMinute);
  const std::string query = R"({service_name="h"} != "skip")";

  // limit 3 since 2 hours ago: the newest three, oldest first, then live.
  std::unique_ptr<WebSocketClient> three =
      TailWith(query, fmt::format("&limit=3&start={}", now - 120 * kMinute));
  ASSERT_TRUE(three->ok()) << three->status() << " " << three->body();
  // No start: the last hour (h-0 is older); limit 100 by default.
  std::unique_ptr<WebSocketClient> hour = TailWith(query, "");
  ASSERT_TRUE(hour->ok()) << hour->status() << " " << hour->body();
  // start as Loki also takes it, in RFC 3339 (here 4 hours ago: h-0 too).
  const absl::Time four_hours_ago = absl::FromUnixNanos(now - 240 * kMinute);
  std::unique_ptr<WebSocketClient> rfc3339 = TailWith(
      query, "&start=" +
                 Escape(absl::FormatTime(absl::RFC3339_full, four_hours_ago, absl::UTCTimeZone())));
  ASSERT_TRUE(rfc3339->ok()) << rfc3339->status() << " " << rfc3339->body();
  // start after every stored record: no replay.
  std::unique_ptr<WebSocketClient> later =
      TailWith(query, fmt::format("&start={}", now - 5 * kMinute));
  ASSERT_TRUE(later->ok()) << later->status() << " " << later->body();

  Export("h", {"h-live"});
  EXPECT_EQ(Lines(EntriesThrough(*three, "h-live")),
            (std::vector<std::string>{"h-4", "h-5", "h-6", "h-live"}));
  EXPECT_EQ(Lines(EntriesThrough(*hour, "h-live")),
            (std::vector<std::string>{"h-1", "h-2", "h-3", "h-4", "h-5", "h-6", "h-live"}));
  const std::vector<Entry> all = EntriesThrough(*rfc3339, "h-live");
  EXPECT_EQ(Lines(all),
            (std::vector<std::string>{"h-0", "h-1", "h-2", "h-3", "h-4", "h-5", "h-6", "h-live"}));
  EXPECT_EQ(Lines(EntriesThrough(*later, "h-live")), (std::vector<std::string>{"h-live"}));
  // Replayed entries carry their own time and labels, as live ones do.
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all[0].time, std::to_string(now - 180 * kMinute));
  EXPECT_EQ(all[1].labels.at("service_name"), "h");
}

TEST_F(LokiTailTest, TheReplayRunsThePipelineAndIsSentAMessageAtATime) {
  LogTailOptions options;
  options.chunk_bytes = 1024;  // about 20 entries a message
  StartServer(options);
  const int64_t now = SystemNowUnixNano();
  std::vector<std::string> bodies;
  for (int i = 0; i < 300; ++i) bodies.push_back(fmt::format("r-{:03}", i));
  ExportAt("p", bodies, now - 60'000'000'000, "yes");
  ExportAt("p", {"r-no"}, now - 30'000'000'000, "no");
  std::unique_ptr<WebSocketClient> client =
      TailWith(R"({service_name="p"} | k="yes" | line_format "{{.k}}:{{__line__}}")", "&limit=250");
  ASSERT_TRUE(client->ok()) << client->status() << " " << client->body();
  std::vector<std::string> lines;
  int messages = 0;
  const Clock::time_point deadline = Clock::now() + kWait;
  while (lines.size() < 250 && Clock::now() < deadline) {
    std::optional<std::string> message = client->Read(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    ASSERT_TRUE(message.has_value()) << lines.size();
    ++messages;
    for (const Entry& e : EntriesOf(*message)) lines.push_back(e.line);
  }
  ASSERT_EQ(lines.size(), 250u);
  // The newest 250 of the 300 (all at one time: the file order breaks the
  // tie), oldest first, with the pipeline's line.
  std::set<std::string> distinct(lines.begin(), lines.end());
  EXPECT_EQ(distinct.size(), 250u);
  for (const std::string& line : lines) EXPECT_TRUE(line.starts_with("yes:r-")) << line;
  // Records of one time in the order they were stored.
  EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
  EXPECT_GT(messages, 5);
}

TEST_F(LokiTailTest, RecordsStoredWhileTheTailSubscribesArriveExactlyOnce) {
  // The hook runs when the tail has subscribed to the feed and before its
  // replay is read: a record stored there is published after the pinned
  // snapshot, so it must come live and only live. A replay read from a
  // snapshot pinned any later would send it twice; one pinned earlier
  // would lose the records published between the pin and the
  // subscription.
  LogTailOptions options;
  std::atomic<int> subscribed{0};
  options.TEST_after_subscribe = [this, &subscribed] {
    const int n = ++subscribed;
    Export("s", {fmt::format("seam-{}", n)});
  };
  StartServer(options);
  Export("s", {"before-1", "before-2"});
  std::unique_ptr<WebSocketClient> first = TailWith(R"({service_name="s"})", "&limit=100");
  ASSERT_TRUE(first->ok()) << first->status() << " " << first->body();
  std::unique_ptr<WebSocketClient> second = TailWith(R"({service_name="s"})", "&limit=100");
  ASSERT_TRUE(second->ok()) << second->status() << " " << second->body();
  Export("s", {"after"});
  EXPECT_EQ(Lines(EntriesThrough(*first, "after")),
            (std::vector<std::string>{"before-1", "before-2", "seam-1", "seam-2", "after"}));
  // The second subscribed after seam-1 was stored: it is in its replay.
  EXPECT_EQ(Lines(EntriesThrough(*second, "after")),
            (std::vector<std::string>{"before-1", "before-2", "seam-1", "seam-2", "after"}));
}

TEST_F(LokiTailTest, RecordsStoredDuringManyConnectsArriveOnceEach) {
  // A writer stores numbered records all the while tails connect; each
  // tail's replay and live records together must be a run of consecutive
  // numbers: no gap, no repeat at the seam, wherever it fell.
  StartServer({.formatted_max_per_owner = 8});
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    while (!stop.load()) {
      const int n = written.load();
      Export("w", {fmt::format("w-{:06}", n)});
      written.store(n + 1);
    }
  });
  std::vector<std::unique_ptr<WebSocketClient>> tails;
  for (int i = 0; i < 8; ++i) {
    const int at_least = written.load() + 2;
    while (written.load() < at_least) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    tails.push_back(TailWith(R"({service_name="w"})", "&limit=5000"));
    EXPECT_TRUE(tails.back()->ok()) << tails.back()->status();
    if (!tails.back()->ok()) break;
  }
  const int last_seen = written.load() + 3;
  while (written.load() < last_seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop.store(true);
  writer.join();
  Export("w", {"w-end"});
  ASSERT_EQ(tails.size(), 8u);
  for (size_t t = 0; t < tails.size(); ++t) {
    const std::vector<std::string> lines = Lines(EntriesThrough(*tails[t], "w-end"));
    ASSERT_GE(lines.size(), 2u);
    for (size_t i = 0; i + 2 < lines.size(); ++i) {
      ASSERT_EQ(std::stoi(lines[i + 1].substr(2)), std::stoi(lines[i].substr(2)) + 1)
          << "tail " << t << " at " << i << ": " << lines[i] << " then " << lines[i + 1];
    }
    EXPECT_EQ(lines.front(), "w-000000") << "tail " << t;
  }
}

// ---- metrics ----

TEST_F(LokiTailTest, MetricsCountOpenTailsAndTheirRecords) {
  StartServer({.max_connections = 1});
  const int64_t now = SystemNowUnixNano();
  ExportAt("m", {"past-1", "past-2"}, now - 1'000'000'000);
  std::unique_ptr<WebSocketClient> a = TailWith(R"({service_name="m"})", "");
  std::unique_ptr<WebSocketClient> b = TailWith(R"({service_name="m"})", "&limit=1");
  ASSERT_TRUE(a->ok() && b->ok());
  // The Loki tails do not take the plain tails' places.
  std::unique_ptr<server::testing::SseClient> plain = std::make_unique<server::testing::SseClient>(
      http_server_->port(), "/api/v1/logs/tail",
      server::testing::SseClient::Headers{{"Authorization", std::string("Bearer ") + kReadToken}},
      kWait, 0);
  ASSERT_TRUE(plain->ok());
  EXPECT_EQ(plain->head().status, 200);
  Export("m", {"live"});
  EntriesThrough(*a, "live");
  EntriesThrough(*b, "live");
  // a: 2 replayed + 1 live; b: 1 + 1. Counted after handing over, so the
  // client may read first.
  const Clock::time_point deadline = Clock::now() + kWait;
  while (api_->LogTailStatistics().formatted_records_sent < 5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::string text = LogTailMetricsText(api_->LogTailStatistics());
  EXPECT_NE(text.find("strata_log_tails{api=\"loki\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("strata_log_tails{api=\"strata\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("strata_log_tail_records_sent_total{api=\"loki\"} 5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("strata_log_tail_records_dropped_total{api=\"loki\"} 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE strata_log_tail_records_sent_total counter\n"), std::string::npos);
  ASSERT_TRUE(a->Close(kWait));
  const Clock::time_point closed_deadline = Clock::now() + kWait;
  while (api_->LogTailStatistics().formatted_streams != 1 && Clock::now() < closed_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_NE(
      LogTailMetricsText(api_->LogTailStatistics()).find("strata_log_tails{api=\"loki\"} 1\n"),
      std::string::npos);
}

TEST_F(LokiTailTest, UnauthenticatedIsRefusedBeforeTheUpgrade) {
  StartServer();
  std::unique_ptr<WebSocketClient> none = Tail(R"({service_name="api"})", {}, nullptr);
  EXPECT_EQ(none->status(), 401);
  EXPECT_FALSE(none->ok());
  std::unique_ptr<WebSocketClient> wrong = Tail(R"({service_name="api"})", {}, "not-a-token");
  EXPECT_EQ(wrong->status(), 401);
  // The token as a basic-auth password, as Grafana's data source sends it.
  std::unique_ptr<WebSocketClient> basic = Tail(
      R"({service_name="api"})", {Header("Authorization", "Basic dXNlcjpyZWFkLXRva2Vu")}, nullptr);
  EXPECT_TRUE(basic->ok()) << basic->status() << " " << basic->body();
}

TEST_F(LokiTailTest, BadRequestsAreRefusedBeforeTheUpgrade) {
  StartServer();
  EXPECT_EQ(Tail(R"(count_over_time({service_name="api"}[1m]))")->status(), 400);
  EXPECT_EQ(Tail(R"({service_name="api"} |= )")->status(), 400);
  EXPECT_EQ(Tail("")->status(), 400);
  EXPECT_EQ(Tail(R"({service_name="api"})", {Header("Origin", "http://evil.example")})->status(),
            403);
  std::unique_ptr<WebSocketClient> own =
      Tail(R"({service_name="api"})",
           {{"Origin", fmt::format("http://127.0.0.1:{}", http_server_->port())}});
  EXPECT_TRUE(own->ok()) << own->status() << " " << own->body();
  // A plain GET (no upgrade) is told to use a WebSocket.
  server::HttpRequest request;
  request.method = "GET";
  request.target = "/loki/api/v1/tail?query=" + Escape(R"({service_name="api"})");
  request.headers.emplace_back("Authorization", std::string("Bearer ") + kReadToken);
  absl::StatusOr<server::HttpResponse> plain =
      server::HttpCall(fmt::format("127.0.0.1:{}", http_server_->port()), request, kWait);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("WebSocket"), std::string::npos) << plain->body;
}

TEST_F(LokiTailTest, TailLimitsRefuseTheExtraOne) {
  StartServer({.formatted_max_connections = 3, .formatted_max_per_owner = 2});
  std::unique_ptr<WebSocketClient> a = Tail(R"({service_name="x"})");
  std::unique_ptr<WebSocketClient> b = Tail(R"({service_name="x"})");
  ASSERT_TRUE(a->ok() && b->ok());
  std::unique_ptr<WebSocketClient> c = Tail(R"({service_name="x"})");
  EXPECT_EQ(c->status(), 429) << c->body();  // a third for the same token
  std::unique_ptr<WebSocketClient> d = Tail(R"({service_name="x"})", {}, kOtherToken);
  ASSERT_TRUE(d->ok()) << d->status();
  std::unique_ptr<WebSocketClient> e = Tail(R"({service_name="x"})", {}, kOtherToken);
  EXPECT_EQ(e->status(), 429) << e->body();  // a fourth in all
  // A closed tail frees its place.
  ASSERT_TRUE(a->Close(kWait));
  const Clock::time_point deadline = Clock::now() + kWait;
  std::unique_ptr<WebSocketClient> again;
  while (Clock::now() < deadline) {
    again = Tail(R"({service_name="x"})");
    if (again->status() != 429) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(again->ok()) << again->status();
}

TEST_F(LokiTailTest, StoppingTheTailsClosesTheSocketWithGoingAway) {
  StartServer();
  std::unique_ptr<WebSocketClient> client = Tail(R"({service_name="x"})");
  ASSERT_TRUE(client->ok());
  api_->StopLogTails();
  EXPECT_FALSE(client->Read(kWait).has_value());
  EXPECT_TRUE(client->closed());
  EXPECT_EQ(client->close_code(), 1001);
  EXPECT_EQ(Tail(R"({service_name="x"})")->status(), 503);
}

TEST_F(LokiTailTest, ServerDrainClosesTheSocketAndDoesNotHang) {
  StartServer();
  std::unique_ptr<WebSocketClient> client = Tail(R"({service_name="x"})");
  ASSERT_TRUE(client->ok());
  const Clock::time_point began = Clock::now();
  std::future<void> shutdown =
      std::async(std::launch::async, [this] { http_server_->Shutdown(std::chrono::seconds(20)); });
  EXPECT_FALSE(client->Read(kWait).has_value());
  EXPECT_TRUE(client->closed());
  EXPECT_EQ(client->close_code(), 1001);
  shutdown.get();
  // The drain ends when the client answered the close, long before the
  // 20 s drain deadline.
  EXPECT_LT(Clock::now() - began, std::chrono::seconds(10));
}

TEST_F(LokiTailTest, AClientFrameOverTheLimitClosesWithMessageTooBig) {
  StartServer();
  std::unique_ptr<WebSocketClient> client = Tail(R"({service_name="x"})");
  ASSERT_TRUE(client->ok());
  ASSERT_TRUE(client->Write(std::string(4096, 'x'), kWait));
  EXPECT_FALSE(client->Read(kWait).has_value());
  EXPECT_TRUE(client->closed());
  EXPECT_EQ(client->close_code(), 1009);
}

}  // namespace
}  // namespace strata::api
