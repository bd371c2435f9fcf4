#include "pipeline/schedule.h"

#include <gtest/gtest.h>

#include <map>

namespace tessera::pipeline {
namespace {

std::string Tasks(ScheduleKind kind, int P, int M, int s) {
  auto tasks = StageTasks(kind, P, M, s);
  EXPECT_TRUE(tasks.ok()) << tasks.status();
  return FormatTasks(*tasks);
}

// Research note §4.2: the P=4, M=8 schedule of Varuna's generate_schedule.cc.
TEST(VarunaSchedule, MatchesWorkedExampleP4M8) {
  EXPECT_EQ(Tasks(ScheduleKind::kVaruna, 4, 8, 0),
            "F0 F1 F2 F3 F4 F5 F6 F7 R0 B0 R1 B1 R2 B2 R3 B3 R4 B4 R5 B5 R6 B6 R7 B7");
  EXPECT_EQ(Tasks(ScheduleKind::kVaruna, 4, 8, 1),
            "F0 F1 F2 F3 F4 F5 R0 B0 R1 B1 R2 B2 F6 F7 R3 B3 R4 B4 R5 B5 R6 B6 R7 B7");
  EXPECT_EQ(Tasks(ScheduleKind::kVaruna, 4, 8, 2),
            "F0 F1 F2 R0 B0 R1 B1 R2 B2 F3 F4 F5 R3 B3 R4 B4 R5 B5 F6 F7 R6 B6 R7 B7");
  EXPECT_EQ(Tasks(ScheduleKind::kVaruna, 4, 8, 3),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(VarunaSchedule, MatchesWorkedExampleTimeline) {
  auto t = VarunaUnitTimeline(4, 8);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->makespan, 39);
  EXPECT_EQ(t->rows[0],
            "F0 F1 F2 F3 F4 F5 F6 F7 . R0 B0 b0 R1 B1 b1 R2 B2 b2 . . . R3 B3 b3 R4 B4 b4 R5 B5 "
            "b5 . . . R6 B6 b6 R7 B7 b7");
  EXPECT_EQ(t->rows[3],
            ". . . F0 B0 b0 F1 B1 b1 F2 B2 b2 . . . F3 B3 b3 F4 B4 b4 F5 B5 b5 . . . F6 B6 b6 F7 "
            "B7 b7 . . . . . .");
  EXPECT_NEAR(UnitBubbleFraction(*t, 0), 7.0 / 39, 1e-12);
}

// Research note §4.4, reproduced from tools/generate-pipeline-schedule.cc: within 1 point.
TEST(VarunaSchedule, BubbleFractionsMatchTable) {
  const std::map<int, std::vector<double>> table = {
      {5, {22.0, 11.2, 7.0, 4.8}}, {10, {24.0, 14.1, 9.1, 6.1}}, {20, {26.1, 14.7, 10.1, 6.4}}};
  const int factors[] = {2, 4, 6, 10};
  for (const auto& [P, row] : table) {
    for (int k = 0; k < 4; ++k) {
      auto t = VarunaUnitTimeline(P, factors[k] * P);
      ASSERT_TRUE(t.ok());
      EXPECT_NEAR(100 * UnitBubbleFraction(*t, 0), row[k], 1.0)
          << "P=" << P << " M=" << factors[k] * P;
    }
  }
}

TEST(Schedules, EveryStageListIsComplete) {
  for (ScheduleKind kind : kAllSchedules) {
    for (int P : {1, 2, 3, 4, 7}) {
      for (int M : {1, 2, 5, 8, 16}) {
        for (int s = 0; s < P; ++s) {
          auto tasks = StageTasks(kind, P, M, s);
          ASSERT_TRUE(tasks.ok());
          EXPECT_TRUE(ValidateStageTasks(*tasks, M, StageRecomputes(kind, P, s)).ok())
              << ScheduleName(kind) << " P=" << P << " M=" << M << " s=" << s << ": "
              << FormatTasks(*tasks);
        }
      }
    }
  }
}

TEST(Schedules, AllStageTasksAgreesWithStageTasks) {
  for (ScheduleKind kind : kAllSchedules) {
    auto all = AllStageTasks(kind, 3, 7);
    ASSERT_TRUE(all.ok());
    for (int s = 0; s < 3; ++s) EXPECT_EQ((*all)[s], *StageTasks(kind, 3, 7, s));
  }
  EXPECT_FALSE(AllStageTasks(ScheduleKind::kGPipe, 0, 7).ok());
}

TEST(Schedules, GPipeAndOneFOneBShapes) {
  EXPECT_EQ(Tasks(ScheduleKind::kGPipe, 2, 3, 0), "F0 F1 F2 R2 B2 R1 B1 R0 B0");
  EXPECT_EQ(Tasks(ScheduleKind::kOneFOneB, 4, 6, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(Tasks(ScheduleKind::kOneFOneB, 4, 6, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  EXPECT_EQ(Tasks(ScheduleKind::kOneFOneB, 4, 2, 0), "F0 F1 B0 B1");
}

TEST(Schedules, RejectsBadShapes) {
  EXPECT_FALSE(StageTasks(ScheduleKind::kVaruna, 0, 4, 0).ok());
  EXPECT_FALSE(StageTasks(ScheduleKind::kVaruna, 2, 0, 0).ok());
  EXPECT_FALSE(StageTasks(ScheduleKind::kGPipe, 2, 4, 2).ok());
  EXPECT_FALSE(StageTasks(ScheduleKind::kOneFOneB, 2, 4, -1).ok());
  EXPECT_FALSE(ParseScheduleKind("pipedream").ok());
  EXPECT_EQ(*ParseScheduleKind("1f1b"), ScheduleKind::kOneFOneB);
}

TEST(Validate, CatchesBrokenLists) {
  using K = TaskKind;
  EXPECT_FALSE(ValidateStageTasks({{K::kBackward, 0}, {K::kForward, 0}}, 1, false).ok());
  EXPECT_FALSE(ValidateStageTasks({{K::kForward, 0}}, 1, false).ok());
  EXPECT_FALSE(ValidateStageTasks({{K::kForward, 0}, {K::kBackward, 0}}, 1, true).ok());
  EXPECT_FALSE(ValidateStageTasks({{K::kForward, 0}, {K::kForward, 0}}, 1, false).ok());
  EXPECT_TRUE(ValidateStageTasks({{K::kForward, 0}, {K::kBackward, 0}}, 1, false).ok());
}

TEST(TaskCursor, RunsInOrderAndWaits) {
  using K = TaskKind;
  TaskCursor c({{K::kForward, 0}, {K::kBackward, 0}}, /*opportunistic=*/true);
  auto nothing_ready = [](const Task&) { return false; };
  EXPECT_FALSE(c.Next(nothing_ready).has_value());
  auto all_ready = [](const Task&) { return true; };
  ASSERT_EQ(c.Next(all_ready), (Task{K::kForward, 0}));
  c.MarkDone({K::kForward, 0});
  ASSERT_EQ(c.Next(all_ready), (Task{K::kBackward, 0}));
  c.MarkDone({K::kBackward, 0});
  EXPECT_TRUE(c.finished());
}

TEST(TaskCursor, OpportunisticForwardWhenGradientMissing) {
  using K = TaskKind;
  std::vector<Task> tasks = {{K::kForward, 0}, {K::kRecompute, 0}, {K::kBackward, 0},
                             {K::kForward, 1}, {K::kRecompute, 1}, {K::kBackward, 1}};
  TaskCursor c(tasks, /*opportunistic=*/true);
  TaskCursor strict(tasks, /*opportunistic=*/false);
  c.MarkDone({K::kForward, 0});
  strict.MarkDone({K::kForward, 0});
  bool gradient0 = false, input1 = true;
  auto ready = [&](const Task& t) {
    if (t.kind == K::kBackward) return t.micro == 0 ? gradient0 : false;
    return t.micro == 0 || input1;
  };
  // No gradient for micro-batch 0 yet: forward 1 runs ahead of recompute 0.
  EXPECT_EQ(c.Next(ready), (Task{K::kForward, 1}));
  EXPECT_EQ(strict.Next(ready), (Task{K::kRecompute, 0}));
  // Without its input the forward cannot run ahead either.
  input1 = false;
  EXPECT_EQ(c.Next(ready), (Task{K::kRecompute, 0}));
  input1 = true;
  c.MarkDone({K::kForward, 1});
  EXPECT_EQ(c.pulled_ahead(), 1);
  EXPECT_EQ(c.Next(ready), (Task{K::kRecompute, 0}));
  c.MarkDone({K::kRecompute, 0});
  EXPECT_FALSE(c.Next(ready).has_value());  // backward 0 waits for its gradient
  gradient0 = true;
  EXPECT_EQ(c.Next(ready), (Task{K::kBackward, 0}));
  c.MarkDone({K::kBackward, 0});
  EXPECT_EQ(c.Next(ready), (Task{K::kRecompute, 1}));  // forward 1 already ran
}

}  // namespace
}  // namespace tessera::pipeline
