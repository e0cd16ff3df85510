#include "objectstore/local_batch_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/posix_file_system.h"
#include "objectstore/batch_store_conformance_testing.h"

namespace strata::objectstore {
namespace {

PosixFileSystem& Fs() {
  static PosixFileSystem* fs = new PosixFileSystem();
  return *fs;
}

std::string FreshDir() {
  std::string dir = testing::TempDir() + "local_batch_store_XXXXXX";
  char* made = mkdtemp(dir.data());
  EXPECT_NE(made, nullptr);
  return dir;
}

BatchStoreFactory LocalFactory() {
  return {"Local", [] {
            auto store = LocalBatchStore::Open(Fs(), FreshDir() + "/objects");
            EXPECT_TRUE(store.ok()) << store.status();
            return store.ok() ? std::unique_ptr<BatchStore>(std::move(*store)) : nullptr;
          }};
}

INSTANTIATE_TEST_SUITE_P(Local, BatchStoreConformanceTest, testing::Values(LocalFactory()),
                         FactoryName);

TEST(LocalBatchStoreTest, AFailedPutLeavesNothingVisibleOrStaged) {
  std::string root = FreshDir();
  auto store = LocalBatchStore::Open(Fs(), root);
  ASSERT_TRUE(store.ok());
  // A file where the key's directory must go makes the link fail.
  ASSERT_TRUE(WriteFile(Fs(), root + "/blocked", "x").ok());
  EXPECT_FALSE((*store)->PutIfAbsent("blocked/meta.json", "data").ok());
  EXPECT_TRUE(Fs().ListDir(root + "/.staging")->empty());
  EXPECT_TRUE(absl::IsNotFound((*store)->Head("blocked/meta.json").status()));
}

TEST(LocalBatchStoreTest, StagedLeftoversOfACrashAreNeverListed) {
  std::string root = FreshDir();
  auto store = LocalBatchStore::Open(Fs(), root);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(WriteFile(Fs(), root + "/.staging/deadbeef-0", "half a batch").ok());
  auto page = (*store)->List("", "", 1000);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->objects.empty());
}

}  // namespace
}  // namespace strata::objectstore
