// Command jobs on a live cluster (scheduler and agents as real processes on loopback):
//
//  (a) an unmodified PyTorch DDP script (Debian's python3-torch 1.13.1, gloo), and a libtorch
//      job on the C++ library, 4 ranks on 2 agents x 2 slots, are shrunk to 2 slots by a
//      premium job (all 4 ranks stop at the same step through the barrier, then run spliced:
//      4 ranks on 2 slots, world size 4), grown back to 4 slots, and end with the parameters
//      of an uninterrupted run started as torchrun starts it, bit for bit; both also with
//      logical ranks (--logical-ranks: shrunk, 2 processes holding 2 ranks each);
//  (b) a program that ignores SIGTERM is killed after the grace period and requeued, the
//      scheduler reports it, and the job beside it runs on undisturbed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "cluster/testing/live_cluster.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;

constexpr char kPython[] = "/usr/bin/python3";  // the only Python with torch 1.13.1
constexpr char kSourceDir[] = TESSERA_INTERPOSE_SOURCE_DIR;

class CommandJobLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Compiled in (CMakeLists.txt): ctest applies only the first of tessera_test's
    // ENVIRONMENT entries, so TESSERA_SOURCE_DIR does not reach the test.
    script_ = fs::path(kSourceDir) / "cluster/interpose/testdata/ddp_train.py";
    ASSERT_TRUE(fs::exists(script_)) << script_;
    root_ = fs::temp_directory_path() /
            ("command_job_live_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    cluster_.emplace(root_);
  }
  void TearDown() override {
    cluster_.reset();
    if (!HasFailure()) fs::remove_all(root_);
  }

  // Every log line matching `pattern` in the logs of `job`'s run `run` (all nodes), by rank.
  std::map<int, std::smatch> RankLogMatches(const std::string& job, int run,
                                            const std::string& pattern,
                                            std::map<int, std::string>& logs) {
    std::map<int, std::smatch> out;
    std::regex name(job + "-run" + std::to_string(run) + "-rank(\\d+)\\.log");
    std::regex line(pattern);
    for (const auto& entry : fs::recursive_directory_iterator(root_)) {
      std::smatch m;
      const std::string filename = entry.path().filename().string();
      if (!std::regex_match(filename, m, name)) continue;
      const int rank = std::stoi(m[1]);
      logs[rank] = ReadFile(entry.path()).value_or("");
      std::smatch found;
      if (std::regex_search(logs[rank], found, line)) out[rank] = found;
    }
    return out;
  }

  // `logical_ranks`: submitted with --logical-ranks (the program runs the C++ library's logical
  // ranks): shrunk, the job runs as 2 processes of 2 logical ranks each.
  void ShrinkAndGrowBack(const std::vector<std::string>& command, bool logical_ranks = false);

  fs::path script_, root_;
  std::optional<LiveCluster> cluster_;
};

// "params <hash> step <n>" -> the hash.
std::string ParamsHash(const fs::path& out) {
  std::string text = ReadFile(out).value_or("");
  std::smatch m;
  std::regex params("params ([0-9a-f]+)");
  return std::regex_search(text, m, params) ? m[1].str() : "(no params in " + out.string() + ")";
}

// The acceptance scenario for a data-parallel program `command` that writes its parameters'
// hash to the file after its last arg (--out FILE): first an uninterrupted reference run, 4
// processes started as torchrun starts them, outside the scheduler; then the same program as
// a basic job of 4 ranks on 2 agents x 2 slots, shrunk to 2 slots by a premium job (all 4
// ranks stop at the same step through the barrier, then run spliced: world size 4 on 2
// slots), grown back to 4, and finished with the reference's parameters, bit for bit.
void CommandJobLiveTest::ShrinkAndGrowBack(const std::vector<std::string>& command,
                                           bool logical_ranks) {
  {
    std::vector<Process> ranks;
    for (int rank = 0; rank < 4; ++rank) {
      ProcessOptions o;
      o.argv = command;
      o.argv.push_back((root_ / "reference.txt").string());
      o.env = {{"RANK", std::to_string(rank)},
               {"LOCAL_RANK", std::to_string(rank)},
               {"WORLD_SIZE", "4"},
               {"LOCAL_WORLD_SIZE", "4"},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", std::to_string(40000 + ::getpid() % 20000)},
               {"OMP_NUM_THREADS", "1"}};
      o.log_file = root_ / ("reference-rank" + std::to_string(rank) + ".log");
      Result<Process> p = Process::Spawn(o);
      ASSERT_TRUE(p.ok()) << p.status();
      ranks.push_back(std::move(*p));
    }
    for (Process& p : ranks) ASSERT_EQ(p.Wait(), 0) << "see " << root_ << "/reference-rank*.log";
  }
  const std::string reference = ParamsHash(root_ / "reference.txt");

  // No hysteresis, so the basic job grows back as soon as the premium job is done.
  cluster_->StartScheduler({"--min-run-s", "0"});
  cluster_->StartAgent("n1", 2);
  cluster_->StartAgent("n2", 2);
  cluster_->WaitForNodes(2);
  std::vector<std::string> job_command = command;
  job_command.push_back((root_ / "job.txt").string());
  if (logical_ranks) job_command.insert(job_command.begin(), "--logical-ranks");
  job_command.insert(job_command.begin(), "--job-type=command");
  const std::string ddp = cluster_->Submit("basic", 4, 2, job_command);
  ASSERT_TRUE(cluster_->WaitUntil(
      [&](auto& jobs) { return jobs[ddp].state() == "running" && jobs[ddp].step() >= 30; }));
  const std::string placement = cluster_->Jobs()[ddp].placement();
  EXPECT_TRUE(placement == "n1:2,n2:2" || placement == "n2:2,n1:2") << placement;
  // The premium job runs until the test releases it: once the shrunk job has trained 20
  // steps on its 2 slots (a fixed duration would depend on how long the ranks take to start
  // on a loaded machine).
  const int64_t step_at_order = cluster_->Jobs()[ddp].step();
  const fs::path release = root_ / "release-premium";
  const std::string premium = cluster_->SubmitCommand(
      "premium", 2, 2,
      {"/bin/sh", "-c", "while [ ! -e " + release.string() + " ]; do sleep 0.05; done"});
  ASSERT_TRUE(cluster_->WaitUntil([&](auto& jobs) {
    return jobs[premium].state() == "running" && jobs[ddp].state() == "running" &&
           jobs[ddp].workers() == 2 && jobs[ddp].step() >= step_at_order + 20;
  }));
  ASSERT_TRUE(WriteFileAtomically(release, "go\n").ok());
  ASSERT_TRUE(cluster_->WaitUntil([&](auto& jobs) {
    return jobs[ddp].state() == "finished" && jobs[premium].state() == "finished";
  }));
  const rpc::JobInfo job = cluster_->Jobs()[ddp];
  // The policy shrinks it by preempting it and starting it again on the 2 slots left (or by
  // a resize); either way through the barrier, then grows it back with a resize.
  EXPECT_EQ(job.preemptions() + job.resizes(), 2) << cluster_->Events();
  EXPECT_EQ(job.recoveries(), 0) << cluster_->Events();
  EXPECT_EQ(job.lost_steps(), 0);

  // Run 1: 4 ranks on 4 slots; all stopped at the same step, within 2 steps of the step the
  // first rank saw the order at (both layers exchange the barrier's need at every step).
  std::map<int, std::string> logs;
  auto installed1 = RankLogMatches(ddp, 1,
                                   logical_ranks ? "installed: process \\d+ of 4, logical ranks "
                                                   "\\d+ of world size 4, run 1 on (\\d+) slot"
                                                 : "installed: rank \\d+ of world size 4, run 1 on "
                                                   "(\\d+) slot",
                                   logs);
  ASSERT_EQ(installed1.size(), 4u) << cluster_->Events();
  for (auto& [rank, m] : installed1) EXPECT_EQ(m[1], "4");
  auto barrier1 = RankLogMatches(ddp, 1,
                                 "barrier at step (\\d+) \\(order seen after step "
                                 "(\\d+|None)\\)",
                                 logs);
  ASSERT_EQ(barrier1.size(), 4u) << "run 1 logs:\n" << logs[0] << logs[1] << logs[2] << logs[3];
  std::set<int64_t> stop1;
  int64_t first_seen = INT64_MAX;
  for (auto& [rank, m] : barrier1) {
    stop1.insert(std::stoll(m[1]));
    if (m[2] != "None") first_seen = std::min<int64_t>(first_seen, std::stoll(m[2]));
  }
  ASSERT_EQ(stop1.size(), 1u) << "ranks stopped at different steps";
  const int64_t s1 = *stop1.begin();
  EXPECT_GE(s1, 30);
  ASSERT_NE(first_seen, INT64_MAX) << "no rank saw the order";
  std::cout << "run 1: order seen after step " << first_seen << ", all ranks stopped at step " << s1
            << "\n";
  EXPECT_LE(s1 - first_seen, 2) << "the stop came more than 2 steps after the order";
  EXPECT_GE(s1 - first_seen, 1);

  // Run 2: spliced, 4 ranks (world size 4) on 2 slots, resumed exactly at the barrier's step:
  // 4 rank processes, or 2 processes holding logical ranks 0-1 and 2-3.
  logs.clear();
  auto resumed2 = RankLogMatches(ddp, 2,
                                 "resumed at step (\\d+) \\(world size (\\d+) on "
                                 "(\\d+) slot\\(s\\)\\)(; logical ranks (\\S+))?",
                                 logs);
  const size_t processes2 = logical_ranks ? 2 : 4;
  ASSERT_EQ(resumed2.size(), processes2) << "run 2 logs:\n"
                                         << logs[0] << logs[1] << logs[2] << logs[3];
  ASSERT_EQ(logs.size(), processes2) << "run 2 ran another number of processes";
  if (logical_ranks) {
    EXPECT_EQ(resumed2[0][5], "0-1");
    EXPECT_EQ(resumed2[1][5], "2-3");
  }
  for (auto& [rank, m] : resumed2) {
    EXPECT_EQ(std::stoll(m[1]), s1) << "rank " << rank << " resumed from another step";
    EXPECT_EQ(m[2], "4");
    EXPECT_EQ(m[3], "2") << "rank " << rank << " was not spliced onto 2 slots";
  }
  auto barrier2 = RankLogMatches(ddp, 2, "barrier at step (\\d+)", logs);
  ASSERT_EQ(barrier2.size(), processes2) << "run 2 was not stopped by the barrier:\n" << logs[0];
  std::set<int64_t> stop2;
  for (auto& [rank, m] : barrier2) stop2.insert(std::stoll(m[1]));
  ASSERT_EQ(stop2.size(), 1u);
  const int64_t s2 = *stop2.begin();
  EXPECT_GT(s2, s1) << "run 2 trained";

  // Run 3: back on 4 slots, from exactly the step run 2 stopped at.
  logs.clear();
  auto resumed3 = RankLogMatches(ddp, 3,
                                 "resumed at step (\\d+) \\(world size 4 on (\\d+) "
                                 "slot\\(s\\)\\)",
                                 logs);
  ASSERT_EQ(resumed3.size(), 4u) << "run 3 logs:\n" << logs[0];
  for (auto& [rank, m] : resumed3) {
    EXPECT_EQ(std::stoll(m[1]), s2);
    EXPECT_EQ(m[2], "4");
  }
  EXPECT_EQ(ReadFile(root_ / "jobs" / ddp / "ckpt" / "LATEST").value_or(""),
            "step-" + std::to_string(s2) + "\n");

  // Whatever it ran on, the job computed exactly what the uninterrupted run computed.
  EXPECT_EQ(ParamsHash(root_ / "job.txt"), reference);
}

TEST_F(CommandJobLiveTest, PytorchDdpScriptIsSplicedAndGrownBackAndEndsBitIdentical) {
  // Unmodified: the layer comes in through the agent's PYTHONPATH.
  ShrinkAndGrowBack({kPython, script_.string(), "--epochs", "6", "--step-sleep-ms", "20", "--out"});
}

TEST_F(CommandJobLiveTest, LibtorchJobIsSplicedAndGrownBackAndEndsBitIdentical) {
  // Written against the C++ library (cluster/interpose/cc/elastic_session.h).
  ShrinkAndGrowBack({(cluster_->bin() / "cluster-ddp-example").string(), "--steps", "400",
                     "--step-sleep-ms", "20", "--out"});
}

// Replica splicing with logical ranks: shrunk, the 4-rank job runs as 2 processes holding 2
// ranks each (not 4 processes on 2 slots), and still ends with the unspliced run's bits.
TEST_F(CommandJobLiveTest, LibtorchJobWithLogicalRanksRunsTwoProcessesWhenShrunkBitIdentical) {
  ShrinkAndGrowBack({(cluster_->bin() / "cluster-ddp-example").string(), "--logical-ranks",
                     "--steps", "400", "--step-sleep-ms", "10", "--out"},
                    /*logical_ranks=*/true);
}

// The same for the unmodified PyTorch script: submitted with --logical-ranks, shrunk it runs as 2
// Python processes holding ranks 0-1 and 2-3 (world size 4: the layer's logical ranks,
// tessera_interpose/logical.py), and still ends with the bits of the plain 4-process run.
TEST_F(CommandJobLiveTest, PytorchDdpScriptWithLogicalRanksRunsTwoProcessesWhenShrunkBitIdentical) {
  ShrinkAndGrowBack({kPython, script_.string(), "--epochs", "6", "--step-sleep-ms", "20", "--out"},
                    /*logical_ranks=*/true);
}

TEST_F(CommandJobLiveTest, ProgramIgnoringSigtermIsKilledAfterGraceAndRequeued) {
  cluster_->StartScheduler({"--min-run-s", "0"});
  cluster_->StartAgent("n1", 4, {"--term-grace-s", "1"});
  const fs::path marks = root_ / "marks";
  fs::create_directories(marks);
  // A basic job that ignores SIGTERM and counts its incarnations.
  const std::string stubborn = cluster_->SubmitCommand(
      "basic", 2, 2,
      {"/bin/sh", "-c",
       "trap '' TERM; echo $TESSERA_RUN >> " + (marks / "stubborn-$RANK").string() +
           "; while :; do sleep 0.05; done"});
  // A standard job beside it that must not be disturbed: it runs 6 s and exits 0.
  const std::string steady = cluster_->SubmitCommand(
      "standard", 2, 2,
      {"/bin/sh", "-c", "sleep 6; echo done > " + (marks / "steady-$RANK").string()});
  ASSERT_TRUE(cluster_->WaitUntil([&](auto& jobs) {
    return jobs[stubborn].state() == "running" && jobs[steady].state() == "running" &&
           fs::exists(marks / "stubborn-0") && fs::exists(marks / "stubborn-1");
  }));
  const std::string premium = cluster_->SubmitCommand("premium", 2, 2, {"/bin/sleep", "1"});
  // The premium job gets its slots only once the stubborn one is gone: SIGTERM, 1 s, SIGKILL.
  ASSERT_TRUE(cluster_->WaitUntil([&](auto& jobs) {
    return jobs[premium].state() == "finished" && jobs[steady].state() == "finished";
  }));
  // Requeued and restarted (its second incarnation) once the premium job was done.
  ASSERT_TRUE(cluster_->WaitUntil([&](auto& jobs) {
    return jobs[stubborn].state() == "running" &&
           ReadFile(marks / "stubborn-0").value_or("") == "1\n2\n";
  }));
  auto jobs = cluster_->Jobs();
  EXPECT_EQ(jobs[stubborn].preemptions(), 1);
  EXPECT_NE(jobs[stubborn].last_exit().find("killed with SIGKILL after ignoring SIGTERM for 1.0 s"),
            std::string::npos)
      << jobs[stubborn].last_exit();
  const std::string events = cluster_->Events();
  EXPECT_NE(events.find(stubborn + " run 1 stopped"), std::string::npos) << events;
  EXPECT_NE(events.find("killed with SIGKILL after ignoring SIGTERM"), std::string::npos) << events;
  // The job beside it: one run, never stopped, finished by itself with exit code 0.
  EXPECT_EQ(jobs[steady].preemptions(), 0);
  EXPECT_EQ(jobs[steady].recoveries(), 0);
  EXPECT_EQ(jobs[steady].resizes() + jobs[steady].migrations(), 0);
  EXPECT_NE(jobs[steady].last_exit().find("ranks 0-1 exited with code 0"), std::string::npos)
      << jobs[steady].last_exit();
  EXPECT_EQ(ReadFile(marks / "steady-0").value_or(""), "done\n");
  EXPECT_EQ(ReadFile(marks / "steady-1").value_or(""), "done\n");
  // Cancelling it takes the same road: SIGTERM ignored, SIGKILL, cancelled.
  ASSERT_TRUE(cluster_->Cancel(stubborn).ok());
  ASSERT_TRUE(cluster_->WaitUntil([&](auto& j) { return j[stubborn].state() == "cancelled"; }));
}

}  // namespace
}  // namespace tessera::cluster
