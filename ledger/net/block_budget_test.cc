#include "ledger/net/block_budget.h"

#include <gtest/gtest.h>

namespace tessera::ledger::net {
namespace {

using std::chrono::milliseconds;

TEST(BlockBudgetTest, SlowRoundsShrinkThePoolFastFullRoundsGrowItBackWithinBounds) {
  BlockBudget b({.max_pool_txs = 1000, .min_pool_txs = 100, .target_round_s = 4});
  auto t = BlockBudget::Clock::time_point();
  EXPECT_EQ(b.pool_txs(), 1000u);
  // Rounds of 10 s (over the 4 s target): x0.8 each time, down to the minimum.
  for (uint64_t h = 1; h <= 20; ++h) {
    b.PoolFrozen(h, b.pool_txs(), t);
    t += std::chrono::seconds(10);
    b.BlockCommitted(h, t);
  }
  EXPECT_EQ(b.pool_txs(), 100u);
  // Fast rounds with a full pool: back up to the maximum, never past it.
  for (uint64_t h = 21; h <= 60; ++h) {
    b.PoolFrozen(h, b.pool_txs(), t);
    t += milliseconds(500);
    b.BlockCommitted(h, t);
  }
  EXPECT_EQ(b.pool_txs(), 1000u);
}

TEST(BlockBudgetTest, FastRoundsWithRoomToSpareDoNotGrowThePool) {
  BlockBudget b({.max_pool_txs = 1000, .min_pool_txs = 10, .target_round_s = 4});
  auto t = BlockBudget::Clock::time_point();
  b.PoolFrozen(1, 1000, t);
  b.BlockCommitted(1, t + std::chrono::seconds(8));  // slow: 800
  ASSERT_EQ(b.pool_txs(), 800u);
  b.PoolFrozen(2, 20, t);  // a light load: fast because small, says nothing about capacity
  b.BlockCommitted(2, t + milliseconds(100));
  EXPECT_EQ(b.pool_txs(), 800u);
}

TEST(BlockBudgetTest, UnmeasuredHeightsChangeNothing) {
  BlockBudget b({.max_pool_txs = 1000, .target_round_s = 4});
  b.BlockCommitted(5);  // caught up: this politician froze no pool for it
  EXPECT_EQ(b.pool_txs(), 1000u);
  EXPECT_DOUBLE_EQ(b.mean_round_s(), 2.0);
}

TEST(BlockBudgetTest, CapacityAndRetryHintFollowTheMeasurements) {
  BlockBudget b(
      {.max_pool_txs = 400, .min_pool_txs = 10, .target_round_s = 4, .backlog_pools = 2.5});
  EXPECT_EQ(b.mempool_capacity(), 1000u);
  auto t = BlockBudget::Clock::time_point();
  for (uint64_t h = 1; h <= 30; ++h) {
    b.PoolFrozen(h, 400, t);
    t += std::chrono::seconds(3);
    b.BlockCommitted(h, t);
  }
  EXPECT_NEAR(b.mean_round_s(), 3.0, 1e-3);
  EXPECT_NEAR(b.retry_after().count(), 3000, 2);
  EXPECT_EQ(b.pool_txs(), 400u);
  EXPECT_EQ(b.mempool_capacity(), 1000u);
}

}  // namespace
}  // namespace tessera::ledger::net
