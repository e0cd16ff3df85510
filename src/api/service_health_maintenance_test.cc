// Service health while maintenance works: the services, RED and service-map
// answers of a real server, asked again and again over curl while
// compaction merges a day's batches and retention drops a whole day. Every
// answer read during the work equals the answer from before it (each query
// pins one snapshot, and compaction's output carries rollups equal to its
// inputs'); the dropped day's answers go from whole to empty in one step,
// never partial; the day that stays is untouched.

#include <atomic>
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_server.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "server/http_testing.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;

constexpr char kToken[] = "health-token";
// Data of "day 0" is ingested (and happens) from 2026-11-20 10:00 UTC, of
// "day 1" from 2026-11-21 02:00 UTC: two UTC days for retention, within the
// service map's 24-hour horizon of each other. Microseconds (the storage
// clock's unit) and nanoseconds (event times).
constexpr int64_t kHourMicros = int64_t{3'600} * 1'000'000;
constexpr int64_t kDay0Micros = int64_t{1'795'168'800} * 1'000'000;
constexpr uint64_t kHourNanos = uint64_t{3'600} * 1'000'000'000;

int64_t IngestMicros(int day) { return kDay0Micros + day * 16 * kHourMicros; }
uint64_t DayStartNanos(int day) { return static_cast<uint64_t>(IngestMicros(day)) * 1'000; }

class Server {
 public:
  explicit Server(int port) : port_(port) {}
  HttpAnswer Get(const std::string& target) const {
    return server::testing::Fetch("GET", fmt::format("http://127.0.0.1:{}{}", port_, target),
                                  {std::string("Authorization: Bearer ") + kToken});
  }

 private:
  int port_;
};

// The three questions about one event-time window (two hours from the
// start of `day`): services, one service's RED series, the service map.
std::vector<std::string> Targets(int day) {
  const std::string window =
      fmt::format("start={}&end={}", DayStartNanos(day), DayStartNanos(day) + 2 * kHourNanos);
  return {"/api/v1/services?" + window, "/api/v1/red?service=frontend&step=5m&" + window,
          "/api/v1/service-map?" + window};
}

// The part of an answer that must not change: the whole body, except the
// service map's bookkeeping before "nodes" (which batch the resolver read
// from may change when compaction replaces batches). Empty when the map
// says it is not complete (it is then allowed to differ, and says so).
std::string Comparable(const std::string& target, const HttpAnswer& answer) {
  if (answer.status != 200) return fmt::format("status {}: {}", answer.status, answer.body);
  if (target.find("service-map") == std::string::npos) return answer.body;
  if (answer.body.find(R"("complete":true)") == std::string::npos) return std::string();
  const size_t nodes = answer.body.find(R"("nodes":)");
  return nodes == std::string::npos ? answer.body : answer.body.substr(nodes);
}

// Whether an answer is that of a window without data: no services, no
// nodes, or RED points that all count zero.
bool IsEmpty(const std::string& target, const std::string& answer) {
  if (target.find("/services") != std::string::npos) {
    return answer.find(R"("services":[])") != std::string::npos;
  }
  if (target.find("service-map") != std::string::npos) {
    return answer.find(R"("nodes":[])") != std::string::npos;
  }
  return answer.find(R"("points":[)") != std::string::npos &&
         !std::regex_search(answer, std::regex(R"("count":[1-9])"));
}

// The comparable answers to `targets`; waits (bounded) until the service
// map's resolver has caught up with every batch.
std::vector<std::string> Settled(const Server& server, const std::vector<std::string>& targets) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    std::vector<std::string> out;
    bool complete = true;
    for (const std::string& target : targets) {
      out.push_back(Comparable(target, server.Get(target)));
      complete = complete && !out.back().empty();
    }
    if (complete || std::chrono::steady_clock::now() > deadline) return out;
  }
}

TEST(ServiceHealthMaintenanceTest, AnswersStayWholeThroughCompactionAndRetentionDropsADayAtOnce) {
  PosixFileSystem fs;
  storage::testing::ScopedTempDir tmp("health-maintenance");
  const std::string data_dir = tmp.path() + "/data";
  auto now = std::make_shared<std::atomic<int64_t>>(kDay0Micros);
  storage::StorageOptions options;
  options.clock = [now] { return now->fetch_add(1'000); };
  options.writer.max_requests_per_batch = 1;
  options.maintenance.retention.days = 1;
  options.maintenance.failure_backoff = std::chrono::nanoseconds(0);
  options.maintenance.merge.chunk_rows = 97;  // many merge rounds: a long compaction
  auto opened = storage::Storage::Open(fs, data_dir, options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<storage::Storage> storage = *std::move(opened);

  // Days 0 and 1: four batches each (ingest time = event time), multi-service
  // traffic with databases and queues over twenty minutes of each day.
  for (int day = 0; day < 2; ++day) {
    now->store(IngestMicros(day));
    workload::TrafficOptions traffic;
    traffic.seed = 40 + day;
    traffic.start_time_unix_nano = DayStartNanos(day);
    traffic.messaging_percent = 30;
    traffic.trace_spacing_nanos = 1'000'000'000;
    workload::TrafficGenerator generator(traffic);
    for (int i = 0; i < 4; ++i) {
      storage::WriteRequest request;
      request.traces = generator.Traces(300);
      request.logs = generator.Logs(100);
      request.metrics = generator.Metrics(100);
      request.rows = 500;
      request.bytes = 1 << 20;
      ASSERT_TRUE(storage->Write(std::move(request)).ok());
    }
  }
  ASSERT_EQ(storage->Pin()->size(), 8u);

  test_support::LoopbackApi api =
      test_support::StartLoopbackApi(storage.get(), &fs, data_dir, kToken);
  ASSERT_NE(api.http_server, nullptr);
  const Server server(api.http_server->port());
  const std::vector<std::string> day0 = Targets(0);
  const std::vector<std::string> day1 = Targets(1);
  const std::vector<std::string> before0 = Settled(server, day0);
  const std::vector<std::string> before1 = Settled(server, day1);
  for (const auto& answers : {before0, before1}) {
    for (const std::string& answer : answers) {
      ASSERT_FALSE(answer.empty())
          << "the service map never caught up: " << server.Get(day0[2]).body.substr(0, 400);
      ASSERT_THAT(answer, ::testing::Not(::testing::HasSubstr("status "))) << answer;
    }
  }
  // The answers are stable on their own, and hold data to lose.
  EXPECT_EQ(Settled(server, day0), before0);
  EXPECT_THAT(before0[0], ::testing::HasSubstr(R"("name":"frontend")"));
  EXPECT_THAT(before0[2], ::testing::HasSubstr(R"("edges":[{)"));
  // A reader asks all six questions in a loop until told to stop; each
  // answer must equal the one from before, or (day 0 only, once retention
  // may have run) the empty one.
  std::atomic<bool> stop{false};
  std::atomic<bool> retention_started{false};
  struct Seen {
    std::atomic<int> rounds{0};
    int day0_whole = 0;
    int day0_gone = 0;
    std::vector<std::string> wrong;
  } seen;
  std::thread reader([&] {
    while (!stop.load()) {
      for (size_t i = 0; i < day1.size(); ++i) {
        const std::string got = Comparable(day1[i], server.Get(day1[i]));
        if (!got.empty() && got != before1[i]) seen.wrong.push_back(day1[i] + " -> " + got);
      }
      bool whole = true;
      bool gone = true;
      for (size_t i = 0; i < day0.size(); ++i) {
        const std::string got = Comparable(day0[i], server.Get(day0[i]));
        if (got.empty()) continue;
        const bool is_before = got == before0[i];
        const bool is_empty = IsEmpty(day0[i], got);
        whole = whole && is_before;
        gone = gone && !is_before;
        if (!is_before && !(retention_started.load() && is_empty)) {
          seen.wrong.push_back(day0[i] + " -> " + got);
        }
      }
      ++seen.rounds;
      if (whole) ++seen.day0_whole;
      if (gone) ++seen.day0_gone;
    }
  });

  // Each maintenance step runs while the reader is in a round, and a whole
  // round runs between steps: the reader sees every state maintenance
  // leaves (a compaction published with its inputs still on disk, inputs
  // deleted, a day dropped) and asks during the steps themselves.
  auto another_round = [&] {
    const int target = seen.rounds.load() + 2;  // the running round began earlier
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (seen.rounds.load() < target && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  int steps = 0;
  another_round();
  // 2026-11-21 22:00: day 0 is an earlier day, so its four batches compact.
  now->store(kDay0Micros + 36 * kHourMicros);
  while (steps < 100 && storage->maintenance().RunStep()) {
    ++steps;
    another_round();
  }
  EXPECT_EQ(storage->GetMaintenanceStats().compactions, 1u);
  // 2026-11-22 12:00: day 1 is earlier now and compacts too, and day 0
  // (ended more than a day ago) is dropped.
  retention_started = true;
  now->store(kDay0Micros + 50 * kHourMicros);
  while (steps < 100 && storage->maintenance().RunStep()) {
    ++steps;
    another_round();
  }
  stop = true;
  reader.join();
  EXPECT_EQ(storage->GetMaintenanceStats().days_dropped, 1u);
  EXPECT_EQ(storage->GetMaintenanceStats().compactions, 2u);
  EXPECT_GE(steps, 4);
  EXPECT_GE(seen.rounds.load(), 2 * steps);

  EXPECT_THAT(seen.wrong, ::testing::IsEmpty());
  EXPECT_GE(seen.day0_whole, 1);
  EXPECT_GE(seen.day0_gone, 1);
  // Afterwards: day 1 as before, day 0 answers as an empty window does.
  EXPECT_EQ(Settled(server, day1), before1);
  std::vector<std::string> after0 = Settled(server, day0);
  for (size_t i = 0; i < after0.size(); ++i) {
    EXPECT_TRUE(IsEmpty(day0[i], after0[i])) << after0[i];
  }
  EXPECT_EQ(storage->Pin()->size(), 1u);
  api.http_server.reset();
  api.api.reset();
  storage->Shutdown(std::chrono::seconds(5));
}

}  // namespace
}  // namespace strata::api
