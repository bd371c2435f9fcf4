#include <gtest/gtest.h>

#include "cluster/policy/policy.h"
#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;
using testing::StartRunning;

TEST(TiresiasPolicyTest, NewJobPreemptsOneWithMoreAttainedService) {
  ClusterView view = MakeCluster(1, 8, 10000);
  const int old = AddJob(view, "old", Tier::kPremium, 8, 8, 0);
  StartRunning(view, old, {{0, 8}}, 0);  // 10000 s x 8 slots: far above the 1 GPU-hour queue
  AddJob(view, "new", Tier::kBasic, 8, 8, 10000);
  std::vector<Action> actions = NewTiresiasPolicy()->Decide(view);
  ASSERT_TRUE(ValidateActions(view, actions).ok());
  ASSERT_EQ(actions.size(), 1u);  // tier-blind: the premium job is preempted
  EXPECT_EQ(actions[0].kind, Action::Kind::kPreempt);
  EXPECT_EQ(actions[0].job_id, "old");
}

TEST(TiresiasPolicyTest, SameQueueIsFifoAndRespectsMinRun) {
  ClusterView view = MakeCluster(1, 8, 100);
  StartRunning(view, AddJob(view, "a", Tier::kBasic, 8, 8, 0), {{0, 8}}, 0);
  AddJob(view, "b", Tier::kBasic, 8, 8, 50);
  EXPECT_TRUE(NewTiresiasPolicy()->Decide(view).empty());  // both in queue 0: FIFO
  TiresiasOptions o;
  o.queue_thresholds = {100};  // a has 800 slot-seconds, b none
  o.min_run_s = 1000;
  EXPECT_TRUE(NewTiresiasPolicy(o)->Decide(view).empty());  // a is inside its minimum run
  o.min_run_s = 10;
  std::vector<Action> actions = NewTiresiasPolicy(o)->Decide(view);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].job_id, "a");
  EXPECT_EQ(actions[0].kind, Action::Kind::kPreempt);
}

TEST(TiresiasPolicyTest, StartsSelectedJobsWhenTheyFit) {
  ClusterView view = MakeCluster(2, 8, 0);
  AddJob(view, "a", Tier::kBasic, 8, 8, 0);
  AddJob(view, "b", Tier::kBasic, 16, 16, 1);  // does not fit beside a: skipped, not blocking
  AddJob(view, "c", Tier::kBasic, 4, 4, 2);
  std::vector<Action> actions = NewTiresiasPolicy()->Decide(view);
  ASSERT_TRUE(ValidateActions(view, actions).ok());
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].job_id, "a");
  EXPECT_EQ(actions[1].job_id, "c");
}

}  // namespace
}  // namespace tessera::cluster
