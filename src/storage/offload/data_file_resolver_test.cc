#include "storage/offload/data_file_resolver.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

class DataFileResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(local.ok()) << local.status();
    store_ = *std::move(local);
    auto cache = ReadCache::Open(fs_, tmp_.path() + "/cache", *store_, ReadCacheOptions{});
    ASSERT_TRUE(cache.ok()) << cache.status();
    resolver_ = std::make_unique<DataFileResolver>(*std::move(cache), *store_);
    auto id = BatchId::Parse(
        "20260101000000000000"
        "0"
        "00");
    ASSERT_TRUE(id.ok()) << id.status();
    BatchRecord record{.id = *id, .day = "2026-01-01", .dir = tmp_.path() + "/b.batch"};
    record.meta.spans_parquet = FileMeta{.bytes = remote_.size(), .xxh3_64 = 0};
    record.meta.spans_tidx = FileMeta{.bytes = 4, .xxh3_64 = 0};
    batch_ = std::make_shared<const LiveBatch>(std::move(record));
    ASSERT_TRUE(
        store_->PutIfAbsent(BatchObjectKey("2026-01-01", *id, kSpansFileName), remote_).ok());
  }
  void TearDown() override { InstallDataFileResolver(nullptr); }

  PosixFileSystem fs_;
  testing::ScopedTempDir tmp_{"resolver"};
  std::unique_ptr<objectstore::LocalBatchStore> store_;
  std::unique_ptr<DataFileResolver> resolver_;
  std::shared_ptr<const LiveBatch> batch_;
  const std::string remote_ = "the spans.parquet object";
};

TEST_F(DataFileResolverTest, LocalBatchResolvesToItsDirectory) {
  auto file = resolver_->Resolve(*batch_, kSpansFileName);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->path, batch_->dir() + "/spans.parquet");
  EXPECT_EQ(file->hold, nullptr);
  EXPECT_EQ(resolver_->CacheStats().misses, 0u);
}

TEST_F(DataFileResolverTest, EvictedBatchResolvesToAHeldCachedCopy) {
  resolver_->MarkEvicted(batch_->id());
  auto file = resolver_->Resolve(*batch_, kSpansFileName);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_NE(file->hold, nullptr);
  EXPECT_TRUE(file->path.starts_with(tmp_.path() + "/cache/")) << file->path;
  EXPECT_EQ(*fs_.ReadFile(file->path), remote_);
  EXPECT_EQ(resolver_->PathOf(*batch_, kSpansFileName), file->path);
  // spans.tidx is never evicted.
  auto tidx = resolver_->Resolve(*batch_, kTraceIndexFileName);
  ASSERT_TRUE(tidx.ok());
  EXPECT_EQ(tidx->path, batch_->dir() + "/spans.tidx");
  // A file the batch does not have.
  EXPECT_TRUE(absl::IsNotFound(resolver_->Resolve(*batch_, kLogsFileName).status()));
  auto again = resolver_->Resolve(*batch_, kSpansFileName);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(resolver_->CacheStats().hits, 1u);
  EXPECT_EQ(resolver_->CacheStats().misses, 1u);
}

TEST_F(DataFileResolverTest, ResolveDataFileUsesTheInstalledResolverOnly) {
  resolver_->MarkEvicted(batch_->id());
  auto plain = ResolveDataFile(*batch_, kSpansFileName);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->path, batch_->dir() + "/spans.parquet");
  EXPECT_EQ(DataFilePathOf(*batch_, kSpansFileName), batch_->dir() + "/spans.parquet");
  InstallDataFileResolver(resolver_.get());
  auto evicted = ResolveDataFile(*batch_, kSpansFileName);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_NE(evicted->hold, nullptr);
  EXPECT_EQ(*fs_.ReadFile(evicted->path), remote_);
  EXPECT_EQ(DataFilePathOf(*batch_, kSpansFileName), evicted->path);
}

TEST_F(DataFileResolverTest, MissingObjectIsAnErrorNamingTheBatch) {
  auto id = BatchId::Parse(
      "20260101000000000001"
      "0"
      "00");
  ASSERT_TRUE(id.ok());
  BatchRecord record{.id = *id, .day = "2026-01-01", .dir = tmp_.path() + "/c.batch"};
  record.meta.spans_parquet = FileMeta{.bytes = 10, .xxh3_64 = 0};
  LiveBatch other(std::move(record));
  resolver_->MarkEvicted(other.id());
  auto file = resolver_->Resolve(other, kSpansFileName);
  ASSERT_FALSE(file.ok());
  EXPECT_TRUE(absl::IsNotFound(file.status())) << file.status();
  EXPECT_NE(file.status().message().find("evicted batch"), std::string_view::npos);
}

}  // namespace
}  // namespace strata::storage
