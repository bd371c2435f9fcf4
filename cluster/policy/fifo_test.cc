#include <gtest/gtest.h>

#include "cluster/policy/policy.h"
#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;
using testing::StartRunning;

TEST(FifoPolicyTest, StartsInSubmitOrderWithFullGangs) {
  ClusterView view = MakeCluster(2, 8);
  AddJob(view, "a", Tier::kBasic, 8, 1, 0);
  AddJob(view, "b", Tier::kPremium, 4, 1, 1);
  AddJob(view, "c", Tier::kBasic, 4, 1, 2);
  std::unique_ptr<Policy> fifo = NewFifoPolicy();
  std::vector<Action> actions = fifo->Decide(view);
  ASSERT_TRUE(ValidateActions(view, actions).ok());
  ASSERT_EQ(actions.size(), 3u);
  for (const Action& a : actions) {
    EXPECT_EQ(a.kind, Action::Kind::kStart);
    // Never shrinks: every gang gets all the workers it asked for.
    EXPECT_EQ(TotalSlots(a.placement), view.jobs[a.job].spec.requested_workers);
  }
  EXPECT_EQ(actions[0].job_id, "a");
  EXPECT_EQ(actions[1].job_id, "b");
}

TEST(FifoPolicyTest, HeadOfLineBlocksAndNeverPreempts) {
  ClusterView view = MakeCluster(2, 8);
  StartRunning(view, AddJob(view, "running", Tier::kBasic, 4, 1, 0), {{0, 4}});
  AddJob(view, "big", Tier::kPremium, 16, 1, 1);  // needs both nodes whole
  AddJob(view, "small", Tier::kBasic, 1, 1, 2);   // would fit, but is behind `big`
  std::vector<Action> actions = NewFifoPolicy()->Decide(view);
  EXPECT_TRUE(actions.empty());
}

TEST(FifoPolicyTest, SkipsGangsLargerThanTheCluster) {
  ClusterView view = MakeCluster(1, 8);
  AddJob(view, "huge", Tier::kBasic, 64, 1, 0);
  AddJob(view, "ok", Tier::kBasic, 2, 1, 1);
  std::vector<Action> actions = NewFifoPolicy()->Decide(view);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].job_id, "ok");
}

TEST(FifoPolicyTest, IgnoresDeadNodes) {
  ClusterView view = MakeCluster(2, 8);
  view.nodes[0].alive = false;
  AddJob(view, "a", Tier::kBasic, 8, 1, 0);
  AddJob(view, "b", Tier::kBasic, 8, 1, 1);
  std::vector<Action> actions = NewFifoPolicy()->Decide(view);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].placement, (Placement{{1, 8}}));
}

}  // namespace
}  // namespace tessera::cluster
