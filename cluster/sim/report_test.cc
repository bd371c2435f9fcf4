#include "cluster/sim/report.h"

#include <gtest/gtest.h>

namespace tessera::cluster::sim {
namespace {

JobOutcome Outcome(Tier tier, double submit, double start, double finish, double duration) {
  JobOutcome j;
  j.spec.id = "j";
  j.spec.tier = tier;
  j.spec.submit_time = submit;
  j.first_start = start;
  j.finish = finish;
  j.duration = duration;
  return j;
}

TEST(ReportTest, PercentileIsNearestRank) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_EQ(Percentile(v, 50), 3);
  EXPECT_EQ(Percentile(v, 99), 5);
  EXPECT_EQ(Percentile(v, 0), 1);
  std::vector<double> empty;
  EXPECT_EQ(Percentile(empty, 50), 0);
}

TEST(ReportTest, SummarizesPerTier) {
  SimResult r;
  r.policy = "p";
  r.options.nodes = 1;
  r.options.slots_per_node = 4;
  r.jobs.push_back(Outcome(Tier::kPremium, 0, 0, 100, 100));    // 1.0: met
  r.jobs.push_back(Outcome(Tier::kPremium, 0, 10, 110, 100));   // 0.909: missed
  r.jobs.push_back(Outcome(Tier::kStandard, 0, 40, 140, 100));  // 0.714: met
  r.jobs.push_back(Outcome(Tier::kBasic, 0, 900, 1000, 100));   // best effort: met
  r.jobs[1].preemptions = 2;
  r.jobs[1].allocated_slot_s = 1000;
  r.jobs[1].lost_slot_s = 3600;
  r.jobs[3].allocated_slot_s = 1000;
  r.start = 0;
  r.last_submit = 100;
  r.end = 1000;
  r.window_allocated_slot_s = 200;
  r.allocated_slot_s = 400;
  r.useful_slot_s = 300;
  ReplaySummary s = Summarize(r);
  ASSERT_EQ(s.tiers.size(), 4u);
  EXPECT_EQ(s.tiers[0].tier, "premium");
  EXPECT_EQ(s.tiers[0].jobs, 2);
  EXPECT_DOUBLE_EQ(s.tiers[0].sla_attainment, 0.5);
  EXPECT_DOUBLE_EQ(s.tiers[0].preemptions_per_job, 1.0);
  EXPECT_DOUBLE_EQ(s.tiers[0].queue_mean, 5);
  EXPECT_DOUBLE_EQ(s.tiers[1].sla_attainment, 1.0);
  EXPECT_DOUBLE_EQ(s.tiers[2].jct_mean, 1000);
  EXPECT_EQ(s.tiers[3].jobs, 4);
  EXPECT_DOUBLE_EQ(s.tiers[3].sla_attainment, 2.0 / 3);  // guaranteed jobs only
  // >= 95 % of ideal speed, whatever the tier: only the first job (the basic one ran at 0.1).
  EXPECT_DOUBLE_EQ(s.tiers[3].share_95, 0.25);
  EXPECT_DOUBLE_EQ(s.tiers[2].share_95, 0);
  EXPECT_DOUBLE_EQ(s.tiers[2].slowdown_mean, 10);    // 1000 s for 100 s of work
  EXPECT_DOUBLE_EQ(s.tiers[0].slowdown_mean, 1.05);  // 1.0 and 1.1
  EXPECT_DOUBLE_EQ(s.tiers[3].slowdown_p99, 10);
  EXPECT_DOUBLE_EQ(s.utilization, 0.5);  // 200 / (4 slots * 100 s)
  EXPECT_DOUBLE_EQ(s.useful_share, 0.75);
  EXPECT_DOUBLE_EQ(s.tiers[0].utilization, 0.25);  // 1000 slot-s / (4 slots * 1000 s)
  EXPECT_DOUBLE_EQ(s.tiers[3].utilization, 0.5);
  EXPECT_DOUBLE_EQ(s.tiers[0].lost_slot_h, 1);
  const std::string table = FormatTable({s});
  EXPECT_NE(table.find("premium"), std::string::npos);
  EXPECT_NE(table.find("50.00"), std::string::npos);
  const std::string csv = FormatCsv({s});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);  // header + 4 tiers
  const std::string jobs = FormatJobsCsv({r});
  EXPECT_EQ(std::count(jobs.begin(), jobs.end(), '\n'), 5);  // header + 4 jobs
}

TEST(ReportTest, PlotRejectsQuotesInPaths) {
  SimResult r;
  r.policy = "p";
  EXPECT_EQ(WritePlot({r}, "/tmp/it's", "t").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(WritePlot({}, "/tmp/x", "t").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::cluster::sim
