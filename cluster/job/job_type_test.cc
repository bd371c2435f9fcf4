#include "cluster/job/job_type.h"

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

TEST(JobTypeTest, DefaultTypeAddsNoArg) {
  JobCommand command{.type = "mlp", .args = {"--steps", "10"}};
  std::vector<std::string> args = JoinJobType(command);
  EXPECT_EQ(args, (std::vector<std::string>{"--steps", "10"}));
  Result<JobCommand> split = SplitJobType(args);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(*split, command);
}

TEST(JobTypeTest, OtherTypeTravelsAsLeadingArg) {
  JobCommand command{.type = "lr", .args = {"--task", "fmnist"}};
  std::vector<std::string> args = JoinJobType(command);
  EXPECT_EQ(args, (std::vector<std::string>{"--job-type=lr", "--task", "fmnist"}));
  Result<JobCommand> split = SplitJobType(args);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(*split, command);
}

TEST(JobTypeTest, UnknownOrMisplacedTypeIsRejected) {
  EXPECT_EQ(SplitJobType({"--job-type=quantum"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitJobType({"--job-type", "lr"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitJobType({"--steps", "1", "--job-type=lr"}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(JobTypeTest, CommandJobCarriesTheUsersCommandLineUntouched) {
  JobCommand command{.type = "command",
                     .args = {"/usr/bin/python3", "train.py", "--job-type=x", "--workers", "4"}};
  std::vector<std::string> args = JoinJobType(command);
  EXPECT_TRUE(IsCommandJob(args));
  EXPECT_FALSE(IsCommandJob(command.args));
  Result<JobCommand> split = SplitJobType(args);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(*split, command);
  EXPECT_EQ(SplitJobType({"--job-type=command"}).status().code(), StatusCode::kInvalidArgument);
}

TEST(JobTypeTest, CommandJobMayAskForLogicalRanks) {
  JobCommand command{
      .type = "command", .args = {"./job", "--logical-ranks"}, .logical_ranks = true};
  std::vector<std::string> args = JoinJobType(command);
  EXPECT_EQ(args, (std::vector<std::string>{"--job-type=command", "--logical-ranks", "./job",
                                            "--logical-ranks"}));
  EXPECT_TRUE(IsCommandJob(args));
  Result<JobCommand> split = SplitJobType(args);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(*split, command);  // the program's own "--logical-ranks" stays its own
  EXPECT_EQ(SplitJobType({"--job-type=command", "--logical-ranks"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitJobType({"--logical-ranks", "--steps", "3"}).status().code(),
            StatusCode::kInvalidArgument);
}

// The scheduler gives these a part on every node of their placement.
TEST(JobTypeTest, PipelineJobsAreRecognisedByTheirLeadingType) {
  const std::vector<std::string> args = JoinJobType({.type = "pipeline", .args = {"--steps", "4"}});
  EXPECT_TRUE(IsPipelineJob(args));
  EXPECT_FALSE(IsCommandJob(args));
  EXPECT_FALSE(IsPipelineJob({"--steps", "4"}));
  EXPECT_FALSE(IsPipelineJob(JoinJobType({.type = "command", .args = {"--job-type=pipeline"}})));
  EXPECT_FALSE(IsPipelineJob({}));
}

TEST(JobTypeTest, EveryTypeHasAProgram) {
  ASSERT_FALSE(JobTypes().empty());
  EXPECT_EQ(JobTypes().front().name, kDefaultJobType);
  for (const JobType& t : JobTypes()) {
    EXPECT_EQ(FindJobType(t.name), &t);
    EXPECT_EQ(t.program.empty(), t.name == kCommandJobType) << t.name;
  }
  EXPECT_EQ(FindJobType("nope"), nullptr);
}

}  // namespace
}  // namespace tessera::cluster
