#include "cluster/policy/sla.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cluster/policy/test_util.h"

namespace tessera::cluster {
namespace {

using testing::AddJob;
using testing::MakeCluster;

TEST(SlaTest, SplicedJobRunsAtKnownFraction) {
  EXPECT_DOUBLE_EQ(SpeedFraction(8, 8), 1.0);
  EXPECT_DOUBLE_EQ(SpeedFraction(2, 8), 0.25);
  EXPECT_DOUBLE_EQ(SpeedFraction(0, 8), 0.0);
}

TEST(SlaTest, AccruesOnlyWhileRunningAndNotStalled) {
  ClusterView view = MakeCluster(1, 8);
  JobView& job = view.jobs[AddJob(view, "a", Tier::kPremium, 8, 2, /*submit=*/0)];
  AccrueProgress(job, 0, 10);  // pending: nothing
  EXPECT_DOUBLE_EQ(job.progress, 0);
  job.state = JobState::kRunning;
  job.placement = {{0, 4}};  // spliced onto half the workers
  job.stalled_until = 14;    // restoring until t=14
  AccrueProgress(job, 10, 20);
  EXPECT_DOUBLE_EQ(job.progress, 3.0);  // (20 - 14) * 4/8
  EXPECT_DOUBLE_EQ(ProgressRate(job, 12), 0.0);
  EXPECT_DOUBLE_EQ(ProgressRate(job, 15), 0.5);
}

TEST(SlaTest, AchievedFractionIsIdealOverReal) {
  ClusterView view = MakeCluster(1, 8);
  JobView& job = view.jobs[AddJob(view, "a", Tier::kPremium, 1, 1, /*submit=*/100)];
  EXPECT_DOUBLE_EQ(AchievedFraction(job, 100), 1.0);  // nothing promised yet
  // Waited 5 s, then ran 95 s at full speed: exactly 95 %.
  job.progress = 95;
  EXPECT_DOUBLE_EQ(AchievedFraction(job, 200), 0.95);
  EXPECT_TRUE(MeetsSla(Tier::kPremium, AchievedFraction(job, 200)));
  EXPECT_FALSE(MeetsSla(Tier::kPremium, AchievedFraction(job, 201)));
  EXPECT_TRUE(MeetsSla(Tier::kBasic, 0.0));
}

TEST(SlaTest, SlackIsTimeLeftBeforeMissingTarget) {
  ClusterView view = MakeCluster(1, 8);
  JobView& std_job = view.jobs[AddJob(view, "s", Tier::kStandard, 1, 1, 0)];
  std_job.progress = 70;
  EXPECT_NEAR(SlaSlack(std_job, 70), 30, 1e-9);  // can stop for 30 s: 70 / 100 = 0.70
  EXPECT_NEAR(SlaSlack(std_job, 100), 0, 1e-9);
  EXPECT_LT(SlaSlack(std_job, 101), 0);
  JobView& basic = view.jobs[AddJob(view, "b", Tier::kBasic, 1, 1, 0)];
  EXPECT_TRUE(std::isinf(SlaSlack(basic, 1e9)));
}

}  // namespace
}  // namespace tessera::cluster
