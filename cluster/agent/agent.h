// The node agent daemon: registers the node's slots with the scheduler, then heartbeats. Each
// heartbeat reports every job run on the node (RunManager) and brings back the runs the
// scheduler wants here, which the agent starts, stops (checkpoint-and-exit) or kills.
//
//   Agent agent({.node_id = "n1", .slots = 4, .scheduler = "127.0.0.1:7070", ...});
//   TESSERA_RETURN_IF_ERROR(agent.Run(stop_flag));   // until stop_flag turns true
//
// While the scheduler is unreachable (e.g. restarting) the agent keeps its runs going and
// retries; when the scheduler does not know the node (first contact, or it declared the node
// dead) the agent registers again. On shutdown it asks every run to checkpoint and exit.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "cluster/agent/run_manager.h"
#include "core/status.h"

namespace tessera::cluster {

struct AgentOptions {
  std::string node_id;
  int slots = 0;
  std::string scheduler;                                      // host:port
  std::filesystem::path job_binary;                           // default job type
  std::map<std::string, std::filesystem::path> job_programs;  // other types (RunManagerOptions)
  std::filesystem::path log_dir;
  std::chrono::milliseconds heartbeat_interval{100};
  std::chrono::milliseconds poll_interval{20};  // how often runs are checked between heartbeats
  std::chrono::milliseconds shutdown_grace{5000};
  std::chrono::milliseconds stop_timeout{30000};  // see RunManagerOptions
  std::chrono::milliseconds term_grace{10000};    // command jobs: SIGTERM -> SIGKILL
  std::filesystem::path python_path;  // the interposition layer for command jobs; empty = none
  std::string address;                // where other nodes reach this node's jobs (MASTER_ADDR)
};

class Agent {
 public:
  explicit Agent(AgentOptions options);
  // INVALID_ARGUMENT for bad options; otherwise runs until `stop` is true, then drains.
  Status Run(const std::atomic<bool>& stop);

 private:
  AgentOptions options_;
};

}  // namespace tessera::cluster
