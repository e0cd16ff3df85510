// The service map over traces whose spans were exported by their services
// separately and land in different batches, parents after children and
// the other way round: the resolved edges equal the reference self-join in
// DuckDB over every spans file, and stay equal after compaction merges the
// batches (its output is not counted again) and for a resolver that reads
// only the compacted batch; batches evicted to an object store answer as
// they did before eviction, read back through the read cache.

#include "api/service_map.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/api_test_server.h"
#include "api/service_health_json.h"
#include "api/service_map_testing.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "otlp/decode.h"
#include "query/duckdb_engine.h"
#include "rollups/duration_histogram.h"
#include "storage/format/evicted_marker.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/verify_testing.h"

namespace strata::api {
namespace {

namespace smt = service_map_testing;
constexpr int64_t kMs = smt::kMs;

using Edges = std::map<std::string, std::vector<std::string>>;

Edges AnswerEdges(const ServiceMapAnswer& map) {
  Edges out;
  for (const MapEdge& e : map.edges) {
    out[EdgeName(map, e)] = {std::to_string(e.measures.calls), std::to_string(e.measures.errors),
                             std::to_string(e.measures.Quantile(500).value_or(-1)),
                             std::to_string(e.measures.Quantile(990).value_or(-1))};
  }
  return out;
}

Edges ReferenceEdges(const std::string& data_dir, uint64_t first, uint64_t end) {
  auto engine = query::DuckDbEngine::Open({});
  EXPECT_TRUE(engine.ok());
  test_support::CreateTruthViews(**engine, data_dir);
  auto rows = (*engine)->Query(ServiceMapReferenceSql(first, end));
  EXPECT_TRUE(rows.ok()) << rows.status();
  Edges out;
  if (!rows.ok()) return out;
  auto bucket = [](const std::optional<std::string>& v) {
    return std::to_string(rollups::BucketValue(rollups::DurationBucket(std::stoll(*v))));
  };
  for (const auto& row : rows->rows) {
    out[*row[0]] = {*row[1], *row[2], bucket(row[3]), bucket(row[4])};
  }
  return out;
}

ServiceMapAnswer MapOf(ServiceMap& map, PosixFileSystem& fs, const storage::Snapshot& snapshot,
                       const MinuteWindow& window) {
  RollupCache cache;
  auto rows = cache.ForWindow(fs, snapshot, window);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return map.Answer(fs, snapshot, window, rows.ok() ? *rows : RollupSet{});
}

// The nice value of this process's thread named `name`, once one is.
std::optional<int> NiceOfThread(std::string_view name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string got;
    if (!std::getline(comm, got) || got != name) continue;
    std::ifstream stat_file(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    // Fields after the name's closing parenthesis start at field 3; the
    // nice value is field 19.
    std::istringstream fields(stat.substr(stat.rfind(')') + 1));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
      if (i == 19) return std::stoi(field);
    }
  }
  return std::nullopt;
}

// The background thread that catches up on spans runs at the configured
// nice value, under a name of its own, so queries get the CPU first.
TEST(ServiceMapTest, TheBackgroundThreadRunsAtItsNiceValue) {
  PosixFileSystem fs;
  ServiceMapOptions options;
  options.nice = 7;
  options.poll = std::chrono::milliseconds(10);
  ServiceMap map(options);
  ASSERT_EQ(NiceOfThread("strata-svcmap"), std::nullopt);
  map.Start([]() -> storage::Storage* { return nullptr; }, &fs);
  // The thread names itself and then sets its value: wait for both, at
  // most 10 s.
  std::optional<int> nice;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((nice = NiceOfThread("strata-svcmap")) != 7 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(nice, 7);
}

TEST(ServiceMapTest, SpansExportedApartResolveAsTheReferenceSaysAndCompactionChangesNothing) {
  PosixFileSystem fs;
  storage::testing::ScopedTempDir tmp("service-map");
  const std::string data_dir = tmp.path() + "/data";
  auto opened = storage::Storage::Open(fs, data_dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<storage::Storage> storage = *std::move(opened);

  const int64_t t0 = 1'796'205'600'000'000'000;  // a whole minute
  ASSERT_TRUE(smt::WriteExportedApart(*storage, smt::Traces(60, t0), 3).ok());

  const MinuteWindow window{static_cast<uint64_t>(t0),
                            static_cast<uint64_t>(t0) + 3'600 * 1'000 * kMs};
  const Edges want = ReferenceEdges(data_dir, window.first, window.end);
  // Every kind of edge is there: calls, a database, messaging by parent
  // and by link, outside peers; the client of cart is not a virtual node.
  for (const char* edge : {"service:/frontend -> service:/cart call",
                           "service:/cart -> database:postgresql shop database",
                           "service:/cart -> service:/billing messaging",
                           "service:/cart -> messaging:kafka orders messaging",
                           "messaging:kafka orders -> service:/billing messaging",
                           "service:/billing -> peer:api.payments.example call",
                           "service:/frontend -> peer:recommendations call"}) {
    EXPECT_TRUE(want.contains(edge)) << edge;
  }
  EXPECT_FALSE(want.contains("service:/frontend -> peer:cart call"));

  ServiceMap map;
  std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
  ASSERT_GT(snapshot->size(), 8u);
  // Batches one at a time, in ingest order, as the background pass does.
  size_t left = snapshot->size();
  while (left > 0) left = map.CatchUp(fs, *snapshot, 1);
  ServiceMapAnswer answer = MapOf(map, fs, *snapshot, window);
  EXPECT_EQ(answer.pending_batches, 0u);
  EXPECT_EQ(AnswerEdges(answer), want);

  // Compaction merges every batch into one: the same edges, from the same
  // resolver and from a new one that reads only the output.
  auto compacted = storage::verify_testing::CompactEverything(*storage);
  ASSERT_TRUE(compacted.ok()) << compacted.status();
  snapshot = storage->Pin();
  ASSERT_EQ(snapshot->size(), 1u);
  EXPECT_EQ(AnswerEdges(MapOf(map, fs, *snapshot, window)), want);
  ServiceMap fresh;
  EXPECT_EQ(AnswerEdges(MapOf(fresh, fs, *snapshot, window)), want);
  EXPECT_EQ(ReferenceEdges(data_dir, window.first, window.end), want);
  storage->Shutdown(std::chrono::seconds(5));
}

// A batch whose spans cannot be read: the answer counts it in
// unreadable_batches with the reader's error, says it is not complete,
// and still holds the edges of the batches that could be read.

// Writes the `part`-th third (0, 1, 2) of `spans` to `storage` as one
// request, each service's spans as one resource.
void WriteThird(storage::Storage& storage, const std::vector<smt::Span>& spans, int part) {
  std::map<std::string, std::vector<std::string>> by_service;
  for (size_t i = static_cast<size_t>(part) * spans.size() / 3;
       i < static_cast<size_t>(part + 1) * spans.size() / 3; ++i) {
    by_service[spans[i].service].push_back(spans[i].json);
  }
  auto batch = std::make_unique<otlp::TraceBatch>();
  for (const auto& [service, list] : by_service) {
    ASSERT_TRUE(otlp::DecodeTracesJson(smt::RequestJson(service, list), batch.get()).ok());
  }
  storage::WriteRequest request;
  request.rows = batch->spans.size();
  request.traces = std::move(batch);
  request.bytes = 1 << 16;
  ASSERT_TRUE(storage.Write(std::move(request)).ok());
}

TEST(ServiceMapTest, AnUnreadableSpansFileMakesTheAnswerIncomplete) {
  PosixFileSystem fs;
  storage::testing::ScopedTempDir tmp("service-map-unreadable");
  const std::string data_dir = tmp.path() + "/data";
  auto opened = storage::Storage::Open(fs, data_dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<storage::Storage> storage = *std::move(opened);
  const int64_t t0 = 1'796'205'600'000'000'000;  // a whole minute
  // Each trace's spans in one request, so each batch resolves alone.
  const std::vector<smt::Span> spans = smt::Traces(6, t0);
  for (int part = 0; part < 3; ++part) {
    ASSERT_NO_FATAL_FAILURE(WriteThird(*storage, spans, part));
  }
  std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
  ASSERT_EQ(snapshot->size(), 3u);
  const MinuteWindow window{static_cast<uint64_t>(t0),
                            static_cast<uint64_t>(t0) + 3'600 * 1'000 * kMs};
  // The reference over the two batches left readable.
  const std::string broken = snapshot->batches()[1]->dir() + "/spans.parquet";
  const std::string kept = tmp.path() + "/spans.parquet.kept";
  std::filesystem::rename(broken, kept);
  const Edges want = ReferenceEdges(data_dir, window.first, window.end);
  ASSERT_FALSE(want.empty());
  // The file is there but its bytes are not Parquet.
  ASSERT_TRUE(WriteFile(fs, broken, std::string(std::filesystem::file_size(kept), 'x')).ok());

  ServiceMap map;
  const ServiceMapAnswer answer = MapOf(map, fs, *snapshot, window);
  EXPECT_EQ(answer.pending_batches, 0u);
  EXPECT_EQ(answer.unreadable_batches, 1u);
  EXPECT_THAT(answer.last_unreadable_error, ::testing::HasSubstr("spans.parquet"));
  EXPECT_EQ(AnswerEdges(answer), want);
  const std::string json = ServiceMapJson(answer, window, map.options().resolver);
  EXPECT_THAT(json, ::testing::HasSubstr(R"("complete":false)"));
  EXPECT_THAT(json, ::testing::HasSubstr(R"("unreadable_batches":1,"unreadable_error":")"));
  storage->Shutdown(std::chrono::seconds(5));
}

// Batches whose Parquet files were evicted to an object store: the service
// map reads their spans, and service health (its nodes' requests) their
// rollups, from the store through the read cache, and the answer is the
// one they gave while local. One batch was written without
// rollups.parquet (meta.json format 1), so its rollups come from its
// evicted tables.
TEST(ServiceMapTest, EvictedBatchesAnswerAsBeforeThroughTheReadCache) {
  PosixFileSystem fs;
  storage::testing::ScopedTempDir tmp("service-map-evicted");
  const std::string data_dir = tmp.path() + "/data";
  auto local = objectstore::LocalBatchStore::Open(fs, tmp.path() + "/store");
  ASSERT_TRUE(local.ok()) << local.status();
  auto open = [&](bool write_rollups, std::chrono::microseconds evict_after) {
    storage::StorageOptions options;
    options.start_maintenance = false;
    options.write_rollups = write_rollups;
    options.object_store = local->get();
    options.upload.poll_interval = std::chrono::milliseconds(20);
    options.evict_after = evict_after;
    options.evict_poll_interval = std::chrono::hours(1);
    auto opened = storage::Storage::Open(fs, data_dir, std::move(options));
    EXPECT_TRUE(opened.ok()) << opened.status();
    return opened.ok() ? *std::move(opened) : nullptr;
  };
  const int64_t t0 = 1'796'205'600'000'000'000;  // a whole minute
  const std::vector<smt::Span> spans = smt::Traces(6, t0);
  for (int part = 0; part < 3; ++part) {
    std::unique_ptr<storage::Storage> storage = open(part > 0, std::chrono::microseconds{0});
    ASSERT_NE(storage, nullptr);
    ASSERT_NO_FATAL_FAILURE(WriteThird(*storage, spans, part));
    for (const auto& live : storage->Pin()->batches()) {
      ASSERT_TRUE(storage->uploader()->WaitUploaded(live->id(), std::chrono::seconds(20)).ok());
    }
  }
  const MinuteWindow window{static_cast<uint64_t>(t0),
                            static_cast<uint64_t>(t0) + 3'600 * 1'000 * kMs};
  std::string before;
  {
    std::unique_ptr<storage::Storage> storage = open(true, std::chrono::microseconds{0});
    ASSERT_NE(storage, nullptr);
    std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
    ASSERT_EQ(snapshot->size(), 3u);
    EXPECT_FALSE(snapshot->batches()[0]->meta().rollups_parquet.has_value());
    ServiceMap map;
    const ServiceMapAnswer answer = MapOf(map, fs, *snapshot, window);
    ASSERT_FALSE(answer.edges.empty());
    before = ServiceMapJson(answer, window, map.options().resolver);
  }
  {
    // Every batch is old enough: the evictor marks them all at start.
    std::unique_ptr<storage::Storage> storage = open(true, std::chrono::microseconds{1});
    ASSERT_NE(storage, nullptr);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (storage->evictor()->Stats().batches_marked < 3 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(storage->evictor()->Stats().batches_marked, 3u);
  }
  // A new start removes what the first left, before anything reads.
  std::unique_ptr<storage::Storage> storage = open(true, std::chrono::microseconds{1});
  ASSERT_NE(storage, nullptr);
  std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
  for (const auto& batch : snapshot->batches()) {
    EXPECT_TRUE(*storage::HasEvictedMarker(fs, batch->dir()));
    EXPECT_FALSE(std::filesystem::exists(batch->dir() + "/spans.parquet")) << batch->dir();
  }
  ServiceMap map;
  const ServiceMapAnswer answer = MapOf(map, fs, *snapshot, window);
  EXPECT_EQ(answer.unreadable_batches, 0u) << answer.last_unreadable_error;
  EXPECT_EQ(ServiceMapJson(answer, window, map.options().resolver), before);
  EXPECT_GT(storage->resolver()->CacheStats().misses, 0u);
}

}  // namespace
}  // namespace strata::api
