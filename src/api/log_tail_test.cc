// GET /api/v1/logs/tail against what was sent. Log records are exported
// through strata's ingest service (decode, group commit, durable publish:
// an OK is the acknowledgement) while tails read on real loopback sockets:
// every record acknowledged during a stream arrives once, in
// acknowledgement order; filters give exactly what GET /api/v1/logs gives
// for the same filters, entry for entry in the same JSON; Last-Event-ID
// resumes right after the event it names; a client that stops reading is
// told how many records it missed (every record is either delivered or
// counted) while the server's queue stays under its cap; the connection
// cap, heartbeats, bad requests and stopping. Waits are on conditions
// with deadlines; a sentinel record marks "everything before it was
// handled".

#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "api/api_server.h"
#include "api/api_test_server.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/query_pool.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "server/testing/sse_client.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

using server::testing::SseClient;
using server::testing::SseEvent;
using Clock = std::chrono::steady_clock;

constexpr char kReadToken[] = "read-token";
constexpr auto kWait = std::chrono::seconds(30);
constexpr int64_t kSecond = 1'000'000'000;

struct Record {
  std::string service = "svc";
  int severity = 9;
  std::string body;
  std::string attr_k;    // attribute "k" (a string), none when empty
  std::string trace_id;  // hex, none when empty
};

// One OTLP/JSON request holding `records`, one resource per record.
std::string RequestJson(const std::vector<Record>& records, int64_t time) {
  std::string resources;
  for (const Record& r : records) {
    std::string attributes =
        fmt::format(R"({{"key":"n","value":{{"intValue":"{}"}}}})", resources.size());
    if (!r.attr_k.empty()) {
      attributes += fmt::format(R"(,{{"key":"k","value":{{"stringValue":"{}"}}}})", r.attr_k);
    }
    const std::string trace =
        r.trace_id.empty() ? std::string() : fmt::format(R"("traceId":"{}",)", r.trace_id);
    resources += fmt::format(
        R"({}{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"{}"}}}}]}},)"
        R"("scopeLogs":[{{"logRecords":[{{"timeUnixNano":"{}","severityNumber":{},{})"
        R"("body":{{"stringValue":"{}"}},"attributes":[{}]}}]}}]}})",
        resources.empty() ? "" : ",", r.service, time, r.severity, trace, r.body, attributes);
  }
  return fmt::format(R"({{"resourceLogs":[{}]}})", resources);
}

class LogTailTest : public ::testing::Test {
 protected:
  void StartServer(LogTailOptions tail_options) {
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
    options.authenticate = AcceptOnlyToken(kReadToken);
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

  // Exports `records` as one request and returns once it is acknowledged.
  void Export(const std::vector<Record>& records) {
    std::promise<server::ExportOutcome> outcome;
    std::string body = RequestJson(records, SystemNowUnixNano());
    const uint64_t wire_bytes = body.size();
    ingest_->Export(server::Signal::kLogs, server::Encoding::kJson, server::Transport::kHttp,
                    std::make_shared<const std::string>(std::move(body)), wire_bytes,
                    [&](server::ExportOutcome o) { outcome.set_value(std::move(o)); });
    const server::ExportOutcome done = outcome.get_future().get();
    ASSERT_TRUE(done.status.ok()) << done.status;
    ASSERT_EQ(done.rejected_rows, 0) << done.partial_message;
  }

  std::unique_ptr<SseClient> Tail(const std::string& query, SseClient::Headers extra = {},
                                  int receive_buffer_bytes = 0) {
    extra.emplace_back("Authorization", std::string("Bearer ") + kReadToken);
    return std::make_unique<SseClient>(http_server_->port(), "/api/v1/logs/tail" + query, extra,
                                       std::chrono::milliseconds(kWait), receive_buffer_bytes);
  }

  // In process (HttpCall), not through curl: forking beside DuckDB's
  // allocator trips ThreadSanitizer.
  server::HttpResponse Get(const std::string& target) {
    server::HttpRequest request;
    request.method = "GET";
    request.target = target;
    request.headers.emplace_back("Authorization", std::string("Bearer ") + kReadToken);
    absl::StatusOr<server::HttpResponse> answer =
        server::HttpCall(fmt::format("127.0.0.1:{}", http_server_->port()), request, kWait);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : server::HttpResponse::Text(0, answer.status().ToString());
  }

  // The body text of a record event's data.
  static std::string BodyOf(const SseEvent& event) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(event.data).get(doc) != simdjson::SUCCESS) return "<not JSON>";
    std::string_view text;
    if (doc["body"]["stringValue"].get(text) != simdjson::SUCCESS) return "<no string body>";
    return std::string(text);
  }

  // Record events up to and including the one whose body is `sentinel`;
  // fails the test when it does not come within the deadline. Other
  // events (missed, reset) go to `notices` when given.
  static std::vector<SseEvent> EventsThrough(SseClient& client, const std::string& sentinel,
                                             std::vector<SseEvent>* notices = nullptr) {
    std::vector<SseEvent> records;
    const Clock::time_point deadline = Clock::now() + kWait;
    while (Clock::now() < deadline) {
      std::optional<SseEvent> event = client.NextEvent(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!event.has_value()) break;
      if (event->type != "message") {
        if (notices != nullptr) notices->push_back(*event);
        continue;
      }
      records.push_back(*event);
      if (BodyOf(*event) == sentinel) return records;
    }
    ADD_FAILURE() << "no event with body " << sentinel << " after " << records.size();
    return records;
  }

  template <typename Condition>
  static bool Eventually(Condition condition) {
    const Clock::time_point deadline = Clock::now() + kWait;
    while (!condition()) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"log_tail"};
  std::string data_dir_;
  server::IngestMetrics metrics_;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<server::IngestService> ingest_;
  std::unique_ptr<query::QueryPool> pool_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<server::HttpServer> http_server_;
};

TEST_F(LogTailTest, RecordsAcknowledgedDuringTheStreamArriveOnceInAcknowledgementOrder) {
  StartServer({});
  std::unique_ptr<SseClient> client = Tail("");
  ASSERT_TRUE(client->ok());
  ASSERT_EQ(client->head().status, 200);
  EXPECT_EQ(client->head().Header("content-type"), "text/event-stream");
  // Four exporters at once, so group commit puts several requests in one
  // batch; each exporter's requests are acknowledged one after another,
  // so their records must arrive in that order.
  constexpr int kThreads = 4, kRequests = 20, kPerRequest = 3;
  std::vector<std::thread> exporters;
  for (int t = 0; t < kThreads; ++t) {
    exporters.emplace_back([this, t] {
      for (int r = 0; r < kRequests; ++r) {
        std::vector<Record> records;
        for (int k = 0; k < kPerRequest; ++k) {
          records.push_back(Record{.body = fmt::format("t{}-r{:03}-k{}", t, r, k)});
        }
        Export(records);
      }
    });
  }
  for (std::thread& exporter : exporters) exporter.join();
  Export({Record{.body = "sentinel"}});
  const std::vector<SseEvent> events = EventsThrough(*client, "sentinel");
  ASSERT_EQ(events.size(), size_t{kThreads * kRequests * kPerRequest + 1});
  std::set<std::string> ids;
  std::map<int, std::vector<std::string>> per_exporter;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_TRUE(ids.insert(events[i].id).second) << "repeated id " << events[i].id;
    const std::string body = BodyOf(events[i]);
    ASSERT_EQ(body.substr(0, 1), "t") << body;
    per_exporter[body[1] - '0'].push_back(body);
  }
  for (int t = 0; t < kThreads; ++t) {
    std::vector<std::string> expected;
    for (int r = 0; r < kRequests; ++r) {
      for (int k = 0; k < kPerRequest; ++k)
        expected.push_back(fmt::format("t{}-r{:03}-k{}", t, r, k));
    }
    EXPECT_EQ(per_exporter[t], expected) << "exporter " << t;
  }
}

TEST_F(LogTailTest, FiltersGiveWhatTheLogSearchGivesInTheSameJson) {
  StartServer({});
  const std::string trace = "0af7651916cd43dd8448eb211c80319c";
  const std::vector<std::string> queries = {"?service=checkout",
                                            "?severity_min=warn",
                                            "?q=NEEDLE",
                                            "?attr.k=v1",
                                            fmt::format("?trace_id={}", trace),
                                            "?service=checkout&severity_min=13&q=needle&attr.k=v1"};
  std::vector<std::unique_ptr<SseClient>> clients;
  for (const std::string& query : queries) {
    clients.push_back(Tail(query));
    ASSERT_TRUE(clients.back()->ok());
    ASSERT_EQ(clients.back()->head().status, 200) << query;
  }
  const int64_t start = SystemNowUnixNano() - 60 * kSecond;
  int n = 0;
  for (const std::string service : {"checkout", "cart"}) {
    for (const int severity : {5, 9, 13, 17}) {
      std::vector<Record> records;
      for (const std::string body : {"hay", "a Needle here"}) {
        for (const std::string attr : {"", "v1", "v2"}) {
          records.push_back(Record{.service = service,
                                   .severity = severity,
                                   .body = fmt::format("{} #{}", body, n++),
                                   .attr_k = attr,
                                   .trace_id = n % 5 == 0 ? trace : ""});
        }
      }
      Export(records);
    }
  }
  // Matches every filter above.
  Export({Record{.service = "checkout",
                 .severity = 21,
                 .body = "needle sentinel",
                 .attr_k = "v1",
                 .trace_id = trace}});
  const int64_t end = SystemNowUnixNano() + 60 * kSecond;
  for (size_t i = 0; i < queries.size(); ++i) {
    SCOPED_TRACE(queries[i]);
    const std::vector<SseEvent> events = EventsThrough(*clients[i], "needle sentinel");
    const server::HttpResponse answer =
        Get(fmt::format("/api/v1/logs{}&start={}&end={}&limit=1000", queries[i], start, end));
    ASSERT_EQ(answer.status, 200) << answer.body;
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(answer.body).value();
    std::map<std::string, std::string> searched;  // body -> minified entry
    for (simdjson::dom::element log : simdjson::dom::array(doc["logs"].get_array().value())) {
      searched[std::string(log["body"]["stringValue"].get_string().value())] =
          simdjson::minify(log);
    }
    std::map<std::string, std::string> tailed;
    for (const SseEvent& event : events) {
      simdjson::dom::parser event_parser;
      tailed[BodyOf(event)] = simdjson::minify(event_parser.parse(event.data).value());
    }
    EXPECT_GT(searched.size(), 1u);
    EXPECT_EQ(tailed, searched);
  }
}

TEST_F(LogTailTest, LastEventIdResumesRightAfterTheEventItNames) {
  StartServer({});
  std::vector<SseEvent> first_run;
  {
    std::unique_ptr<SseClient> client = Tail("");
    ASSERT_TRUE(client->ok());
    for (int r = 0; r < 3; ++r) {
      std::vector<Record> records;
      for (int k = 0; k < 4; ++k) records.push_back(Record{.body = fmt::format("r{}-k{}", r, k)});
      Export(records);
    }
    first_run = EventsThrough(*client, "r2-k3");
    ASSERT_EQ(first_run.size(), 12u);
  }
  // Resume after the sixth event (inside the second batch), with the
  // records of the first run still the newest: exactly the other six
  // arrive, with the same ids and data, then what is exported next.
  std::unique_ptr<SseClient> resumed = Tail("", {{"Last-Event-ID", first_run[5].id}});
  ASSERT_TRUE(resumed->ok());
  ASSERT_EQ(resumed->head().status, 200);
  Export({Record{.body = "after"}});
  std::vector<SseEvent> notices;
  const std::vector<SseEvent> rest = EventsThrough(*resumed, "after", &notices);
  EXPECT_TRUE(notices.empty());
  ASSERT_EQ(rest.size(), 7u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(rest[i].id, first_run[6 + i].id);
    EXPECT_EQ(rest[i].data, first_run[6 + i].data);
  }
  // An id the server no longer holds: a reset, then the live edge.
  std::unique_ptr<SseClient> stale = Tail("", {{"Last-Event-ID", "20200101000000000000000-3"}});
  ASSERT_TRUE(stale->ok());
  ASSERT_EQ(stale->head().status, 200);
  std::optional<SseEvent> reset = stale->NextEvent(kWait);
  ASSERT_TRUE(reset.has_value());
  EXPECT_EQ(reset->type, "reset");
  Export({Record{.body = "live"}});
  const std::vector<SseEvent> live = EventsThrough(*stale, "live");
  EXPECT_EQ(live.size(), 1u);
}

TEST_F(LogTailTest, ResumingReadsBatchesThatCompactionMergedMeanwhile) {
  StartServer({});
  // Eight ingest batches: what a level of today needs to be merged.
  std::vector<SseEvent> first_run;
  {
    std::unique_ptr<SseClient> client = Tail("");
    ASSERT_TRUE(client->ok());
    for (int r = 0; r < 8; ++r) {
      Export({Record{.body = fmt::format("c{}-a", r)}, Record{.body = fmt::format("c{}-b", r)}});
    }
    first_run = EventsThrough(*client, "c7-b");
    ASSERT_EQ(first_run.size(), 16u);
  }
  for (int step = 0; step < 20 && storage_->Pin()->size() > 1; ++step) {
    storage_->maintenance().RunStep();
  }
  ASSERT_EQ(storage_->Pin()->size(), 1u) << "compaction did not merge the batches";
  ASSERT_EQ(storage_->Pin()->batches()[0]->id().generation(), 1);
  // The feed still holds the merged batches (their files stay on disk):
  // resuming reads them.
  std::unique_ptr<SseClient> resumed = Tail("", {{"Last-Event-ID", first_run[2].id}});
  ASSERT_EQ(resumed->head().status, 200);
  std::vector<SseEvent> notices;
  const std::vector<SseEvent> rest = EventsThrough(*resumed, "c7-b", &notices);
  EXPECT_TRUE(notices.empty());
  ASSERT_EQ(rest.size(), 13u);
  for (size_t i = 0; i < rest.size(); ++i) {
    EXPECT_EQ(rest[i].id, first_run[3 + i].id);
    EXPECT_EQ(rest[i].data, first_run[3 + i].data);
  }
}

TEST_F(LogTailTest, ASlowClientIsToldWhatItMissedAndTheQueueStaysUnderItsCap) {
  LogTailOptions options;
  options.max_queued_bytes = 16 << 10;
  options.chunk_bytes = 4 << 10;
  StartServer(options);
  // A small receive window, and no reads until the tail has skipped records.
  std::unique_ptr<SseClient> client = Tail("", {}, /*receive_buffer_bytes=*/4096);
  ASSERT_TRUE(client->ok());
  ASSERT_EQ(client->head().status, 200);
  uint64_t sent = 0;
  const Clock::time_point deadline = Clock::now() + kWait;
  while (api_->LogTailStatistics().records_missed == 0 && Clock::now() < deadline) {
    std::vector<Record> records;
    for (int k = 0; k < 20; ++k) {
      records.push_back(Record{.body = fmt::format("{:04}-{}", sent, std::string(400, 'z'))});
      ++sent;
    }
    Export(records);
  }
  ASSERT_GT(api_->LogTailStatistics().records_missed, 0u);
  // Now read: every record is either delivered or counted in a `missed`
  // event, once. Read until the two add up to what was sent.
  std::vector<SseEvent> delivered;
  uint64_t missed = 0;
  int missed_events = 0;
  const Clock::time_point read_deadline = Clock::now() + kWait;
  while (delivered.size() + missed < sent && Clock::now() < read_deadline) {
    std::optional<SseEvent> event = client->NextEvent(
        std::chrono::duration_cast<std::chrono::milliseconds>(read_deadline - Clock::now()));
    ASSERT_TRUE(event.has_value()) << delivered.size() << " + " << missed << " of " << sent;
    if (event->type == "message") {
      delivered.push_back(*event);
      continue;
    }
    ASSERT_EQ(event->type, "missed") << event->data;
    simdjson::dom::parser parser;
    missed += parser.parse(event->data)["count"].get_uint64().value();
    ++missed_events;
  }
  EXPECT_GE(missed_events, 1);
  EXPECT_EQ(delivered.size() + missed, sent);
  // The tail thread counts a chunk after handing it over, so the client
  // may read it first.
  EXPECT_TRUE(
      Eventually([&] { return api_->LogTailStatistics().records_sent == delivered.size(); }));
  const LogTailStats stats = api_->LogTailStatistics();
  EXPECT_EQ(stats.records_missed, missed);
  EXPECT_LE(stats.max_queued_bytes, options.max_queued_bytes);
  // Delivered records keep their order and are unique.
  for (size_t i = 1; i < delivered.size(); ++i) {
    EXPECT_LT(BodyOf(delivered[i - 1]), BodyOf(delivered[i]));
  }
  // And the stream goes on live.
  Export({Record{.body = "zzzz-live"}});
  EXPECT_EQ(EventsThrough(*client, "zzzz-live").size(), 1u);
}

TEST_F(LogTailTest, TailsOverTheCapAre503UntilOneCloses) {
  LogTailOptions options;
  options.max_connections = 2;
  options.heartbeat = std::chrono::milliseconds(50);
  StartServer(options);
  std::unique_ptr<SseClient> a = Tail("");
  std::unique_ptr<SseClient> b = Tail("");
  ASSERT_EQ(a->head().status, 200);
  ASSERT_EQ(b->head().status, 200);
  std::unique_ptr<SseClient> c = Tail("");
  ASSERT_TRUE(c->ok());
  EXPECT_EQ(c->head().status, 503);
  EXPECT_EQ(c->head().Header("retry-after"), "1");
  EXPECT_NE(c->ReadWholeBody(kWait).find("too many live tails"), std::string::npos);
  a.reset();
  // The heartbeat finds the closed connection.
  EXPECT_TRUE(Eventually([&] { return api_->LogTailStatistics().streams < 2; }));
  std::unique_ptr<SseClient> d = Tail("");
  EXPECT_EQ(d->head().status, 200);
}

TEST_F(LogTailTest, HeartbeatsKeepAQuietStreamAlive) {
  LogTailOptions options;
  options.heartbeat = std::chrono::milliseconds(20);
  StartServer(options);
  std::unique_ptr<SseClient> client = Tail("");
  ASSERT_EQ(client->head().status, 200);
  // No records: only comments arrive (the opening one, then heartbeats).
  const Clock::time_point deadline = Clock::now() + kWait;
  while (client->comments() < 4 && Clock::now() < deadline) {
    EXPECT_FALSE(client->NextEvent(std::chrono::milliseconds(5)).has_value());
  }
  EXPECT_GE(client->comments(), 4);
}

TEST_F(LogTailTest, BadRequestsAre400) {
  StartServer({});
  for (const std::string query :
       {"?servce=a", "?severity_min=loud", "?trace_id=xyz", "?start=0", "?limit=5"}) {
    std::unique_ptr<SseClient> client = Tail(query);
    ASSERT_TRUE(client->ok());
    EXPECT_EQ(client->head().status, 400) << query;
  }
  for (const std::string id : {"garbage", "20200101000000000000000-x", "-5"}) {
    std::unique_ptr<SseClient> client = Tail("", {{"Last-Event-ID", id}});
    ASSERT_TRUE(client->ok());
    EXPECT_EQ(client->head().status, 400) << id;
    EXPECT_NE(client->ReadWholeBody(kWait).find("Last-Event-ID"), std::string::npos);
  }
  std::unique_ptr<SseClient> anonymous =
      std::make_unique<SseClient>(http_server_->port(), "/api/v1/logs/tail", SseClient::Headers{},
                                  std::chrono::milliseconds(kWait));
  EXPECT_EQ(anonymous->head().status, 401);
}

TEST_F(LogTailTest, StoppingEndsEveryStreamAndRefusesNewOnes) {
  StartServer({});
  std::unique_ptr<SseClient> client = Tail("");
  ASSERT_EQ(client->head().status, 200);
  Export({Record{.body = "before"}});
  EXPECT_EQ(EventsThrough(*client, "before").size(), 1u);
  api_->StopLogTails();
  std::optional<SseEvent> end = client->NextEvent(kWait);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->type, "end");
  EXPECT_TRUE(client->WaitEnd(kWait));
  EXPECT_TRUE(client->saw_last_chunk());
  std::unique_ptr<SseClient> late = Tail("");
  EXPECT_EQ(late->head().status, 503);
}

}  // namespace
}  // namespace strata::api
