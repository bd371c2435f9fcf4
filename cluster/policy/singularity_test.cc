#include <gtest/gtest.h>

#include <map>

#include "cluster/policy/policy.h"
#include "cluster/policy/sla.h"
#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;
using testing::StartRunning;

// Actions by job id, after checking they are legal.
std::map<std::string, Action> Decide(const ClusterView& view, SingularityOptions options = {}) {
  std::vector<Action> actions = NewSingularityPolicy(options)->Decide(view);
  Status valid = ValidateActions(view, actions);
  EXPECT_TRUE(valid.ok()) << valid;
  std::map<std::string, Action> by_id;
  for (Action& a : actions) {
    EXPECT_FALSE(by_id.count(a.job_id)) << a.job_id;
    by_id[a.job_id] = std::move(a);
  }
  return by_id;
}

SingularityOptions NoHeadroom() {
  SingularityOptions o;
  o.premium_headroom_slots = 0;
  return o;
}

TEST(SingularityPolicyTest, PremiumPreemptsBasicThenStartsAfterCheckpoint) {
  ClusterView view = MakeCluster(1, 8, 1000);
  const int basic = AddJob(view, "basic", Tier::kBasic, 8, 8, 0);
  StartRunning(view, basic, {{0, 8}}, 0);
  const int premium = AddJob(view, "premium", Tier::kPremium, 8, 8, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("basic"));
  EXPECT_EQ(a["basic"].kind, Action::Kind::kPreempt);
  EXPECT_FALSE(a.count("premium"));  // its slots are busy until the checkpoint is written

  // While the checkpoint is written nothing more is evicted.
  view.jobs[basic].state = JobState::kCheckpointing;
  view.now = 1005;
  EXPECT_TRUE(Decide(view, NoHeadroom()).empty());

  // Checkpoint written: the premium job gets the node; the basic job waits.
  view.jobs[basic].state = JobState::kSuspended;
  view.jobs[basic].placement.clear();
  view.now = 1010;
  a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("premium"));
  EXPECT_EQ(a["premium"].kind, Action::Kind::kStart);
  EXPECT_EQ(a["premium"].placement, (Placement{{0, 8}}));
  EXPECT_FALSE(a.count("basic"));
  (void)premium;
}

TEST(SingularityPolicyTest, EvictsBasicBeforeStandardAndNeverPremium) {
  ClusterView view = MakeCluster(3, 8, 100000);
  StartRunning(view, AddJob(view, "prem-run", Tier::kPremium, 8, 8, 0), {{0, 8}}, 0);
  StartRunning(view, AddJob(view, "std-run", Tier::kStandard, 8, 8, 0), {{1, 8}}, 0);
  StartRunning(view, AddJob(view, "basic-run", Tier::kBasic, 8, 8, 0), {{2, 8}}, 0);
  AddJob(view, "prem-new", Tier::kPremium, 8, 8, 100000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("basic-run"));
  EXPECT_EQ(a["basic-run"].kind, Action::Kind::kPreempt);
  EXPECT_FALSE(a.count("std-run"));
  EXPECT_FALSE(a.count("prem-run"));
}

TEST(SingularityPolicyTest, PremiumEvictsStandardOnlyWithSlack) {
  ClusterView view = MakeCluster(1, 8, 100000);
  const int s = AddJob(view, "std-run", Tier::kStandard, 8, 8, 0);
  StartRunning(view, s, {{0, 8}}, 0);  // ran at full speed since submit: lots of slack
  AddJob(view, "prem-new", Tier::kPremium, 8, 8, 100000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("std-run"));
  EXPECT_EQ(a["std-run"].kind, Action::Kind::kPreempt);

  // A standard job at its SLA edge is not touched: the premium job waits.
  view.jobs[s].progress = 0.7 * 100000 + 10;
  EXPECT_LT(SlaSlack(view.jobs[s], view.now), 3600);
  EXPECT_TRUE(Decide(view, NoHeadroom()).empty());
}

TEST(SingularityPolicyTest, StandardNeverEvictsStandard) {
  ClusterView view = MakeCluster(1, 8, 100000);
  StartRunning(view, AddJob(view, "std-run", Tier::kStandard, 8, 8, 0), {{0, 8}}, 0);
  AddJob(view, "std-new", Tier::kStandard, 8, 8, 100000);
  EXPECT_TRUE(Decide(view, NoHeadroom()).empty());
}

TEST(SingularityPolicyTest, ShrinksElasticBasicInsteadOfPreempting) {
  ClusterView view = MakeCluster(1, 8, 1000);
  StartRunning(view, AddJob(view, "elastic", Tier::kBasic, 8, 2, 0), {{0, 8}}, 0);
  AddJob(view, "prem", Tier::kPremium, 4, 4, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("elastic"));
  EXPECT_EQ(a["elastic"].kind, Action::Kind::kResize);
  EXPECT_EQ(a["elastic"].placement, (Placement{{0, 4}}));  // spliced: 8 ranks on 4 slots
}

TEST(SingularityPolicyTest, NeverShrinksBelowMinWorkers) {
  ClusterView view = MakeCluster(1, 8, 1000);
  StartRunning(view, AddJob(view, "rigid", Tier::kBasic, 8, 8, 0), {{0, 8}}, 0);
  AddJob(view, "prem", Tier::kPremium, 4, 4, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("rigid"));
  EXPECT_EQ(a["rigid"].kind, Action::Kind::kPreempt);
}

// Issue 15's live case: a standard job needs 2 slots of a full 2-node cluster. Best fit (the
// fullest node with enough reclaimable slots, lower index on ties) picks node 0 and preempts its
// rigid basic job; by cost, the elastic basic job on node 1 is shrunk instead and keeps running.
TEST(SingularityPolicyTest, EvictionByCostShrinksElasticJobOnAnotherNode) {
  ClusterView view = MakeCluster(2, 4, 1000);
  StartRunning(view, AddJob(view, "rigid", Tier::kBasic, 4, 4, 0), {{0, 4}}, 0);
  StartRunning(view, AddJob(view, "elastic", Tier::kBasic, 4, 1, 0), {{1, 4}}, 0);
  AddJob(view, "std", Tier::kStandard, 2, 2, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  EXPECT_FALSE(a.count("rigid"));
  ASSERT_TRUE(a.count("elastic"));
  EXPECT_EQ(a["elastic"].kind, Action::Kind::kResize);
  EXPECT_EQ(a["elastic"].placement, (Placement{{1, 2}}));

  // The same view with eviction by best fit preempts the rigid job (the old behaviour).
  SingularityOptions best_fit = NoHeadroom();
  best_fit.evict_by_cost = false;
  a = Decide(view, best_fit);
  ASSERT_TRUE(a.count("rigid"));
  EXPECT_EQ(a["rigid"].kind, Action::Kind::kPreempt);
  EXPECT_FALSE(a.count("elastic"));
}

// Basic victims before standard ones, even where evicting the standard job alone would do.
TEST(SingularityPolicyTest, EvictionByCostPrefersBasicVictims) {
  ClusterView view = MakeCluster(2, 8, 100000);
  StartRunning(view, AddJob(view, "std-run", Tier::kStandard, 8, 8, 0), {{0, 8}}, 0);
  StartRunning(view, AddJob(view, "b1", Tier::kBasic, 4, 4, 0), {{1, 4}}, 0);
  StartRunning(view, AddJob(view, "b2", Tier::kBasic, 4, 4, 0), {{1, 4}}, 0);
  view.jobs[2].placement = {{1, 4}};
  AddJob(view, "prem", Tier::kPremium, 8, 8, 100000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  EXPECT_FALSE(a.count("std-run"));
  EXPECT_TRUE(a.count("b1"));
  EXPECT_TRUE(a.count("b2"));
}

// Between two standard victims a premium job may evict, the one with more SLA slack goes, even
// when it sits on the node best fit would not pick.
TEST(SingularityPolicyTest, EvictionByCostPrefersTheVictimWithMoreSlack) {
  ClusterView view = MakeCluster(2, 8, 100000);
  const int tight = AddJob(view, "std-tight", Tier::kStandard, 8, 8, 0);
  StartRunning(view, tight, {{0, 8}}, 0);
  view.jobs[tight].progress = 0.7 * (100000 + 2 * 3600);  // 2 h of slack
  const int loose = AddJob(view, "std-loose", Tier::kStandard, 8, 8, 0);
  StartRunning(view, loose, {{1, 8}}, 0);  // ran at full speed: ~43,000 s of slack
  ASSERT_LT(SlaSlack(view.jobs[tight], view.now), SlaSlack(view.jobs[loose], view.now));
  ASSERT_GE(SlaSlack(view.jobs[tight], view.now), 3600);  // both may be evicted
  AddJob(view, "prem", Tier::kPremium, 8, 8, 100000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  EXPECT_FALSE(a.count("std-tight"));
  ASSERT_TRUE(a.count("std-loose"));
  EXPECT_EQ(a["std-loose"].kind, Action::Kind::kPreempt);
}

// Quotas (quota.h): a job on borrowed quota is evicted when an in-quota job of its tier needs
// the slots, even though the policy never evicts premium or standard work otherwise.
TEST(SingularityPolicyTest, OwnersTakeBorrowedQuotaBack) {
  ClusterView view = MakeCluster(1, 8, 1000);
  const int borrower = AddJob(view, "borrower", Tier::kPremium, 8, 8, 0);
  view.jobs[borrower].spec.borrowed = true;
  StartRunning(view, borrower, {{0, 8}}, 0);
  const int owner = AddJob(view, "owner", Tier::kPremium, 8, 8, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("borrower"));
  EXPECT_EQ(a["borrower"].kind, Action::Kind::kPreempt);
  // Another borrower does not: borrowing never evicts premium work.
  view.jobs[owner].spec.borrowed = true;
  EXPECT_TRUE(Decide(view, NoHeadroom()).empty());
  // Nor does a standard owner evict a premium borrower.
  view.jobs[owner].spec.borrowed = false;
  view.jobs[owner].spec.tier = Tier::kStandard;
  EXPECT_TRUE(Decide(view, NoHeadroom()).empty());
}

TEST(SingularityPolicyTest, MigratesSmallJobToFreeAWholeNode) {
  ClusterView view = MakeCluster(2, 8, 1000);
  // Node 0: one 1-slot basic job; node 1: 7 busy slots. 8 slots free in total, no node whole.
  StartRunning(view, AddJob(view, "small", Tier::kBasic, 1, 1, 0), {{0, 1}}, 0);
  StartRunning(view, AddJob(view, "other", Tier::kStandard, 7, 7, 0), {{1, 7}}, 0);
  AddJob(view, "prem", Tier::kPremium, 8, 8, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("small"));
  EXPECT_EQ(a["small"].kind, Action::Kind::kMigrate);
  EXPECT_EQ(a["small"].placement, (Placement{{1, 1}}));
  EXPECT_FALSE(a.count("other"));
}

TEST(SingularityPolicyTest, KeepsPremiumHeadroomFree) {
  ClusterView view = MakeCluster(8, 8, 0);
  for (int i = 0; i < 70; ++i) AddJob(view, "b" + std::to_string(i), Tier::kBasic, 1, 1, 0);
  SingularityOptions options;
  options.premium_headroom_slots = 8;
  std::map<std::string, Action> a = Decide(view, options);
  EXPECT_EQ(a.size(), 56u);  // 8 of the 64 slots stay free for premium arrivals
  // A premium job may use the headroom.
  AddJob(view, "prem", Tier::kPremium, 8, 8, 0);
  a = Decide(view, options);
  ASSERT_TRUE(a.count("prem"));
  EXPECT_EQ(a["prem"].kind, Action::Kind::kStart);
}

TEST(SingularityPolicyTest, HeadroomIsCappedOnSmallClusters) {
  ClusterView view = MakeCluster(2, 8, 0);  // 16 slots: at most 2 kept free
  for (int i = 0; i < 20; ++i) AddJob(view, "b" + std::to_string(i), Tier::kBasic, 1, 1, 0);
  SingularityOptions options;
  options.premium_headroom_slots = 8;
  EXPECT_EQ(Decide(view, options).size(), 14u);
}

TEST(SingularityPolicyTest, StartsBasicShrunkAndGrowsItBack) {
  ClusterView view = MakeCluster(1, 8, 0);
  StartRunning(view, AddJob(view, "rigid", Tier::kStandard, 4, 4, 0), {{0, 4}}, 0);
  const int e = AddJob(view, "elastic", Tier::kBasic, 8, 2, 0);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("elastic"));
  EXPECT_EQ(a["elastic"].placement, (Placement{{0, 4}}));

  // The rigid job finished; after its minimum run the elastic job grows back to 8.
  view.jobs.erase(view.jobs.begin());
  StartRunning(view, e - 1, {{0, 4}}, 0);
  view.now = 10;
  EXPECT_TRUE(Decide(view, NoHeadroom()).empty());  // too soon: a resize costs a checkpoint
  view.now = 1000;
  a = Decide(view, NoHeadroom());
  ASSERT_TRUE(a.count("elastic"));
  EXPECT_EQ(a["elastic"].kind, Action::Kind::kResize);
  EXPECT_EQ(a["elastic"].placement, (Placement{{0, 8}}));
}

TEST(SingularityPolicyTest, GuaranteedJobsByTierThenSlack) {
  ClusterView view = MakeCluster(1, 8, 1000);
  AddJob(view, "std-old", Tier::kStandard, 8, 8, 0);  // waited long: negative slack
  AddJob(view, "std-new", Tier::kStandard, 8, 8, 999);
  AddJob(view, "prem", Tier::kPremium, 8, 8, 1000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a.count("prem"));
  view.jobs.pop_back();
  a = Decide(view, NoHeadroom());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a.count("std-old"));
}

TEST(SingularityPolicyTest, StarvingBasicGangReservesNodes) {
  ClusterView view = MakeCluster(2, 8, 100000);
  StartRunning(view, AddJob(view, "a", Tier::kBasic, 4, 4, 0), {{0, 4}}, 0);
  StartRunning(view, AddJob(view, "b", Tier::kBasic, 4, 4, 0), {{1, 4}}, 0);
  AddJob(view, "big", Tier::kBasic, 8, 8, 1);  // waited > 6 h, cannot fit (4 + 4 free)
  AddJob(view, "small1", Tier::kBasic, 1, 1, 50000);
  AddJob(view, "small2", Tier::kBasic, 1, 1, 50001);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  // One node is held for `big`; small jobs backfill the other one only.
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a["small1"].placement[0].node, a["small2"].placement[0].node);
}

TEST(SingularityPolicyTest, GangLargerThanTheClusterReservesNothing) {
  ClusterView view = MakeCluster(2, 8, 100000);
  AddJob(view, "huge", Tier::kBasic, 64, 32, 0);  // waited long, but can never fit 16 slots
  AddJob(view, "p", Tier::kPremium, 64, 64, 0);   // likewise: waits, evicts nothing
  AddJob(view, "small", Tier::kBasic, 1, 1, 50000);
  std::map<std::string, Action> a = Decide(view, NoHeadroom());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a.count("small"));
}

}  // namespace
}  // namespace tessera::cluster
