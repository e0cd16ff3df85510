// The service map's saved state (docs/format/service-map-state.md): a map
// fed batches A, saved, and loaded by a new map that is then fed batches B
// answers exactly as a map fed A and B from scratch, with traces split
// across A and B (so spans wait across the restart for a parent, a child
// or a linked producer); the restored map does not read A's batches again;
// a damaged file is refused and the map rebuilds as new; and a map with a
// state path resumes from what the one before it saved when it stopped.

#include "rollups/service_map_state.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/service_map.h"
#include "api/service_map_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

namespace smt = service_map_testing;

// Every measure of every edge of `answer`, by EdgeName.
std::map<std::string, std::string> Measured(const ServiceMapAnswer& answer) {
  std::map<std::string, std::string> out;
  for (const MapEdge& e : answer.edges) {
    std::vector<std::pair<uint32_t, int64_t>> buckets(e.measures.buckets.begin(),
                                                      e.measures.buckets.end());
    std::sort(buckets.begin(), buckets.end());
    std::string text =
        fmt::format("calls={} errors={} sum={} buckets=", e.measures.calls, e.measures.errors,
                    static_cast<int64_t>(e.measures.duration_sum));
    for (const auto& [bucket, count] : buckets) text += fmt::format("{}:{},", bucket, count);
    out[EdgeName(answer, e)] = text;
  }
  return out;
}

std::vector<std::string> MinuteLines(const std::vector<MinuteEdge>& edges) {
  std::vector<std::string> out;
  for (const MinuteEdge& e : edges) {
    std::vector<std::pair<uint32_t, int64_t>> buckets(e.measures.buckets.begin(),
                                                      e.measures.buckets.end());
    std::sort(buckets.begin(), buckets.end());
    std::string line = fmt::format(
        "{} {}:{}/{} -> {}:{}/{} {} calls={} errors={} sum={} ", e.minute,
        static_cast<int>(e.source.type), e.source.ns, e.source.name,
        static_cast<int>(e.target.type), e.target.ns, e.target.name, static_cast<int>(e.type),
        e.measures.calls, e.measures.errors, static_cast<int64_t>(e.measures.duration_sum));
    for (const auto& [bucket, count] : buckets) line += fmt::format("{}:{},", bucket, count);
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every spans.parquet under `data_dir`.
std::vector<std::string> SpansFiles(const std::string& data_dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(data_dir)) {
    if (entry.path().filename() == "spans.parquet") out.push_back(entry.path().string());
  }
  return out;
}

void FeedAll(ServiceMap& map, FileSystem& fs, const storage::Snapshot& snapshot) {
  size_t left = snapshot.size();
  for (int i = 0; left > 0 && i < 10'000; ++i) left = map.CatchUp(fs, snapshot, 1);
  ASSERT_EQ(left, 0u);
}

ServiceMapAnswer AnswerOf(ServiceMap& map, FileSystem& fs, const storage::Snapshot& snapshot,
                          const MinuteWindow& window) {
  return map.Answer(fs, snapshot, window, RollupSet{});
}

// Traces of the shared test traffic with their spans split between two
// rounds of writes (A and B), each exported apart, so that traces straddle
// the rounds.
class ServiceMapStateTest : public ::testing::Test {
 protected:
  static constexpr int64_t kT0 = 1'796'205'600'000'000'000;  // a whole minute

  void SetUp() override {
    data_dir_ = tmp_.path() + "/data";
    state_path_ = tmp_.path() + "/service_map.state";
    temp_path_ = tmp_.path() + "/service_map.state.tmp";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    std::vector<smt::Span> spans = smt::Traces(60, kT0);
    std::mt19937 rng(11);
    std::shuffle(spans.begin(), spans.end(), rng);
    first_.assign(spans.begin(), spans.begin() + static_cast<ptrdiff_t>(spans.size() / 2));
    second_.assign(spans.begin() + static_cast<ptrdiff_t>(spans.size() / 2), spans.end());
  }

  void WriteA() { ASSERT_TRUE(smt::WriteExportedApart(*storage_, first_, 5).ok()); }
  void WriteB() { ASSERT_TRUE(smt::WriteExportedApart(*storage_, second_, 7).ok()); }

  // A map fed A, saved to state_path_.
  void SaveAfterA() {
    ServiceMap map;
    ASSERT_NO_FATAL_FAILURE(FeedAll(map, fs_, *storage_->Pin()));
    ASSERT_TRUE(map.SaveState(fs_, state_path_, temp_path_).ok());
    ASSERT_FALSE(std::filesystem::exists(temp_path_));
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"service-map-state"};
  std::string data_dir_, state_path_, temp_path_;
  std::unique_ptr<storage::Storage> storage_;
  std::vector<smt::Span> first_, second_;
  const MinuteWindow window_{static_cast<uint64_t>(kT0),
                             static_cast<uint64_t>(kT0) + 3'600'000'000'000ull};
};

TEST_F(ServiceMapStateTest, RestoredMapFedTheRestAnswersAsOneFedEverything) {
  ASSERT_NO_FATAL_FAILURE(WriteA());
  ServiceMap scratch;
  ASSERT_NO_FATAL_FAILURE(FeedAll(scratch, fs_, *storage_->Pin()));
  ASSERT_NO_FATAL_FAILURE(SaveAfterA());
  ASSERT_NO_FATAL_FAILURE(WriteB());
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  ASSERT_NO_FATAL_FAILURE(FeedAll(scratch, fs_, *snapshot));

  ServiceMap restored;
  ASSERT_TRUE(restored.LoadState(fs_, state_path_).ok());
  const ServiceMapAnswer want = AnswerOf(scratch, fs_, *snapshot, window_);
  const ServiceMapAnswer got = AnswerOf(restored, fs_, *snapshot, window_);
  EXPECT_EQ(got.pending_batches, 0u);
  EXPECT_EQ(got.unreadable_batches, 0u);
  // Every kind of edge, some of them resolved across the restart.
  EXPECT_GE(want.edges.size(), 7u);
  EXPECT_EQ(Measured(got), Measured(want));
  EXPECT_EQ(MinuteLines(restored.MinuteEdges(fs_, *snapshot, UINT64_MAX)),
            MinuteLines(scratch.MinuteEdges(fs_, *snapshot, UINT64_MAX)));
}

TEST_F(ServiceMapStateTest, RestoredMapDoesNotReadTheBatchesItResolved) {
  ASSERT_NO_FATAL_FAILURE(WriteA());
  const std::vector<std::string> a_files = SpansFiles(data_dir_);
  ASSERT_FALSE(a_files.empty());
  ASSERT_NO_FATAL_FAILURE(SaveAfterA());
  ASSERT_NO_FATAL_FAILURE(WriteB());
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  ServiceMap scratch;
  const ServiceMapAnswer want = AnswerOf(scratch, fs_, *snapshot, window_);

  // A's spans files are gone: reading any of them would count unreadable.
  for (const std::string& file : a_files) std::filesystem::remove(file);
  ServiceMap restored;
  ASSERT_TRUE(restored.LoadState(fs_, state_path_).ok());
  const ServiceMapAnswer got = AnswerOf(restored, fs_, *snapshot, window_);
  EXPECT_EQ(got.pending_batches, 0u);
  EXPECT_EQ(got.unreadable_batches, 0u) << got.last_unreadable_error;
  EXPECT_EQ(Measured(got), Measured(want));
  // A map without the state reads them, and cannot.
  ServiceMap fresh;
  EXPECT_EQ(AnswerOf(fresh, fs_, *snapshot, window_).unreadable_batches, a_files.size());
}

TEST_F(ServiceMapStateTest, DamagedStateIsRefusedAndTheMapRebuilds) {
  ASSERT_NO_FATAL_FAILURE(WriteA());
  ASSERT_NO_FATAL_FAILURE(SaveAfterA());
  ASSERT_NO_FATAL_FAILURE(WriteB());
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  ServiceMap scratch;
  const auto want = Measured(AnswerOf(scratch, fs_, *snapshot, window_));
  ASSERT_FALSE(want.empty());

  auto bytes = fs_.ReadFile(state_path_);
  ASSERT_TRUE(bytes.ok());
  std::vector<std::string> damaged;
  for (size_t at : {size_t{0}, size_t{9}, bytes->size() / 2, bytes->size() - 1}) {
    std::string flipped = *bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
    damaged.push_back(flipped);
  }
  for (size_t keep : {size_t{0}, size_t{11}, bytes->size() / 3, bytes->size() - 1}) {
    damaged.push_back(bytes->substr(0, keep));
  }
  damaged.push_back(*bytes + "x");
  for (size_t i = 0; i < damaged.size(); ++i) {
    ASSERT_TRUE(WriteFile(fs_, state_path_, damaged[i]).ok());
    ServiceMap map;
    const absl::Status loaded = map.LoadState(fs_, state_path_);
    EXPECT_TRUE(absl::IsDataLoss(loaded)) << i << ": " << loaded;
    EXPECT_EQ(Measured(AnswerOf(map, fs_, *snapshot, window_)), want) << i;
  }
  std::filesystem::remove(state_path_);
  ServiceMap missing;
  EXPECT_TRUE(absl::IsNotFound(missing.LoadState(fs_, state_path_)));
  EXPECT_EQ(Measured(AnswerOf(missing, fs_, *snapshot, window_)), want);
}

TEST_F(ServiceMapStateTest, StartResumesFromWhatTheMapBeforeSavedWhenItStopped) {
  ASSERT_NO_FATAL_FAILURE(WriteA());
  const std::vector<std::string> a_files = SpansFiles(data_dir_);
  const std::string a_batch = storage_->Pin()->batches().front()->meta().id;
  storage::Storage* engine = storage_.get();
  ServiceMapOptions options;
  options.state_path = state_path_;
  options.state_temp_path = temp_path_;
  options.poll = std::chrono::milliseconds(5);
  {
    ServiceMap map(options);
    map.Start([engine] { return engine; }, &fs_);
    const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto all_resolved = [&] {
      for (const auto& batch : snapshot->batches()) {
        if (!map.Resolved(batch->meta().id)) return false;
      }
      return true;
    };
    while (!all_resolved() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(all_resolved());
  }  // stops, and saves
  ASSERT_TRUE(std::filesystem::exists(state_path_));
  ASSERT_NO_FATAL_FAILURE(WriteB());
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  ServiceMap scratch;
  const auto want = Measured(AnswerOf(scratch, fs_, *snapshot, window_));
  for (const std::string& file : a_files) std::filesystem::remove(file);

  ServiceMap resumed(options);
  resumed.Start([engine] { return engine; }, &fs_);
  // Once A's batches show resolved, the state was loaded (reading them
  // would fail and count).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!resumed.Resolved(a_batch) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const ServiceMapAnswer got = AnswerOf(resumed, fs_, *snapshot, window_);
  EXPECT_EQ(got.unreadable_batches, 0u) << got.last_unreadable_error;
  EXPECT_EQ(Measured(got), want);
}

}  // namespace
}  // namespace strata::api
