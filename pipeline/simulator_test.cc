#include "pipeline/simulator.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

SimConfig UnitConfig(ScheduleKind kind, int P, int M) {
  SimConfig c;
  c.schedule = kind;
  c.micro_batches = M;
  c.stages.assign(P, StageCost{1.0, 1.0, 2.0, 0.0});
  c.boundary_bytes.assign(P - 1, 0.0);
  return c;
}

TEST(Simulator, OneFOneBMakespanIsClosedForm) {
  // Uniform stages, free links: (M + P - 1) * (F + B).
  for (int P : {1, 2, 4}) {
    for (int M : {1, 4, 8}) {
      auto r = Simulate(UnitConfig(ScheduleKind::kOneFOneB, P, M));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_DOUBLE_EQ(r->pipeline_s, (M + P - 1) * 3.0) << "P=" << P << " M=" << M;
    }
  }
}

TEST(Simulator, VarunaNeverSlowerThanItsUnitTimeline) {
  // With unit costs and free links the event model may only finish earlier than the slot model
  // (no one-slot visibility delay).
  for (int P : {2, 4, 5}) {
    for (int M : {2 * P, 4 * P}) {
      auto timeline = VarunaUnitTimeline(P, M);
      ASSERT_TRUE(timeline.ok());
      auto sim = Simulate(UnitConfig(ScheduleKind::kVaruna, P, M));
      ASSERT_TRUE(sim.ok());
      EXPECT_LE(sim->pipeline_s, timeline->makespan);
      EXPECT_GT(sim->pipeline_s, 4.0 * M - 1) << "a stage cannot beat its own work";
    }
  }
}

TEST(Simulator, BusyTimeIsTheWork) {
  auto r = Simulate(UnitConfig(ScheduleKind::kVaruna, 4, 8));
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->busy_s[0], 8 * 4.0);  // F + R + B
  EXPECT_DOUBLE_EQ(r->busy_s[3], 8 * 3.0);  // last stage: no recompute
  EXPECT_EQ(r->trace[3].size(), 16u);
  EXPECT_GT(r->bubble_stage0, 0.0);
  EXPECT_LT(r->bubble_stage0, 0.5);
}

TEST(Simulator, VarunaBeatsGPipeInTheUnitModel) {
  auto v = Simulate(UnitConfig(ScheduleKind::kVaruna, 4, 8));
  auto g = Simulate(UnitConfig(ScheduleKind::kGPipe, 4, 8));
  ASSERT_TRUE(v.ok() && g.ok());
  EXPECT_LT(v->pipeline_s, g->pipeline_s);
}

// The communication threads' CPU on shared processors: P=1 D=2 (each replica F B F B per step,
// 6 s of compute) on 2 cores, each worker's communication taking 1.5 s of CPU a step. The two
// workers need 2 x 6 + 2 x 1.5 = 15 CPU-seconds a step from 2 cores: 7.5 s, where the
// simulation without that CPU says 6 s. With a core of their own each (cores 0) or 2 cores to
// spare (4 cores), the step stays 6 s.
TEST(Simulator, CommunicationCpuOnSharedCoresSlowsTheComputeTasks) {
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 1, 2);
  c.replicas = 2;
  c.stages[0].comm_cpu_s = 1.5;
  c.steps = 3;
  auto own = Simulate(c);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_NEAR(own->step_s, 6.0, 1e-9);
  c.cores = 2;
  EXPECT_NEAR(CommCpuStretch(c), 1.25, 1e-12);
  auto shared = Simulate(c);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_NEAR(shared->step_s, 7.5, 1e-9);
  EXPECT_NEAR(shared->busy_s[0], 7.5, 1e-9);
  c.cores = 4;  // 2 spare cores x 6 s absorb the 3 s of communication CPU
  EXPECT_NEAR(CommCpuStretch(c), 1.0, 1e-12);
  // 4 workers (D = 4) on 2 cores: the compute times are each thread's with half a core (a
  // contention profile's); 6 CPU-seconds of communication on 2 cores cost every worker 3 s
  // more over its 6 s of tasks: 1 + 6 x (4 / 2) / 24 = 1.5.
  c.cores = 2;
  c.replicas = 4;
  EXPECT_NEAR(CommCpuStretch(c), 1.5, 1e-12);
  // Computing threads measured at a quarter of a core each (a loaded machine): the
  // communication threads get a quarter too, so their 3 CPU-s cost 12 s of the 2 workers'
  // 12 s of compute: 2x.
  c.replicas = 2;
  c.compute_cpu_share = 0.25;
  EXPECT_NEAR(CommCpuStretch(c), 2.0, 1e-12);
  c.compute_cpu_share = 1.5;
  EXPECT_FALSE(Simulate(c).ok());
  c.compute_cpu_share = 0;
  c.stages[0].comm_cpu_s = -1;
  EXPECT_FALSE(Simulate(c).ok());
}

TEST(Simulator, SlowLinksStretchTheStep) {
  // One micro-batch: both hops sit on the critical path.
  SimConfig c = UnitConfig(ScheduleKind::kVaruna, 2, 1);
  c.boundary_bytes = {1000.0};
  auto fast = Simulate(c);
  c.pipeline_link = {.bandwidth_bytes_per_s = 1000.0, .latency_s = 0.5};  // 1.5 s per message
  auto slow = Simulate(c);
  ASSERT_TRUE(fast.ok() && slow.ok());
  EXPECT_DOUBLE_EQ(fast->pipeline_s, 6.0);  // F0, F0, B0 (2), B0 (2); R0 overlaps
  EXPECT_DOUBLE_EQ(slow->pipeline_s, fast->pipeline_s + 2 * 1.5);
  // Many micro-batches: communication overlaps compute, so it costs less than a hop per task.
  c = UnitConfig(ScheduleKind::kVaruna, 2, 8);
  c.boundary_bytes = {1000.0};
  auto fast8 = Simulate(c);
  c.pipeline_link = {.bandwidth_bytes_per_s = 1000.0, .latency_s = 0.5};
  auto slow8 = Simulate(c);
  ASSERT_TRUE(fast8.ok() && slow8.ok());
  EXPECT_GE(slow8->pipeline_s, 8 * 4.0);  // stage 0 alone has 32 units of work
  EXPECT_LT(slow8->pipeline_s, fast8->pipeline_s + 16 * 1.5);
}

TEST(Simulator, TokenBucketBurstLetsIdleLinksCatchUp) {
  SimConfig c = UnitConfig(ScheduleKind::kVaruna, 2, 1);
  c.boundary_bytes = {1000.0};
  c.pipeline_link = {.bandwidth_bytes_per_s = 1000.0, .latency_s = 0.0};
  auto strict = Simulate(c);
  c.pipeline_link.burst_bytes = 1000.0;  // a whole message fits in the bucket
  auto burst = Simulate(c);
  c.pipeline_link.burst_bytes = 400.0;
  auto partial = Simulate(c);
  ASSERT_TRUE(strict.ok() && burst.ok() && partial.ok());
  EXPECT_DOUBLE_EQ(strict->pipeline_s, 6.0 + 2.0);  // 1 s each way
  EXPECT_DOUBLE_EQ(burst->pipeline_s, 6.0);
  EXPECT_DOUBLE_EQ(partial->pipeline_s, 6.0 + 2 * 0.6);
}

TEST(Simulator, AllreduceAddsRingTime) {
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 2, 2);
  for (auto& s : c.stages) s.gradient_bytes = 4000;
  c.replicas = 4;
  c.allreduce_link = {.bandwidth_bytes_per_s = 1000.0, .latency_s = 0.0};
  auto r = Simulate(c);
  ASSERT_TRUE(r.ok());
  // 2 (D-1) steps of 1000 bytes at 1000 B/s = 6 s.
  EXPECT_DOUBLE_EQ(r->allreduce_s[0], 6.0);
  EXPECT_DOUBLE_EQ(r->step_s, r->pipeline_s + 6.0);
  EXPECT_DOUBLE_EQ(RingAllreduceSeconds(4000, 1, c.allreduce_link), 0.0);
  // Measured all-reduce and optimizer times replace the model.
  c.stages[0].allreduce_s = 1.0;
  c.stages[0].optimizer_s = 0.5;
  auto m = Simulate(c);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->allreduce_s[0], 1.0);
  EXPECT_DOUBLE_EQ(m->step_s, std::max(m->finish_s[0] + 1.5, m->finish_s[1] + 6.0));
  c.stages[1].allreduce_s = 0.25;
  m = Simulate(c);
  EXPECT_DOUBLE_EQ(m->step_s, std::max(m->finish_s[0] + 1.5, m->finish_s[1] + 0.25));
}

// Buckets started during the last backward (gloo) hide the all-reduce behind it: of a 6 s
// all-reduce in 4 buckets after a 2 s backward (UnitConfig), 3/4 of the backward (1.5 s) runs
// during it, and at least the last bucket's 1.5 s always follows it.
TEST(Simulator, BucketsOverlapTheLastBackward) {
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 1, 2);
  c.stages[0].gradient_bytes = 4000;
  c.replicas = 4;
  c.allreduce_link = {.bandwidth_bytes_per_s = 1000.0, .latency_s = 0.0};
  auto whole = Simulate(c);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_DOUBLE_EQ(whole->allreduce_s[0], 6.0);
  c.stages[0].allreduce_buckets = 4;
  auto overlapped = Simulate(c);
  ASSERT_TRUE(overlapped.ok()) << overlapped.status();
  EXPECT_DOUBLE_EQ(overlapped->allreduce_s[0], 6.0 - c.stages[0].backward_s * 3 / 4);
  EXPECT_DOUBLE_EQ(overlapped->step_s, whole->step_s - c.stages[0].backward_s * 3 / 4);
  c.stages[0].backward_s = 100;  // a long backward hides all but the last bucket
  auto hidden = Simulate(c);
  ASSERT_TRUE(hidden.ok());
  EXPECT_DOUBLE_EQ(hidden->allreduce_s[0], 1.5);
}

TEST(Simulator, WireBytesCountFramesAndAcks) {
  LinkModel l{.bandwidth_bytes_per_s = 100.0};
  EXPECT_DOUBLE_EQ(l.WireBytes(1000), 1000);  // payload only
  EXPECT_DOUBLE_EQ(l.AckBytes(1000), 0);
  l.message_overhead_bytes = 16;
  l.mss_bytes = 512;
  l.header_bytes = 50;
  l.acks_per_segment = 0.5;
  // 1016 stream bytes in 2 segments of 50 header bytes; one ACK of 50 bytes per 2 segments.
  EXPECT_DOUBLE_EQ(l.WireBytes(1000), 1016 + 2 * 50);
  EXPECT_DOUBLE_EQ(l.AckBytes(1000), 50);
  EXPECT_DOUBLE_EQ(l.TransferSeconds(1000), 11.16);
  const LinkModel tcp = WithTcpFraming(l);
  EXPECT_DOUBLE_EQ(tcp.WireBytes(32796), 32812 + 23 * 66);  // 22 full segments and a partial
}

TEST(Simulator, AcksShareTheReceiversEgress) {
  // One micro-batch: the activation's ACKs sit in stage 1's egress ahead of its gradient.
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 2, 1);
  c.stages.assign(2, StageCost{0.0, 0.0, 0.0, 0.0});
  c.boundary_bytes = {1000.0};
  c.pipeline_link = {.bandwidth_bytes_per_s = 100.0,
                     .mss_bytes = 1000,
                     .header_bytes = 100,
                     .acks_per_segment = 1};
  auto r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Activation: 1100 wire bytes (11 s); at its arrival the ACK (1 s) and, behind it, the
  // gradient (11 s) leave stage 1.
  EXPECT_DOUBLE_EQ(r->pipeline_s, 11.0 + 1.0 + 11.0);
}

TEST(Simulator, AStagesSendsShareItsEgress) {
  // The middle stage sends every activation forward and every gradient back through one
  // egress, so it alone needs 2 M message times; two separate links would need about M.
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 3, 4);
  c.stages.assign(3, StageCost{0.01, 0.0, 0.01, 0.0});
  c.boundary_bytes = {1000.0, 1000.0};
  c.pipeline_link = {.bandwidth_bytes_per_s = 1000.0};
  auto r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->pipeline_s, 1.0 + 2 * 4 * 1.0);  // stage 1's first input, then 8 messages
}

TEST(Simulator, TheRingQueuesBehindTheLastGradientOnTheSharedEgress) {
  // P=2, D=2, one free micro-batch per replica, 1000-byte messages at 1000 B/s: on a rate-limited
  // link the all-reduce is the ring's messages, 2 (D-1) rounds of G/D = 1000 bytes. Stage 1's
  // first chunk waits behind its gradient in its egress; a measured time is not used.
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 2, 1);
  c.stages.assign(2, StageCost{0.0, 0.0, 0.0, 2000.0, 0.5});
  c.boundary_bytes = {1000.0};
  c.replicas = 2;
  c.pipeline_link = {.bandwidth_bytes_per_s = 1000.0};
  auto r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Activation 0-1; stage 1 queues its gradient (1-2) and then its ring (2-3, 3-4); stage 0
  // has the gradient at 2 and rings 2-3, 3-4.
  EXPECT_DOUBLE_EQ(r->finish_s[1], 1.0);
  EXPECT_DOUBLE_EQ(r->allreduce_s[1], 3.0);
  EXPECT_DOUBLE_EQ(r->finish_s[0], 2.0);
  EXPECT_DOUBLE_EQ(r->allreduce_s[0], 2.0);
  EXPECT_DOUBLE_EQ(r->step_s, 4.0);
  c.steps = 3;
  auto three = Simulate(c);
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_DOUBLE_EQ(three->step_s, 4.0);
  // Three replicas: 4 rounds of 2000/3 bytes.
  c.replicas = 3;
  c.steps = 1;
  auto d3 = Simulate(c);
  ASSERT_TRUE(d3.ok()) << d3.status();
  EXPECT_DOUBLE_EQ(d3->allreduce_s[0], 4 * 2000.0 / 3 / 1000.0);
}

TEST(Simulator, TokenBucketOfABusyLinkDoesNotRefillBetweenSteps) {
  // Free compute, one 1000-byte message each way, a 1000-byte burst: alone, a step passes in
  // the burst; back to back, stage 0's bucket is empty when the next step sends.
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 2, 1);
  c.stages.assign(2, StageCost{0.0, 0.0, 0.0, 0.0});
  c.boundary_bytes = {1000.0};
  c.pipeline_link = {.bandwidth_bytes_per_s = 1000.0, .burst_bytes = 1000.0};
  auto one = Simulate(c);
  c.steps = 3;
  auto three = Simulate(c);
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_DOUBLE_EQ(one->step_s, 0.0);
  // Step 2 sends at 0 with an empty bucket (1 s); its gradient finds stage 1's bucket refilled
  // over that second. Step 3 likewise: a period of 1 s.
  EXPECT_DOUBLE_EQ(three->step_s, 1.0);
}

TEST(Simulator, EachHostPairHasItsOwnLink) {
  // P = 3 on three hosts, free compute, 1 MB activations and gradients, no framing: only the
  // link from host 0 to host 1 is slow (1 MB/s, the others 10 MB/s). The step is that one
  // transfer (1 s) plus three fast ones (0.1 s each); one link for every pair would give 4 s
  // (all slow) or 0.4 s (all fast).
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 3, 1);
  c.stages.assign(3, StageCost{0.0, 0.0, 0.0, 0.0});
  c.boundary_bytes = {1e6, 1e6};
  const LinkModel fast{.bandwidth_bytes_per_s = 1e7}, slow{.bandwidth_bytes_per_s = 1e6};
  c.host_links.host_of_slot = {0, 1, 2};
  c.host_links.links.assign(3, std::vector<LinkModel>(3, fast));
  c.host_links.links[0][1] = slow;
  auto r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->step_s, 1.3, 1e-9);
  // Reversed (only 1 -> 0 slow): the gradient pays instead, the same total.
  c.host_links.links[0][1] = fast;
  c.host_links.links[1][0] = slow;
  r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->step_s, 1.3, 1e-9);
  // Ranks 0 and 1 (stages 0 and 1) on host 0, rank 2 on host 1: messages between the first
  // two take no link.
  c.host_links.host_of_slot = {0, 0, 1};
  c.host_links.links.assign(2, std::vector<LinkModel>(2, fast));
  c.host_links.links[0][1] = slow;
  r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->step_s, 1.1, 1e-9);  // stage 1 -> 2 slow (1 s), 2 -> 1 fast (0.1 s)
  // Every pair given the same link is the single-link model.
  SimConfig one = UnitConfig(ScheduleKind::kVaruna, 2, 4);
  one.replicas = 2;
  one.boundary_bytes = {3e5};
  one.stages[0].gradient_bytes = one.stages[1].gradient_bytes = 4e5;
  one.pipeline_link = WithTcpFraming({.bandwidth_bytes_per_s = 1e6, .burst_bytes = 32e3});
  one.steps = 3;
  SimConfig pairs = one;
  pairs.host_links.host_of_slot = {0, 1, 2, 3};
  pairs.host_links.links.assign(4, std::vector<LinkModel>(4, one.pipeline_link));
  pairs.pipeline_link = {};
  auto a = Simulate(one), b = Simulate(pairs);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->step_s, b->step_s);
  // Malformed: not square, or a host without links.
  pairs.host_links.links[1].pop_back();
  EXPECT_FALSE(Simulate(pairs).ok());
  pairs.host_links.links.assign(4, std::vector<LinkModel>(4, one.pipeline_link));
  pairs.host_links.host_of_slot = {0, 4};
  EXPECT_FALSE(Simulate(pairs).ok());
}

TEST(Simulator, JitterIsSeeded) {
  SimConfig c = UnitConfig(ScheduleKind::kVaruna, 3, 6);
  c.jitter = 0.2;
  c.replicas = 2;
  auto a = Simulate(c);
  auto b = Simulate(c);
  c.seed = 2;
  auto d = Simulate(c);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  EXPECT_DOUBLE_EQ(a->step_s, b->step_s);
  EXPECT_NE(a->step_s, d->step_s);
}

TEST(Simulator, MessageDelayLengthensTheCriticalPathOnly) {
  // 1F1B, P = 2, M = 2, F = 1 and B = 2 on both stages, free links, one step. Without a delay:
  // (M + P - 1) (F + B) = 9. With d = 0.25 per message, by hand: stage 1's F0 starts at 1.25
  // (ends 2.25), B0 2.25-4.25, F1 4.25-5.25 (its input came at 2.25), B1 5.25-7.25; stage 0
  // runs F0 0-1, F1 1-2, B0 4.5-6.5 (gradient 0 at 4.25 + d) and B1 7.5-9.5 (gradient 1 at
  // 7.25 + d). Only activation 0 and gradient 1 are on the critical path: 9 + 2 d, not 9 + 4 d.
  SimConfig c = UnitConfig(ScheduleKind::kOneFOneB, 2, 2);
  for (StageCost& s : c.stages) s.recompute_s = 0;
  auto base = Simulate(c);
  ASSERT_TRUE(base.ok()) << base.status();
  EXPECT_DOUBLE_EQ(base->step_s, 9.0);
  c.message_delay_s = 0.25;
  auto r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->step_s, 9.5);
  ASSERT_FALSE(r->trace[1].empty());
  EXPECT_DOUBLE_EQ(r->trace[1][0].start_s, 1.25);  // stage 1's F0 waits for the delay
  ASSERT_EQ(r->trace[0].size(), 4u);
  EXPECT_DOUBLE_EQ(r->trace[0][2].start_s, 4.5);  // stage 0's B0
  EXPECT_DOUBLE_EQ(r->trace[0][3].start_s, 7.5);  // stage 0's B1
  c.message_delay_s = -0.1;
  EXPECT_FALSE(Simulate(c).ok());
}

TEST(Simulator, RejectsBadConfigs) {
  SimConfig c = UnitConfig(ScheduleKind::kVaruna, 2, 2);
  c.boundary_bytes = {};
  EXPECT_FALSE(Simulate(c).ok());
  c = UnitConfig(ScheduleKind::kVaruna, 2, 2);
  c.stages[1].backward_s = -1;
  EXPECT_FALSE(Simulate(c).ok());
  c = UnitConfig(ScheduleKind::kVaruna, 2, 0);
  EXPECT_FALSE(Simulate(c).ok());
  c = UnitConfig(ScheduleKind::kVaruna, 2, 2);
  c.replicas = 0;
  EXPECT_FALSE(Simulate(c).ok());
  c = UnitConfig(ScheduleKind::kVaruna, 2, 2);
  c.steps = 0;
  EXPECT_FALSE(Simulate(c).ok());
  c.steps = 10001;
  EXPECT_FALSE(Simulate(c).ok());
  c.steps = 10000;
  c.micro_batches = 100000;
  EXPECT_FALSE(Simulate(c).ok());
  c = UnitConfig(ScheduleKind::kVaruna, 2, 2);
  c.pipeline_link.header_bytes = -1;
  EXPECT_FALSE(Simulate(c).ok());
  EXPECT_FALSE(Simulate(SimConfig{}).ok());
}

}  // namespace
}  // namespace tessera::pipeline
