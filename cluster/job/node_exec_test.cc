// The node-exec relay (node_exec.h) with its client as a real process
// (cluster-pipeline-job --node-exec) and the server in this process: what pipeline-launch needs
// of an ssh-like prefix (exit codes through, 255 for a signal death or a lost connection,
// output relayed, SIGTERM passed on, a dead client taking its program along), and the hosts
// file the multi-node pipeline job writes.
#include "cluster/job/node_exec.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cluster/job/pipeline_job.h"
#include "cluster/job/process.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class NodeExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    client_ = fs::path(bin) / "cluster-pipeline-job";
    dir_ = fs::temp_directory_path() / ("node-exec-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Result<NodeExecServer> server = NodeExecServer::Listen("127.0.0.1");
    ASSERT_TRUE(server.ok()) << server.status();
    server_.emplace(std::move(*server));
    accepting_ = std::thread([this] {
      while (!stop_) server_->AcceptFor(20);
    });
  }
  void TearDown() override {
    stop_ = true;
    if (accepting_.joinable()) accepting_.join();
    fs::remove_all(dir_);
  }

  // The client running `argv` on the server, with `env` in its own environment.
  Process Client(std::vector<std::string> argv,
                 std::vector<std::pair<std::string, std::string>> env = {}) {
    ProcessOptions o;
    o.argv = {client_.string(), "--node-exec", server_->endpoint()};
    o.argv.insert(o.argv.end(), argv.begin(), argv.end());
    o.env = std::move(env);
    o.log_file = dir_ / "client.log";
    Result<Process> p = Process::Spawn(o);
    EXPECT_TRUE(p.ok()) << p.status();
    return std::move(*p);
  }
  std::string ClientLog() { return ReadFile(dir_ / "client.log").value_or(""); }
  bool WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 1000; ++i) {  // 10 s safety cap
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  fs::path client_, dir_;
  std::optional<NodeExecServer> server_;
  std::atomic<bool> stop_ = false;
  std::thread accepting_;
};

TEST_F(NodeExecTest, RelaysOutputExitCodeAndTheTorchrunVariables) {
  Process p =
      Client({"/bin/sh", "-c", "echo out rank=$RANK port=$MASTER_PORT; echo err >&2; exit 7"},
             {{"RANK", "3"}, {"MASTER_PORT", "29555"}});
  EXPECT_EQ(p.Wait(), 7);
  EXPECT_NE(ClientLog().find("out rank=3 port=29555"), std::string::npos) << ClientLog();
  EXPECT_NE(ClientLog().find("err"), std::string::npos) << ClientLog();
  EXPECT_EQ(server_->started(), 1);
}

TEST_F(NodeExecTest, AProgramKilledByASignalIs255AsOverSsh) {
  Process p = Client({"/bin/sh", "-c", "kill -9 $$"});
  EXPECT_EQ(p.Wait(), 255);
}

TEST_F(NodeExecTest, SigtermToTheClientReachesTheProgram) {
  Process p =
      Client({"/bin/sh", "-c",
              "trap 'echo got-term; exit 5' TERM; echo ready; while :; do sleep 0.02; done"});
  ASSERT_TRUE(WaitFor([&] { return ClientLog().find("ready") != std::string::npos; }));
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(), 5);
  EXPECT_NE(ClientLog().find("got-term"), std::string::npos) << ClientLog();
}

TEST_F(NodeExecTest, AClientKilledWithMinus9TakesItsProgramAlong) {
  const fs::path pid_file = dir_ / "pid";
  Process p = Client({"/bin/sh", "-c", "echo $$ > " + pid_file.string() + "; exec sleep 600"});
  // The shell creates the file before it writes the pid: wait for the whole line.
  auto pid_line = [&] {
    auto text = ReadFile(pid_file);
    return text.ok() && !text->empty() && text->back() == '\n';
  };
  ASSERT_TRUE(WaitFor([&] { return pid_line() && server_->active() == 1; }));
  const pid_t program = std::stoi(*ReadFile(pid_file));
  ASSERT_EQ(::kill(program, 0), 0);
  p.Signal(SIGKILL);
  p.Wait();
  ASSERT_TRUE(WaitFor([&] { return server_->active() == 0; })) << "the program kept running";
  EXPECT_NE(::kill(program, 0), 0) << "pid " << program << " still exists";
}

TEST_F(NodeExecTest, NoServerIs255) {
  std::string endpoint;
  {
    Result<NodeExecServer> closed = NodeExecServer::Listen("127.0.0.1");
    ASSERT_TRUE(closed.ok());
    endpoint = closed->endpoint();
  }  // its listener is closed here
  ProcessOptions o;
  o.argv = {client_.string(), "--node-exec", endpoint, "/bin/true"};
  o.log_file = dir_ / "client.log";
  Result<Process> p = Process::Spawn(o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Wait(), 255);
}

TEST(PipelineHostsFileTest, OneLinePerSlotRoundRobinOverTheNodes) {
  EXPECT_EQ(PipelineHostsFile({{"10.0.0.1", 3, {}}, {"10.0.0.2", 1, {"x", "--node-exec", "h:1"}}}),
            "10.0.0.1\n10.0.0.2 x --node-exec h:1\n10.0.0.1\n10.0.0.1\n");
  EXPECT_EQ(PipelineHostsFile({{"a", 2, {}}, {"b", 2, {"p"}}}), "a\nb p\na\nb p\n");
  EXPECT_EQ(PipelineHostsFile({}), "");
}

}  // namespace
}  // namespace tessera::cluster
