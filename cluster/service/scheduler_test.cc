#include "cluster/service/scheduler.h"

#include <gtest/gtest.h>

#include "cluster/service/scheduler_fixture.h"

namespace tessera::cluster {
namespace {

class SchedulerTest : public SchedulerFixture {
 protected:
  void SetUp() override {
    SchedulerFixture::SetUp();
    Open(0);
  }

  void Open(double now) {
    SingularityOptions policy_options;
    policy_options.premium_headroom_slots = 0;  // a 4-slot test cluster has no room to spare
    OpenScheduler({.heartbeat_timeout_s = 2,
                   .restart_grace_s = 5,
                   .max_crashes = 1,
                   .job_root = root_ / "jobs"},
                  NewSingularityPolicy(policy_options), now);
  }

  std::string Submit(std::string tier, int workers, double now) {
    rpc::SubmitRequest request;
    request.set_tenant("t");
    request.set_tier(tier);
    request.set_requested_workers(workers);
    request.set_min_workers(workers);
    request.add_args("--steps=100");
    auto id = scheduler_->Submit(request, now);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  static rpc::RunReport Report(const rpc::Assignment& a, rpc::RunReport::Exit exit, int64_t step) {
    rpc::RunReport r;
    r.set_job_id(a.job_id());
    r.set_run(a.run());
    r.set_exit(exit);
    r.set_step(step);
    r.set_total_steps(100);
    r.set_workers(a.workers());
    r.set_started(true);
    return r;
  }
};

TEST_F(SchedulerTest, PremiumPreemptsBasicWhichResumesAfterwards) {
  ASSERT_TRUE(scheduler_->RegisterNode("n1", 4, 0).ok());
  std::string basic = Submit("basic", 4, 1);
  auto a = Beat("n1", {}, 1.1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].job_id(), basic);
  EXPECT_EQ(a[0].workers(), 4);
  EXPECT_EQ(a[0].world_size(), 4);
  EXPECT_FALSE(a[0].stop());
  EXPECT_EQ(a[0].job_dir(), (root_ / "jobs" / basic).string());
  Beat("n1", {Report(a[0], rpc::RunReport::RUNNING, 5)}, 2);
  EXPECT_EQ(Job(basic, 2).state(), "running");

  std::string premium = Submit("premium", 4, 10);
  auto b = Beat("n1", {Report(a[0], rpc::RunReport::RUNNING, 40)}, 10.1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].job_id(), basic);
  EXPECT_TRUE(b[0].stop()) << "the basic job must be told to checkpoint and exit";
  EXPECT_EQ(Job(basic, 10.1).state(), "checkpointing");

  auto c = Beat("n1", {Report(a[0], rpc::RunReport::CHECKPOINTED, 41)}, 10.2);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].job_id(), premium);
  EXPECT_EQ(c[0].workers(), 4);
  rpc::JobInfo p = Job(premium, 10.2);
  EXPECT_NEAR(p.time_to_workers(), 0.2, 1e-9);
  EXPECT_EQ(Job(basic, 10.2).state(), "suspended");
  EXPECT_EQ(Job(basic, 10.2).step(), 41);

  Beat("n1", {Report(c[0], rpc::RunReport::RUNNING, 1)}, 10.3);
  auto d = Beat("n1", {Report(c[0], rpc::RunReport::FINISHED, 100)}, 20);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].job_id(), basic);
  EXPECT_EQ(d[0].run(), 2) << "a new run resumes the basic job";
  EXPECT_EQ(Job(premium, 20).state(), "finished");
  // Ideal seconds of work / time since submission: it waited 0.3 s in all, of 10 s.
  EXPECT_NEAR(Job(premium, 20).sla_fraction(), 9.7 / 10.0, 1e-9);
  EXPECT_EQ(Job(basic, 20).preemptions(), 1);
}

TEST_F(SchedulerTest, DeadNodeJobsRestartElsewhere) {
  ASSERT_TRUE(scheduler_->RegisterNode("n1", 4, 0).ok());
  ASSERT_TRUE(scheduler_->RegisterNode("n2", 4, 0).ok());
  std::string id = Submit("standard", 4, 1);
  auto on1 = Beat("n1", {}, 1.1);
  auto on2 = Beat("n2", {}, 1.1);
  ASSERT_EQ(on1.size() + on2.size(), 1u);
  std::string host = on1.empty() ? "n2" : "n1";
  std::string other = on1.empty() ? "n1" : "n2";
  auto run = on1.empty() ? on2[0] : on1[0];
  Beat(host, {Report(run, rpc::RunReport::RUNNING, 10)}, 1.5);
  // The host goes silent; the other node keeps beating.
  Beat(other, {}, 3);
  ASSERT_TRUE(scheduler_->Tick(3.4).ok());  // 1.9 s of silence: not yet dead
  EXPECT_TRUE(Beat(other, {}, 3.4).empty());
  ASSERT_TRUE(scheduler_->Tick(3.6).ok());
  auto moved = Beat(other, {}, 3.7);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].job_id(), id);
  EXPECT_EQ(moved[0].run(), 2);
  EXPECT_EQ(Job(id, 3.7).recoveries(), 1);
  bool dead_listed = false;
  for (const auto& node : scheduler_->ListNodes(3.7)) {
    if (node.id() == host) dead_listed = !node.alive();
  }
  EXPECT_TRUE(dead_listed);
  // The dead node's agent must register again before it gets work.
  rpc::HeartbeatRequest late;
  late.set_node_id(host);
  EXPECT_TRUE(scheduler_->Heartbeat(late, 4)->unknown_node());
}

TEST_F(SchedulerTest, RestartKeepsJobsNodesAndEvents) {
  ASSERT_TRUE(scheduler_->RegisterNode("n1", 4, 0).ok());
  std::string running = Submit("basic", 4, 1);
  std::string queued = Submit("basic", 4, 2);
  auto a = Beat("n1", {}, 2.1);
  ASSERT_EQ(a.size(), 1u);
  Beat("n1", {Report(a[0], rpc::RunReport::RUNNING, 30)}, 3);
  size_t events = scheduler_->ListEvents(0).size();

  Open(50);
  EXPECT_EQ(Job(running, 50).state(), "running");
  EXPECT_EQ(Job(running, 50).step(), 30);
  EXPECT_EQ(Job(queued, 50).state(), "pending");
  EXPECT_GT(scheduler_->ListEvents(0).size(), events);
  // The agent's next heartbeat finds the same assignment: its job was never interrupted.
  auto b = Beat("n1", {Report(a[0], rpc::RunReport::RUNNING, 60)}, 50.5);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].job_id(), running);
  EXPECT_EQ(b[0].run(), a[0].run());
  // New submissions do not reuse ids.
  EXPECT_EQ(Submit("basic", 1, 51), "j3");
  // A node restored from the store gets the restart grace (5 s from 50) before it can be
  // declared dead, then the usual timeout.
  ASSERT_TRUE(scheduler_->Tick(54).ok());
  EXPECT_TRUE(scheduler_->ListNodes(54)[0].alive());
  ASSERT_TRUE(scheduler_->Tick(56).ok());
  EXPECT_FALSE(scheduler_->ListNodes(56)[0].alive());
}

TEST_F(SchedulerTest, CancelStopsTheRunFirst) {
  ASSERT_TRUE(scheduler_->RegisterNode("n1", 4, 0).ok());
  std::string id = Submit("basic", 2, 1);
  auto a = Beat("n1", {}, 1.1);
  ASSERT_TRUE(scheduler_->Cancel(id, 2).ok());
  auto b = Beat("n1", {}, 2.1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(b[0].stop());
  EXPECT_EQ(Job(id, 2.1).state(), "cancelling");
  EXPECT_TRUE(Beat("n1", {Report(a[0], rpc::RunReport::CHECKPOINTED, 3)}, 2.2).empty());
  EXPECT_EQ(Job(id, 2.2).state(), "cancelled");
  EXPECT_EQ(scheduler_->Cancel(id, 3).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(scheduler_->Cancel("j99", 3).code(), StatusCode::kNotFound);
  EXPECT_EQ(scheduler_->Cancel("nonsense", 3).code(), StatusCode::kNotFound);
}

TEST_F(SchedulerTest, CrashedRunsRestartUntilTheLimit) {
  ASSERT_TRUE(scheduler_->RegisterNode("n1", 2, 0).ok());
  std::string id = Submit("basic", 2, 1);
  auto a = Beat("n1", {}, 1.1);
  auto b = Beat("n1", {Report(a[0], rpc::RunReport::CRASHED, 3)}, 2);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].run(), 2);
  EXPECT_TRUE(Beat("n1", {Report(b[0], rpc::RunReport::CRASHED, 3)}, 3).empty());
  EXPECT_EQ(Job(id, 3).state(), "failed");
}

TEST_F(SchedulerTest, RejectsBadSubmissions) {
  rpc::SubmitRequest r;
  r.set_tier("gold");
  r.set_requested_workers(2);
  EXPECT_EQ(scheduler_->Submit(r, 0).status().code(), StatusCode::kInvalidArgument);
  r.set_tier("basic");
  r.set_requested_workers(0);
  EXPECT_EQ(scheduler_->Submit(r, 0).status().code(), StatusCode::kInvalidArgument);
  r.set_requested_workers(2);
  r.set_min_workers(3);
  EXPECT_EQ(scheduler_->Submit(r, 0).status().code(), StatusCode::kInvalidArgument);
  r.set_min_workers(1);
  r.add_args("--world-size=8");
  EXPECT_EQ(scheduler_->Submit(r, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler_->RegisterNode("", 4, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler_->RegisterNode("n1", 0, 0).code(), StatusCode::kInvalidArgument);
  rpc::HeartbeatRequest unknown;
  unknown.set_node_id("ghost");
  EXPECT_TRUE(scheduler_->Heartbeat(unknown, 0)->unknown_node());
}

}  // namespace
}  // namespace tessera::cluster
