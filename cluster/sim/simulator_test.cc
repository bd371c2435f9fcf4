#include "cluster/sim/simulator.h"

#include <gtest/gtest.h>

#include <random>

#include "cluster/policy/policy.h"

namespace tessera::cluster::sim {
namespace {

SimJob Job(std::string id, Tier tier, int workers, int min_workers, double submit,
           double duration) {
  SimJob job;
  job.spec.id = std::move(id);
  job.spec.tenant = "t";
  job.spec.tier = tier;
  job.spec.requested_workers = workers;
  job.spec.min_workers = min_workers;
  job.spec.submit_time = submit;
  job.duration = duration;
  return job;
}

SimOptions OneNode() {
  SimOptions o;
  o.nodes = 1;
  o.slots_per_node = 8;
  o.checkpoint_s = 10;
  o.restore_s = 30;
  o.validate = true;
  return o;
}

const JobOutcome& Find(const SimResult& r, const std::string& id) {
  for (const JobOutcome& j : r.jobs) {
    if (j.spec.id == id) return j;
  }
  ADD_FAILURE() << "no job " << id;
  return r.jobs.front();
}

TEST(SimulatorTest, LoneJobRunsAtIdealSpeed) {
  std::unique_ptr<Policy> fifo = NewFifoPolicy();
  Result<SimResult> r = Simulate({Job("a", Tier::kPremium, 8, 8, 5, 100)}, *fifo, OneNode());
  ASSERT_TRUE(r.ok()) << r.status();
  const JobOutcome& a = r->jobs[0];
  EXPECT_DOUBLE_EQ(a.first_start, 5);
  EXPECT_DOUBLE_EQ(a.finish, 105);
  EXPECT_DOUBLE_EQ(a.fraction(), 1.0);
  EXPECT_TRUE(a.sla_met());
  EXPECT_DOUBLE_EQ(r->allocated_slot_s, 800);
  EXPECT_DOUBLE_EQ(r->useful_slot_s, 800);
}

TEST(SimulatorTest, FifoQueuesAndAccountsTheWait) {
  std::unique_ptr<Policy> fifo = NewFifoPolicy();
  Result<SimResult> r =
      Simulate({Job("a", Tier::kBasic, 8, 8, 0, 100), Job("b", Tier::kPremium, 4, 4, 50, 100)},
               *fifo, OneNode());
  ASSERT_TRUE(r.ok()) << r.status();
  const JobOutcome& b = Find(*r, "b");
  EXPECT_DOUBLE_EQ(b.queueing_delay(), 50);
  EXPECT_DOUBLE_EQ(b.finish, 200);
  EXPECT_DOUBLE_EQ(b.fraction(), 100.0 / 150.0);
  EXPECT_FALSE(b.sla_met());
}

TEST(SimulatorTest, PreemptionCostsCheckpointAndRestore) {
  SingularityOptions o;
  o.premium_headroom_slots = 0;
  std::unique_ptr<Policy> policy = NewSingularityPolicy(o);
  Result<SimResult> r = Simulate(
      {Job("basic", Tier::kBasic, 8, 8, 0, 1000), Job("prem", Tier::kPremium, 8, 8, 100, 100)},
      *policy, OneNode());
  ASSERT_TRUE(r.ok()) << r.status();
  const JobOutcome& prem = Find(*r, "prem");
  EXPECT_DOUBLE_EQ(prem.first_start, 110);  // after the basic job's 10 s checkpoint
  EXPECT_DOUBLE_EQ(prem.finish, 210);
  const JobOutcome& basic = Find(*r, "basic");
  EXPECT_EQ(basic.preemptions, 1);
  // 100 s done before the preemption; resumed at 210, restored by 240, 900 s left.
  EXPECT_DOUBLE_EQ(basic.finish, 1140);
  // Lost work: 8 slots held for the 10-s checkpoint and the 30-s restore.
  EXPECT_DOUBLE_EQ(basic.lost_slot_s, 8 * (10 + 30));
  EXPECT_DOUBLE_EQ(basic.allocated_slot_s, 8 * (110 + 930));
  EXPECT_DOUBLE_EQ(prem.lost_slot_s, 0);
  EXPECT_DOUBLE_EQ(basic.slowdown(), 1.14);
}

TEST(SimulatorTest, SplicedJobRunsAtKnownFractionAndGrowsBack) {
  SingularityOptions o;
  o.premium_headroom_slots = 0;
  std::unique_ptr<Policy> policy = NewSingularityPolicy(o);
  SimOptions options = OneNode();
  options.decision_interval_s = 100;
  Result<SimResult> r = Simulate(
      {Job("elastic", Tier::kBasic, 8, 2, 0, 1000), Job("prem", Tier::kPremium, 4, 4, 100, 100)},
      *policy, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const JobOutcome& prem = Find(*r, "prem");
  EXPECT_DOUBLE_EQ(prem.first_start, 110);  // the 4 released slots drained for 10 s
  const JobOutcome& elastic = Find(*r, "elastic");
  EXPECT_EQ(elastic.preemptions, 0);
  EXPECT_EQ(elastic.resizes, 2);  // shrunk to 4 (8 ranks spliced), later grown back to 8
  // Shrunk at 100 (100 s done), stalled to 140, then half speed until it grows back at the
  // first decision after its minimum run of 300 s (the 100-s timer fires at 310, 410): +135 s;
  // stalled to 450; 765 s left at full speed.
  EXPECT_DOUBLE_EQ(elastic.finish, 1215);
  // Lost: 4 released slots draining 10 s, 4 slots stalled 40 s after the shrink, 8 slots
  // stalled 40 s after growing back.
  EXPECT_DOUBLE_EQ(elastic.lost_slot_s, 4 * 10 + 4 * 40 + 8 * 40);
}

TEST(SimulatorTest, RejectsBadInputAndCountsOversizedJobs) {
  std::unique_ptr<Policy> fifo = NewFifoPolicy();
  EXPECT_EQ(Simulate({Job("a", Tier::kBasic, 1, 1, 0, 10), Job("a", Tier::kBasic, 1, 1, 0, 10)},
                     *fifo, OneNode())
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(Simulate({Job("a", Tier::kBasic, 1, 1, 0, 0)}, *fifo, OneNode()).ok());
  EXPECT_FALSE(Simulate({Job("a", Tier::kBasic, 2, 4, 0, 5)}, *fifo, OneNode()).ok());
  SimOptions no_nodes = OneNode();
  no_nodes.nodes = 0;
  EXPECT_FALSE(Simulate({}, *fifo, no_nodes).ok());
  Result<SimResult> r =
      Simulate({Job("huge", Tier::kBasic, 64, 64, 0, 10), Job("ok", Tier::kBasic, 1, 1, 0, 10)},
               *fifo, OneNode());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rejected, 1);
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->jobs[0].spec.id, "ok");
}

// A policy that breaks the rules must be caught, not trusted.
class OverAllocatingPolicy final : public Policy {
 public:
  std::vector<Action> Decide(const ClusterView& view) override {
    std::vector<Action> actions;
    for (size_t i = 0; i < view.jobs.size(); ++i) {
      if (view.jobs[i].state == JobState::kPending) {
        actions.push_back({Action::Kind::kStart,
                           static_cast<int>(i),
                           view.jobs[i].spec.id,
                           {{0, view.jobs[i].spec.requested_workers}}});
      }
    }
    return actions;
  }
  std::string_view name() const override { return "broken"; }
};

TEST(SimulatorTest, CatchesPoliciesThatOverAllocate) {
  OverAllocatingPolicy broken;
  SimOptions options = OneNode();
  for (bool validate : {true, false}) {
    options.validate = validate;
    Result<SimResult> r =
        Simulate({Job("a", Tier::kBasic, 8, 8, 0, 10), Job("b", Tier::kBasic, 8, 8, 0, 10)}, broken,
                 options);
    EXPECT_EQ(r.status().code(), StatusCode::kInternal) << r.status();
  }
}

// Every policy finishes every job of a random workload, with legal actions only, and never
// holds more slots than the cluster has.
// Admission control in the replay, with the live scheduler's code (quota.h): vision owns the
// premium quota, speech borrows it while idle and is preempted when vision comes back; a job
// beyond every quota runs as basic.
TEST(SimulatorTest, QuotaBorrowingIsReclaimedByTheOwner) {
  SingularityOptions o;
  o.premium_headroom_slots = 0;
  std::unique_ptr<Policy> policy = NewSingularityPolicy(o);
  SimOptions options = OneNode();
  options.quota = *ParseQuotaConfig("vision 8 0\nspeech 0 0\n");
  SimJob borrower = Job("borrower", Tier::kPremium, 8, 8, 0, 1000);
  borrower.spec.tenant = "speech";
  SimJob owner = Job("owner", Tier::kPremium, 8, 8, 100, 100);
  owner.spec.tenant = "vision";
  SimJob refused = Job("refused", Tier::kStandard, 1, 1, 150, 10);
  refused.spec.tenant = "speech";
  Result<SimResult> r = Simulate({borrower, owner, refused}, *policy, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->quota_borrowing, 1);
  EXPECT_EQ(r->quota_refused, 1);
  const JobOutcome& b = Find(*r, "borrower");
  EXPECT_TRUE(b.spec.borrowed);
  EXPECT_EQ(b.preemptions, 1);
  // The owner waits only for the borrower's checkpoint (10 s), not for it to finish.
  EXPECT_DOUBLE_EQ(Find(*r, "owner").first_start, 110);
  EXPECT_FALSE(Find(*r, "owner").spec.borrowed);
  EXPECT_EQ(Find(*r, "refused").spec.tier, Tier::kBasic);
  EXPECT_EQ(Find(*r, "refused").requested_tier, Tier::kStandard);

  // Quotas that sell more than the cluster are refused up front.
  options.quota = *ParseQuotaConfig("vision 8 1\n");
  EXPECT_EQ(Simulate({owner}, *policy, options).status().code(), StatusCode::kInvalidArgument);
}

TEST(SimulatorTest, RandomWorkloadsCompleteUnderEveryPolicy) {
  std::mt19937 rng(7);
  std::vector<SimJob> jobs;
  const int sizes[] = {1, 1, 1, 1, 2, 4, 8, 16};
  double t = 0;
  for (int i = 0; i < 400; ++i) {
    t += std::exponential_distribution<double>(1.0 / 60)(rng);
    const int n = sizes[std::uniform_int_distribution<int>(0, 7)(rng)];
    const Tier tier = static_cast<Tier>(std::uniform_int_distribution<int>(0, 2)(rng));
    jobs.push_back(Job("j" + std::to_string(i), tier, n, std::max(1, n / 4), t,
                       std::exponential_distribution<double>(1.0 / 1800)(rng) + 1));
  }
  SimOptions options;
  options.nodes = 4;
  options.slots_per_node = 8;
  options.validate = true;
  for (const std::string& name : PolicyNames()) {
    Result<std::unique_ptr<Policy>> policy = NewPolicyByName(name);
    ASSERT_TRUE(policy.ok());
    Result<SimResult> r = Simulate(jobs, **policy, options);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    ASSERT_EQ(r->jobs.size(), jobs.size());
    for (const JobOutcome& j : r->jobs) {
      EXPECT_GE(j.first_start, j.spec.submit_time);
      EXPECT_GE(j.finish, j.first_start + j.duration - 1e-6) << name << " " << j.spec.id;
    }
    EXPECT_LE(r->allocated_slot_s, r->capacity() * (r->end - r->start) + 1e-6);
    EXPECT_LE(r->useful_slot_s, r->allocated_slot_s + 1e-6);
    // Per-job accounting adds up to the cluster's.
    double allocated = 0;
    for (const JobOutcome& j : r->jobs) {
      allocated += j.allocated_slot_s;
      EXPECT_LE(j.lost_slot_s, j.allocated_slot_s + r->draining_slot_s + 1e-6);
    }
    EXPECT_NEAR(allocated, r->allocated_slot_s, 1e-6 * r->allocated_slot_s) << name;
    // Deterministic: a second replay gives the same outcome.
    Result<SimResult> again = Simulate(jobs, **NewPolicyByName(name), options);
    ASSERT_TRUE(again.ok());
    for (size_t i = 0; i < jobs.size(); ++i) {
      ASSERT_EQ(again->jobs[i].finish, r->jobs[i].finish) << name;
    }
  }
}

}  // namespace
}  // namespace tessera::cluster::sim
