#pragma once

// A fixture for the Prometheus endpoints' differential tests: metrics
// batches written to a real storage engine, then two Apis over them on
// loopback, one keeping decoded files (the default --promql-cache-mb) and
// one without the cache (bound 0), so a test can ask both the same thing
// and compare the answers byte for byte.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/api_test_server.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "storage/testing/commit_testing.h"

namespace strata::api::test_support {

class CachedAndUncachedApisTest : public ::testing::Test {
 protected:
  // Writes `batches` batches, batch `b` from `batch_json(t0 in unix
  // nanoseconds, b)` (OTLP/JSON metrics), one commit each, then starts both
  // Apis accepting `token`. t0 is `seconds_ago` before now.
  void WriteAndServe(int batches, int64_t seconds_ago, const std::string& token,
                     const std::function<std::string(int64_t, int)>& batch_json) {
    token_ = token;
    t0_s_ = SystemNowUnixNano() / kNanosPerSecond - seconds_ago;
    data_dir_ = tmp_.path() + "/data";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    for (int b = 0; b < batches; ++b) {
      auto metrics = std::make_unique<otlp::MetricBatch>();
      const absl::Status decoded =
          otlp::DecodeMetricsJson(batch_json(t0_s_ * kNanosPerSecond, b), metrics.get());
      ASSERT_TRUE(decoded.ok()) << decoded;
      storage::WriteRequest request;
      request.metrics = std::move(metrics);
      request.rows = 40;
      request.bytes = 16384;
      ASSERT_TRUE(storage_->Write(std::move(request)).ok());
    }
    ASSERT_EQ(storage_->Pin()->size(), static_cast<size_t>(batches));
    cached_ = StartLoopbackApi(storage_.get(), &fs_, data_dir_, token);
    uncached_ = StartLoopbackApi(storage_.get(), &fs_, data_dir_, token, 0);
    ASSERT_NE(cached_.http_server, nullptr);
    ASSERT_NE(uncached_.http_server, nullptr);
  }

  void TearDown() override {
    for (LoopbackApi* one : {&cached_, &uncached_}) {
      if (one->http_server != nullptr) one->http_server->Shutdown(std::chrono::seconds(5));
      *one = {};
    }
    if (storage_ != nullptr) storage_->Shutdown(std::chrono::seconds(5));
  }

  // GET /prometheus/api/v1/`path` of `api` with `params` ("name=value");
  // the body, after a test failure unless the status is 200.
  std::string Get(const LoopbackApi& api, const std::string& path,
                  const std::vector<std::string>& params) const {
    const server::testing::HttpAnswer answer = GetPrometheus(api, token_, path, params);
    EXPECT_EQ(answer.status, 200) << path << "\n" << answer.body;
    return answer.body;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"prometheus_apis"};
  std::string data_dir_;
  std::unique_ptr<storage::Storage> storage_;
  LoopbackApi cached_, uncached_;
  std::string token_;
  int64_t t0_s_ = 0;  // unix seconds
};

}  // namespace strata::api::test_support
