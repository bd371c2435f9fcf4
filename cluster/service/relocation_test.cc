// The scheduler's bookkeeping of Resize and Migrate, driven by a scripted policy so that the
// test does not depend on when a real policy would choose to move a job.
#include <gtest/gtest.h>

#include <deque>

#include "cluster/service/scheduler.h"
#include "cluster/service/scheduler_fixture.h"

namespace tessera::cluster {
namespace {

// Starts pending jobs first-fit on one node; otherwise plays the next scripted action, once.
class ScriptedPolicy : public Policy {
 public:
  std::deque<Action> script;
  std::vector<ClusterView> seen;

  std::vector<Action> Decide(const ClusterView& view) override {
    seen.push_back(view);
    std::vector<Action> actions;
    for (size_t j = 0; j < view.jobs.size(); ++j) {
      const JobView& job = view.jobs[j];
      if (job.state != JobState::kPending && job.state != JobState::kSuspended) continue;
      for (size_t n = 0; n < view.nodes.size(); ++n) {
        int used = view.nodes[n].draining;
        for (const JobView& other : view.jobs) {
          for (const Slice& s : other.placement)
            used += s.node == static_cast<int>(n) ? s.slots : 0;
        }
        if (view.nodes[n].alive && view.nodes[n].slots - used >= job.spec.requested_workers) {
          actions.push_back(
              {.kind = Action::Kind::kStart,
               .job = static_cast<int>(j),
               .job_id = job.spec.id,
               .placement = {{.node = static_cast<int>(n), .slots = job.spec.requested_workers}}});
          return actions;
        }
      }
    }
    if (!script.empty() && !view.jobs.empty() && view.jobs[0].state == JobState::kRunning) {
      Action a = script.front();
      script.pop_front();
      a.job_id = view.jobs[a.job].spec.id;
      actions.push_back(a);
    }
    return actions;
  }
  std::string_view name() const override { return "scripted"; }
};

class RelocationTest : public SchedulerFixture {
 protected:
  void SetUp() override {
    SchedulerFixture::SetUp();
    auto policy = std::make_unique<ScriptedPolicy>();
    policy_ = policy.get();
    OpenScheduler(
        {.heartbeat_timeout_s = 10, .restart_grace_s = 0, .max_crashes = 3, .job_root = root_},
        std::move(policy), 0);
    ASSERT_TRUE(scheduler_->RegisterNode("n1", 4, 0).ok());
    ASSERT_TRUE(scheduler_->RegisterNode("n2", 4, 0).ok());
    rpc::SubmitRequest r;
    r.set_tier("basic");
    r.set_requested_workers(4);
    r.set_min_workers(1);
    ASSERT_TRUE(scheduler_->Submit(r, 1).ok());
    auto a = Beat("n1", {}, 1.1);
    ASSERT_EQ(a.size(), 1u);
    run1_ = a[0];
    Beat("n1", {Report(run1_, rpc::RunReport::RUNNING)}, 1.2);
  }
  static rpc::RunReport Report(const rpc::Assignment& a, rpc::RunReport::Exit exit) {
    rpc::RunReport r;
    r.set_job_id(a.job_id());
    r.set_run(a.run());
    r.set_exit(exit);
    r.set_started(true);
    r.set_step(10);
    r.set_total_steps(100);
    return r;
  }

  ScriptedPolicy* policy_ = nullptr;
  rpc::Assignment run1_;
};

TEST_F(RelocationTest, MigrateStopsTheOldRunThenStartsOnTheNewNode) {
  policy_->script.push_back({.kind = Action::Kind::kMigrate,
                             .job = 0,
                             .job_id = "",
                             .placement = {{.node = 1, .slots = 4}}});
  ASSERT_TRUE(scheduler_->Tick(2).ok());
  // The old run is told to checkpoint; the new node gets nothing until it has.
  auto on1 = Beat("n1", {Report(run1_, rpc::RunReport::RUNNING)}, 2.1);
  ASSERT_EQ(on1.size(), 1u);
  EXPECT_TRUE(on1[0].stop());
  EXPECT_TRUE(Beat("n2", {}, 2.1).empty());
  // Meanwhile the policy sees n1's slots draining, so it cannot hand them out yet.
  ASSERT_TRUE(scheduler_->Tick(2.2).ok());
  EXPECT_EQ(policy_->seen.back().nodes[0].draining, 4);
  EXPECT_EQ(policy_->seen.back().jobs[0].placement, (Placement{{.node = 1, .slots = 4}}));

  EXPECT_TRUE(Beat("n1", {Report(run1_, rpc::RunReport::CHECKPOINTED)}, 2.5).empty());
  auto on2 = Beat("n2", {}, 2.6);
  ASSERT_EQ(on2.size(), 1u);
  EXPECT_EQ(on2[0].run(), 2);
  EXPECT_EQ(on2[0].workers(), 4);
  EXPECT_FALSE(on2[0].stop());
  ASSERT_TRUE(scheduler_->Tick(2.7).ok());
  EXPECT_EQ(policy_->seen.back().nodes[0].draining, 0);
  auto jobs = scheduler_->ListJobs(2.7);
  EXPECT_EQ(jobs[0].migrations(), 1);
  EXPECT_EQ(jobs[0].placement(), "n2:4");
}

TEST_F(RelocationTest, ResizeRestartsWithFewerWorkersAndTheSameWorldSize) {
  policy_->script.push_back({.kind = Action::Kind::kResize,
                             .job = 0,
                             .job_id = "",
                             .placement = {{.node = 0, .slots = 2}}});
  ASSERT_TRUE(scheduler_->Tick(2).ok());
  EXPECT_EQ(scheduler_->ListJobs(2)[0].state(), "relocating");
  auto stop = Beat("n1", {Report(run1_, rpc::RunReport::RUNNING)}, 2.1);
  ASSERT_EQ(stop.size(), 1u);
  EXPECT_TRUE(stop[0].stop());
  ASSERT_TRUE(scheduler_->Tick(2.2).ok());
  EXPECT_EQ(policy_->seen.back().nodes[0].draining, 2);  // 4 held before, 2 kept
  auto next = Beat("n1", {Report(run1_, rpc::RunReport::CHECKPOINTED)}, 2.5);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].run(), 2);
  EXPECT_EQ(next[0].workers(), 2);
  EXPECT_EQ(next[0].world_size(), 4);
  EXPECT_EQ(scheduler_->ListJobs(2.5)[0].resizes(), 1);
  EXPECT_EQ(scheduler_->ListJobs(2.5)[0].state(), "running");
}

TEST_F(RelocationTest, NodeDeathDuringMigrationRequeuesTheJob) {
  policy_->script.push_back({.kind = Action::Kind::kMigrate,
                             .job = 0,
                             .job_id = "",
                             .placement = {{.node = 1, .slots = 4}}});
  ASSERT_TRUE(scheduler_->Tick(2).ok());
  // n1 dies before the checkpoint: the job restarts from its last periodic checkpoint.
  Beat("n2", {}, 11);
  ASSERT_TRUE(scheduler_->Tick(12.5).ok());
  auto jobs = scheduler_->ListJobs(12.5);
  EXPECT_EQ(jobs[0].recoveries(), 1);
  auto on2 = Beat("n2", {}, 12.6);
  ASSERT_EQ(on2.size(), 1u);
  EXPECT_EQ(on2[0].run(), 2);
  EXPECT_FALSE(on2[0].stop());
}

}  // namespace
}  // namespace tessera::cluster
