// lr-train as a real cluster job: a scheduler, a node agent, an lr job (lr-cluster-job) and a
// premium cluster-train-job as real processes on loopback. The premium job preempts the lr job,
// which later resumes from its checkpoint and ends with exactly the per-step log, loss and
// parameters of an uninterrupted lr-train run. Every process is killed on teardown (~Process),
// and the job processes die with their agent (PR_SET_PDEATHSIG).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <thread>

#include "cluster/cli/ctl.h"
#include "cluster/job/job_type.h"
#include "cluster/job/process.h"
#include "cluster/testing/live_cluster.h"
#include "core/file.h"
#include "lr/data.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// lr-train's flags: an MLP on 600 Fashion-MNIST images, batches of 20, 5 epochs = 150 steps,
// evaluated on 200 test images 5 times, one torch thread, a checkpoint every 50 steps.
const std::vector<std::string> kLrArgs = {"--task",
                                          "fmnist",
                                          "--train-limit",
                                          "600",
                                          "--test-limit",
                                          "200",
                                          "--batch-size",
                                          "20",
                                          "--epochs",
                                          "5",
                                          "--lr",
                                          "0.05",
                                          "--schedule",
                                          "knee",
                                          "--seed",
                                          "11",
                                          "--evals",
                                          "5",
                                          "--threads",
                                          "1",
                                          "--checkpoint-every",
                                          "50"};
// Under the cluster each step takes at least 20 ms (a stand-in for a bigger model), so the
// job is still training when the premium job arrives. Pacing does not change the arithmetic.
const std::vector<std::string> kLrJobOnlyArgs = {"--min-step-ms", "20"};
const std::vector<std::string> kPremiumArgs = {"--steps", "60", "--replica-ms", "5"};

class LrLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(std::string(lr::kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    bin_ = bin;
    root_ = fs::temp_directory_path() / ("lr_live_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    cluster_.reset();  // kills whatever still runs
    if (!root_.empty() && !HasFailure()) fs::remove_all(root_);
  }

  // The shared harness (cluster/testing/live_cluster.h): a scheduler and one agent, 2 slots.
  void StartCluster() {
    cluster_.emplace(root_);
    cluster_->StartScheduler({"--heartbeat-timeout-s", "2"});
    cluster_->StartAgent("n1", 2);
    cluster_->WaitForNodes(1);
  }

  std::string Submit(const std::string& tier, const JobCommand& command) {
    return cluster_->Submit(tier, 2, 2, JoinJobType(command));
  }

  std::map<std::string, rpc::JobInfo> Jobs() { return cluster_->Jobs(); }

  template <typename Pred>
  bool WaitUntil(Pred done) {
    return cluster_->WaitUntil([&](auto& jobs) { return done(jobs); });
  }

  // The agent's log of each run of job `id`, in run order.
  std::vector<std::string> RunLogs(const std::string& id) {
    std::map<int, std::string> by_run;
    const std::regex name(id + "-run(\\d+)\\.log");
    for (const auto& entry : fs::directory_iterator(cluster_->LogDir("n1"))) {
      std::smatch m;
      const std::string filename = entry.path().filename().string();
      if (std::regex_match(filename, m, name)) {
        by_run[std::stoi(m[1])] = ReadFile(entry.path()).value_or("");
      }
    }
    std::vector<std::string> out;
    for (auto& [run, log] : by_run) out.push_back(log);
    return out;
  }

  static std::string Match(const std::string& text, const std::string& pattern) {
    std::smatch m;
    return std::regex_search(text, m, std::regex(pattern)) ? m[1].str() : "<no match>";
  }

  fs::path bin_, root_;
  std::optional<LiveCluster> cluster_;
};

TEST_F(LrLiveTest, PreemptedLrJobResumesAndEndsBitIdenticalToAnUninterruptedRun) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::vector<std::string> lr_job_args = kLrArgs;
  lr_job_args.insert(lr_job_args.end(), kLrJobOnlyArgs.begin(), kLrJobOnlyArgs.end());
  const std::string lr_job = Submit("basic", {.type = "lr", .args = lr_job_args});
  ASSERT_FALSE(lr_job.empty());
  // The agent's two slots are taken once the lr job trains.
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[lr_job].step() >= 10; }));
  const std::string premium = Submit("premium", {.type = "mlp", .args = kPremiumArgs});
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[premium].state() == "running"; }));
  EXPECT_EQ(Jobs()[lr_job].preemptions(), 1) << "the lr job gives way to the premium job";
  ASSERT_TRUE(WaitUntil([&](auto jobs) {
    return jobs[lr_job].state() == "finished" && jobs[premium].state() == "finished";
  }));
  EXPECT_EQ(Jobs()[lr_job].step(), 150);

  // Run 1 started at step 0 and checkpointed mid-run on the order; the last run resumed from
  // that step and finished.
  const std::vector<std::string> runs = RunLogs(lr_job);
  ASSERT_GE(runs.size(), 2u);
  EXPECT_NE(runs.front().find("starting at step 0/150"), std::string::npos) << runs.front();
  const std::string stopped_at = Match(runs.front(), "checkpointed step=(\\d+)/150");
  ASSERT_NE(stopped_at, "<no match>") << runs.front();
  EXPECT_GE(std::stoll(stopped_at), 10);
  EXPECT_LT(std::stoll(stopped_at), 150);
  EXPECT_NE(runs.back().find("resuming at step"), std::string::npos) << runs.back();
  const std::string finished = Match(runs.back(), "(finished step=150/150 .*)");
  ASSERT_NE(finished, "<no match>") << runs.back();
  std::printf("lr job %s: %zu runs, checkpointed at step %s on the order, then %s\n",
              lr_job.c_str(), runs.size(), stopped_at.c_str(), finished.c_str());

  // The same lr-train run, uninterrupted, outside the cluster.
  std::vector<std::string> argv = {(bin_ / "lr-train").string()};
  argv.insert(argv.end(), kLrArgs.begin(), kLrArgs.end());
  argv.insert(argv.end(), {"--log-csv", (root_ / "reference.csv").string()});
  Result<Process> reference =
      Process::Spawn({.argv = argv, .env = {}, .log_file = root_ / "reference.log"});
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_EQ(reference->Wait(), 0);
  const std::string reference_out = ReadFile(root_ / "reference.log").value_or("");

  const fs::path job_dir = root_ / "jobs" / lr_job;
  const std::string log = ReadFile(job_dir / "train.csv").value_or("<missing>");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 151) << "header + one row per step";
  EXPECT_EQ(log, ReadFile(root_ / "reference.csv").value_or("")) << "per-step log (lr, loss)";
  EXPECT_EQ(ReadFile(job_dir / "train.eval.csv").value_or("<missing>"),
            ReadFile(root_ / "reference.eval.csv").value_or(""));
  EXPECT_EQ(Match(finished, "params=([0-9a-f]+)"), Match(reference_out, "params=([0-9a-f]+)"))
      << "final parameters\njob:       " << finished << "\nreference: " << reference_out;
  // The final loss, at lr-train's printed precision (the log above compares all 9 digits).
  const std::string job_loss = Match(finished, "loss=([0-9.e+-]+)");
  const std::string reference_loss = Match(reference_out, "last_loss=([0-9.]+)");
  ASSERT_NE(job_loss, "<no match>");
  ASSERT_NE(reference_loss, "<no match>");
  EXPECT_EQ(fmt::format("{:.6f}", std::stod(job_loss)), reference_loss);
}

}  // namespace
}  // namespace tessera::cluster
