// The live cluster with real processes on loopback: a scheduler, node agents and training jobs,
// with the faults the issue asks for (a premium job on a full cluster, an agent killed with -9,
// a scheduler restart). Every job's final parameters are compared bit for bit with an
// uninterrupted run of the same job.
#include "cluster/testing/live_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include "cluster/cli/ctl.h"
#include "cluster/job/checkpoint.h"
#include "cluster/job/control.h"
#include "cluster/job/process.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Each job: world size 2, 10 ms per replica step, a checkpoint every 20 steps.
const std::vector<std::string> kJobArgs = {
    "--steps", "200", "--replica-ms", "10", "--checkpoint-every", "20"};
// The same job at 50 ms per replica step (the arithmetic, hence the final state, is the same:
// the replica time is a sleep). For tests whose property needs two jobs running at once: on a
// loaded box a job's start can lag another's by 6 s (CI, load average 35), longer than a
// 200-step job at 10 ms takes.
const std::vector<std::string> kLongJobArgs = {
    "--steps", "200", "--replica-ms", "50", "--checkpoint-every", "20"};

class LiveClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    bin_ = bin;
    root_ = fs::temp_directory_path() /
            ("live_cluster_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    cluster_.emplace(root_);
  }
  void TearDown() override {
    cluster_.reset();  // kills whatever still runs
    if (!HasFailure()) fs::remove_all(root_);
  }

  // The shared harness (cluster/testing/live_cluster.h), with this test's heartbeat timeout.
  void StartScheduler(int port = 0, std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), {"--heartbeat-timeout-s", "2"});
    cluster_->StartScheduler(extra, port);
  }
  void StartAgent(const std::string& node, int slots) { cluster_->StartAgent(node, slots); }
  std::string Submit(const std::string& tier, int workers, int min_workers,
                     const std::vector<std::string>& args = kJobArgs) {
    return cluster_->Submit(tier, workers, min_workers, args);
  }
  std::map<std::string, rpc::JobInfo> Jobs() { return cluster_->Jobs(); }
  template <typename Pred>
  bool WaitUntil(Pred done) {
    return cluster_->WaitUntil([&](auto& jobs) { return done(jobs); });
  }

  bool AllFinished(const std::map<std::string, rpc::JobInfo>& jobs) {
    return !jobs.empty() && std::all_of(jobs.begin(), jobs.end(),
                                        [](auto& kv) { return kv.second.state() == "finished"; });
  }

  // The final parameters of job `id`, from its job directory.
  std::string FinalState(const std::string& id, int64_t steps = 200) {
    auto latest = CheckpointStore(root_ / "jobs" / id / "ckpt").LoadLatest();
    EXPECT_TRUE(latest.ok() && latest->has_value()) << id;
    if (!latest.ok() || !latest->has_value()) return "";
    EXPECT_EQ((*latest)->step, steps) << id;
    return (*latest)->state;
  }

  // The same job run alone, uninterrupted, on all its workers.
  std::string ReferenceState(int world_size) {
    fs::path dir = root_ / ("reference-" + std::to_string(world_size));
    if (!fs::exists(dir / "ckpt")) {
      std::vector<std::string> argv = {(bin_ / "cluster-train-job").string()};
      argv.insert(argv.end(), kJobArgs.begin(), kJobArgs.end());
      argv.insert(argv.end(), {"--world-size", std::to_string(world_size)});
      Result<Process> p = Process::Spawn({.argv = argv,
                                          .env = {{kEnvJobId, "reference"},
                                                  {kEnvJobDir, dir.string()},
                                                  {kEnvJobWorkers, std::to_string(world_size)}},
                                          .log_file = dir.string() + ".log"});
      EXPECT_TRUE(p.ok());
      if (!p.ok()) return "";
      EXPECT_EQ(p->Wait(), 0);
    }
    auto latest = CheckpointStore(dir / "ckpt").LoadLatest();
    EXPECT_TRUE(latest.ok() && latest->has_value());
    return latest.ok() && latest->has_value() ? (*latest)->state : "";
  }

  // The step every run of job `id` started at, in run order, across all nodes (from the
  // "starting at step N" / "resuming at step N" line each run logs first).
  std::vector<int64_t> ResumedFrom(const std::string& id) {
    std::map<int, int64_t> by_run;
    std::regex name(id + "-run(\\d+)\\.log");
    std::regex resumed("(?:starting|resuming) at step (\\d+)");
    for (const auto& entry : fs::recursive_directory_iterator(root_)) {
      std::smatch m;
      std::string filename = entry.path().filename().string();
      if (!std::regex_match(filename, m, name)) continue;
      int run = std::stoi(m[1]);
      std::string log = ReadFile(entry.path()).value_or("");
      std::smatch r;
      if (std::regex_search(log, r, resumed)) by_run[run] = std::stoll(r[1]);
    }
    std::vector<int64_t> out;
    for (auto& [run, step] : by_run) out.push_back(step);
    return out;
  }

  fs::path bin_, root_;
  std::optional<LiveCluster> cluster_;
};

TEST_F(LiveClusterTest, PremiumJobPreemptsBasicJobsWhichResumeBitIdentical) {
  StartScheduler();
  StartAgent("n1", 2);
  StartAgent("n2", 2);
  std::string b1 = Submit("basic", 2, 2, kLongJobArgs);
  std::string b2 = Submit("basic", 2, 2, kLongJobArgs);
  // The cluster is full once both basic jobs train (both still running: a job that finished
  // before the other started would leave the premium job free slots and nothing to preempt).
  ASSERT_TRUE(WaitUntil([&](auto jobs) {
    auto training = [&](const std::string& id) {
      return jobs[id].state() == "running" && jobs[id].step() >= 20;
    };
    return training(b1) && training(b2);
  }));
  std::string premium = Submit("premium", 2, 2);
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[premium].state() == "running"; }));
  auto jobs = Jobs();
  EXPECT_GE(jobs[premium].time_to_workers(), 0);
  EXPECT_EQ(jobs[b1].preemptions() + jobs[b2].preemptions(), 1)
      << "exactly one basic job gives way";
  std::string preempted = jobs[b1].preemptions() == 1 ? b1 : b2;

  ASSERT_TRUE(WaitUntil([&](auto jobs) { return AllFinished(jobs); }));
  jobs = Jobs();
  EXPECT_EQ(jobs[premium].preemptions(), 0);
  // The preempted job resumed from the step it checkpointed at, not from the start.
  std::vector<int64_t> resumed = ResumedFrom(preempted);
  ASSERT_GE(resumed.size(), 2u);
  EXPECT_EQ(resumed.front(), 0);
  EXPECT_GE(resumed.back(), 20);
  std::string reference = ReferenceState(2);
  ASSERT_FALSE(reference.empty());
  for (const auto& id : {b1, b2, premium}) {
    EXPECT_TRUE(FinalState(id) == reference) << id << " differs from an uninterrupted run";
  }
}

TEST_F(LiveClusterTest, AgentKilledWithSigkillLosesNoJob) {
  StartScheduler();
  StartAgent("n1", 2);
  StartAgent("n2", 2);
  std::string a = Submit("standard", 2, 1);
  std::string b = Submit("basic", 2, 1);
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[a].step() >= 45 && jobs[b].step() >= 45; }));
  auto jobs = Jobs();
  std::string victim = jobs[a].placement().substr(0, 2);
  ASSERT_TRUE(victim == "n1" || victim == "n2") << jobs[a].placement();
  // The highest step of `a` the scheduler has seen: the steps from its last periodic
  // checkpoint up to here are lost when the node dies.
  const int64_t seen = Jobs()[a].step();
  EXPECT_EQ(cluster_->KillAgent(victim), 128 + SIGKILL);

  ASSERT_TRUE(WaitUntil([&](auto jobs) { return AllFinished(jobs); }));
  jobs = Jobs();
  EXPECT_GE(jobs[a].recoveries(), 1) << "the job on the killed node was restarted";
  std::vector<int64_t> resumed = ResumedFrom(a);
  ASSERT_GE(resumed.size(), 2u);
  EXPECT_GE(resumed[1], 40) << "restarted from its last periodic checkpoint, not from scratch";
  EXPECT_EQ(resumed[1] % 20, 0);
  // The live SLA counts the lost work as lost (issue 18): at least the steps between the
  // checkpoint it resumed from and the highest step seen before the kill, and the progress
  // they had earned, shown in `cluster-ctl list`'s LOST column.
  EXPECT_GE(jobs[a].lost_steps(), seen - resumed[1])
      << "seen " << seen << ", resumed " << resumed[1];
  if (jobs[a].lost_steps() > 0) {
    EXPECT_GT(jobs[a].lost_progress_s(), 0);
    std::vector<rpc::JobInfo> listed;
    for (const auto& [id, info] : jobs) listed.push_back(info);
    const std::string table = FormatJobTable(listed);
    EXPECT_NE(table.find(std::to_string(jobs[a].lost_steps()) + " steps ("), std::string::npos)
        << table;
  }
  auto nodes = cluster_->client().ListNodes();
  ASSERT_TRUE(nodes.ok());
  for (const auto& n : *nodes) {
    if (n.id() == victim) {
      EXPECT_FALSE(n.alive());
    }
  }
  std::string reference = ReferenceState(2);
  EXPECT_TRUE(FinalState(a) == reference);
  EXPECT_TRUE(FinalState(b) == reference);
}

TEST_F(LiveClusterTest, SchedulerRestartKeepsItsJobs) {
  StartScheduler();
  StartAgent("n1", 2);
  std::string running = Submit("basic", 2, 2);
  std::string queued = Submit("basic", 2, 2);
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[running].step() >= 20; }));
  auto before = Jobs();
  ASSERT_EQ(before[queued].state(), "pending");

  cluster_->KillScheduler();
  StartScheduler(cluster_->port());  // same port, same state directory; the agent reconnects
  auto after = Jobs();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[running].tier(), "basic");
  EXPECT_EQ(after[queued].tier(), "basic");
  EXPECT_EQ(after[queued].state(), "pending");
  EXPECT_TRUE(after[running].state() == "running" || after[running].state() == "finished")
      << after[running].state();

  ASSERT_TRUE(WaitUntil([&](auto jobs) { return AllFinished(jobs); }));
  auto done = Jobs();
  EXPECT_EQ(done[running].recoveries(), 0) << "its run survived the scheduler restart";
  EXPECT_EQ(ResumedFrom(running).size(), 1u);
  std::string reference = ReferenceState(2);
  EXPECT_TRUE(FinalState(running) == reference);
  EXPECT_TRUE(FinalState(queued) == reference);
}

TEST_F(LiveClusterTest, ElasticJobShrinksForPremiumAndGrowsBackBitIdentical) {
  // No hysteresis, so the policy grows the basic job back as soon as the premium job is done.
  StartScheduler(0, {"--min-run-s", "0"});
  StartAgent("n1", 4);
  std::string elastic = Submit("basic", 4, 1);
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[elastic].step() >= 20; }));
  std::string premium = Submit("premium", 2, 2);
  ASSERT_TRUE(WaitUntil([&](auto jobs) {
    return jobs[premium].state() == "running" && jobs[elastic].workers() == 2;
  }));
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return AllFinished(jobs); }));
  auto jobs = Jobs();
  EXPECT_EQ(jobs[elastic].preemptions(), 0) << "shrunk, not preempted";
  EXPECT_GE(jobs[elastic].requested_workers(), 4);
  std::vector<int64_t> resumed = ResumedFrom(elastic);
  ASSERT_GE(resumed.size(), 2u) << "the resize restarted the job from its checkpoint";
  EXPECT_GE(resumed[1], 20);
  // Whatever worker counts it ran on, the world size stayed 4: same parameters as always.
  EXPECT_TRUE(FinalState(elastic) == ReferenceState(4));
  EXPECT_TRUE(FinalState(premium) == ReferenceState(2));
}

}  // namespace
}  // namespace tessera::cluster
