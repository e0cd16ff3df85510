// Real-process crash test: storage_crash_child commits generated requests
// and reports each acknowledgement; the test SIGKILLs it at a random moment,
// restarts it on the same data directory, many times. After every restart
// boot must succeed (every batch validates), and at the end every span of
// every acknowledged request must be stored.
//
// STRATA_SIGKILL_ROUNDS sets the number of kills (default 8);
// STRATA_SIGKILL_SEED replays a run (the seed is printed on failure).

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "../cli/subprocess.h"
#include "crash_child_requests.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "parquet/file_reader.h"
#include "storage/storage.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

// The indexes of "ack <index>" lines in a child's output.
std::set<uint64_t> Acks(const std::string& output) {
  std::set<uint64_t> acks;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("ack ", 0) == 0) acks.insert(std::strtoull(line.c_str() + 4, nullptr, 10));
  }
  return acks;
}

TEST(SigkillTest, EveryAcknowledgedRequestSurvivesRepeatedKills) {
  const uint64_t seed = EnvOr("STRATA_SIGKILL_SEED", std::random_device{}());
  const uint64_t rounds = EnvOr("STRATA_SIGKILL_ROUNDS", 8);
  SCOPED_TRACE(fmt::format("STRATA_SIGKILL_SEED={}", seed));
  std::mt19937_64 rng(seed);
  testing::ScopedTempDir tmp("sigkill");
  // A real disk, not /dev/shm: the point is fsync and rename on a filesystem.
  const std::string data_dir = fmt::format("{}/sigkill-{}", ::testing::TempDir(), seed);
  PosixFileSystem fs;
  (void)fs.RemoveAll(data_dir);

  std::set<uint64_t> acked;
  for (uint64_t round = 0; round < rounds; ++round) {
    strata::testing::Subprocess child(
        {STRATA_CRASH_CHILD, data_dir, std::to_string(round * 1'000'000)}, {});
    ASSERT_TRUE(child.WaitForOutput("ready", std::chrono::seconds(30)))
        << "round " << round << ": boot failed after a kill:\n"
        << child.output();
    // Let it run for a random while, then kill it mid-flight.
    child.WaitForOutput("\x01never", std::chrono::milliseconds(20 + rng() % 700));
    child.Signal(SIGKILL);
    EXPECT_EQ(child.Wait(std::chrono::seconds(30)), 128 + SIGKILL) << child.output();
    EXPECT_EQ(child.output().find("fail "), std::string::npos) << child.output();
    const std::set<uint64_t> round_acks = Acks(child.output());
    acked.insert(round_acks.begin(), round_acks.end());
  }
  ASSERT_GT(acked.size(), rounds) << "the child acknowledged almost nothing";
  std::printf("%zu requests acknowledged over %llu kills\n", acked.size(),
              static_cast<unsigned long long>(rounds));

  // Boot once more in-process and collect every stored span.
  auto storage = Storage::Open(fs, data_dir);
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::set<std::pair<otlp::TraceId, otlp::SpanId>> stored;
  for (const auto& batch : (*storage)->Pin()->batches()) {
    if (batch->meta().spans.rows == 0) continue;
    auto bytes = fs.ReadFile(batch->dir() + "/spans.parquet");
    ASSERT_TRUE(bytes.ok());
    parquet::StringSource source(*bytes);
    auto read = ReadSpansTable(&source, batch->id().ToString(), "spans.parquet");
    ASSERT_TRUE(read.ok()) << read.status();
    for (size_t i = 0; i < read->spans.size(); ++i) {
      stored.insert({read->spans.trace_id[i], read->spans.span_id[i]});
    }
  }
  for (uint64_t index : acked) {
    WriteRequest request = testing::CrashChildRequest(index);
    for (size_t i = 0; i < request.traces->spans.size(); ++i) {
      ASSERT_TRUE(
          stored.count({request.traces->spans.trace_id[i], request.traces->spans.span_id[i]}))
          << "request " << index << " was acknowledged but span " << i << " is missing";
    }
  }
  storage->reset();
  (void)fs.RemoveAll(data_dir);
}

}  // namespace
}  // namespace strata::storage
