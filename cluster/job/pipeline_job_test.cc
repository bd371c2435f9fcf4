// cluster-pipeline-job against a stand-in launcher (testdata/fake-pipeline-launch, a shell
// script speaking pipeline-launch --elastic's lines and obeying its workers file): the
// translation between the control interface and the launcher. The real launcher is in
// pipeline_live_test.cc.
#include "cluster/job/pipeline_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cluster/job/process.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

TEST(PipelineJobLines, StepLines) {
  auto s = ParsePipelineStepLine("step 12/200 loss 3.4567 lr 0.05 (0.031 s)");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->step, 12);
  EXPECT_EQ(s->total, 200);
  EXPECT_DOUBLE_EQ(s->loss, 3.4567);
  EXPECT_TRUE(ParsePipelineStepLine("step 3/9 loss 1 lr 0 (0 s), held-out loss 2").has_value());
  for (const char* bad : {"", "step", "step 12 loss 3", "step 1/x loss 3", "step 1/2 loss",
                          "step 1/2 lr 3", "elastic: step 1/2 loss 3", "step -/2 loss 1"}) {
    EXPECT_FALSE(ParsePipelineStepLine(bad).has_value()) << bad;
  }
}

TEST(PipelineJobLines, CheckpointedLines) {
  EXPECT_EQ(
      ParseCheckpointedLine("elastic: workers file says 0: every worker checkpointed at step 37"),
      37);
  EXPECT_EQ(
      ParseCheckpointedLine("elastic: preemption notice: every worker checkpointed at step 4"), 4);
  EXPECT_FALSE(ParseCheckpointedLine("every worker checkpointed at step 4").has_value());
  EXPECT_FALSE(ParseCheckpointedLine("elastic: every worker checkpointed at step x").has_value());
}

// A misspelt flag is refused before the job runs, from the launcher's own --help (a fake
// launcher here: the real one is checked by scripts/check_cli through cluster-pipeline-job).
TEST(PipelineJobLines, FlagsTheLauncherDoesNotListAreRefused) {
  const fs::path dir = fs::temp_directory_path() / ("pipeline-job-flags-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path launcher = dir / "launcher";
  ASSERT_TRUE(WriteFileAtomically(launcher,
                                  "#!/bin/sh\necho '  --model TEXT  the model'\n"
                                  "echo '  --steps INT'\n")
                  .ok());
  fs::permissions(launcher, fs::perms::owner_all);
  EXPECT_TRUE(CheckFlagsKnownTo(launcher, {"--model", "gpt", "--steps=4", "-1"}).ok());
  Status s = CheckFlagsKnownTo(launcher, {"--model", "gpt", "--stpes", "4"});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--stpes"), std::string::npos) << s.message();
  EXPECT_FALSE(CheckFlagsKnownTo(dir / "missing", {"--model"}).ok());
  fs::remove_all(dir);
}

TEST(PipelineJobLines, FlagsTheClusterOwnsAreRefused) {
  EXPECT_TRUE(CheckPipelineFlags({"--model", "gpt", "--steps", "10", "--workers-fileX"}).ok());
  for (const char* owned : {"--save-dir", "--save-dir=/x", "--elastic", "--workers", "--json",
                            "--resume-dir", "--run-dir", "--workers-file", "--auto"}) {
    Status s = CheckPipelineFlags({"--model", "gpt", owned});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << owned;
  }
}

class PipelineJobProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    const char* src = std::getenv("TESSERA_SOURCE_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    ASSERT_NE(src, nullptr) << "TESSERA_SOURCE_DIR must name the source tree";
    binary_ = fs::path(bin) / "cluster-pipeline-job";
    fake_ = fs::path(src) / "cluster/job/testdata/fake-pipeline-launch";
    dir_ = fs::temp_directory_path() /
           ("pipeline_job_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  Process Start(std::vector<std::string> flags,
                std::vector<std::pair<std::string, std::string>> env = {}) {
    ProcessOptions o;
    o.argv = {binary_.string(), "--launcher", fake_.string()};
    o.argv.insert(o.argv.end(), flags.begin(), flags.end());
    o.argv.insert(o.argv.end(), {"--world-size", "4"});
    o.env = {{kEnvJobId, "j1"}, {kEnvJobDir, dir_.string()}, {kEnvJobWorkers, "2"}};
    o.env.insert(o.env.end(), env.begin(), env.end());
    o.log_file = dir_ / "adapter.log";
    Result<Process> p = Process::Spawn(o);
    EXPECT_TRUE(p.ok()) << p.status();
    return std::move(*p);
  }

  std::string Log() { return ReadFile(dir_ / "adapter.log").value_or(""); }

  fs::path binary_, fake_, dir_;
};

TEST_F(PipelineJobProcessTest, RunsTheLauncherToTheEndAndReportsFinished) {
  Process p = Start({"--model", "gpt", "--steps", "5"});
  ASSERT_EQ(p.Wait(), 0) << Log();
  JobDir dir(dir_);
  auto exit = dir.ReadExit();
  ASSERT_TRUE(exit.ok() && exit->has_value()) << Log();
  EXPECT_EQ(**exit, (ExitReport{ExitReport::Kind::kFinished, 5}));
  auto progress = dir.ReadProgress();
  ASSERT_TRUE(progress.ok() && progress->has_value());
  EXPECT_EQ((*progress)->step, 5);
  EXPECT_EQ((*progress)->total_steps, 5);
  EXPECT_EQ((*progress)->world_size, 4);
  EXPECT_EQ((*progress)->workers, 2);
  // The launcher got the user's flags, then the cluster's; the workers file said 2.
  const std::string launch = *ReadFile(dir_ / "pipeline/incarnation-1/launch.log");
  EXPECT_NE(launch.find("--model gpt --steps 5 --elastic --workers-file"), std::string::npos)
      << launch;
  EXPECT_NE(launch.find("elastic: 2 workers available"), std::string::npos) << launch;
  EXPECT_NE(launch.find("--save-dir " + (dir_ / "pipeline/ckpt").string()), std::string::npos);
}

TEST_F(PipelineJobProcessTest, AnOrderStopsEveryWorkerAtTheNextBoundaryThroughTheWorkersFile) {
  Process p = Start({"--steps", "100000"});
  JobDir dir(dir_);
  // Training: progress reports arrive.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int64_t seen = 0;
  while (seen < 3 && std::chrono::steady_clock::now() < deadline) {
    auto progress = dir.ReadProgress();
    if (progress.ok() && progress->has_value()) seen = (*progress)->step;
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_GE(seen, 3) << Log();
  ASSERT_TRUE(dir.OrderCheckpointAndExit("resize").ok());
  auto code = p.WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value()) << "the adapter did not stop: " << Log();
  EXPECT_EQ(*code, 0) << Log();
  EXPECT_EQ(*ReadFile(dir_ / "pipeline/incarnation-1/workers"), "0\n");
  auto exit = dir.ReadExit();
  ASSERT_TRUE(exit.ok() && exit->has_value()) << Log();
  EXPECT_EQ((*exit)->kind, ExitReport::Kind::kCheckpointed);
  // The step the launcher said every worker checkpointed at, which is past what was reported.
  const std::string launch = *ReadFile(dir_ / "pipeline/incarnation-1/launch.log");
  const std::string marker = "every worker checkpointed at step ";
  const size_t at = launch.find(marker);
  ASSERT_NE(at, std::string::npos) << launch;
  EXPECT_EQ((*exit)->step, std::stoll(launch.substr(at + marker.size())));
  EXPECT_GT((*exit)->step, seen);
}

TEST_F(PipelineJobProcessTest, AnOrderBeforeTheFirstSegmentStopsTheLauncherAtOnce) {
  Process p = Start({"--steps", "100"}, {{"FAKE_START_S", "60"}});
  JobDir dir(dir_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(dir_ / "pipeline/incarnation-1/launch.log") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::this_thread::sleep_for(milliseconds(200));
  ASSERT_TRUE(dir.OrderCheckpointAndExit("preempt").ok());
  // Well before the fake launcher's 60 s of "profiling" are over.
  auto code = p.WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(code.has_value()) << "the adapter waited for the launcher: " << Log();
  EXPECT_EQ(*code, 0) << Log();
  auto exit = dir.ReadExit();
  ASSERT_TRUE(exit.ok() && exit->has_value()) << Log();
  EXPECT_EQ(**exit, (ExitReport{ExitReport::Kind::kCheckpointed, 0}));
}

TEST_F(PipelineJobProcessTest, AFailingLauncherFailsTheJobWithoutAnExitReport) {
  Process p = Start({"--steps", "100"}, {{"FAKE_EXIT", "3"}});
  EXPECT_EQ(p.Wait(), 1) << Log();
  EXPECT_NE(Log().find("pipeline-launch exited with code 3"), std::string::npos) << Log();
  auto exit = JobDir(dir_).ReadExit();
  ASSERT_TRUE(exit.ok());
  EXPECT_FALSE(exit->has_value()) << "a crash, not an obeyed order";
}

TEST_F(PipelineJobProcessTest, FlagsTheClusterSetsAreAUsageError) {
  Process p = Start({"--steps", "100", "--save-dir", "/tmp/x"});
  EXPECT_EQ(p.Wait(), 2) << Log();
  EXPECT_NE(Log().find("--save-dir is set by the cluster"), std::string::npos) << Log();
}

}  // namespace
}  // namespace tessera::cluster
