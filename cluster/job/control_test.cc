#include "cluster/job/control.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace tessera::cluster {
namespace {

std::filesystem::path TestDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("control_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(ControlFormatTest, ProgressRoundTrips) {
  Progress p{.step = 7, .total_steps = 100, .world_size = 4, .workers = 2, .loss = 0.125};
  Result<Progress> parsed = ParseProgress(FormatProgress(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, p);
}

TEST(ControlFormatTest, BadProgressIsAnErrorNamingTheField) {
  Result<Progress> parsed = ParseProgress("step=x total=1 world=1 workers=1 loss=0");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("step"), std::string::npos);
  EXPECT_FALSE(ParseProgress("step=1").ok());
  EXPECT_FALSE(ParseProgress("garbage").ok());
}

TEST(ControlFormatTest, ExitReportRoundTrips) {
  for (auto kind : {ExitReport::Kind::kFinished, ExitReport::Kind::kCheckpointed}) {
    ExitReport r{.kind = kind, .step = 12};
    Result<ExitReport> parsed = ParseExitReport(FormatExitReport(r));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, r);
  }
  EXPECT_FALSE(ParseExitReport("exploded step=3").ok());
  EXPECT_FALSE(ParseExitReport("finished").ok());
}

TEST(JobControlTest, OrdersFlowFromAgentToJobAndReportsBack) {
  auto path = TestDir();
  JobDir agent_end(path);
  ASSERT_TRUE(agent_end.Prepare().ok());
  JobControl job_end("j1", path, 2);
  EXPECT_EQ(job_end.PollOrder(), Order::kContinue);
  EXPECT_FALSE(agent_end.ReadProgress()->has_value());

  ASSERT_TRUE(
      job_end.ReportProgress({.step = 3, .total_steps = 9, .world_size = 4, .workers = 2}).ok());
  EXPECT_EQ(agent_end.ReadProgress()->value().step, 3);

  ASSERT_TRUE(agent_end.OrderCheckpointAndExit("preempt").ok());
  EXPECT_TRUE(agent_end.HasPendingOrder());
  EXPECT_EQ(job_end.PollOrder(), Order::kCheckpointAndExit);
  ASSERT_TRUE(job_end.ReportExit({.kind = ExitReport::Kind::kCheckpointed, .step = 3}).ok());
  EXPECT_EQ(agent_end.ReadExit()->value().kind, ExitReport::Kind::kCheckpointed);

  // The next incarnation starts without the stale order and exit report, with checkpoints kept.
  ASSERT_TRUE(job_end.checkpoints().Save({.step = 3, .world_size = 4, .state = "s"}).ok());
  ASSERT_TRUE(agent_end.Prepare().ok());
  EXPECT_EQ(job_end.PollOrder(), Order::kContinue);
  EXPECT_FALSE(agent_end.ReadExit()->has_value());
  EXPECT_EQ(agent_end.checkpoints().LoadLatest()->value().step, 3);
  std::filesystem::remove_all(path);
}

TEST(JobControlTest, FromEnvironmentNamesWhatIsMissing) {
  ::unsetenv(kEnvJobId);
  ::unsetenv(kEnvJobDir);
  ::unsetenv(kEnvJobWorkers);
  Result<JobControl> control = JobControl::FromEnvironment();
  ASSERT_FALSE(control.ok());
  EXPECT_NE(control.status().message().find(kEnvJobId), std::string::npos);
  ::setenv(kEnvJobId, "j9", 1);
  ::setenv(kEnvJobDir, "/tmp/j9", 1);
  ::setenv(kEnvJobWorkers, "zero", 1);
  control = JobControl::FromEnvironment();
  ASSERT_FALSE(control.ok());
  EXPECT_NE(control.status().message().find(kEnvJobWorkers), std::string::npos);
  ::setenv(kEnvJobWorkers, "3", 1);
  control = JobControl::FromEnvironment();
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(control->workers(), 3);
  EXPECT_EQ(control->job_id(), "j9");
}

}  // namespace
}  // namespace tessera::cluster
