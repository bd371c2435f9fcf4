#include <gtest/gtest.h>

#include "cluster/policy/policy.h"
#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;
using testing::StartRunning;

TEST(StrictPriorityPolicyTest, HigherTierPreemptsLowerAtOnce) {
  ClusterView view = MakeCluster(1, 8, 10);
  StartRunning(view, AddJob(view, "basic", Tier::kBasic, 8, 2, 0), {{0, 8}}, 5);
  AddJob(view, "standard", Tier::kStandard, 4, 4, 10);
  std::vector<Action> actions = NewStrictPriorityPolicy()->Decide(view);
  ASSERT_TRUE(ValidateActions(view, actions).ok());
  ASSERT_EQ(actions.size(), 1u);  // no minimum run, no shrinking: a full preemption
  EXPECT_EQ(actions[0].kind, Action::Kind::kPreempt);
  EXPECT_EQ(actions[0].job_id, "basic");
}

TEST(StrictPriorityPolicyTest, NoPreemptionWithinATier) {
  ClusterView view = MakeCluster(1, 8, 100);
  StartRunning(view, AddJob(view, "late", Tier::kStandard, 8, 8, 50), {{0, 8}}, 50);
  AddJob(view, "early", Tier::kStandard, 8, 8, 0);  // submitted first, but waits
  EXPECT_TRUE(NewStrictPriorityPolicy()->Decide(view).empty());
}

TEST(StrictPriorityPolicyTest, TierOrderThenFifoWithBackfill) {
  ClusterView view = MakeCluster(2, 8, 0);
  AddJob(view, "basic", Tier::kBasic, 4, 4, 0);
  AddJob(view, "standard-big", Tier::kStandard, 16, 16, 1);  // does not fit beside premium
  AddJob(view, "premium", Tier::kPremium, 8, 8, 2);
  AddJob(view, "standard-small", Tier::kStandard, 4, 4, 3);
  std::vector<Action> actions = NewStrictPriorityPolicy()->Decide(view);
  ASSERT_TRUE(ValidateActions(view, actions).ok());
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[0].job_id, "premium");
  EXPECT_EQ(actions[1].job_id, "standard-small");
  EXPECT_EQ(actions[2].job_id, "basic");
}

TEST(StrictPriorityPolicyTest, PremiumIsNeverPreempted) {
  ClusterView view = MakeCluster(1, 8, 100);
  StartRunning(view, AddJob(view, "p1", Tier::kPremium, 8, 8, 0), {{0, 8}}, 0);
  AddJob(view, "p2", Tier::kPremium, 8, 8, 1);
  AddJob(view, "s", Tier::kStandard, 1, 1, 2);
  EXPECT_TRUE(NewStrictPriorityPolicy()->Decide(view).empty());
}

}  // namespace
}  // namespace tessera::cluster
