#include "lr/schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "lr/schedule_spec.h"

namespace tessera::lr {
namespace {

// Exact boundary values. Where the formula is a simple product the expected value is written
// as the same double expression, so EXPECT_DOUBLE_EQ checks the exact arithmetic.

TEST(ConstantSchedule, SameEverywhere) {
  auto s = ConstantSchedule::Create(0.1).value();
  EXPECT_EQ(s->LearningRate(0), 0.1);
  EXPECT_EQ(s->LearningRate(1'000'000), 0.1);
  EXPECT_FALSE(ConstantSchedule::Create(0).ok());
  EXPECT_FALSE(ConstantSchedule::Create(NAN).ok());
}

TEST(StepSchedule, DropsExactlyAtMultiplesOfStepSize) {
  auto s = StepSchedule::Create(0.1, 30, 0.1).value();
  EXPECT_EQ(s->LearningRate(0), 0.1);
  EXPECT_EQ(s->LearningRate(29), 0.1);
  EXPECT_DOUBLE_EQ(s->LearningRate(30), 0.1 * 0.1);
  EXPECT_DOUBLE_EQ(s->LearningRate(59), 0.1 * 0.1);
  EXPECT_DOUBLE_EQ(s->LearningRate(60), 0.1 * 0.1 * 0.1);
  EXPECT_FALSE(StepSchedule::Create(0.1, 0).ok());
}

TEST(MultiStepSchedule, DropsAtEachMilestone) {
  auto s = MultiStepSchedule::Create(1.0, {10, 25}, 0.5).value();
  EXPECT_EQ(s->LearningRate(9), 1.0);
  EXPECT_EQ(s->LearningRate(10), 0.5);
  EXPECT_EQ(s->LearningRate(24), 0.5);
  EXPECT_EQ(s->LearningRate(25), 0.25);
  EXPECT_EQ(s->LearningRate(1000), 0.25);
  EXPECT_FALSE(MultiStepSchedule::Create(1.0, {25, 10}).ok());
  EXPECT_FALSE(MultiStepSchedule::Create(1.0, {}).ok());
}

TEST(CosineSchedule, WarmupPeakHalfwayAndEnd) {
  auto s =
      CosineSchedule::Create({.peak_lr = 1.0, .warmup_steps = 4, .total_steps = 104, .min_lr = 0.0})
          .value();
  EXPECT_EQ(s->LearningRate(0), 0.25);
  EXPECT_EQ(s->LearningRate(3), 1.0);            // end of warmup reaches the peak
  EXPECT_EQ(s->LearningRate(4), 1.0);            // cos(0) = 1: first annealing step at the peak
  EXPECT_NEAR(s->LearningRate(54), 0.5, 1e-15);  // halfway through annealing
  EXPECT_NEAR(s->LearningRate(103), 0.5 * (1 + std::cos(std::numbers::pi * 99 / 100)), 1e-15);
  EXPECT_EQ(s->LearningRate(104), 0.0);  // past the budget: min_lr
  EXPECT_EQ(s->LearningRate(500), 0.0);
  auto nowarm = CosineSchedule::Create({.peak_lr = 2.0, .total_steps = 10, .min_lr = 0.5}).value();
  EXPECT_EQ(nowarm->LearningRate(0), 2.0);
  EXPECT_EQ(nowarm->LearningRate(10), 0.5);
  EXPECT_FALSE(CosineSchedule::Create({.peak_lr = 1, .warmup_steps = 10, .total_steps = 10}).ok());
}

TEST(OneCycleSchedule, MatchesPyTorchBoundaries) {
  // total 100, pct_start 0.3: the rise ends at step 29 (= 0.3 * 100 - 1), the fall at step 99.
  auto s = OneCycleSchedule::Create({.peak_lr = 1.0, .total_steps = 100}).value();
  EXPECT_NEAR(s->LearningRate(0), 1.0 / 25, 1e-15);
  EXPECT_DOUBLE_EQ(s->LearningRate(29), 1.0);
  EXPECT_DOUBLE_EQ(s->LearningRate(99), 1.0 / 25 / 1e4);
  EXPECT_DOUBLE_EQ(s->LearningRate(150), 1.0 / 25 / 1e4);  // clamped past the budget
  // Midpoint of the rise: halfway between initial and peak.
  auto t = OneCycleSchedule::Create({.peak_lr = 1.0, .total_steps = 21, .pct_start = 0.5}).value();
  EXPECT_NEAR(t->LearningRate(0), 0.04, 1e-15);
  EXPECT_NEAR(t->LearningRate(4) /* up_end = 9.5, pct = 4/9.5 */,
              1.0 + (0.04 - 1.0) / 2 * (std::cos(std::numbers::pi * 4 / 9.5) + 1), 1e-15);
  EXPECT_FALSE(OneCycleSchedule::Create({.peak_lr = 1.0, .total_steps = 2, .pct_start = 0.3}).ok());
  EXPECT_FALSE(
      OneCycleSchedule::Create({.peak_lr = 1.0, .total_steps = 100, .pct_start = 1.0}).ok());
}

TEST(KneeSchedule, ExploreThenLinearDecayToExactlyZero) {
  // The authors' code with warmup 0: counter k = step + 1, lr(k) = peak for k <= E, then
  // peak - peak * (k - E) / D with D = T - E.
  auto s = KneeSchedule::Create({.peak_lr = 0.1, .explore_steps = 50, .total_steps = 100}).value();
  EXPECT_EQ(s->LearningRate(0), 0.1);
  EXPECT_EQ(s->LearningRate(49), 0.1);  // last explore step (k = 50)
  EXPECT_DOUBLE_EQ(s->LearningRate(50), 0.1 - 0.1 * 1 / 50);
  EXPECT_DOUBLE_EQ(s->LearningRate(74), 0.1 - 0.1 * 25 / 50);
  EXPECT_EQ(s->LearningRate(99), 0.0);   // k = T: exactly zero
  EXPECT_EQ(s->LearningRate(100), 0.0);  // clamped at zero past the budget
  EXPECT_EQ(s->LearningRate(100000), 0.0);
}

TEST(KneeSchedule, WarmupAndDegenerateLengths) {
  auto s = KneeSchedule::Create(
               {.peak_lr = 1.0, .warmup_steps = 4, .explore_steps = 6, .total_steps = 20})
               .value();
  EXPECT_EQ(s->LearningRate(0), 0.25);
  EXPECT_EQ(s->LearningRate(3), 1.0);
  EXPECT_EQ(s->LearningRate(4), 1.0);
  EXPECT_EQ(s->LearningRate(9), 1.0);          // k = 10 = W + E
  EXPECT_DOUBLE_EQ(s->LearningRate(10), 0.9);  // 1 - 1/10
  EXPECT_EQ(s->LearningRate(19), 0.0);
  // Explore fills the whole budget: no decay steps (D = 0) and no division by zero.
  auto all = KneeSchedule::Create({.peak_lr = 1.0, .explore_steps = 10, .total_steps = 10}).value();
  EXPECT_EQ(all->LearningRate(9), 1.0);
  EXPECT_EQ(all->LearningRate(10), 0.0);
  EXPECT_FALSE(KneeSchedule::Create(
                   {.peak_lr = 1.0, .warmup_steps = 6, .explore_steps = 5, .total_steps = 10})
                   .ok());
  EXPECT_FALSE(KneeSchedule::Create({.peak_lr = -1.0, .explore_steps = 5, .total_steps = 10}).ok());
}

TEST(LinearDecaySchedule, IsKneeWithoutExplore) {
  auto s = LinearDecaySchedule::Create(1.0, 0, 10).value();
  EXPECT_DOUBLE_EQ(s->LearningRate(0), 0.9);
  EXPECT_DOUBLE_EQ(s->LearningRate(4), 0.5);
  EXPECT_EQ(s->LearningRate(9), 0.0);
}

TEST(WsdSchedule, StableThenShortDecay) {
  auto s = WsdSchedule::Create(
               {.peak_lr = 1.0, .warmup_steps = 2, .decay_steps = 10, .total_steps = 100})
               .value();
  EXPECT_EQ(s->LearningRate(0), 0.5);
  EXPECT_EQ(s->LearningRate(1), 1.0);
  EXPECT_EQ(s->LearningRate(89), 1.0);  // last stable step
  EXPECT_DOUBLE_EQ(s->LearningRate(90), 0.9);
  EXPECT_DOUBLE_EQ(s->LearningRate(94), 0.5);
  EXPECT_EQ(s->LearningRate(99), 0.0);
  EXPECT_EQ(s->LearningRate(200), 0.0);
  EXPECT_FALSE(WsdSchedule::Create(
                   {.peak_lr = 1.0, .warmup_steps = 95, .decay_steps = 10, .total_steps = 100})
                   .ok());
}

TEST(ReduceOnPlateauSchedule, ReducesAfterPatienceAndRespectsCooldownAndFloor) {
  auto s = ReduceOnPlateauSchedule::Create(
               {.peak_lr = 1.0, .factor = 0.5, .patience = 2, .cooldown = 1, .min_lr = 0.2})
               .value();
  s->ReportMetric(0, 10.0);    // best
  s->ReportMetric(1, 10.0);    // bad 1
  s->ReportMetric(2, 9.9995);  // within threshold 1e-4 relative: still bad (2)
  EXPECT_EQ(s->LearningRate(3), 1.0);
  s->ReportMetric(3, 10.0);  // bad 3 > patience: reduce
  EXPECT_EQ(s->LearningRate(4), 0.5);
  s->ReportMetric(4, 11.0);  // cooldown swallows this one
  s->ReportMetric(5, 11.0);
  s->ReportMetric(6, 11.0);
  EXPECT_EQ(s->LearningRate(7), 0.5);
  s->ReportMetric(7, 11.0);  // third bad after cooldown: reduce to 0.25
  EXPECT_EQ(s->LearningRate(8), 0.25);
  s->ReportMetric(8, 5.0);   // improvement resets the count
  s->ReportMetric(9, 6.0);   // bad 1 (the cooldown ended with the improvement)
  s->ReportMetric(10, 6.0);  // bad 2
  EXPECT_EQ(s->LearningRate(11), 0.25);
  s->ReportMetric(11, 6.0);  // bad 3: reduce, floored at min_lr
  EXPECT_EQ(s->LearningRate(12), 0.2);
}

TEST(ReduceOnPlateauSchedule, StateRoundTripsExactly) {
  auto a = ReduceOnPlateauSchedule::Create({.peak_lr = 0.3, .factor = 0.3, .patience = 1}).value();
  for (double m : {5.0, 5.0, 5.0, 4.0, 4.5}) a->ReportMetric(0, m);
  auto b = ReduceOnPlateauSchedule::Create({.peak_lr = 0.3, .factor = 0.3, .patience = 1}).value();
  ASSERT_TRUE(b->RestoreState(a->SaveState()).ok());
  EXPECT_EQ(b->SaveState(), a->SaveState());
  EXPECT_EQ(b->LearningRate(0), a->LearningRate(0));
  for (double m : {4.5, 4.5}) {
    a->ReportMetric(0, m);
    b->ReportMetric(0, m);
  }
  EXPECT_EQ(b->LearningRate(0), a->LearningRate(0));
  EXPECT_LT(a->LearningRate(0), 0.3 * 0.3);
  EXPECT_FALSE(b->RestoreState("garbage").ok());
  EXPECT_FALSE(b->RestoreState("0x1p+0 0x1p+0 1 -3 0 0").ok());
}

TEST(Schedule, PureSchedulesRejectForeignState) {
  auto s = ConstantSchedule::Create(1.0).value();
  EXPECT_TRUE(s->RestoreState("").ok());
  EXPECT_FALSE(s->RestoreState("something").ok());
}

TEST(MakeSchedule, ScalesFractionsToTheBudget) {
  auto knee = MakeSchedule("knee:explore=0.3", 0.1, 1000).value();
  EXPECT_EQ(knee->Describe(), "knee(peak=0.1,warmup=0,explore=300,total=1000)");
  auto ms = MakeSchedule("multistep:at=0.5/0.75,gamma=0.2", 1.0, 400).value();
  EXPECT_EQ(ms->Describe(), "multistep(peak=1,milestones=200/300,gamma=0.2)");
  for (const std::string& name : ScheduleNames()) {
    auto s = MakeSchedule(name, 0.05, 200);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status();
    EXPECT_GT((*s)->LearningRate(0), 0) << name;
  }
}

TEST(MakeSchedule, RejectsBadSpecs) {
  EXPECT_FALSE(MakeSchedule("nope", 0.1, 100).ok());
  EXPECT_FALSE(MakeSchedule("knee:explor=0.3", 0.1, 100).ok());   // unknown key
  EXPECT_FALSE(MakeSchedule("knee:explore=1.5", 0.1, 100).ok());  // not a fraction
  EXPECT_FALSE(MakeSchedule("knee:explore=abc", 0.1, 100).ok());
  EXPECT_FALSE(MakeSchedule("knee:explore", 0.1, 100).ok());
  EXPECT_FALSE(MakeSchedule("knee:explore=0.1,explore=0.2", 0.1, 100).ok());
  EXPECT_FALSE(MakeSchedule("plateau:patience=1.5", 0.1, 100).ok());
  EXPECT_FALSE(MakeSchedule("knee", 0.1, 0).ok());
  EXPECT_FALSE(MakeSchedule("knee", -0.1, 100).ok());
}

}  // namespace
}  // namespace tessera::lr
