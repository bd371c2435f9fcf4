// RunManager against a stand-in job: a shell script that speaks the control interface
// (progress, order, exit files) and, per its first argument, obeys, finishes or crashes.
#include "cluster/agent/run_manager.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;

constexpr char kFakeJob[] = R"(#!/bin/sh
mode=$1
dir=$TESSERA_JOB_DIR
echo "step=3 total=9 world=$3 workers=$TESSERA_JOB_WORKERS loss=0.5" > "$dir/progress"
case $mode in
  finish) echo "finished step=9" > "$dir/exit"; exit 0;;
  crash) exit 3;;
  hang) exec sleep 60;;
esac
while [ ! -e "$dir/order" ]; do sleep 0.01; done
echo "checkpointed step=4" > "$dir/exit"
)";

class RunManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("run_manager_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    std::ofstream(root_ / "job.sh") << kFakeJob;
    ::chmod((root_ / "job.sh").c_str(), 0755);
    runs_.emplace(RunManagerOptions{.job_binary = root_ / "job.sh", .log_dir = root_});
  }
  void TearDown() override {
    runs_.reset();
    fs::remove_all(root_);
  }

  rpc::Assignment Assign(const std::string& job, int64_t run, const std::string& mode,
                         bool stop = false) {
    rpc::Assignment a;
    a.set_job_id(job);
    a.set_run(run);
    a.set_workers(2);
    a.set_world_size(4);
    a.add_args(mode);
    a.set_job_dir((root_ / job).string());
    a.set_stop(stop);
    return a;
  }

  // Collects until `job`'s report satisfies `pred` (the fake job acts within milliseconds).
  template <typename Pred>
  rpc::RunReport WaitFor(const std::string& job, Pred pred) {
    for (int i = 0; i < 2000; ++i) {
      for (const auto& r : runs_->Collect()) {
        if (r.job_id() == job && pred(r)) return r;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "no matching report for " << job;
    return {};
  }

  fs::path root_;
  std::optional<RunManager> runs_;
};

TEST_F(RunManagerTest, StartsReportsAndStopsARunOnOrder) {
  EXPECT_TRUE(runs_->Reconcile(std::vector{Assign("j1", 1, "obey")}));
  rpc::RunReport started = WaitFor("j1", [](auto& r) { return r.started(); });
  EXPECT_EQ(started.exit(), rpc::RunReport::RUNNING);
  EXPECT_EQ(started.step(), 3);
  EXPECT_EQ(started.total_steps(), 9);
  EXPECT_GE(started.restore_seconds(), 0);
  EXPECT_EQ(runs_->live_runs(), 1);
  // Assigning the same run again changes nothing; a stop flag orders checkpoint-and-exit.
  EXPECT_FALSE(runs_->Reconcile(std::vector{Assign("j1", 1, "obey")}));
  EXPECT_TRUE(runs_->Reconcile(std::vector{Assign("j1", 1, "obey", /*stop=*/true)}));
  rpc::RunReport done = WaitFor("j1", [](auto& r) { return r.exit() != rpc::RunReport::RUNNING; });
  EXPECT_EQ(done.exit(), rpc::RunReport::CHECKPOINTED);
  EXPECT_EQ(done.step(), 4);
  EXPECT_GE(done.checkpoint_seconds(), 0);
  // The agent passes the world size and the worker count the way the job expects them.
  std::ifstream progress(root_ / "j1" / "progress");
  std::string line;
  std::getline(progress, line);
  EXPECT_NE(line.find("world=4 workers=2"), std::string::npos) << line;
}

TEST_F(RunManagerTest, TellsFinishedFromCrashed) {
  runs_->Reconcile(std::vector{Assign("ok", 1, "finish"), Assign("bad", 1, "crash")});
  auto ok = WaitFor("ok", [](auto& r) { return r.exit() != rpc::RunReport::RUNNING; });
  auto bad = WaitFor("bad", [](auto& r) { return r.exit() != rpc::RunReport::RUNNING; });
  EXPECT_EQ(ok.exit(), rpc::RunReport::FINISHED);
  EXPECT_EQ(ok.step(), 9);
  EXPECT_EQ(bad.exit(), rpc::RunReport::CRASHED);
  EXPECT_EQ(bad.exit_code(), 3);
}

TEST_F(RunManagerTest, KillsRunsNoLongerAssignedAndReplacedRuns) {
  runs_->Reconcile(std::vector{Assign("j1", 1, "obey"), Assign("j2", 1, "obey")});
  WaitFor("j2", [](auto& r) { return r.started(); });
  EXPECT_EQ(runs_->live_runs(), 2);
  // j1 moves to run 2 (the scheduler gave run 1 up); j2 is no longer wanted here at all.
  EXPECT_TRUE(runs_->Reconcile(std::vector{Assign("j1", 2, "obey")}));
  auto reports = runs_->Collect();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].job_id(), "j1");
  EXPECT_EQ(reports[0].run(), 2);
  EXPECT_EQ(runs_->live_runs(), 1);
}

TEST_F(RunManagerTest, StopOfARunThatNeverStartedIsAnImmediateCheckpoint) {
  runs_->Reconcile(std::vector{Assign("j1", 5, "obey", /*stop=*/true)});
  auto reports = runs_->Collect();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].exit(), rpc::RunReport::CHECKPOINTED);
  EXPECT_EQ(runs_->live_runs(), 0);
}

TEST_F(RunManagerTest, MissingJobBinaryIsACrashNotAHang) {
  RunManager broken({.job_binary = root_ / "no-such-binary", .log_dir = root_});
  broken.Reconcile(std::vector{Assign("j1", 1, "obey")});
  auto reports = broken.Collect();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].exit(), rpc::RunReport::CRASHED);
  EXPECT_EQ(reports[0].exit_code(), 127);
}

TEST_F(RunManagerTest, AJobTypeArgPicksItsProgramAndIsStripped) {
  // The "lr" program finishes at step 7 when its first arg is "finish", i.e. only if the agent
  // stripped --job-type=lr from the args.
  std::ofstream(root_ / "lr.sh") << "#!/bin/sh\n[ \"$1\" = finish ] || exit 4\n"
                                    "echo \"finished step=7\" > \"$TESSERA_JOB_DIR/exit\"\n";
  ::chmod((root_ / "lr.sh").c_str(), 0755);
  RunManager typed({.job_binary = root_ / "job.sh",
                    .job_programs = {{"lr", root_ / "lr.sh"}},
                    .log_dir = root_});
  rpc::Assignment lr = Assign("j1", 1, "finish");
  lr.clear_args();
  lr.add_args("--job-type=lr");
  lr.add_args("finish");
  rpc::Assignment unknown = Assign("j2", 1, "finish");
  unknown.clear_args();
  unknown.add_args("--job-type=quantum");
  typed.Reconcile(std::vector{lr, unknown, Assign("j3", 1, "finish")});
  std::map<std::string, rpc::RunReport> done;
  for (int i = 0; i < 2000 && done.size() < 3; ++i) {
    for (const auto& r : typed.Collect()) {
      if (r.exit() != rpc::RunReport::RUNNING) done[r.job_id()] = r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done["j1"].exit(), rpc::RunReport::FINISHED);
  EXPECT_EQ(done["j1"].step(), 7);
  EXPECT_EQ(done["j2"].exit(), rpc::RunReport::CRASHED);
  EXPECT_EQ(done["j2"].exit_code(), 127);
  EXPECT_EQ(done["j3"].exit(), rpc::RunReport::FINISHED);  // no type: the default program
  EXPECT_EQ(done["j3"].step(), 9);
}

TEST_F(RunManagerTest, AJobTypeWithoutAProgramIsACrash) {
  rpc::Assignment lr = Assign("j1", 1, "finish");
  lr.clear_args();
  lr.add_args("--job-type=lr");
  runs_->Reconcile(std::vector{lr});
  auto reports = runs_->Collect();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].exit(), rpc::RunReport::CRASHED);
  EXPECT_EQ(reports[0].exit_code(), 127);
}

TEST_F(RunManagerTest, ARunIgnoringItsStopOrderIsKilled) {
  RunManager strict({.job_binary = root_ / "job.sh",
                     .log_dir = root_,
                     .stop_timeout = std::chrono::milliseconds(50)});
  strict.Reconcile(std::vector{Assign("j1", 1, "hang")});
  strict.Reconcile(std::vector{Assign("j1", 1, "hang", /*stop=*/true)});
  rpc::RunReport last;
  for (int i = 0; i < 2000 && last.exit() == rpc::RunReport::RUNNING; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    last = strict.Collect()[0];
  }
  EXPECT_EQ(last.exit(), rpc::RunReport::CRASHED) << "killed: resume from the last checkpoint";
  EXPECT_EQ(strict.live_runs(), 0);
}

}  // namespace
}  // namespace tessera::cluster
