// Runs cluster-train-job as real processes: interrupted by orders, resized between
// incarnations and killed with -9, a job must end bit-identical to an uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <thread>

#include "cluster/job/control.h"
#include "cluster/job/process.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 150;
constexpr int kWorld = 4;

class TrainJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    binary_ = fs::path(bin) / "cluster-train-job";
    root_ = fs::temp_directory_path() /
            ("train_job_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root_);
  }

  Process Start(const fs::path& dir, int workers, uint64_t seed = 7) {
    Result<Process> p = Process::Spawn(
        {.argv = {binary_.string(), "--steps", std::to_string(kSteps), "--world-size",
                  std::to_string(kWorld), "--checkpoint-every", "10", "--replica-ms", "3", "--seed",
                  std::to_string(seed), "--log-level", "warn"},
         .env = {{kEnvJobId, "t"},
                 {kEnvJobDir, dir.string()},
                 {kEnvJobWorkers, std::to_string(workers)}},
         .log_file = dir.string() + ".log"});
    EXPECT_TRUE(p.ok()) << p.status();
    return std::move(*p);
  }

  // Waits until the job reports at least `step` (or exits).
  int64_t WaitForStep(JobDir& dir, Process& p, int64_t step) {
    while (true) {
      auto progress = dir.ReadProgress();
      if (progress.ok() && progress->has_value() && (*progress)->step >= step) {
        return (*progress)->step;
      }
      if (p.Poll()) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // The last "resumed_from=" the job printed.
  int64_t LastResumedFrom(const fs::path& dir) {
    std::string log = ReadFile(dir.string() + ".log").value_or("");
    std::smatch m;
    int64_t last = -1;
    std::regex re("resumed_from=(\\d+)");
    for (auto it = log.cbegin(); std::regex_search(it, log.cend(), m, re); it = m.suffix().first) {
      last = std::stoll(m[1]);
    }
    return last;
  }

  std::string FinalState(const fs::path& dir) {
    auto latest = JobDir(dir).checkpoints().LoadLatest();
    EXPECT_TRUE(latest.ok() && latest->has_value());
    if (!latest.ok() || !latest->has_value()) return "";
    EXPECT_EQ((*latest)->step, kSteps);
    return (*latest)->state;
  }

  std::string Uninterrupted() {
    fs::path dir = root_ / "reference";
    EXPECT_TRUE(JobDir(dir).Prepare().ok());
    Process p = Start(dir, kWorld);
    EXPECT_EQ(p.Wait(), 0);
    return FinalState(dir);
  }

  fs::path binary_;
  fs::path root_;
};

TEST_F(TrainJobTest, PreemptedAndResizedRunEndsBitIdentical) {
  std::string reference = Uninterrupted();
  ASSERT_FALSE(reference.empty());

  fs::path path = root_ / "interrupted";
  JobDir dir(path);
  // Incarnations on 1, 3 and 2 workers are each ordered to checkpoint and exit mid-run; the
  // last one, on 4 workers, runs to the end.
  int64_t stopped_at = 0;
  for (int workers : {1, 3, 2}) {
    ASSERT_TRUE(dir.Prepare().ok());
    Process p = Start(path, workers);
    ASSERT_GE(WaitForStep(dir, p, stopped_at + 15), 0) << "job exited early";
    ASSERT_TRUE(dir.OrderCheckpointAndExit("test").ok());
    ASSERT_EQ(p.Wait(), 0);
    auto exit = dir.ReadExit();
    ASSERT_TRUE(exit.ok() && exit->has_value());
    ASSERT_EQ((*exit)->kind, ExitReport::Kind::kCheckpointed);
    EXPECT_EQ(LastResumedFrom(path), stopped_at) << "must resume exactly where it stopped";
    EXPECT_GT((*exit)->step, stopped_at);
    ASSERT_LT((*exit)->step, kSteps);
    stopped_at = (*exit)->step;
  }
  ASSERT_TRUE(dir.Prepare().ok());
  Process last = Start(path, kWorld);
  ASSERT_EQ(last.Wait(), 0);
  EXPECT_EQ(LastResumedFrom(path), stopped_at);
  EXPECT_EQ(dir.ReadExit()->value().kind, ExitReport::Kind::kFinished);
  EXPECT_TRUE(FinalState(path) == reference) << "parameters differ from the uninterrupted run";
}

TEST_F(TrainJobTest, KilledJobResumesFromItsLastPeriodicCheckpoint) {
  std::string reference = Uninterrupted();
  fs::path path = root_ / "killed";
  JobDir dir(path);
  ASSERT_TRUE(dir.Prepare().ok());
  {
    Process p = Start(path, 2);
    ASSERT_GE(WaitForStep(dir, p, 35), 0);
    p.Signal(SIGKILL);
    EXPECT_EQ(p.Wait(), 128 + SIGKILL);
  }
  auto latest = dir.checkpoints().LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  int64_t checkpointed = (*latest)->step;
  EXPECT_EQ(checkpointed % 10, 0);
  EXPECT_GE(checkpointed, 30);
  ASSERT_TRUE(dir.Prepare().ok());
  Process p = Start(path, 1);
  ASSERT_EQ(p.Wait(), 0);
  EXPECT_EQ(LastResumedFrom(path), checkpointed);
  EXPECT_TRUE(FinalState(path) == reference);
}

TEST_F(TrainJobTest, RefusesACheckpointOfAnotherJob) {
  fs::path path = root_ / "mixed";
  JobDir dir(path);
  ASSERT_TRUE(dir.Prepare().ok());
  {
    Process p = Start(path, 4, /*seed=*/1);
    ASSERT_GE(WaitForStep(dir, p, 12), 0);
    ASSERT_TRUE(dir.OrderCheckpointAndExit("test").ok());
    ASSERT_EQ(p.Wait(), 0);
  }
  ASSERT_TRUE(dir.Prepare().ok());
  Process p = Start(path, 4, /*seed=*/2);
  EXPECT_EQ(p.Wait(), 1);
  EXPECT_NE(ReadFile(path.string() + ".log")->find("another configuration"), std::string::npos);
}

}  // namespace
}  // namespace tessera::cluster
