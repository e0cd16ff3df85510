#pragma once

// Test-only: the fixture the verify and quarantine suites share (a data
// directory of three traffic batches on the real file system, and the
// DuckDB engine deep verification reads Parquet through). Included only by
// verify_test.cc and quarantine_test.cc.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/parquet_file_check.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/verify_testing.h"

namespace strata::storage::verify_testing {

class TrafficBatchesTest : public ::testing::Test {
 protected:
  explicit TrafficBatchesTest(std::string_view label, int spans_per_batch = 300)
      : temp_(label), spans_per_batch_(spans_per_batch) {}

  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    data_ = temp_.path() + "/data";
    absl::StatusOr<std::vector<std::string>> dirs =
        WriteTrafficBatches(posix_, data_, 3, spans_per_batch_);
    ASSERT_TRUE(dirs.ok()) << dirs.status();
    ASSERT_EQ(dirs->size(), 3u);
    dirs_ = *dirs;
    absl::StatusOr<std::unique_ptr<query::DuckDbEngine>> engine =
        query::OpenParquetFileCheckEngine();
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }

  testing::ScopedTempDir temp_;
  const int spans_per_batch_;
  PosixFileSystem posix_;
  std::string data_;
  std::vector<std::string> dirs_;
  std::unique_ptr<query::DuckDbEngine> engine_;
};

}  // namespace strata::storage::verify_testing
