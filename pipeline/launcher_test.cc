// The simulator's configuration from a run's reports (SimConfigFromReports), no worker needed.
#include "pipeline/launcher.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

// The delivery delay is the mean over every waited-for message of every worker: 3 messages at
// 2 ms on stage 1 and 1 at 6 ms on stage 2 make (3 x 2 + 6) / 4 = 3 ms, not the mean of the
// workers' means (4 ms); a worker that measured none (stage 0) does not count.
TEST(SimConfigFromReports, MessageDelayIsTheMeanOverAllMessages) {
  JobConfig job;
  job.stages = 3;
  job.replicas = 1;
  job.global_batch = 4;
  job.micro_batch = 1;
  job.steps = 3;
  std::vector<WorkerReport> reports(3);
  for (int r = 0; r < 3; ++r) {
    reports[r].rank = r;
    reports[r].stage = r;
  }
  reports[1].message_delay_s = 2e-3;
  reports[1].message_delays = 3;
  reports[2].message_delay_s = 6e-3;
  reports[2].message_delays = 1;
  const SimConfig c = SimConfigFromReports(job, reports, {}, {});
  EXPECT_NEAR(c.message_delay_s, 3e-3, 1e-15);
  reports[1].message_delays = 0;
  reports[2].message_delays = 0;
  EXPECT_EQ(SimConfigFromReports(job, reports, {}, {}).message_delay_s, 0);
}

}  // namespace
}  // namespace tessera::pipeline
