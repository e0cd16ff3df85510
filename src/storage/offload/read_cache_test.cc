// ReadCache against the local BatchStore behind a wrapper that counts gets
// and can hold or fail them: a miss downloads and a hit does not, the least
// recently used unheld file goes first and the byte bound holds once
// nothing is held, concurrent fetches share one download, a failed or short
// download leaves nothing under a cache name, and a restart removes a
// crash's temporaries and keeps complete files.

#include "storage/offload/read_cache.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

class GatedStore final : public objectstore::BatchStore {
 public:
  explicit GatedStore(objectstore::BatchStore& inner) : inner_(inner) {}
  absl::Status PutIfAbsent(std::string_view key, std::string_view data) override {
    return inner_.PutIfAbsent(key, data);
  }
  absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                 const objectstore::PartReader& read) override {
    return inner_.PutStreamIfAbsent(key, size, read);
  }
  absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override {
    {
      MutexLock lock(&mu_);
      if (offset == 0) ++first_gets_;
      ++gets_;
      while (held_) cv_.Wait(&mu_);
      if (fail_after_gets_ >= 0 && gets_ > fail_after_gets_) {
        return absl::UnavailableError("injected failure");
      }
    }
    return inner_.Get(key, offset, length);
  }
  absl::StatusOr<objectstore::ObjectInfo> Head(std::string_view key) override {
    return inner_.Head(key);
  }
  absl::StatusOr<objectstore::ListPage> List(std::string_view prefix, std::string_view continuation,
                                             int max_keys) override {
    return inner_.List(prefix, continuation, max_keys);
  }
  absl::Status DeleteMany(const std::vector<std::string>& keys) override {
    return inner_.DeleteMany(keys);
  }
  std::string Describe() const override { return inner_.Describe(); }

  void Hold() {
    MutexLock lock(&mu_);
    held_ = true;
  }
  void Let() {
    MutexLock lock(&mu_);
    held_ = false;
    cv_.SignalAll();
  }
  void FailAfter(int gets) {
    MutexLock lock(&mu_);
    gets_ = 0;
    fail_after_gets_ = gets;
  }
  int first_gets() {
    MutexLock lock(&mu_);
    return first_gets_;
  }
  // Waits until `n` gets have begun.
  void AwaitFirstGets(int n) {
    MutexLock lock(&mu_);
    while (first_gets_ < n) cv_.WaitFor(&mu_, std::chrono::milliseconds(5));
  }

 private:
  objectstore::BatchStore& inner_;
  Mutex mu_;
  CondVar cv_;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  int gets_ ABSL_GUARDED_BY(mu_) = 0;
  int first_gets_ ABSL_GUARDED_BY(mu_) = 0;
  int fail_after_gets_ ABSL_GUARDED_BY(mu_) = -1;
};

class ReadCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(local.ok()) << local.status();
    local_ = *std::move(local);
    store_ = std::make_unique<GatedStore>(*local_);
  }

  // Puts an object of `size` bytes whose content depends on its key.
  std::string Put(const std::string& key, size_t size) {
    std::string data;
    for (size_t i = 0; i < size; ++i)
      data.push_back(static_cast<char>('a' + (i + key.size()) % 26));
    EXPECT_TRUE(store_->PutIfAbsent(key, data).ok());
    return data;
  }

  std::unique_ptr<ReadCache> OpenCache(uint64_t max_bytes, uint64_t chunk = 7) {
    auto cache =
        ReadCache::Open(fs_, CacheDir(), *store_,
                        ReadCacheOptions{.max_bytes = max_bytes, .fetch_chunk_bytes = chunk});
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *std::move(cache) : nullptr;
  }

  std::string CacheDir() const { return tmp_.path() + "/cache"; }
  std::vector<std::string> CacheFiles() {
    auto names = fs_.ListDir(CacheDir());
    EXPECT_TRUE(names.ok());
    return names.ok() ? *names : std::vector<std::string>{};
  }
  bool Cached(const std::string& key) {
    auto exists = fs_.Exists(CacheDir() + "/" + ReadCache::NameOf(key));
    return exists.ok() && *exists;
  }

  PosixFileSystem fs_;
  testing::ScopedTempDir tmp_{"read_cache"};
  std::unique_ptr<objectstore::LocalBatchStore> local_;
  std::unique_ptr<GatedStore> store_;
};

TEST_F(ReadCacheTest, MissDownloadsWholeObjectAndHitReadsTheLocalCopy) {
  const std::string data = Put("days/day=2026-01-01/a.batch/spans.parquet", 100);
  auto cache = OpenCache(1000);
  {
    auto file = cache->Fetch("days/day=2026-01-01/a.batch/spans.parquet", 100);
    ASSERT_TRUE(file.ok()) << file.status();
    auto read = fs_.ReadFile((*file)->path());
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(*read, data);
  }
  auto again = cache->Fetch("days/day=2026-01-01/a.batch/spans.parquet", 100);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(store_->first_gets(), 1);
  const ReadCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.bytes_fetched, 100u);
  EXPECT_EQ(stats.bytes_cached, 100u);
  EXPECT_EQ(stats.files_cached, 1u);
}

TEST_F(ReadCacheTest, LeastRecentlyUsedUnheldFileIsRemovedFirstAndTheBoundHolds) {
  Put("a", 100);
  Put("b", 100);
  Put("c", 100);
  auto cache = OpenCache(250);
  ASSERT_TRUE(cache->Fetch("a", 100).ok());
  ASSERT_TRUE(cache->Fetch("b", 100).ok());
  ASSERT_TRUE(cache->Fetch("a", 100).ok());  // a is now more recent than b
  ASSERT_TRUE(cache->Fetch("c", 100).ok());
  EXPECT_TRUE(Cached("a"));
  EXPECT_FALSE(Cached("b"));
  EXPECT_TRUE(Cached("c"));
  const ReadCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.bytes_cached, 200u);
  EXPECT_EQ(stats.files_removed, 1u);
  EXPECT_EQ(CacheFiles().size(), 2u);
}

TEST_F(ReadCacheTest, HeldFilesStayUntilReleasedThenTheBoundIsRestored) {
  Put("a", 100);
  Put("b", 100);
  Put("c", 100);
  auto cache = OpenCache(150);
  auto a = cache->Fetch("a", 100);
  auto b = cache->Fetch("b", 100);
  ASSERT_TRUE(a.ok() && b.ok());
  // Both held: over the bound, nothing removed.
  EXPECT_TRUE(Cached("a"));
  EXPECT_TRUE(Cached("b"));
  EXPECT_EQ(cache->Stats().bytes_cached, 200u);
  a->reset();
  EXPECT_FALSE(Cached("a"));
  EXPECT_TRUE(Cached("b"));
  b->reset();
  EXPECT_TRUE(Cached("b"));
  EXPECT_EQ(cache->Stats().bytes_cached, 100u);
  // An object larger than the bound is served, then removed when released.
  Put("big", 400);
  {
    auto big = cache->Fetch("big", 400);
    ASSERT_TRUE(big.ok());
    EXPECT_TRUE(Cached("big"));
  }
  EXPECT_FALSE(Cached("big"));
  EXPECT_LE(cache->Stats().bytes_cached, 150u);
}

TEST_F(ReadCacheTest, ConcurrentFetchesOfOneKeyShareOneDownload) {
  const std::string data = Put("shared", 1000);
  auto cache = OpenCache(10000, 64);
  store_->Hold();
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      auto file = cache->Fetch("shared", 1000);
      if (!file.ok()) return;
      auto read = fs_.ReadFile((*file)->path());
      if (read.ok() && *read == data) ++ok;
    });
  }
  store_->AwaitFirstGets(1);
  // Every thread is either downloading or waiting; none has a file yet,
  // and the download in progress is not visible under the cache name.
  EXPECT_FALSE(Cached("shared"));
  store_->Let();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads);
  EXPECT_EQ(store_->first_gets(), 1);
  EXPECT_EQ(cache->Stats().bytes_fetched, 1000u);
  EXPECT_EQ(cache->Stats().hits + cache->Stats().misses, static_cast<uint64_t>(kThreads));
}

TEST_F(ReadCacheTest, FailedDownloadLeavesNothingUnderACacheName) {
  Put("obj", 100);
  auto cache = OpenCache(1000, 10);
  store_->FailAfter(3);  // three chunks arrive, then the store fails
  auto file = cache->Fetch("obj", 100);
  EXPECT_TRUE(absl::IsUnavailable(file.status())) << file.status();
  EXPECT_FALSE(Cached("obj"));
  EXPECT_TRUE(CacheFiles().empty());
  EXPECT_EQ(cache->Stats().files_cached, 0u);
  // The next fetch downloads it whole.
  store_->FailAfter(-1);
  auto again = cache->Fetch("obj", 100);
  ASSERT_TRUE(again.ok()) << again.status();
  auto size = fs_.FileSize((*again)->path());
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 100u);
}

TEST_F(ReadCacheTest, ObjectOfAnotherLengthIsDataLoss) {
  Put("short", 90);
  Put("long", 110);
  auto cache = OpenCache(1000, 32);
  EXPECT_TRUE(absl::IsDataLoss(cache->Fetch("short", 100).status()));
  EXPECT_TRUE(absl::IsDataLoss(cache->Fetch("long", 100).status()));
  EXPECT_TRUE(CacheFiles().empty());
}

TEST_F(ReadCacheTest, StartRemovesCrashTemporariesAndKeepsCompleteFiles) {
  const std::string data = Put("kept", 50);
  {
    auto cache = OpenCache(1000);
    ASSERT_TRUE(cache->Fetch("kept", 50).ok());
  }
  // What a crash in the middle of a download leaves.
  ASSERT_TRUE(WriteFile(fs_, CacheDir() + "/~17.tmp", "partial").ok());
  auto cache = OpenCache(1000);
  EXPECT_EQ(CacheFiles(), std::vector<std::string>{"kept"});
  EXPECT_EQ(cache->Stats().bytes_cached, 50u);
  auto file = cache->Fetch("kept", 50);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(cache->Stats().hits, 1u);
  EXPECT_EQ(store_->first_gets(), 1);  // the first cache's download only
  // A file whose length is not the one asked for is fetched again.
  file->reset();
  ASSERT_TRUE(WriteFile(fs_, CacheDir() + "/kept", "trunc").ok());
  auto reopened = OpenCache(1000);
  auto refetched = reopened->Fetch("kept", 50);
  ASSERT_TRUE(refetched.ok());
  auto read = fs_.ReadFile((*refetched)->path());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, data);
}

}  // namespace
}  // namespace strata::storage
