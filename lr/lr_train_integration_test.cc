// lr-train as a preemptible job: real processes, stopped cleanly (--stop-after) or killed with
// SIGKILL mid-run, then resumed with --resume. The resumed run's per-step log must equal an
// uninterrupted run's, row for row. And lr-protocol's grid killed and restarted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/file.h"
#include "lr/data.h"

namespace tessera::lr {
namespace {

std::string Bin() {
  const char* dir = std::getenv("TESSERA_BIN_DIR");
  return std::string(dir ? dir : "bin") + "/lr-train";
}

class LrTrainProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    root_ = std::filesystem::temp_directory_path() /
            ("lr_train_it_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  std::vector<std::string> Args(const std::string& log,
                                const std::string& schedule = "knee") const {
    return {Bin(),
            "--task",
            "fmnist",
            "--train-limit",
            "2000",
            "--test-limit",
            "500",
            "--epochs",
            "4",
            "--batch-size",
            "50",
            "--schedule",
            schedule,
            "--lr",
            "0.05",
            "--optimizer",
            "sgd",
            "--seed",
            "3",
            "--log-csv",
            (root_ / log).string()};
  }

  // fork+exec; returns the child's pid.
  static pid_t Spawn(const std::vector<std::string>& args) {
    pid_t pid = fork();
    if (pid == 0) {
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }
  static int Wait(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  static int RunToEnd(const std::vector<std::string>& args) { return Wait(Spawn(args)); }

  std::filesystem::path root_;
};

TEST_F(LrTrainProcess, StopAndResumeMatchesAnUninterruptedRun) {
  ASSERT_EQ(RunToEnd(Args("whole.csv")), 0);
  auto part = Args("part.csv");
  part.insert(part.end(), {"--checkpoint-dir", (root_ / "ckpt").string(), "--resume"});
  auto stop = part;
  stop.insert(stop.end(), {"--stop-after", "77"});
  ASSERT_EQ(RunToEnd(stop), 0);
  ASSERT_EQ(RunToEnd(part), 0);
  EXPECT_EQ(ReadFile(root_ / "whole.csv").value(), ReadFile(root_ / "part.csv").value());
  EXPECT_EQ(ReadFile(root_ / "whole.eval.csv").value(), ReadFile(root_ / "part.eval.csv").value());
}

TEST_F(LrTrainProcess, SigkillMidRunThenResumeMatchesAnUninterruptedRun) {
  ASSERT_EQ(RunToEnd(Args("whole.csv")), 0);
  auto part = Args("part.csv");
  part.insert(part.end(), {"--checkpoint-dir", (root_ / "ckpt").string(), "--resume",
                           "--checkpoint-every", "5"});
  // Kill as soon as a checkpoint exists (the run is then somewhere past it, mid-step perhaps).
  const pid_t pid = Spawn(part);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(root_ / "ckpt" / "checkpoint.pt") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  const int killed = Wait(pid);
  ASSERT_TRUE(std::filesystem::exists(root_ / "ckpt" / "checkpoint.pt"));
  ASSERT_EQ(RunToEnd(part), 0) << "first attempt ended with " << killed;
  EXPECT_EQ(ReadFile(root_ / "whole.csv").value(), ReadFile(root_ / "part.csv").value());
}

// lr-protocol's grid is resumable run by run: a grid killed with SIGKILL mid-way and started
// again ends with the same report as an uninterrupted grid, training only the missing runs.
TEST_F(LrTrainProcess, ProtocolGridKilledAndRestartedEqualsUninterrupted) {
  const char* dir = std::getenv("TESSERA_BIN_DIR");
  const std::string bin = std::string(dir ? dir : "bin") + "/lr-protocol";
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{bin,         "--quick",  "--schedules", "knee,constant",
                                    "--budgets", "1",        "--seeds",     "2",
                                    "--peaks",   "0.05,0.1", "--out",       (root_ / out).string()};
  };
  ASSERT_EQ(RunToEnd(args("whole")), 0);
  EXPECT_TRUE(std::filesystem::exists(root_ / "whole" / "mlp-budget.png"));  // gnuplot ran
  const pid_t pid = Spawn(args("part"));
  const auto results = root_ / "part" / "results.csv";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto rows = [&] {
    auto text = ReadFile(results);
    return text.ok() ? std::count(text->begin(), text->end(), '\n') : 0;
  };
  while (rows() < 4 && std::chrono::steady_clock::now() < deadline) {  // header + 3 runs
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  Wait(pid);
  const auto done_before = rows() - 1;
  ASSERT_GE(done_before, 3);
  ASSERT_EQ(RunToEnd(args("part")), 0);
  EXPECT_EQ(rows(), 1 + 8);  // 2 schedules x 2 peaks of tuning + 2 schedules x 2 seeds
  EXPECT_EQ(ReadFile(root_ / "whole" / "report.md").value(),
            ReadFile(root_ / "part" / "report.md").value());
}

TEST_F(LrTrainProcess, BadArgumentsFailCleanly) {
  EXPECT_EQ(RunToEnd(Args("x.csv", "nonsense")), 1);
  EXPECT_EQ(RunToEnd(Args("x.csv", "knee:explore=7")), 1);
  auto missing = Args("y.csv");
  missing.insert(missing.end(), {"--data-dir", (root_ / "nowhere").string()});
  EXPECT_EQ(RunToEnd(missing), 1);
  auto resume_without_dir = Args("z.csv");
  resume_without_dir.push_back("--resume");
  EXPECT_EQ(RunToEnd(resume_without_dir), 1);
}

}  // namespace
}  // namespace tessera::lr
