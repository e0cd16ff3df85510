// OpenObjectStore(): which store a --object-store URL opens, how flags and
// variables fill an S3 store's settings, and the URLs it refuses.

#include "objectstore/store_url.h"

#include <cstdlib>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/s3_batch_store.h"

namespace strata::objectstore {
namespace {

using ::testing::HasSubstr;

EnvironmentLookup Env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(StoreUrlTest, FileUrlOpensALocalStoreOnItsPath) {
  PosixFileSystem fs;
  std::string dir = ::testing::TempDir() + "store_url_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto store = OpenObjectStore(fs, {.url = "file://" + dir + "/objects/"}, Env({}));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->Describe(), "local:" + dir + "/objects");
  ASSERT_TRUE((*store)->PutIfAbsent("a/b", "x").ok());
  EXPECT_EQ(*(*store)->Get("a/b", 0, 10), "x");
}

TEST(StoreUrlTest, S3UrlTakesBucketAndPrefixFromTheUrlAndTheRestFromFlagsThenVariables) {
  PosixFileSystem fs;
  auto store = OpenObjectStore(
      fs,
      {.url = "s3://my-bucket/a/b/", .endpoint = "http://127.0.0.1:9", .access_key_id = "FLAGKEY"},
      Env({{"STRATA_S3_BUCKET", "other"},
           {"STRATA_S3_ENDPOINT", "http://10.0.0.1:1"},
           {"AWS_SECRET_ACCESS_KEY", "secret"},
           {"AWS_ACCESS_KEY_ID", "ENVKEY"}}));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->Describe(), "s3://my-bucket/a/b/ at http://127.0.0.1:9");
  auto* s3 = dynamic_cast<S3BatchStore*>(store->get());
  ASSERT_NE(s3, nullptr);
  EXPECT_EQ(s3->config().credentials.access_key_id, "FLAGKEY");
  EXPECT_EQ(s3->config().credentials.secret_access_key, "secret");
}

TEST(StoreUrlTest, RefusesWhatCannotWorkNamingTheUrl) {
  PosixFileSystem fs;
  const EnvironmentLookup creds = Env({{"AWS_ACCESS_KEY_ID", "K"}, {"AWS_SECRET_ACCESS_KEY", "S"}});
  for (const std::string url : {"", "http://x", "file://relative/path", "file:///", "s3://",
                                "s3:///prefix", "s3://Bad_Bucket"}) {
    auto store = OpenObjectStore(fs, {.url = url}, creds);
    ASSERT_FALSE(store.ok()) << url;
    EXPECT_TRUE(absl::IsInvalidArgument(store.status())) << store.status();
    EXPECT_THAT(store.status().message(), HasSubstr("--object-store")) << url;
  }
  auto no_keys = OpenObjectStore(fs, {.url = "s3://bucket"}, Env({}));
  ASSERT_FALSE(no_keys.ok());
  EXPECT_THAT(no_keys.status().message(), HasSubstr("ACCESS_KEY_ID"));
}

}  // namespace
}  // namespace strata::objectstore
