// Command jobs through the RunManager, with real processes: torchrun's environment per rank,
// logs per rank, a failed rank failing the part, and the stop ladder - the barrier checkpoint
// for ranks with the interposition layer, SIGTERM -> grace -> SIGKILL for programs without.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "cluster/agent/run_manager.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class GangRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("gang_run_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "logs");
    runs_.emplace(RunManagerOptions{.job_binary = {},
                                    .job_programs = {},
                                    .log_dir = root_ / "logs",
                                    .stop_timeout = milliseconds(5000),
                                    .term_grace = milliseconds(300)});
  }
  void TearDown() override {
    runs_.reset();
    if (!HasFailure()) fs::remove_all(root_);
  }

  // Ranks 2-3 of world size 4 on this node, running `sh -c script`.
  rpc::Assignment Assign(const std::string& script, bool stop = false) {
    rpc::Assignment a;
    a.set_job_id("j1");
    a.set_run(3);
    a.set_workers(4);
    a.set_world_size(4);
    for (const char* arg : {"--job-type=command", "sh", "-c"}) a.add_args(arg);
    a.add_args(script);
    a.set_job_dir((root_ / "j1").string());
    a.set_stop(stop);
    a.set_gang(true);
    a.set_rank_offset(2);
    a.set_local_ranks(2);
    a.set_local_slots(1);
    a.set_node_rank(1);
    a.set_num_nodes(2);
    a.set_master_addr("127.0.0.1");
    a.set_master_port(29999);
    return a;
  }

  rpc::RunReport WaitForExit() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& r : runs_->Collect()) {
        if (r.exit() != rpc::RunReport::RUNNING) return r;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    ADD_FAILURE() << "the part did not exit";
    return {};
  }

  fs::path RunDir() const { return root_ / "j1" / "runs" / "3"; }

  fs::path root_;
  std::optional<RunManager> runs_;
};

TEST_F(GangRunTest, EachRankGetsTorchrunsEnvironmentAndItsOwnLog) {
  runs_->Reconcile(
      std::vector{Assign("env | sort > \"$TESSERA_RUN_DIR/env-$RANK\"; echo hello from $RANK")});
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::FINISHED) << r.detail();
  EXPECT_TRUE(r.started());
  for (int rank : {2, 3}) {
    auto env = ReadFile(RunDir() / ("env-" + std::to_string(rank)));
    ASSERT_TRUE(env.ok()) << env.status();
    const std::string lines = "\n" + *env;
    for (std::string line :
         {"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank - 2),
          std::string("WORLD_SIZE=4"), std::string("LOCAL_WORLD_SIZE=2"),
          std::string("GROUP_RANK=1"), std::string("MASTER_ADDR=127.0.0.1"),
          std::string("MASTER_PORT=29999"), std::string("TESSERA_JOB_ID=j1"),
          std::string("TESSERA_RUN=3"), "TESSERA_RUN_DIR=" + RunDir().string(),
          "TESSERA_CHECKPOINT_DIR=" + (root_ / "j1" / "ckpt").string(),
          std::string("OMP_NUM_THREADS=")}) {
      EXPECT_NE(lines.find("\n" + line), std::string::npos) << line << " missing in" << lines;
    }
    auto log = ReadFile(root_ / "logs" / ("j1-run3-rank" + std::to_string(rank) + ".log"));
    ASSERT_TRUE(log.ok());
    EXPECT_EQ(*log, "hello from " + std::to_string(rank) + "\n");
  }
  EXPECT_TRUE(fs::is_directory(root_ / "j1" / "ckpt"));
}

// Logical ranks: ranks 3-6 of world size 7 are this node's 2 slots of the run's 4 (slots hold
// ranks 0, 1-2, 3-4, 5-6): two processes, slots 2 and 3, each told its block.
TEST_F(GangRunTest, LogicalRanksRunOneProcessPerSlotHoldingItsBlock) {
  rpc::Assignment a = Assign("env | sort > \"$TESSERA_RUN_DIR/env-$RANK\"; echo hello from $RANK");
  a.mutable_args()->Add();
  for (int i = a.args_size() - 1; i > 1; --i) a.set_args(i, a.args(i - 1));
  a.set_args(1, "--logical-ranks");
  a.set_world_size(7);
  a.set_rank_offset(3);
  a.set_local_ranks(4);
  a.set_local_slots(2);
  runs_->Reconcile(std::vector{a});
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::FINISHED) << r.detail();
  for (int slot : {2, 3}) {
    auto env = ReadFile(RunDir() / ("env-" + std::to_string(slot)));
    ASSERT_TRUE(env.ok()) << env.status();
    const std::string lines = "\n" + *env;
    for (std::string line :
         {"RANK=" + std::to_string(slot), "LOCAL_RANK=" + std::to_string(slot - 2),
          std::string("WORLD_SIZE=4"), std::string("LOCAL_WORLD_SIZE=2"),
          std::string("TESSERA_JOB_WORKERS=4"), std::string("TESSERA_LOGICAL_WORLD_SIZE=7"),
          std::string(slot == 2 ? "TESSERA_LOGICAL_RANKS=3-4" : "TESSERA_LOGICAL_RANKS=5-6")}) {
      EXPECT_NE(lines.find("\n" + line), std::string::npos) << line << " missing in" << lines;
    }
  }
  EXPECT_FALSE(fs::exists(RunDir() / "env-4"));
  EXPECT_FALSE(fs::exists(RunDir() / "env-5"));
  // A block that is not whole slots is refused, not run.
  a.set_run(4);
  a.set_rank_offset(4);
  a.set_local_ranks(3);
  runs_->Reconcile(std::vector{a});
  std::optional<rpc::RunReport> refused;
  for (int i = 0; i < 6000 && !refused; ++i) {
    for (const auto& report : runs_->Collect()) {
      if (report.run() == 4 && report.exit() != rpc::RunReport::RUNNING) refused = report;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(refused.has_value());
  r = *refused;
  EXPECT_EQ(r.exit(), rpc::RunReport::CRASHED);
  EXPECT_NE(r.detail().find("not whole slots"), std::string::npos) << r.detail();
}

TEST_F(GangRunTest, AFailedRankFailsThePartAndTheOtherRanksAreKilled) {
  runs_->Reconcile(std::vector{Assign("if [ $RANK = 3 ]; then exit 7; fi; exec sleep 60")});
  auto start = std::chrono::steady_clock::now();
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::CRASHED);
  EXPECT_EQ(r.exit_code(), 7);
  EXPECT_EQ(r.failed_rank(), 3);
  EXPECT_NE(r.detail().find("rank 3 exited with code 7"), std::string::npos) << r.detail();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // not 60 s
  EXPECT_EQ(runs_->live_runs(), 0);
}

TEST_F(GangRunTest, AProgramIgnoringSigtermIsKilledAfterTheGracePeriod) {
  // `trap '' TERM` is inherited by the shell's children: nothing in the rank obeys SIGTERM.
  runs_->Reconcile(
      std::vector{Assign("trap '' TERM; echo up > \"$TESSERA_RUN_DIR/up-$RANK\"; "
                         "while :; do sleep 0.05; done")});
  for (int i = 0; i < 2000 && !(fs::exists(RunDir() / "up-2") && fs::exists(RunDir() / "up-3"));
       ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  runs_->Reconcile(std::vector{Assign("", /*stop=*/true)});
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::CHECKPOINTED);  // stopped on order, not crashed
  EXPECT_NE(r.detail().find("killed with SIGKILL after ignoring SIGTERM for 0.3 s"),
            std::string::npos)
      << r.detail();
  EXPECT_GE(r.checkpoint_seconds(), 0.3);
}

TEST_F(GangRunTest, AProgramObeyingSigtermStopsAtOnce) {
  runs_->Reconcile(std::vector{Assign("exec sleep 60")});
  std::this_thread::sleep_for(milliseconds(50));
  runs_->Reconcile(std::vector{Assign("", /*stop=*/true)});
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::CHECKPOINTED);
  EXPECT_NE(r.detail().find("exited after SIGTERM (exit codes 143,143)"), std::string::npos)
      << r.detail();
  EXPECT_LT(r.checkpoint_seconds(), 0.3);  // no SIGKILL needed
}

TEST_F(GangRunTest, RanksWithTheLayerGetTheirBarrierCheckpointInsteadOfSigterm) {
  // A stand-in for the layer: announce itself, ignore SIGTERM (so a premature one would turn
  // into a SIGKILL and show), and on the order write the exit report of a barrier checkpoint.
  runs_->Reconcile(std::vector{
      Assign("trap '' TERM; echo $$ > \"$TESSERA_RUN_DIR/rank-$RANK.layer\"; "
             "while [ ! -e \"$TESSERA_RUN_DIR/order\" ]; do sleep 0.01; done; sleep 0.5; "
             "echo 'checkpointed step=7' > \"$TESSERA_RUN_DIR/rank-$RANK.exit\"")});
  for (int i = 0; i < 2000 &&
                  !(fs::exists(RunDir() / "rank-2.layer") && fs::exists(RunDir() / "rank-3.layer"));
       ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  runs_->Reconcile(std::vector{Assign("", /*stop=*/true)});
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::CHECKPOINTED);
  EXPECT_EQ(r.detail(), "ranks 2-3 took the barrier checkpoint at step 7");
}

// A listening socket on 127.0.0.1:`port` (0: any free port) for as long as it lives.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
};

TEST(CheckPortFreeTest, ATakenPortIsRefusedAndAFreedOneAccepted) {
  int port = 0;
  {
    Listener taken;
    port = taken.port;
    Status s = CheckPortFree("127.0.0.1", port);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_NE(s.message().find("MASTER_PORT " + std::to_string(port)), std::string::npos) << s;
    EXPECT_EQ(CheckPortFree("localhost", port).code(), StatusCode::kUnavailable);
  }
  EXPECT_TRUE(CheckPortFree("127.0.0.1", port).ok());
  EXPECT_EQ(CheckPortFree("127.0.0.1", 0).code(), StatusCode::kInvalidArgument);
}

TEST_F(GangRunTest, RankZerosNodeRefusesATakenMasterPortBeforeStartingAnyRank) {
  Listener taken;
  rpc::Assignment a = Assign("touch " + (root_ / "started-$RANK").string());
  a.set_master_port(taken.port);
  a.set_rank_offset(0);  // this node holds rank 0: it checks
  runs_->Reconcile(std::vector{a});
  auto report = WaitForExit();
  EXPECT_EQ(report.exit(), rpc::RunReport::CRASHED);
  EXPECT_NE(report.detail().find("MASTER_PORT " + std::to_string(taken.port) +
                                 " on 127.0.0.1 "
                                 "is not free"),
            std::string::npos)
      << report.detail();
  EXPECT_FALSE(fs::exists(root_ / "started-0"));
  // The node of ranks 2-3 does not serve the rendezvous: the port is not its business.
  a.set_rank_offset(2);
  a.set_run(4);
  runs_->Reconcile(std::vector{a});
  report = WaitForExit();
  EXPECT_EQ(report.exit(), rpc::RunReport::FINISHED) << report.detail();
}

TEST_F(GangRunTest, AMissingProgramIsACrashOfTheFirstRank) {
  rpc::Assignment a = Assign("");
  a.clear_args();
  a.add_args("--job-type=command");
  a.add_args("no-such-program-anywhere");
  runs_->Reconcile(std::vector{a});
  rpc::RunReport r = WaitForExit();
  EXPECT_EQ(r.exit(), rpc::RunReport::CRASHED);
  EXPECT_EQ(r.exit_code(), 127);
  EXPECT_NE(r.detail().find("not found"), std::string::npos) << r.detail();
}

}  // namespace
}  // namespace tessera::cluster
