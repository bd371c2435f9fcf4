// Property test: on random clusters and job sets, driven for many steps through random
// checkpoint completions, node failures and arrivals, every policy only ever returns legal
// actions (ValidateActions: gang sizes, min workers, compact placements, no slot allocated twice
// or beyond capacity), and the policy-specific promises hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "cluster/policy/placement.h"
#include "cluster/policy/policy.h"
#include "cluster/policy/sla.h"
#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

// Applies legal actions the way the simulator does, with checkpoints completing later.
void Apply(ClusterView& view, const std::vector<Action>& actions) {
  for (const Action& a : actions) {
    JobView& job = view.jobs[a.job];
    switch (a.kind) {
      case Action::Kind::kStart:
        job.state = JobState::kRunning;
        job.placement = a.placement;
        job.last_change = view.now;
        break;
      case Action::Kind::kPreempt:
        job.state = JobState::kCheckpointing;
        ++job.preemptions;
        break;
      case Action::Kind::kResize:
      case Action::Kind::kMigrate:
        for (const Slice& old : job.placement) {
          int kept = 0;
          for (const Slice& s : a.placement) kept += s.node == old.node ? s.slots : 0;
          view.nodes[old.node].draining += std::max(0, old.slots - kept);
        }
        job.placement = a.placement;
        job.last_change = view.now;
        break;
    }
  }
}

void RandomStep(ClusterView& view, std::mt19937& rng, int& next_id) {
  std::uniform_real_distribution<double> u(0, 1);
  view.now += 1 + 400 * u(rng);
  for (NodeView& n : view.nodes) {
    if (u(rng) < 0.5) n.draining = 0;  // checkpoints written
  }
  for (JobView& job : view.jobs) {
    AccrueProgress(job, view.now - 100, view.now);
    if (job.state == JobState::kCheckpointing && u(rng) < 0.5) {
      job.state = JobState::kSuspended;
      job.placement.clear();
    } else if (job.state == JobState::kRunning && u(rng) < 0.1) {
      job.state = JobState::kFinished;
      job.placement.clear();
    }
  }
  // Rarely a node dies: its jobs lose their slots and wait again, as the service would do.
  if (u(rng) < 0.05) {
    const int dead = std::uniform_int_distribution<int>(0, view.nodes.size() - 1)(rng);
    view.nodes[dead].alive = false;
    for (JobView& job : view.jobs) {
      for (const Slice& s : job.placement) {
        if (s.node == dead && job.state != JobState::kFinished) {
          job.state = JobState::kSuspended;
          job.placement.clear();
          break;
        }
      }
    }
  }
  const int arrivals = std::uniform_int_distribution<int>(0, 6)(rng);
  const int sizes[] = {1, 1, 1, 2, 4, 8, 12, 16, 32};
  for (int i = 0; i < arrivals; ++i) {
    const int n = sizes[std::uniform_int_distribution<int>(0, 8)(rng)];
    const int min = u(rng) < 0.5 ? n : std::max(1, n / 4);
    const Tier tier = static_cast<Tier>(std::uniform_int_distribution<int>(0, 2)(rng));
    testing::AddJob(view, "j" + std::to_string(next_id++), tier, n, min, view.now);
  }
}

class PolicyPropertyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyPropertyTest, RandomClustersNeverGetIllegalActions) {
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    const int nodes = std::uniform_int_distribution<int>(1, 6)(rng);
    const int slots = std::uniform_int_distribution<int>(0, 1)(rng) ? 8 : 4;
    ClusterView view = testing::MakeCluster(nodes, slots);
    Result<std::unique_ptr<Policy>> policy = NewPolicyByName(GetParam());
    ASSERT_TRUE(policy.ok());
    int next_id = 0;
    for (int step = 0; step < 60; ++step) {
      RandomStep(view, rng, next_id);
      const ClusterView before = view;
      std::vector<Action> actions = (*policy)->Decide(view);
      Status valid = ValidateActions(view, actions);
      ASSERT_TRUE(valid.ok()) << GetParam() << " seed " << seed << " step " << step << ": "
                              << valid;
      for (const Action& a : actions) {
        const JobView& job = view.jobs[a.job];
        if (GetParam() == "fifo") {
          EXPECT_EQ(a.kind, Action::Kind::kStart);
          EXPECT_EQ(TotalSlots(a.placement), job.spec.requested_workers);
        }
        if (GetParam() == "tiresias") {
          EXPECT_TRUE(a.kind == Action::Kind::kStart || a.kind == Action::Kind::kPreempt);
        }
        if (GetParam() == "strict") {
          // Only ever preempts for a waiting job of a higher tier.
          EXPECT_TRUE(a.kind == Action::Kind::kStart || a.kind == Action::Kind::kPreempt);
          if (a.kind == Action::Kind::kPreempt) {
            bool higher_waits = false;
            for (const JobView& w : view.jobs) {
              higher_waits |= (w.state == JobState::kPending || w.state == JobState::kSuspended) &&
                              w.spec.tier < job.spec.tier;
            }
            EXPECT_TRUE(higher_waits) << "strict preempted " << job.spec.id;
          }
        }
        if (GetParam() == "singularity" && job.spec.tier == Tier::kPremium) {
          // Premium jobs are only ever started, on their full gang.
          EXPECT_EQ(a.kind, Action::Kind::kStart);
          EXPECT_EQ(TotalSlots(a.placement), job.spec.requested_workers);
        }
      }
      // Deterministic: the same view gives the same decision.
      std::vector<Action> again = (*policy)->Decide(before);
      ASSERT_EQ(again.size(), actions.size());
      Apply(view, actions);
      for (int f : FreeSlots(view)) ASSERT_GE(f, 0);
    }
  }
}

// Views need not be in submission order (a service may build them from a map): every policy
// stays legal on a shuffled view, and FIFO and Tiresias (whose tie-breaks are the submission
// order) decide exactly the same actions.
TEST_P(PolicyPropertyTest, ShuffledViewsDecideTheSame) {
  for (int seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(100 + seed);
    ClusterView view = testing::MakeCluster(4, 8);
    Result<std::unique_ptr<Policy>> policy = NewPolicyByName(GetParam());
    ASSERT_TRUE(policy.ok());
    int next_id = 0;
    for (int step = 0; step < 30; ++step) {
      RandomStep(view, rng, next_id);
      // Distinct submission times, so that the FIFO order is the same in both views.
      for (size_t i = 0; i < view.jobs.size(); ++i) view.jobs[i].spec.submit_time += i * 1e-3;
      ClusterView shuffled = view;
      std::shuffle(shuffled.jobs.begin(), shuffled.jobs.end(), rng);
      const std::vector<Action> in_order = (*policy)->Decide(view);
      const std::vector<Action> out_of_order = (*policy)->Decide(shuffled);
      ASSERT_TRUE(ValidateActions(shuffled, out_of_order).ok()) << GetParam();
      if (GetParam() != "singularity") {
        auto key = [](const std::vector<Action>& actions) {
          std::vector<std::string> keys;
          for (const Action& a : actions) {
            std::string k = std::string(ActionKindName(a.kind)) + " " + a.job_id;
            for (const Slice& s : a.placement) {
              k += " " + std::to_string(s.node) + ":" + std::to_string(s.slots);
            }
            keys.push_back(k);
          }
          std::sort(keys.begin(), keys.end());
          return keys;
        };
        ASSERT_EQ(key(in_order), key(out_of_order)) << GetParam() << " seed " << seed;
      }
      Apply(view, in_order);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyPropertyTest,
                         ::testing::Values("fifo", "tiresias", "strict", "singularity"));

}  // namespace
}  // namespace tessera::cluster
