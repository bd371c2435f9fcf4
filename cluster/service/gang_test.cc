// Gang runs (command jobs): rank placement, assignments on every node of the placement, a
// failed rank failing the gang, completion only when every part is done, and the live SLA
// taking back the progress of steps lost to an older checkpoint.
#include "cluster/service/gang.h"

#include <gtest/gtest.h>

#include "cluster/service/scheduler.h"
#include "cluster/service/scheduler_fixture.h"

namespace tessera::cluster {
namespace {

TEST(GangPartsTest, RanksAreDealtToSlotsInContiguousBlocksPerNode) {
  // 2 nodes x 2 slots, world size 4: one rank per slot.
  EXPECT_EQ(
      GangParts({{.node = 0, .slots = 2}, {.node = 1, .slots = 2}}, 4),
      (std::vector<GangPart>{
          {.node = 0, .node_rank = 0, .rank_offset = 0, .local_ranks = 2, .local_slots = 2},
          {.node = 1, .node_rank = 1, .rank_offset = 2, .local_ranks = 2, .local_slots = 2}}));
  // Shrunk to one slot per node: two ranks share each slot (replica splicing).
  EXPECT_EQ(
      GangParts({{.node = 1, .slots = 1}, {.node = 0, .slots = 1}}, 4),
      (std::vector<GangPart>{
          {.node = 1, .node_rank = 0, .rank_offset = 0, .local_ranks = 2, .local_slots = 1},
          {.node = 0, .node_rank = 1, .rank_offset = 2, .local_ranks = 2, .local_slots = 1}}));
  // Uneven: 3 slots for 4 ranks, the last slot holds two.
  auto uneven = GangParts({{.node = 0, .slots = 1}, {.node = 1, .slots = 2}}, 4);
  ASSERT_EQ(uneven.size(), 2u);
  EXPECT_EQ(uneven[0].local_ranks, 1);
  EXPECT_EQ(uneven[1].rank_offset, 1);
  EXPECT_EQ(uneven[1].local_ranks, 3);
  // Every rank placed exactly once, whatever the shape.
  for (int world = 1; world <= 9; ++world) {
    for (int a = 1; a <= world; ++a) {
      for (int b = 0; a + b <= world; ++b) {
        Placement p = {{.node = 0, .slots = a}};
        if (b > 0) p.push_back({.node = 1, .slots = b});
        int next = 0;
        for (const GangPart& part : GangParts(p, world)) {
          EXPECT_EQ(part.rank_offset, next);
          EXPECT_GE(part.local_ranks, part.local_slots);
          next += part.local_ranks;
        }
        EXPECT_EQ(next, world) << a << "+" << b;
      }
    }
  }
  EXPECT_TRUE(GangParts({{.node = 0, .slots = 5}}, 4).empty());  // more slots than ranks
}

class GangSchedulerTest : public SchedulerFixture {
 protected:
  void SetUp() override {
    SchedulerFixture::SetUp();
    SingularityOptions policy;
    policy.premium_headroom_slots = 0;
    OpenScheduler({.heartbeat_timeout_s = 2,
                   .restart_grace_s = 5,
                   .max_crashes = 1,
                   .job_root = root_ / "jobs"},
                  NewSingularityPolicy(policy), 0);
    ASSERT_TRUE(scheduler_->RegisterNode("n1", 2, 0, "10.0.0.1").ok());
    ASSERT_TRUE(scheduler_->RegisterNode("n2", 2, 0, "10.0.0.2").ok());
  }

  std::string SubmitCommand(int workers, double now) {
    rpc::SubmitRequest request;
    request.set_tier("basic");
    request.set_requested_workers(workers);
    // A command's own flags may look like the agent's: they are the program's business.
    for (const char* a : {"--job-type=command", "/usr/bin/python3", "train.py", "--workers", "8"}) {
      request.add_args(a);
    }
    auto id = scheduler_->Submit(request, now);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  static rpc::RunReport Part(const rpc::Assignment& a, rpc::RunReport::Exit exit,
                             std::optional<int64_t> step = std::nullopt) {
    rpc::RunReport r;
    r.set_job_id(a.job_id());
    r.set_run(a.run());
    r.set_exit(exit);
    r.set_started(true);
    r.set_failed_rank(-1);
    if (step) {
      r.set_step(*step);
      r.set_step_reported(true);
    }
    return r;
  }
};

TEST_F(GangSchedulerTest, EveryNodeOfThePlacementRunsItsBlockOfRanks) {
  std::string id = SubmitCommand(4, 0);
  auto a1 = Beat("n1", {}, 0.1);
  auto a2 = Beat("n2", {}, 0.1);
  ASSERT_EQ(a1.size(), 1u);
  ASSERT_EQ(a2.size(), 1u);
  // Rank 0 lives on the placement's first node; both parts point at it.
  const rpc::Assignment& first = a1[0].rank_offset() == 0 ? a1[0] : a2[0];
  const rpc::Assignment& second = a1[0].rank_offset() == 0 ? a2[0] : a1[0];
  EXPECT_TRUE(first.gang());
  EXPECT_EQ(first.world_size(), 4);
  EXPECT_EQ(first.local_ranks(), 2);
  EXPECT_EQ(second.rank_offset(), 2);
  EXPECT_EQ(second.local_ranks(), 2);
  EXPECT_EQ(first.node_rank(), 0);
  EXPECT_EQ(second.node_rank(), 1);
  EXPECT_EQ(first.num_nodes(), 2);
  EXPECT_EQ(first.master_port(), second.master_port());
  EXPECT_EQ(first.master_addr(), second.master_addr());
  EXPECT_EQ(first.master_addr(), a1[0].rank_offset() == 0 ? "10.0.0.1" : "10.0.0.2");
  EXPECT_GE(first.master_port(), 29500);
  EXPECT_EQ(first.run(), second.run());
  EXPECT_EQ(Job(id, 0.2).state(), "running");
}

TEST_F(GangSchedulerTest, AFailedRankFailsTheGangWhichRestartsOnAFreshPort) {
  std::string id = SubmitCommand(4, 0);
  auto a1 = Beat("n1", {}, 0.1);
  auto a2 = Beat("n2", {}, 0.1);
  ASSERT_EQ(a1.size(), 1u);
  ASSERT_EQ(a2.size(), 1u);
  const int port = a1[0].master_port();
  rpc::RunReport crashed = Part(a2[0], rpc::RunReport::CRASHED);
  crashed.set_exit_code(1);
  crashed.set_failed_rank(a2[0].rank_offset() + 1);
  crashed.set_detail("rank 3 exited with code 1");
  // The crash of one node's part ends the run everywhere: the next assignments are a new run.
  auto after = Beat("n2", {crashed}, 1.0);
  auto n1_after = Beat("n1", {Part(a1[0], rpc::RunReport::RUNNING)}, 1.1);
  for (const auto& a : after) EXPECT_GT(a.run(), a2[0].run());
  ASSERT_EQ(n1_after.size(), 1u);
  EXPECT_GT(n1_after[0].run(), a1[0].run());
  EXPECT_NE(n1_after[0].master_port(), port);
  rpc::JobInfo job = Job(id, 1.2);
  EXPECT_EQ(job.recoveries(), 1);
  EXPECT_NE(job.last_exit().find("rank 3 exited with code 1"), std::string::npos)
      << job.last_exit();
}

TEST_F(GangSchedulerTest, TheJobFinishesWhenEveryPartHas) {
  std::string id = SubmitCommand(4, 0);
  auto a1 = Beat("n1", {}, 0.1);
  auto a2 = Beat("n2", {}, 0.1);
  ASSERT_EQ(a1.size(), 1u);
  ASSERT_EQ(a2.size(), 1u);
  Beat("n1", {Part(a1[0], rpc::RunReport::FINISHED)}, 1.0);
  EXPECT_EQ(Job(id, 1.0).state(), "running");  // n2's ranks still run
  Beat("n2", {Part(a2[0], rpc::RunReport::FINISHED)}, 2.0);
  EXPECT_EQ(Job(id, 2.0).state(), "finished");
}

TEST_F(GangSchedulerTest, StepsLostToAnOlderCheckpointAreTakenBackFromTheSla) {
  std::string id = SubmitCommand(2, 0);
  auto a = Beat("n1", {}, 0.0);
  std::string node = "n1";
  if (a.empty()) {
    node = "n2";
    a = Beat(node, {}, 0.0);
  }
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].local_ranks(), 2);
  Beat(node, {Part(a[0], rpc::RunReport::RUNNING, 0)}, 0.0);
  Beat(node, {Part(a[0], rpc::RunReport::RUNNING, 100)}, 10.0);
  const double sla_before = Job(id, 10.0).sla_fraction();
  EXPECT_NEAR(sla_before, 1.0, 1e-9);
  // The node's part crashes; the job restarts from its checkpoint at step 40: 60 steps lost.
  rpc::RunReport crashed = Part(a[0], rpc::RunReport::CRASHED, 100);
  crashed.set_exit_code(137);
  auto b = Beat(node, {crashed}, 10.0);
  if (b.empty()) {  // restarted on the other node
    node = node == "n1" ? "n2" : "n1";
    b = Beat(node, {}, 10.0);
  }
  ASSERT_EQ(b.size(), 1u);
  ASSERT_GT(b[0].run(), a[0].run());
  Beat(node, {Part(b[0], rpc::RunReport::RUNNING, 40)}, 10.0);
  rpc::JobInfo job = Job(id, 10.0);
  EXPECT_EQ(job.lost_steps(), 60);
  // 10 s of progress for 100 steps: the 60 lost ones earned 6 s.
  EXPECT_NEAR(job.lost_progress_s(), 6.0, 1e-6);
  EXPECT_NEAR(job.sla_fraction(), 0.4, 1e-6);
  // Redone steps earn progress again.
  Beat(node, {Part(b[0], rpc::RunReport::RUNNING, 100)}, 16.0);
  EXPECT_NEAR(Job(id, 16.0).sla_fraction(), 10.0 / 16.0, 1e-6);
}

}  // namespace
}  // namespace tessera::cluster
