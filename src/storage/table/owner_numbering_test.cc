#include "storage/table/owner_numbering.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "storage/testing/table_test_batches.h"

namespace strata::storage {
namespace {

using table_testing::BatchBuilder;

// One request: resources `a` (service.name=svc), `b` (the same attributes
// under another schema url) and `c` (svc plus a nested array value), and a
// scope "lib" under each of a and b, plus "lib" v2 under a.
otlp::TraceBatch Request(const std::string& service) {
  otlp::TraceBatch batch;
  BatchBuilder build(&batch);
  const uint32_t a =
      build.Resource({{build.S("service.name"), BatchBuilder::Str(build.S(service))}}, "", 0, 0);
  const uint32_t b =
      build.Resource({{build.S("service.name"), BatchBuilder::Str(build.S(service))}}, "url", 0, 0);
  build.Resource({{build.S("service.name"), BatchBuilder::Str(build.S(service))},
                  {build.S("list"), build.Array({BatchBuilder::Int(1), BatchBuilder::Int(2)})}},
                 "", 0, 0);
  build.Scope(a, "lib", "v1", {}, 0, "");
  build.Scope(b, "lib", "v1", {}, 0, "");
  build.Scope(a, "lib", "v2", {}, 0, "");
  return batch;
}

TEST(OwnerNumberingTest, EqualContentSharesAnIndexAcrossBatches) {
  const otlp::TraceBatch first = Request("svc");
  const otlp::TraceBatch second = Request("svc");
  const otlp::TraceBatch other = Request("other");
  OwnerNumbering numbering;
  absl::StatusOr<OwnerNumbering::Assigned> one = numbering.Number(first);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->resource, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(one->scope, (std::vector<uint32_t>{0, 1, 2}));
  absl::StatusOr<OwnerNumbering::Assigned> two = numbering.Number(second);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->resource, one->resource);
  EXPECT_EQ(two->scope, one->scope);
  absl::StatusOr<OwnerNumbering::Assigned> three = numbering.Number(other);
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->resource, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(three->scope, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(numbering.resources(), 6u);
  EXPECT_EQ(numbering.scopes(), 6u);
}

TEST(OwnerNumberingTest, NestedValuesAreCompared) {
  otlp::TraceBatch batch;
  BatchBuilder build(&batch);
  build.Resource({{build.S("k"), build.Array({BatchBuilder::Int(1), BatchBuilder::Int(2)})}}, "", 0,
                 0);
  build.Resource({{build.S("k"), build.Array({BatchBuilder::Int(1), BatchBuilder::Int(3)})}}, "", 0,
                 0);
  build.Resource({{build.S("k"), build.Array({BatchBuilder::Int(1), BatchBuilder::Int(2)})}}, "", 0,
                 0);
  // The same bits as another type: a different value.
  build.Resource({{build.S("k"), BatchBuilder::Int(0)}}, "", 0, 0);
  build.Resource({{build.S("k"), BatchBuilder::Bool(false)}}, "", 0, 0);
  // Entity refs and the dropped count are content too.
  build.Resource({}, "", 0, 2);
  build.Resource({}, "", 0, 1);
  build.Resource({}, "", 0, 2);
  build.Resource({}, "", 1, 2);
  OwnerNumbering numbering;
  absl::StatusOr<OwnerNumbering::Assigned> got = numbering.Number(batch);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->resource, (std::vector<uint32_t>{0, 1, 0, 2, 3, 4, 5, 4, 6}));
}

TEST(OwnerNumberingTest, PastTheKeyBudgetNewOwnersAreNotShared) {
  const otlp::TraceBatch first = Request("svc");
  const otlp::TraceBatch second = Request("svc");
  OwnerNumbering numbering(/*key_budget=*/0);
  absl::StatusOr<OwnerNumbering::Assigned> one = numbering.Number(first);
  absl::StatusOr<OwnerNumbering::Assigned> two = numbering.Number(second);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(two->resource, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(two->scope, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(numbering.key_bytes(), 0u);
}

}  // namespace
}  // namespace strata::storage
