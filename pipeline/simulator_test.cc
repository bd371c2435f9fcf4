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
  EXPECT_FALSE(Simulate(SimConfig{}).ok());
}

}  // namespace
}  // namespace tessera::pipeline
