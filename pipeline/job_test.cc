#include "pipeline/job.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

JobConfig TwoByTwo() {
  JobConfig job;
  job.model.layers = 2;  // 4 units
  job.stages = 2;
  job.replicas = 2;
  job.micro_batch = 2;
  job.global_batch = 16;
  job.boundaries = {0, 2, 4};
  for (int r = 0; r < 4; ++r) job.endpoints.push_back({"127.0.0.1", 5000 + r});
  return job;
}

TEST(Job, LayoutIsClustered) {
  JobConfig job = TwoByTwo();
  ASSERT_TRUE(ValidateJob(job).ok());
  EXPECT_EQ(MicroBatches(job), 4);
  EXPECT_EQ(RankOf(job, 1, 1), 3);
  EXPECT_EQ(StageOf(job, 3), 1);
  EXPECT_EQ(ReplicaOf(job, 2), 1);
  EXPECT_EQ(PeersOf(job, 0), (std::vector<int>{1, 2}));
  EXPECT_EQ(PeersOf(job, 3), (std::vector<int>{2, 1}));
  EXPECT_EQ(ReplicaGroup(job, 1), (std::vector<int>{1, 3}));
}

TEST(Job, JsonRoundTrip) {
  JobConfig job = TwoByTwo();
  job.schedule = ScheduleKind::kOneFOneB;
  job.model.dropout = 0.25;
  job.checkpoint_every = 3;
  auto back = JobFromJson(JobToJson(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(JobToJson(*back), JobToJson(job));
  EXPECT_EQ(back->checkpoint_every, 3);
  // Descriptions written before checkpoint_every existed still load (as 0: only at the end).
  nlohmann::json old = JobToJson(job);
  old.erase("checkpoint_every");
  auto older = JobFromJson(old);
  ASSERT_TRUE(older.ok()) << older.status();
  EXPECT_EQ(older->checkpoint_every, 0);
  EXPECT_FALSE(JobFromJson(nlohmann::json::object()).ok());
}

TEST(Job, RejectsInconsistentJobs) {
  JobConfig job = TwoByTwo();
  job.global_batch = 15;
  EXPECT_NE(ValidateJob(job).message().find("--replicas"), std::string::npos);
  job = TwoByTwo();
  job.micro_batch = 3;
  EXPECT_NE(ValidateJob(job).message().find("--micro-batch"), std::string::npos);
  job = TwoByTwo();
  job.stages = 5;
  EXPECT_FALSE(ValidateJob(job).ok());
  job = TwoByTwo();
  job.checkpoint_every = -1;
  EXPECT_NE(ValidateJob(job).message().find("--checkpoint-every"), std::string::npos);
  job = TwoByTwo();
  job.endpoints.pop_back();
  EXPECT_FALSE(ValidateJob(job).ok());
  job = TwoByTwo();
  job.model.kind = "rnn";
  EXPECT_FALSE(ValidateJob(job).ok());
  job = TwoByTwo();
  job.model.kind = "cnn";
  job.model.image = 4;
  job.model.layers = 3;
  EXPECT_FALSE(ValidateJob(job).ok());
}

TEST(Job, UnitFlopsFollowTheModel) {
  ModelSpec gpt;
  gpt.layers = 3;
  auto f = EstimateUnitFlops(gpt);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(NumUnits(gpt), 5);
  EXPECT_DOUBLE_EQ(f[1], f[3]);  // identical blocks
  EXPECT_LT(f[0], f[1]);
  ModelSpec cnn;
  cnn.kind = "cnn";
  cnn.layers = 2;
  EXPECT_EQ(EstimateUnitFlops(cnn).size(), 3u);
}

}  // namespace
}  // namespace tessera::pipeline
