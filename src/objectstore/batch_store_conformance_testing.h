#pragma once

// The conformance suite every BatchStore passes
// (batch_store_conformance_test.cc). Each implementation's test file
// instantiates it with a factory:
//
//   INSTANTIATE_TEST_SUITE_P(Local, BatchStoreConformanceTest,
//                            testing::Values(LocalFactory()), FactoryName);
//
// Every test writes under its own key prefix (`ns()`), so stores that share
// a bucket between tests (S3) start each test empty.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "objectstore/batch_store.h"

namespace strata::objectstore {

struct BatchStoreFactory {
  std::string name;
  std::function<std::unique_ptr<BatchStore>()> make;
};

// gtest prints a parameter with this (instead of its bytes).
inline void PrintTo(const BatchStoreFactory& factory, std::ostream* out) { *out << factory.name; }

inline std::string FactoryName(const testing::TestParamInfo<BatchStoreFactory>& info) {
  return info.param.name;
}

class BatchStoreConformanceTest : public testing::TestWithParam<BatchStoreFactory> {
 protected:
  void SetUp() override;
  // The test's own key prefix ("conformance-<random>/").
  const std::string& ns() const { return ns_; }
  BatchStore& store() { return *store_; }

  std::unique_ptr<BatchStore> store_;
  std::string ns_;
};

}  // namespace strata::objectstore
