#include "cluster/policy/policy.h"

#include <gtest/gtest.h>

#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;
using testing::StartRunning;

TEST(TierTest, NamesRoundTripAndTargets) {
  for (Tier t : {Tier::kPremium, Tier::kStandard, Tier::kBasic}) {
    Result<Tier> parsed = ParseTier(TierName(t));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_FALSE(ParseTier("gold").ok());
  EXPECT_DOUBLE_EQ(TierTarget(Tier::kPremium), 0.95);
  EXPECT_DOUBLE_EQ(TierTarget(Tier::kStandard), 0.70);
  EXPECT_DOUBLE_EQ(TierTarget(Tier::kBasic), 0.0);
}

TEST(WorkerCountTest, DivisorsBetweenMinAndRequested) {
  JobSpec spec;
  spec.requested_workers = 8;
  spec.min_workers = 2;
  EXPECT_TRUE(IsValidWorkerCount(spec, 8));
  EXPECT_TRUE(IsValidWorkerCount(spec, 4));
  EXPECT_TRUE(IsValidWorkerCount(spec, 2));
  EXPECT_FALSE(IsValidWorkerCount(spec, 1));   // below min
  EXPECT_FALSE(IsValidWorkerCount(spec, 6));   // 8 ranks cannot be spread evenly on 6
  EXPECT_FALSE(IsValidWorkerCount(spec, 16));  // above the world size
  EXPECT_EQ(LargestValidWorkerCount(spec, 7), 4);
  EXPECT_EQ(LargestValidWorkerCount(spec, 100), 8);
  EXPECT_EQ(LargestValidWorkerCount(spec, 1), 0);
}

TEST(CompactPlacementTest, FewestNodes) {
  ClusterView view = MakeCluster(4, 8);
  EXPECT_TRUE(IsCompactPlacement(view, {{0, 8}}));
  EXPECT_FALSE(IsCompactPlacement(view, {{0, 4}, {1, 4}}));  // 8 fits one node
  EXPECT_TRUE(IsCompactPlacement(view, {{0, 8}, {1, 4}}));   // 12 needs two
  EXPECT_FALSE(IsCompactPlacement(view, {{0, 4}, {0, 4}}));  // node twice
  EXPECT_FALSE(IsCompactPlacement(view, {{9, 1}}));          // unknown node
  view.nodes[2].alive = false;
  EXPECT_FALSE(IsCompactPlacement(view, {{2, 1}}));  // dead node
}

TEST(ValidateActionsTest, AcceptsLegalActions) {
  ClusterView view = MakeCluster(3, 8, 100);
  const int a = AddJob(view, "a", Tier::kBasic, 8);
  const int b = AddJob(view, "b", Tier::kPremium, 4);
  const int c = AddJob(view, "c", Tier::kStandard, 8, 2);
  const int d = AddJob(view, "d", Tier::kBasic, 2, 1);
  StartRunning(view, a, {{0, 8}});
  StartRunning(view, c, {{1, 8}});
  StartRunning(view, d, {{2, 2}});
  std::vector<Action> actions = {
      {Action::Kind::kPreempt, a, "a", {}},
      {Action::Kind::kResize, c, "c", {{1, 4}}},
      {Action::Kind::kResize, d, "d", {{2, 1}}},
      {Action::Kind::kStart, b, "b", {{2, 4}}},
  };
  EXPECT_TRUE(ValidateActions(view, actions).ok()) << ValidateActions(view, actions);
}

TEST(ValidateActionsTest, ReleasedSlotsDrainBeforeReuse) {
  ClusterView view = MakeCluster(2, 8);
  const int c = AddJob(view, "c", Tier::kStandard, 8, 2);
  const int b = AddJob(view, "b", Tier::kPremium, 4);
  StartRunning(view, c, {{1, 8}});
  // The 4 slots c gives up are still busy while c checkpoints.
  Status s = ValidateActions(
      view, {{Action::Kind::kResize, c, "c", {{1, 4}}}, {Action::Kind::kStart, b, "b", {{1, 4}}}});
  EXPECT_NE(s.message().find("usable slots"), std::string::npos) << s;
  // A job may move onto free slots, but not onto draining ones.
  EXPECT_TRUE(ValidateActions(view, {{Action::Kind::kMigrate, c, "c", {{0, 8}}}}).ok());
  view.nodes[0].draining = 1;
  EXPECT_FALSE(ValidateActions(view, {{Action::Kind::kMigrate, c, "c", {{0, 8}}}}).ok());
}

TEST(ValidateActionsTest, RejectsOverAllocation) {
  ClusterView view = MakeCluster(1, 8);
  const int a = AddJob(view, "a", Tier::kBasic, 8);
  const int b = AddJob(view, "b", Tier::kPremium, 4);
  StartRunning(view, a, {{0, 8}});
  // Preempt does not free the slots at once: the checkpoint must be written first.
  std::vector<Action> actions = {{Action::Kind::kPreempt, a, "a", {}},
                                 {Action::Kind::kStart, b, "b", {{0, 4}}}};
  Status s = ValidateActions(view, actions);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("usable slots"), std::string::npos) << s;
}

TEST(ValidateActionsTest, RejectsBadTransitions) {
  ClusterView view = MakeCluster(2, 8);
  const int a = AddJob(view, "a", Tier::kBasic, 4, 1);
  const int p = AddJob(view, "p", Tier::kBasic, 4);
  StartRunning(view, a, {{0, 4}});
  auto check = [&](std::vector<Action> actions, const std::string& want) {
    Status s = ValidateActions(view, actions);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(want), std::string::npos) << s;
  };
  check({{Action::Kind::kStart, a, "a", {{1, 4}}}}, "cannot start a running job");
  check({{Action::Kind::kPreempt, p, "p", {}}}, "cannot preempt a pending job");
  check({{Action::Kind::kStart, p, "x", {{1, 4}}}}, "job_id does not match");
  check({{Action::Kind::kStart, 7, "p", {{1, 4}}}}, "out of range");
  check({{Action::Kind::kStart, p, "p", {{1, 2}}}}, "not a valid count");
  check({{Action::Kind::kResize, a, "a", {{1, 4}}}}, "must change the worker count");
  check({{Action::Kind::kMigrate, a, "a", {{0, 4}}}}, "same placement");
  check({{Action::Kind::kMigrate, a, "a", {{1, 2}}}}, "keep the worker count");
  check({{Action::Kind::kPreempt, a, "a", {}}, {Action::Kind::kPreempt, a, "a", {}}},
        "second action");
  check({{Action::Kind::kStart, p, "p", {{1, 2}, {0, 2}}}}, "not compact");
}

TEST(ValidateActionsTest, DetectsOverAllocatedView) {
  ClusterView view = MakeCluster(1, 4);
  StartRunning(view, AddJob(view, "a", Tier::kBasic, 4), {{0, 4}});
  StartRunning(view, AddJob(view, "b", Tier::kBasic, 1), {{0, 1}});
  EXPECT_FALSE(ValidateActions(view, {}).ok());
}

TEST(DescribeActionTest, UsesNodeIds) {
  ClusterView view = MakeCluster(3, 8);
  AddJob(view, "job-7", Tier::kBasic, 12);
  Action a{Action::Kind::kStart, 0, "job-7", {{1, 8}, {2, 4}}};
  EXPECT_EQ(DescribeAction(view, a), "start job-7 on n1:8,n2:4");
}

}  // namespace
}  // namespace tessera::cluster
