// cluster-agent: the node agent daemon (see agent.h).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "cluster/agent/agent.h"
#include "cluster/job/job_type.h"
#include "core/cli.h"
#include "core/stop_signal.h"

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::cluster;
  cli::Program program("cluster-agent",
                       "Node agent: offers this node's slots to the cluster scheduler and runs, "
                       "checkpoints, resumes, migrates and resizes jobs on its orders.");
  AgentOptions options;
  std::string job_binary, log_dir;
  std::vector<std::string> job_programs;
  int heartbeat_ms = 100;
  auto& app = program.app();
  app.add_option("--node-id", options.node_id, "This node's name (required)");
  app.add_option("--slots", options.slots,
                 "Worker slots (accelerators) this node offers (required)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--scheduler", options.scheduler, "Scheduler address, host:port (required)");
  app.add_option("--job-binary", job_binary,
                 "Training job program (default: cluster-train-job beside this binary)");
  app.add_option("--job-program", job_programs,
                 "TYPE=PATH: the program of job type TYPE (default: beside this binary; "
                 "lr: lr-cluster-job)");
  app.add_option("--log-dir", log_dir, "Where job logs go (required)");
  app.add_option("--heartbeat-ms", heartbeat_ms, "Heartbeat period")
      ->capture_default_str()
      ->check(CLI::Range(10, 60000));
  double stop_timeout_s = 30;
  app.add_option("--stop-timeout-s", stop_timeout_s,
                 "Kill a job that has not obeyed a checkpoint order after this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  double term_grace_s = 10;
  app.add_option("--term-grace-s", term_grace_s,
                 "Command jobs without the interposition layer: SIGTERM, then SIGKILL this much "
                 "later")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string python_path = "auto";
  app.add_option("--interpose-python", python_path,
                 "Directory of the interposition layer put first on command jobs' PYTHONPATH "
                 "(auto: <build>/python beside bin/; none: no layer)")
      ->capture_default_str();
  app.add_option("--address", options.address,
                 "Address other nodes reach this node's jobs at (MASTER_ADDR)")
      ->default_str("127.0.0.1");
  return program.Run(argc, argv, [&]() -> Status {
    // Checked here rather than with CLI11's required(), which would report a missing flag
    // before an unknown one.
    if (options.node_id.empty()) return cli::UsageError("--node-id is required");
    if (options.slots == 0) return cli::UsageError("--slots is required");
    if (options.scheduler.empty()) return cli::UsageError("--scheduler is required");
    if (log_dir.empty()) return cli::UsageError("--log-dir is required");
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return InternalError("cannot locate this binary: " + ec.message());
    for (const JobType& type : JobTypes()) {
      if (type.program.empty()) continue;  // a command job's program is its first arg
      options.job_programs[std::string(type.name)] = self.parent_path() / type.program;
    }
    if (python_path == "auto") {
      const auto beside = self.parent_path().parent_path() / "python";
      if (std::filesystem::exists(beside / "sitecustomize.py")) options.python_path = beside;
    } else if (python_path != "none") {
      if (!std::filesystem::exists(std::filesystem::path(python_path) / "sitecustomize.py")) {
        return cli::UsageError("--interpose-python: no sitecustomize.py in " + python_path);
      }
      options.python_path = python_path;
    }
    options.term_grace = std::chrono::milliseconds(static_cast<int64_t>(term_grace_s * 1000));
    for (const std::string& entry : job_programs) {
      const size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
        return cli::UsageError("--job-program takes TYPE=PATH, not " + entry);
      }
      if (FindJobType(entry.substr(0, eq)) == nullptr) {
        return cli::UsageError("--job-program: unknown job type " + entry.substr(0, eq));
      }
      options.job_programs[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    if (!job_binary.empty()) options.job_programs[kDefaultJobType] = job_binary;
    options.job_binary = options.job_programs[kDefaultJobType];
    options.log_dir = log_dir;
    options.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);
    options.stop_timeout = std::chrono::milliseconds(static_cast<int64_t>(stop_timeout_s * 1000));
    return Agent(options).Run(StopOnSignals());
  });
}
