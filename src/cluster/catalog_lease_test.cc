// Day leases and node claims of the batch catalog, against a real
// PostgreSQL.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_testing.h"
#include "cluster/postgres_batch_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::cluster {
namespace {

using ::strata::cluster::testing::kDay;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1796450000);
constexpr absl::Duration kTtl = absl::Seconds(30);

using LeaseTest = testing::CatalogTest;

TEST_F(LeaseTest, ADayHasOneHolderUntilItsLeaseExpiresAndEachNewHolderAHigherEpoch) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  absl::StatusOr<std::optional<DayLease>> first = catalog->AcquireLease(kDay, "01/a", kNow, kTtl);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->epoch, 1);
  EXPECT_EQ((*first)->holder, "01/a");
  EXPECT_EQ((*first)->expires_at, kNow + kTtl);
  // The holder asking again extends its lease at the same epoch.
  absl::StatusOr<std::optional<DayLease>> again =
      catalog->AcquireLease(kDay, "01/a", kNow + absl::Seconds(10), kTtl);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->epoch, 1);
  EXPECT_EQ((*again)->expires_at, kNow + absl::Seconds(10) + kTtl);
  // Another holder waits while the lease runs (to its last millisecond)...
  absl::StatusOr<std::optional<DayLease>> other = catalog->AcquireLease(
      kDay, "02/b", kNow + absl::Seconds(10) + kTtl - absl::Milliseconds(1), kTtl);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->has_value());
  // ...and takes the day over once it expired, at the next epoch.
  other = catalog->AcquireLease(kDay, "02/b", kNow + absl::Seconds(10) + kTtl, kTtl);
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_EQ((*other)->epoch, 2);
  // Another day is free.
  absl::StatusOr<std::optional<DayLease>> next_day =
      catalog->AcquireLease("2026-12-06", "01/a", kNow, kTtl);
  ASSERT_TRUE(next_day.ok() && next_day->has_value());
  EXPECT_EQ((*next_day)->epoch, 1);
}

TEST_F(LeaseTest, ALostLeaseCannotBeRenewedAndAReleasedDayIsFreeAtOnce) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  const DayLease mine = *catalog->AcquireLease(kDay, "01/a", kNow, kTtl).value();
  absl::StatusOr<DayLease> renewed = catalog->RenewLease(mine, kNow + absl::Seconds(20), kTtl);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_EQ(renewed->expires_at, kNow + absl::Seconds(20) + kTtl);
  ASSERT_TRUE(catalog->ReleaseLease(*renewed).ok());
  const DayLease theirs =
      *catalog->AcquireLease(kDay, "02/b", kNow + absl::Seconds(21), kTtl).value();
  EXPECT_EQ(theirs.epoch, 2);
  renewed = catalog->RenewLease(mine, kNow + absl::Seconds(22), kTtl);
  ASSERT_FALSE(renewed.ok());
  EXPECT_EQ(renewed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(renewed.status().message()), HasSubstr("02/b holds epoch 2"));
  // Releasing a lost lease leaves the current holder's alone.
  ASSERT_TRUE(catalog->ReleaseLease(mine).ok());
  EXPECT_FALSE(catalog->AcquireLease(kDay, "03/c", kNow + absl::Seconds(23), kTtl)->has_value());
}

// Several nodes asking for a free day at the same moment: exactly one gets
// it, in every round.
TEST_F(LeaseTest, NodesRacingForADayGetOneHolder) {
  constexpr int kNodes = 4;
  std::vector<std::unique_ptr<PostgresBatchCatalog>> catalogs;
  for (int i = 0; i < kNodes; ++i) catalogs.push_back(Open());
  for (int round = 0; round < 15; ++round) {
    const std::string day = "2026-11-" + std::to_string(10 + round);
    std::atomic<int> holders{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kNodes; ++i) {
      threads.emplace_back([&, i] {
        absl::StatusOr<std::optional<DayLease>> lease =
            catalogs[i]->AcquireLease(day, "0" + std::to_string(i) + "/x", kNow, kTtl);
        if (!lease.ok()) {
          ++failures;
        } else if (lease->has_value()) {
          ++holders;
          EXPECT_EQ((*lease)->epoch, 1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(failures, 0) << day;
    EXPECT_EQ(holders, 1) << day;
  }
}

TEST_F(LeaseTest, MalformedLeaseArgumentsAreRefused) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  EXPECT_EQ(catalog->AcquireLease("2026-13-01", "01/a", kNow, kTtl).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const char* holder : {"", "01", "1/a", "01/", "01/A", "01/a b"}) {
    EXPECT_EQ(catalog->AcquireLease(kDay, holder, kNow, kTtl).status().code(),
              absl::StatusCode::kInvalidArgument)
        << holder;
  }
  EXPECT_EQ(catalog->AcquireLease(kDay, "01/a", kNow, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LeaseTest, ANodeIdHasOneLiveOwner) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  const NodeRecord first{.node = "03",
                         .instance = "aaaa",
                         .address = "10.0.0.3:7520",
                         .started_at = kNow,
                         .heartbeat_at = kNow};
  ASSERT_TRUE(catalog->ClaimNode(first, kTtl).ok());
  // A second process configured with the same id is refused, by name.
  NodeRecord second = first;
  second.instance = "bbbb";
  second.address = "10.0.0.4:7520";
  second.started_at = second.heartbeat_at = kNow + absl::Seconds(5);
  absl::Status refused = catalog->ClaimNode(second, kTtl);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("10.0.0.3:7520"));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("--node-id"));
  // The first keeps heartbeating; once it stops for the lease time, the
  // id can be claimed, and the first then learns it lost it.
  ASSERT_TRUE(catalog->Heartbeat("03", "aaaa", kNow + absl::Seconds(20)).ok());
  second.heartbeat_at = kNow + absl::Seconds(20) + kTtl - absl::Milliseconds(1);
  EXPECT_EQ(catalog->ClaimNode(second, kTtl).code(), absl::StatusCode::kFailedPrecondition);
  second.heartbeat_at = kNow + absl::Seconds(20) + kTtl;
  ASSERT_TRUE(catalog->ClaimNode(second, kTtl).ok());
  EXPECT_EQ(catalog->Heartbeat("03", "aaaa", second.heartbeat_at).code(),
            absl::StatusCode::kFailedPrecondition);
  // The same instance claiming again (a restart within the process) is fine.
  EXPECT_TRUE(catalog->ClaimNode(second, kTtl).ok());
  absl::StatusOr<std::vector<NodeRecord>> nodes = catalog->Nodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].instance, "bbbb");
  EXPECT_EQ((*nodes)[0].address, "10.0.0.4:7520");
  EXPECT_EQ((*nodes)[0].heartbeat_at, second.heartbeat_at);
}

}  // namespace
}  // namespace strata::cluster
