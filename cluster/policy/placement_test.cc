#include "cluster/policy/placement.h"

#include <gtest/gtest.h>

#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;
using testing::StartRunning;

TEST(FreeSlotsTest, CountsRunningAndCheckpointingJobs) {
  ClusterView view = MakeCluster(3, 8);
  StartRunning(view, AddJob(view, "a", Tier::kBasic, 4), {{0, 4}});
  const int b = AddJob(view, "b", Tier::kBasic, 2);
  StartRunning(view, b, {{1, 2}});
  view.jobs[b].state = JobState::kCheckpointing;
  AddJob(view, "c", Tier::kBasic, 8);  // pending: holds nothing
  view.nodes[2].alive = false;
  view.nodes[0].draining = 1;
  EXPECT_EQ(FreeSlots(view), (std::vector<int>{3, 6, 0}));
  EXPECT_EQ(ReleasingSlots(view), (std::vector<int>{1, 2, 0}));
}

TEST(FindCompactPlacementTest, BestFitForSmallGangs) {
  // The fullest node that still fits gets the job, keeping empty nodes for big gangs.
  std::optional<Placement> p = FindCompactPlacement({8, 3, 5, 2}, 2, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (Placement{{3, 2}}));
  p = FindCompactPlacement({8, 3, 5, 2}, 4, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (Placement{{2, 4}}));
  EXPECT_FALSE(FindCompactPlacement({3, 3, 3}, 4, 8));  // 9 free, but no node holds 4
}

TEST(FindCompactPlacementTest, LargeGangsUseFewestNodes) {
  std::optional<Placement> p = FindCompactPlacement({8, 6, 8, 7}, 16, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (Placement{{0, 8}, {2, 8}}));
  p = FindCompactPlacement({6, 7, 8}, 12, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(TotalSlots(*p), 12);
  EXPECT_EQ(p->size(), 2u);
  EXPECT_FALSE(FindCompactPlacement({8, 7, 7, 7}, 16, 8));  // 29 free, but not on 2 nodes
  EXPECT_FALSE(FindCompactPlacement({8}, 16, 8));
  EXPECT_FALSE(FindCompactPlacement({8}, 0, 8));
}

TEST(NodesNeededTest, CeilOfNodeSize) {
  EXPECT_EQ(NodesNeeded(1, 8), 1);
  EXPECT_EQ(NodesNeeded(8, 8), 1);
  EXPECT_EQ(NodesNeeded(9, 8), 2);
  EXPECT_EQ(NodesNeeded(128, 8), 16);
}

TEST(FifoOrderTest, SortsOnlyWhenNeeded) {
  ClusterView view = MakeCluster(1, 8);
  AddJob(view, "a", Tier::kBasic, 1, 0, 5);
  AddJob(view, "b", Tier::kBasic, 1, 0, 1);
  AddJob(view, "c", Tier::kBasic, 1, 0, 5);
  EXPECT_EQ(FifoOrder(view), (std::vector<int>{1, 0, 2}));
}

}  // namespace
}  // namespace tessera::cluster
