// The S3 store against a real S3 server: the conformance suite, and what
// only S3 has (credentials, buckets, retries, an upload cut off). The
// server comes from the S3_TEST_* variables scripts/radosgw.sh
// prints; ctest runs this binary through `scripts/radosgw.sh run`. Without
// them every test FAILS (never skips): a CI run that lost its server must
// not pass.

#include "objectstore/s3_batch_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "fmt/format.h"
#include "objectstore/batch_store_conformance_testing.h"
#include "objectstore/fault_proxy_testing.h"

namespace strata::objectstore {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// The server's config, or a failed assertion naming what is missing.
S3Config ServerConfig() {
  S3Config config;
  config.endpoint = Env("S3_TEST_ENDPOINT");
  config.bucket = Env("S3_TEST_BUCKET");
  config.region = Env("S3_TEST_REGION");
  config.credentials.access_key_id = Env("S3_TEST_ACCESS_KEY_ID");
  config.credentials.secret_access_key = Env("S3_TEST_SECRET_ACCESS_KEY");
  if (config.region.empty()) config.region = "default";
  EXPECT_FALSE(config.endpoint.empty() || config.bucket.empty() ||
               config.credentials.access_key_id.empty())
      << "no S3 server: run these tests through `bash scripts/radosgw.sh run <test binary>`, "
         "or export the S3_TEST_* variables `scripts/radosgw.sh start DIR` prints";
  config.backoff_initial = milliseconds(20);
  config.backoff_max = milliseconds(200);
  config.part_bytes = kMinS3PartBytes;  // streamed puts of a few MiB are multipart
  return config;
}

std::unique_ptr<S3BatchStore> MakeStore(S3Config config) {
  auto store = S3BatchStore::Create(std::move(config));
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

// Fails the whole run, before any test, when no server is configured.
class RequireServer : public testing::Environment {
 public:
  void SetUp() override {
    ASSERT_FALSE(Env("S3_TEST_ENDPOINT").empty() || Env("S3_TEST_BUCKET").empty())
        << "no S3 server: run these tests through `bash scripts/radosgw.sh run <test binary>`, "
           "or export the S3_TEST_* variables `scripts/radosgw.sh start DIR` prints";
  }
};
[[maybe_unused]] testing::Environment* const kRequireServer =
    testing::AddGlobalTestEnvironment(new RequireServer);

BatchStoreFactory S3Factory(std::string name, S3Addressing addressing) {
  return {std::move(name), [addressing]() -> std::unique_ptr<BatchStore> {
            S3Config config = ServerConfig();
            config.addressing = addressing;
            if (addressing == S3Addressing::kVirtualHost) {
              // bucket.localhost resolves to loopback (libcurl), and the
              // gateway's rgw_dns_name is "localhost".
              std::string host;
              int port = 0;
              if (!SplitHttpEndpoint(config.endpoint, &host, &port)) return nullptr;
              config.endpoint = fmt::format("http://localhost:{}", port);
            }
            return MakeStore(config);
          }};
}

INSTANTIATE_TEST_SUITE_P(S3, BatchStoreConformanceTest,
                         testing::Values(S3Factory("PathStyle", S3Addressing::kPath),
                                         S3Factory("VirtualHostStyle", S3Addressing::kVirtualHost)),
                         FactoryName);

std::string UniqueKey(std::string_view what) {
  std::random_device random;
  return fmt::format("s3-test-{:08x}{:08x}/{}", random(), random(), what);
}

std::string SlowDownBody() {
  return "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please reduce your "
         "request rate.</Message></Error>";
}

// A store whose requests go through `proxy`.
std::unique_ptr<S3BatchStore> ThroughProxy(const FaultProxy& proxy, int max_attempts) {
  S3Config config = ServerConfig();
  config.endpoint = proxy.endpoint();
  config.max_attempts = max_attempts;
  return MakeStore(config);
}

std::unique_ptr<FaultProxy> ProxyToServer(std::function<FaultProxy::Plan(int)> plan) {
  std::string host;
  int port = 0;
  EXPECT_TRUE(SplitHttpEndpoint(ServerConfig().endpoint, &host, &port));
  return std::make_unique<FaultProxy>(host, port, std::move(plan));
}

TEST(S3BatchStoreTest, WrongSecretIsPermissionDeniedNamingTheSecretVariable) {
  S3Config config = ServerConfig();
  config.credentials.secret_access_key += "x";
  auto store = MakeStore(config);
  ASSERT_NE(store, nullptr);
  absl::Status put = store->PutIfAbsent(UniqueKey("a"), "data");
  EXPECT_TRUE(absl::IsPermissionDenied(put)) << put;
  EXPECT_NE(put.message().find("SignatureDoesNotMatch"), std::string::npos) << put;
  EXPECT_NE(put.message().find("STRATA_S3_SECRET_ACCESS_KEY"), std::string::npos) << put;
  absl::Status list = store->List("", "", 10).status();
  EXPECT_TRUE(absl::IsPermissionDenied(list)) << list;
}

TEST(S3BatchStoreTest, UnknownAccessKeyIsPermissionDeniedNamingTheKeyVariable) {
  S3Config config = ServerConfig();
  config.credentials.access_key_id = "AKIANOSUCHKEY0000000";
  auto store = MakeStore(config);
  ASSERT_NE(store, nullptr);
  absl::Status put = store->PutIfAbsent(UniqueKey("a"), "data");
  EXPECT_TRUE(absl::IsPermissionDenied(put)) << put;
  EXPECT_NE(put.message().find("InvalidAccessKeyId"), std::string::npos) << put;
  EXPECT_NE(put.message().find("STRATA_S3_ACCESS_KEY_ID"), std::string::npos) << put;
}

TEST(S3BatchStoreTest, MissingBucketIsFailedPreconditionNamingTheBucket) {
  S3Config config = ServerConfig();
  config.bucket = "strata-no-such-bucket";
  auto store = MakeStore(config);
  ASSERT_NE(store, nullptr);
  absl::Status put = store->PutIfAbsent(UniqueKey("a"), "data");
  EXPECT_TRUE(absl::IsFailedPrecondition(put)) << put;
  EXPECT_NE(put.message().find("\"strata-no-such-bucket\" does not exist"), std::string::npos)
      << put;
  EXPECT_NE(put.message().find("STRATA_S3_BUCKET"), std::string::npos) << put;
  absl::Status list = store->List("", "", 10).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(list)) << list;
}

TEST(S3BatchStoreTest, SlowDownIsRetriedWithBackoffThenSucceeds) {
  auto proxy = ProxyToServer([](int n) {
    if (n < 2) return FaultProxy::Plan{FaultProxy::Action::kAnswer, 503, SlowDownBody()};
    return FaultProxy::Plan{};
  });
  auto store = ThroughProxy(*proxy, 5);
  std::string key = UniqueKey("meta.json");
  auto started = steady_clock::now();
  absl::Status put = store->PutIfAbsent(key, "after two 503s");
  auto elapsed = steady_clock::now() - started;
  ASSERT_TRUE(put.ok()) << put;
  EXPECT_EQ(proxy->requests(), 3);
  // Waits of at least half of 20 ms and half of 40 ms.
  EXPECT_GE(elapsed, milliseconds(30));
  auto read = MakeStore(ServerConfig())->Get(key, 0, 100);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "after two 503s");
}

TEST(S3BatchStoreTest, ServerErrorsAreRetriedAtMostMaxAttemptsThenUnavailable) {
  auto proxy = ProxyToServer([](int) {
    return FaultProxy::Plan{FaultProxy::Action::kAnswer, 500,
                            "<Error><Code>InternalError</Code></Error>"};
  });
  auto store = ThroughProxy(*proxy, 4);
  auto started = steady_clock::now();
  absl::Status put = store->PutIfAbsent(UniqueKey("x"), "data");
  auto elapsed = steady_clock::now() - started;
  EXPECT_TRUE(absl::IsUnavailable(put)) << put;
  EXPECT_NE(put.message().find("after 4 attempts"), std::string::npos) << put;
  EXPECT_EQ(proxy->requests(), 4);
  // Three waits, each at most min(200 ms, 20 ms * 2^n): bounded.
  EXPECT_LT(elapsed, milliseconds(20 + 40 + 80 + 2000));
  EXPECT_GE(elapsed, milliseconds(10 + 20 + 40));
}

TEST(S3BatchStoreTest, ClientErrorsAreNotRetried) {
  auto proxy = ProxyToServer([](int) {
    return FaultProxy::Plan{FaultProxy::Action::kAnswer, 400,
                            "<Error><Code>InvalidRequest</Code></Error>"};
  });
  auto store = ThroughProxy(*proxy, 5);
  absl::Status put = store->PutIfAbsent(UniqueKey("x"), "data");
  EXPECT_FALSE(put.ok());
  EXPECT_EQ(proxy->requests(), 1);
}

TEST(S3BatchStoreTest, UploadCutOffMidwayLeavesNoVisibleObject) {
  auto proxy = ProxyToServer([](int) {
    return FaultProxy::Plan{FaultProxy::Action::kCutRequestBody, 0, ""};
  });
  auto store = ThroughProxy(*proxy, 1);
  std::string key = UniqueKey("spans.parquet");
  std::string data(1 << 20, 'd');
  absl::Status put = store->PutIfAbsent(key, data);
  EXPECT_TRUE(absl::IsUnavailable(put)) << put;
  EXPECT_EQ(proxy->requests(), 1);
  auto direct = MakeStore(ServerConfig());
  absl::Status head = direct->Head(key).status();
  EXPECT_TRUE(absl::IsNotFound(head)) << head;
  auto page = direct->List(key.substr(0, key.find('/') + 1), "", 10);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(page->objects.empty());
  // The key is still free: the next writer wins it.
  EXPECT_TRUE(direct->PutIfAbsent(key, "whole").ok());
}

TEST(S3BatchStoreTest, RetryAfterACutUploadStoresTheWholeObject) {
  auto proxy = ProxyToServer([](int n) {
    if (n == 0) return FaultProxy::Plan{FaultProxy::Action::kCutRequestBody, 0, ""};
    return FaultProxy::Plan{};
  });
  auto store = ThroughProxy(*proxy, 3);
  std::string key = UniqueKey("logs.parquet");
  std::string data(300000, 'l');
  ASSERT_TRUE(store->PutIfAbsent(key, data).ok());
  EXPECT_EQ(proxy->requests(), 2);
  auto read = MakeStore(ServerConfig())->Get(key, 0, data.size() + 1);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, data);
}

TEST(S3BatchStoreTest, LostAnswerToASuccessfulPutStillCountsAsOurs) {
  auto proxy = ProxyToServer([](int n) {
    if (n == 0) return FaultProxy::Plan{FaultProxy::Action::kDropAnswer, 0, ""};
    return FaultProxy::Plan{};
  });
  auto store = ThroughProxy(*proxy, 3);
  std::string key = UniqueKey("meta.json");
  absl::Status put = store->PutIfAbsent(key, "ours");
  EXPECT_TRUE(put.ok()) << put;
  // The retry met 412, and the HEAD that followed found our bytes.
  EXPECT_EQ(proxy->requests(), 3);
  // Another writer's bytes under the key are not ours.
  auto other = ThroughProxy(*proxy, 3);
  EXPECT_TRUE(absl::IsAlreadyExists(other->PutIfAbsent(key, "theirs")));
}

// 12 MiB in 5 MiB parts: HEAD (request 0), initiate (1), three parts (2-4),
// complete (5).
std::string ThreePartObject() { return std::string((size_t{12} << 20) + 77, 'm'); }

PartReader ReaderOf(const std::string& data) {
  return [&data](uint64_t offset, size_t length) -> absl::StatusOr<std::string> {
    return data.substr(offset, length);
  };
}

TEST(S3BatchStoreTest, MultipartPartCutOffMidwayIsRetriedAndTheObjectIsWhole) {
  auto proxy = ProxyToServer([](int n) {
    if (n == 3) return FaultProxy::Plan{FaultProxy::Action::kCutRequestBody, 0, ""};
    return FaultProxy::Plan{};
  });
  auto store = ThroughProxy(*proxy, 3);
  const std::string key = UniqueKey("spans.parquet");
  const std::string data = ThreePartObject();
  absl::Status put = store->PutStreamIfAbsent(key, data.size(), ReaderOf(data));
  ASSERT_TRUE(put.ok()) << put;
  EXPECT_EQ(proxy->requests(), 7);  // the second part twice
  auto read = MakeStore(ServerConfig())->Get(key, 0, data.size() + 1);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(*read == data);
}

TEST(S3BatchStoreTest, LostAnswerToACompletedMultipartUploadStillCountsAsOurs) {
  auto proxy = ProxyToServer([](int n) {
    if (n == 5) return FaultProxy::Plan{FaultProxy::Action::kDropAnswer, 0, ""};
    // RADOS gateway answers a repeated completion 200; AWS answers 404.
    if (n == 6) {
      return FaultProxy::Plan{FaultProxy::Action::kAnswer, 404,
                              "<Error><Code>NoSuchUpload</Code></Error>"};
    }
    return FaultProxy::Plan{};
  });
  auto store = ThroughProxy(*proxy, 3);
  const std::string key = UniqueKey("logs.parquet");
  const std::string data = ThreePartObject();
  absl::Status put = store->PutStreamIfAbsent(key, data.size(), ReaderOf(data));
  EXPECT_TRUE(put.ok()) << put;
  // The retried completion found the upload gone, and the HEAD that
  // followed found the ETag of our parts.
  EXPECT_EQ(proxy->requests(), 8);
  auto info = MakeStore(ServerConfig())->Head(key);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, data.size());
}

TEST(S3BatchStoreTest, MultipartUploadWhosePartsFailLeavesNoObjectAndIsAborted) {
  auto proxy = ProxyToServer([](int n) {
    if (n >= 2 && n <= 4) {
      return FaultProxy::Plan{FaultProxy::Action::kAnswer, 500,
                              "<Error><Code>InternalError</Code></Error>"};
    }
    return FaultProxy::Plan{};
  });
  auto store = ThroughProxy(*proxy, 3);
  const std::string key = UniqueKey("metrics.parquet");
  const std::string data = ThreePartObject();
  absl::Status put = store->PutStreamIfAbsent(key, data.size(), ReaderOf(data));
  EXPECT_TRUE(absl::IsUnavailable(put)) << put;
  // HEAD, initiate, three tries of the first part, then the abort.
  EXPECT_EQ(proxy->requests(), 6);
  auto direct = MakeStore(ServerConfig());
  EXPECT_TRUE(absl::IsNotFound(direct->Head(key).status()));
  ASSERT_TRUE(direct->PutStreamIfAbsent(key, data.size(), ReaderOf(data)).ok());
}

}  // namespace
}  // namespace strata::objectstore
