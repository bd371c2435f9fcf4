// Test helper: a scheduler and node agents of this build as real processes on loopback, for
// the live tests of every job type. Header-only, tests only.
//
//   LiveCluster cluster(root);
//   cluster.StartScheduler({"--min-run-s", "0"});
//   cluster.StartAgent("n1", 2);
//   std::string id = cluster.SubmitCommand("basic", 4, 2, {"/usr/bin/python3", "train.py"});
//   ASSERT_TRUE(cluster.WaitUntil([&](auto& jobs) { return jobs[id].state() == "finished"; }));
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cli/ctl.h"
#include "cluster/job/process.h"
#include "core/file.h"

namespace tessera::cluster {

class LiveCluster {
 public:
  // A safety cap so a broken build fails instead of hanging; not a performance assertion.
  static constexpr auto kPatience = std::chrono::seconds(150);

  explicit LiveCluster(std::filesystem::path root) : root_(std::move(root)) {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    if (bin != nullptr) bin_ = bin;
  }
  ~LiveCluster() {
    agents_.clear();  // ~Process kills whatever still runs (and agents' jobs die with them)
    scheduler_.reset();
  }

  const std::filesystem::path& bin() const { return bin_; }
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path LogDir(const std::string& node) const { return root_ / ("logs-" + node); }

  // `listen_port` 0 picks a free port; a restart passes port() to come back where the agents
  // look for it.
  void StartScheduler(std::vector<std::string> extra = {}, int listen_port = 0) {
    ASSERT_FALSE(bin_.empty()) << "TESSERA_BIN_DIR must name the build's bin directory";
    std::filesystem::remove(root_ / "port");
    ProcessOptions options;
    options.argv = {(bin_ / "cluster-scheduler").string(), "--listen",
                    "127.0.0.1:" + std::to_string(listen_port), "--state-dir",
                    (root_ / "db").string(), "--job-root", (root_ / "jobs").string(), "--port-file",
                    (root_ / "port").string(), "--premium-headroom", "0", "--tick-ms", "100",
                    // Distinct MASTER_PORTs for tests running side by side.
                    "--master-port-base", std::to_string(20000 + ::getpid() % 20000)};
    options.argv.insert(options.argv.end(), extra.begin(), extra.end());
    options.log_file = root_ / "scheduler.log";
    Result<Process> p = Process::Spawn(options);
    ASSERT_TRUE(p.ok()) << p.status();
    scheduler_.emplace(std::move(*p));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!std::filesystem::exists(root_ / "port")) {
      ASSERT_FALSE(scheduler_->Poll().has_value()) << "scheduler exited; see scheduler.log";
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    port_ = std::stoi(*ReadFile(root_ / "port"));
    auto client = ClusterClient::Connect("127.0.0.1:" + std::to_string(port_));
    ASSERT_TRUE(client.ok());
    client_.emplace(std::move(*client));
  }

  int port() const { return port_; }
  ClusterClient& client() { return *client_; }

  // kill -9, as a machine losing power; returns the exit status.
  int KillScheduler() {
    scheduler_->Signal(SIGKILL);
    return scheduler_->Wait();
  }
  int KillAgent(const std::string& node) {
    agents_.at(node).Signal(SIGKILL);
    return agents_.at(node).Wait();
  }

  void StartAgent(const std::string& node, int slots, std::vector<std::string> extra = {}) {
    ProcessOptions options;
    options.argv = {(bin_ / "cluster-agent").string(),
                    "--node-id",
                    node,
                    "--slots",
                    std::to_string(slots),
                    "--scheduler",
                    "127.0.0.1:" + std::to_string(port_),
                    "--log-dir",
                    LogDir(node).string(),
                    "--heartbeat-ms",
                    "50"};
    options.argv.insert(options.argv.end(), extra.begin(), extra.end());
    options.log_file = root_ / (node + ".log");
    Result<Process> p = Process::Spawn(options);
    ASSERT_TRUE(p.ok()) << p.status();
    agents_.emplace(node, std::move(*p));
  }

  // `args` as stored: a leading "--job-type=<type>" names a type other than mlp (job_type.h).
  std::string Submit(const std::string& tier, int workers, int min_workers,
                     const std::vector<std::string>& args) {
    rpc::SubmitRequest r;
    r.set_tenant("test");
    r.set_tier(tier);
    r.set_requested_workers(workers);
    r.set_min_workers(min_workers);
    for (const auto& a : args) r.add_args(a);
    auto id = client_->Submit(r);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  std::string SubmitCommand(const std::string& tier, int workers, int min_workers,
                            const std::vector<std::string>& command) {
    std::vector<std::string> args = {"--job-type=command"};
    args.insert(args.end(), command.begin(), command.end());
    return Submit(tier, workers, min_workers, args);
  }

  std::filesystem::path JobDir(const std::string& id) const { return root_ / "jobs" / id; }

  std::map<std::string, rpc::JobInfo> Jobs() {
    std::map<std::string, rpc::JobInfo> out;
    auto jobs = client_->ListJobs();
    if (jobs.ok()) {
      for (auto& j : *jobs) out[j.id()] = j;
    }
    return out;
  }

  std::string Events() {
    auto events = client_->ListEvents(0);
    return events.ok() ? FormatEvents(*events) : events.status().ToString();
  }

  Status Cancel(const std::string& id) { return client_->Cancel(id); }

  // Waits until `count` nodes are alive, so a job submitted next sees the whole cluster.
  void WaitForNodes(int count) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      auto nodes = client_->ListNodes();
      if (nodes.ok() &&
          std::count_if(nodes->begin(), nodes->end(), [](auto& n) { return n.alive(); }) >= count) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "fewer than " << count << " nodes registered";
  }

  // Polls the job table until `done(jobs)` holds; false (and a failure) after kPatience.
  template <typename Pred>
  bool WaitUntil(Pred done) {
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      auto jobs = Jobs();
      if (done(jobs)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    std::vector<rpc::JobInfo> v;
    for (auto& [id, j] : Jobs()) v.push_back(j);
    ADD_FAILURE() << "gave up waiting; jobs:\n" << FormatJobTable(v) << "events:\n" << Events();
    return false;
  }

 private:
  std::filesystem::path bin_, root_;
  int port_ = 0;
  std::optional<Process> scheduler_;
  std::map<std::string, Process> agents_;
  std::optional<ClusterClient> client_;
};

}  // namespace tessera::cluster
