// lr's stop hook and the lr cluster-job adapter, in process, on a few hundred Fashion-MNIST
// images (skipped when dataset-fashion-mnist is not installed).
#include "cluster/job/lr_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "core/file.h"
#include "lr/data.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;

class LrJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(std::string(lr::kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    root_ = fs::temp_directory_path() /
            ("lr_job_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    if (!root_.empty() && !HasFailure()) fs::remove_all(root_);
  }

  // 300 images, batches of 30: 10 steps per epoch, 2 epochs.
  static lr::TrainConfig Tiny() {
    lr::TrainConfig c;
    c.task = "fmnist";
    c.train_limit = 300;
    c.test_limit = 100;
    c.batch_size = 30;
    c.epochs = 2;
    c.lr = 0.05;
    c.seed = 5;
    return c;
  }

  lr::TrainResult Uninterrupted() {
    lr::TrainConfig c = Tiny();
    c.log_csv = (root_ / "reference.csv").string();
    Result<lr::TrainResult> r = lr::Train(c);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(lr::TrainResult{});
  }

  std::string Read(const fs::path& path) { return ReadFile(path).value_or("<missing>"); }

  fs::path root_;
};

TEST_F(LrJobTest, StopHookStopsAtABoundaryAndTheResumedRunIsBitIdentical) {
  const lr::TrainResult reference = Uninterrupted();
  ASSERT_TRUE(reference.finished);
  ASSERT_EQ(reference.total_steps, 20);

  lr::TrainConfig c = Tiny();
  c.log_csv = (root_ / "stopped.csv").string();
  c.checkpoint_dir = (root_ / "ckpt").string();
  c.resume = true;
  std::vector<int64_t> seen;
  c.should_stop = [&](const lr::StepInfo& at) {
    seen.push_back(at.step);
    EXPECT_EQ(at.total_steps, 20);
    return at.step == 7;
  };
  Result<lr::TrainResult> first = lr::Train(c);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->finished);
  EXPECT_TRUE(first->stopped);
  EXPECT_EQ(first->steps_done, 7);
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));

  seen.clear();
  c.should_stop = [&](const lr::StepInfo& at) {
    if (seen.empty()) EXPECT_EQ(at.resumed_from, 7);
    seen.push_back(at.step);
    return false;
  };
  Result<lr::TrainResult> second = lr::Train(c);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->finished);
  EXPECT_EQ(second->resumed_from, 7);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), 7);
  EXPECT_EQ(seen.back(), 19);  // not asked after the last update
  EXPECT_EQ(Read(root_ / "stopped.csv"), Read(root_ / "reference.csv"));
  EXPECT_EQ(Read(root_ / "stopped.eval.csv"), Read(root_ / "reference.eval.csv"));
  EXPECT_EQ(second->last_loss, reference.last_loss);
  EXPECT_EQ(second->parameters_fingerprint, reference.parameters_fingerprint);
}

TEST_F(LrJobTest, TunerRunsObeyTheStopHook) {
  // Since lr#17 the online tuner's search state is checkpointed, so lr::Train lets the hook stop
  // a tuner run after a committed step (RunLrJob itself still refuses tuner configs).
  lr::TrainConfig c = Tiny();
  c.tune = true;
  c.should_stop = [](const lr::StepInfo& s) { return s.step >= 3; };
  auto r = lr::Train(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->steps_done, 3);
}

TEST_F(LrJobTest, JobObeysAnOrderAndResumesToTheUninterruptedResult) {
  const lr::TrainResult reference = Uninterrupted();
  JobDir dir(root_ / "job");
  ASSERT_TRUE(dir.Prepare().ok());
  // An order already present: the incarnation checkpoints at its first boundary.
  ASSERT_TRUE(dir.OrderCheckpointAndExit("test").ok());
  JobControl control("j1", dir.path(), 2);
  Result<LrJobOutcome> first = RunLrJob(Tiny(), {.world_size = 2}, control);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->kind, ExitReport::Kind::kCheckpointed);
  EXPECT_EQ(first->result.steps_done, 0);
  auto exit = dir.ReadExit();
  ASSERT_TRUE(exit.ok() && exit->has_value());
  EXPECT_EQ(**exit, (ExitReport{.kind = ExitReport::Kind::kCheckpointed, .step = 0}));
  EXPECT_TRUE(fs::exists(dir.path() / "lr" / "checkpoint.pt"));

  // The agent's next incarnation: no order, runs to the end.
  ASSERT_TRUE(dir.Prepare().ok());
  Result<LrJobOutcome> second = RunLrJob(Tiny(), {.world_size = 2}, control);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->kind, ExitReport::Kind::kFinished);
  exit = dir.ReadExit();
  ASSERT_TRUE(exit.ok() && exit->has_value());
  EXPECT_EQ(**exit, (ExitReport{.kind = ExitReport::Kind::kFinished, .step = 20}));
  auto progress = dir.ReadProgress();
  ASSERT_TRUE(progress.ok() && progress->has_value());
  EXPECT_EQ((*progress)->step, 20);
  EXPECT_EQ((*progress)->total_steps, 20);
  EXPECT_EQ((*progress)->world_size, 2);
  EXPECT_EQ((*progress)->workers, 2);
  EXPECT_EQ(Read(dir.path() / "train.csv"), Read(root_ / "reference.csv"));
  EXPECT_EQ(second->result.parameters_fingerprint, reference.parameters_fingerprint);
}

TEST_F(LrJobTest, JobRefusesSettingsTheClusterOwns) {
  JobControl control("j1", root_ / "job", 1);
  lr::TrainConfig tuned = Tiny();
  tuned.tune = true;
  EXPECT_EQ(RunLrJob(tuned, {}, control).status().code(), StatusCode::kInvalidArgument);
  lr::TrainConfig stop = Tiny();
  stop.stop_after = 3;
  EXPECT_EQ(RunLrJob(stop, {}, control).status().code(), StatusCode::kInvalidArgument);
  lr::TrainConfig own = Tiny();
  own.checkpoint_dir = (root_ / "elsewhere").string();
  EXPECT_EQ(RunLrJob(own, {}, control).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::cluster
