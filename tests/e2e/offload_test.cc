// Offload end to end (docs/operations.md, "Offload to an object store"):
// `strata serve --object-store` against a file:// store and against a
// RADOS gateway that the test starts with scripts/radosgw.sh. Load comes
// from strata loadgen; the test waits for the upload by polling /metrics
// (never by sleeping), then checks that every live batch's files are in
// the store with the local bytes and nothing else is, and (file://, where
// the objects' times are visible) that each batch's meta.json was written
// after its data files. Then strata is SIGKILLed while it ingests and
// uploads, one batch is cut back to data files without meta.json (a crash
// between the two), and after a restart the upload resumes: the batches
// found in the store are not put again, the missing ones are, and the
// store matches the data directory exactly. Last, `strata verify
// --object-store` finds the copy whole, and then a deleted data object.

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "e2e/metrics_page.h"
#include "e2e/rados_gateway.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/s3_batch_store.h"
#include "objectstore/store_url.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Every live batch uploaded: nothing pending and the catalog is what the
// data directory holds (no batch still on its way in).
bool UploadCaughtUp(const ServerProcess& server) {
  return WaitForMetrics(server, [](const std::string& page) {
    return MetricSample(page, "strata_upload_pending_batches") == 0 &&
           MetricSample(page, "strata_live_batches") > 0 &&
           MetricSample(page, "strata_inflight_requests") == 0;
  });
}

// Local batches: object key -> local path, for every file of every batch
// directory under data/telemetry/days/<day>/.
std::map<std::string, std::string> LocalObjects(const std::string& data) {
  std::map<std::string, std::string> objects;
  const fs::path days = fs::path(data) / "telemetry" / "days";
  for (const auto& day : fs::directory_iterator(days)) {
    for (const auto& batch : fs::directory_iterator(day.path())) {
      if (batch.path().extension() != ".batch") continue;
      for (const auto& file : fs::directory_iterator(batch.path())) {
        objects[fmt::format("telemetry/days/day={}/{}/{}", day.path().filename().string(),
                            batch.path().filename().string(), file.path().filename().string())] =
            file.path().string();
      }
    }
  }
  return objects;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> ListAll(objectstore::BatchStore& store) {
  std::vector<std::string> keys;
  std::string next;
  do {
    auto page = store.List("telemetry/", next, objectstore::kMaxKeysPerPage);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    for (const auto& object : page->objects) keys.push_back(object.key);
    next = page->next;
  } while (!next.empty());
  return keys;
}

// The store holds exactly the local batches' files, with their bytes.
void ExpectStoreMatchesLocal(objectstore::BatchStore& store, const std::string& data) {
  const std::map<std::string, std::string> local = LocalObjects(data);
  std::set<std::string> expected;
  for (const auto& [key, path] : local) expected.insert(key);
  const std::vector<std::string> listed = ListAll(store);
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), expected);
  EXPECT_EQ(listed.size(), expected.size()) << "a key listed twice";
  for (const auto& [key, path] : local) {
    auto remote = store.Get(key, 0, uint64_t{1} << 27);
    ASSERT_TRUE(remote.ok()) << key << ": " << remote.status();
    EXPECT_TRUE(*remote == ReadWhole(path)) << key << " differs from " << path;
  }
  std::printf("store %s: %zu objects of %zu batches match the data directory\n",
              store.Describe().c_str(), local.size(),
              static_cast<size_t>(std::count_if(local.begin(), local.end(), [](const auto& kv) {
                return kv.first.ends_with("/meta.json");
              })));
}

// file:// only: each batch's meta.json was written after its data files.
void ExpectMetaWrittenLast(const std::string& root) {
  std::map<std::string, std::pair<int64_t, int64_t>> times;  // batch -> (latest data, meta)
  for (const auto& entry : fs::recursive_directory_iterator(root + "/telemetry")) {
    if (!entry.is_regular_file()) continue;
    struct stat st {};
    ASSERT_EQ(stat(entry.path().c_str(), &st), 0);
    const int64_t nanos = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    auto& [data, meta] = times[entry.path().parent_path().string()];
    if (entry.path().filename() == "meta.json") {
      meta = nanos;
    } else {
      data = std::max(data, nanos);
    }
  }
  ASSERT_FALSE(times.empty());
  for (const auto& [batch, t] : times) {
    EXPECT_GT(t.second, 0) << batch << " has no meta.json";
    EXPECT_GE(t.second, t.first) << batch << ": meta.json is older than a data file";
  }
}

std::unique_ptr<Subprocess> StartLoadgen(const ServerProcess& server, const std::string& token,
                                         int requests, double duration_sec) {
  return std::make_unique<Subprocess>(
      std::vector<std::string>{STRATA_BINARY, "loadgen", "--protocol", "http/protobuf", "--target",
                               server.http_address(), "--token", token, "--signals", "traces,logs",
                               "--request-spans", "100", "--concurrency", "8", "--max-requests",
                               std::to_string(requests), "--duration",
                               fmt::format("{}", duration_sec), "--quiet"},
      ChildEnvironment());
}

// The scenario, for any store: `flags` select it, `store` reads it.
void RunOffloadScenario(const std::string& dir, const std::vector<std::string>& flags,
                        objectstore::BatchStore& store, bool check_times) {
  const std::string data = dir + "/data";
  std::vector<std::string> all_flags = flags;
  // No compaction: every batch stays live, so the counts below are exact.
  all_flags.insert(all_flags.end(), {"--compaction-min-inputs", "0"});
  std::string token;
  {
    ServerProcess server(data, all_flags);
    ASSERT_TRUE(server.ready()) << server.output();
    token = server.first_token();
    auto loadgen = StartLoadgen(server, token, 120, 30);
    ASSERT_EQ(loadgen->Wait(std::chrono::seconds(60)), 0) << loadgen->output();
    ASSERT_TRUE(UploadCaughtUp(server)) << MetricsPage(server);
    ExpectStoreMatchesLocal(store, data);
    if (check_times) ExpectMetaWrittenLast(flags[1].substr(strlen("file://")));

    // SIGKILL while it ingests and uploads.
    auto more = StartLoadgen(server, token, 100000, 30);
    const double before = MetricSample(MetricsPage(server), "strata_uploaded_batches_total");
    ASSERT_TRUE(WaitForMetrics(server, [&](const std::string& page) {
      return MetricSample(page, "strata_uploaded_batches_total") >= before + 3;
    }));
    server.Kill();
    more->Signal(SIGKILL);
    more->Wait(std::chrono::seconds(10));
  }
  // A crash between a batch's data files and its meta.json: the newest
  // uploaded batch loses its meta.json.
  std::vector<std::string> metas;
  for (const std::string& key : ListAll(store)) {
    if (key.ends_with("/meta.json")) metas.push_back(key);
  }
  ASSERT_GE(metas.size(), 2u);
  // By batch id (the key's segment before /meta.json), newest last.
  auto id_of = [](const std::string& key) {
    const std::string batch = key.substr(0, key.size() - strlen("/meta.json"));
    return batch.substr(batch.rfind('/') + 1);
  };
  std::sort(metas.begin(), metas.end(),
            [&](const std::string& a, const std::string& b) { return id_of(a) < id_of(b); });
  ASSERT_TRUE(store.DeleteMany({metas.back()}).ok());
  const size_t in_store = metas.size() - 1;
  const size_t local_batches = [&] {
    size_t n = 0;
    for (const auto& [key, path] : LocalObjects(data)) n += key.ends_with("/meta.json");
    return n;
  }();
  ASSERT_GT(local_batches, in_store);

  ServerProcess restarted(data, all_flags);
  ASSERT_TRUE(restarted.ready()) << restarted.output();
  ASSERT_TRUE(UploadCaughtUp(restarted)) << MetricsPage(restarted);
  const std::string page = MetricsPage(restarted);
  EXPECT_EQ(MetricSample(page, "strata_live_batches"), static_cast<double>(local_batches)) << page;
  EXPECT_EQ(MetricSample(page, "strata_upload_found_at_start_batches"),
            static_cast<double>(in_store))
      << "the batches already in the store are counted as uploaded";
  EXPECT_EQ(MetricSample(page, "strata_uploaded_batches_total"),
            static_cast<double>(local_batches - in_store))
      << "only the batches missing from the store are put";
  ExpectStoreMatchesLocal(store, data);
  if (check_times) ExpectMetaWrittenLast(flags[1].substr(strlen("file://")));
  EXPECT_EQ(restarted.Stop(), 0);

  // strata verify checks the remote copy: whole, then with a data object gone.
  std::vector<std::string> verify = {"verify", "--data-dir", data};
  verify.insert(verify.end(), flags.begin(), flags.end());
  auto [verified, report] = RunStrata(verify);
  EXPECT_EQ(verified, 0) << report;
  EXPECT_NE(report.find(fmt::format("{} ok, 0 not uploaded, 0 incomplete, 0 mismatch, 0 unreadable",
                                    local_batches)),
            std::string::npos)
      << report;
  std::string data_key;
  for (const std::string& key : ListAll(store)) {
    if (key.ends_with("/spans.tidx")) data_key = key;
  }
  ASSERT_FALSE(data_key.empty());
  ASSERT_TRUE(store.DeleteMany({data_key}).ok());
  auto [damaged, damaged_report] = RunStrata(verify);
  EXPECT_EQ(damaged, 3) << damaged_report;
  EXPECT_NE(damaged_report.find("remote incomplete: spans.tidx is missing"), std::string::npos)
      << damaged_report;
}

TEST(OffloadTest, FileStoreGetsEveryBatchAndResumesAfterSigkill) {
  TempDir dir("e2e-offload-file");
  const std::string root = dir.path() + "/store";
  PosixFileSystem posix;
  auto store = objectstore::OpenObjectStore(posix, {.url = "file://" + root},
                                            [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(store.ok()) << store.status();
  RunOffloadScenario(dir.path(), {"--object-store", "file://" + root}, **store,
                     /*check_times=*/true);
}

TEST(OffloadTest, RadosGatewayGetsEveryBatchAndResumesAfterSigkill) {
  TempDir dir("e2e-offload-s3");
  RadosGateway gateway(dir.path() + "/rgw");
  ASSERT_TRUE(gateway.started()) << gateway.output();
  const std::string url = "s3://" + gateway["S3_TEST_BUCKET"] + "/e2e";
  const std::vector<std::string> flags = RadosGatewayFlags(gateway, "e2e");
  PosixFileSystem posix;
  auto store =
      objectstore::OpenObjectStore(posix,
                                   {.url = url,
                                    .endpoint = gateway["S3_TEST_ENDPOINT"],
                                    .region = gateway["S3_TEST_REGION"],
                                    .access_key_id = gateway["S3_TEST_ACCESS_KEY_ID"],
                                    .secret_access_key = gateway["S3_TEST_SECRET_ACCESS_KEY"]},
                                   [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(store.ok()) << store.status();
  RunOffloadScenario(dir.path(), flags, **store, /*check_times=*/false);
}

}  // namespace
}  // namespace strata::testing
