#include "pipeline/partition.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

TEST(Partition, UniformIsVarunasRule) {
  EXPECT_EQ(*UniformPartition(6, 3), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(*UniformPartition(7, 3), (std::vector<int>{0, 3, 5, 7}));
  EXPECT_FALSE(UniformPartition(2, 3).ok());
  EXPECT_FALSE(UniformPartition(2, 0).ok());
}

TEST(Partition, BalancedMinimizesTheSlowestStage) {
  // A cheap embedding, four equal blocks, an expensive head.
  std::vector<double> costs = {1, 4, 4, 4, 4, 6};
  auto b = BalancedPartition(costs, 3);
  ASSERT_TRUE(b.ok());
  auto sums = StageCosts(costs, *b);
  EXPECT_DOUBLE_EQ(*std::max_element(sums.begin(), sums.end()), 9.0);
  auto u = UniformPartition(6, 3);
  auto usums = StageCosts(costs, *u);
  EXPECT_GT(*std::max_element(usums.begin(), usums.end()), 9.0);
  EXPECT_TRUE(ValidatePartition(*b, 6).ok());
}

TEST(Partition, BalancedBruteForceAgreement) {
  std::vector<double> costs = {3, 1, 4, 1, 5, 9, 2, 6};
  for (int P = 1; P <= 8; ++P) {
    auto b = BalancedPartition(costs, P);
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(ValidatePartition(*b, 8).ok());
    auto sums = StageCosts(costs, *b);
    const double got = *std::max_element(sums.begin(), sums.end());
    // Brute force over all cut subsets of size P-1.
    double best = 1e9;
    for (int mask = 0; mask < (1 << 7); ++mask) {
      if (__builtin_popcount(mask) != P - 1) continue;
      double cur = 0, worst = 0;
      for (int i = 0; i < 8; ++i) {
        cur += costs[i];
        if (i == 7 || (mask >> i & 1)) {
          worst = std::max(worst, cur);
          cur = 0;
        }
      }
      best = std::min(best, worst);
    }
    EXPECT_DOUBLE_EQ(got, best) << "P=" << P;
  }
}

TEST(Partition, RejectsBadInput) {
  EXPECT_FALSE(BalancedPartition({1, 2}, 3).ok());
  EXPECT_FALSE(BalancedPartition({1, -2}, 1).ok());
  EXPECT_FALSE(ValidatePartition({0, 2, 2, 4}, 4).ok());
  EXPECT_FALSE(ValidatePartition({0, 3}, 4).ok());
  EXPECT_FALSE(ValidatePartition({1, 4}, 4).ok());
}

}  // namespace
}  // namespace tessera::pipeline
