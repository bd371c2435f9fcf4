// cluster-scheduler: the scheduler daemon (see server.h, scheduler.h).

#include <atomic>
#include <cstdio>
#include <thread>

#include "cluster/service/server.h"
#include "core/cli.h"
#include "core/file.h"
#include "core/stop_signal.h"

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::cluster;
  cli::Program program("cluster-scheduler",
                       "Cluster scheduler: SLA tiers, preemption, elastic resizing and migration "
                       "of training jobs over node agents; state kept in RocksDB.");
  ServerOptions options;
  std::string state_dir, job_root, port_file;
  int tick_ms = 250;
  auto& app = program.app();
  app.add_option("--listen", options.listen, "Address to serve on (port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--state-dir", state_dir, "RocksDB directory, survives restarts (required)");
  app.add_option("--job-root", job_root,
                 "Job directories (checkpoints), shared with agents (required)");
  app.add_option("--policy", options.policy, "singularity, strict, fifo or tiresias")
      ->capture_default_str()
      ->check(CLI::IsMember({"singularity", "strict", "fifo", "tiresias"}));
  app.add_option("--premium-headroom", options.singularity.premium_headroom_slots,
                 "Slots the Singularity policy keeps free for arriving premium jobs")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min-run-s", options.singularity.min_run_s,
                 "Seconds a basic job runs before it may be moved again for other basic work")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--heartbeat-timeout-s", options.heartbeat_timeout_s,
                 "Silence after which a node is declared dead")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--restart-grace-s", options.restart_grace_s,
                 "After a restart, seconds the agents get to reconnect before nodes can be "
                 "declared dead")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--tick-ms", tick_ms, "Period of the scheduling tick")
      ->capture_default_str()
      ->check(CLI::Range(10, 60000));
  app.add_option("--master-port-base", options.master_port_base,
                 "Command jobs' MASTER_PORT is chosen in [base, base + 2000)")
      ->capture_default_str()
      ->check(CLI::Range(1024, 63000));
  app.add_option("--port-file", port_file, "Write the port served on to this file");
  std::string tokens_file, quota_file;
  app.add_option("--tokens", tokens_file,
                 "Token file, lines 'TENANT TOKEN [premium] [admin]': user RPCs need a token "
                 "(default: no authentication)");
  app.add_option("--quota", quota_file,
                 "Quota file, lines 'TENANT PREMIUM_SLOTS STANDARD_SLOTS' (and 'borrowing off'): "
                 "admission control of guaranteed tiers (default: none)");
  app.add_option(
      "--metrics-listen", options.metrics_listen,
      "Serve Prometheus metrics (GET /metrics) and the dashboard (GET /) over HTTP on host:port "
      "(port 0 picks one)");
  return program.Run(argc, argv, [&]() -> Status {
    // Checked here rather than with CLI11's required(), which would report a missing flag
    // before an unknown one.
    if (state_dir.empty()) return cli::UsageError("--state-dir is required");
    if (job_root.empty()) return cli::UsageError("--job-root is required");
    options.state_dir = state_dir;
    options.job_root = job_root;
    options.tick = std::chrono::milliseconds(tick_ms);
    options.tokens_file = tokens_file;
    options.quota_file = quota_file;
    const std::atomic<bool>& stop = StopOnSignals();
    TESSERA_ASSIGN_OR_RETURN(auto server, SchedulerServer::Start(options));
    std::printf("listening on port %d\n", server->port());
    if (server->metrics_port() > 0) {
      const std::string host = options.metrics_listen.substr(0, options.metrics_listen.rfind(':'));
      std::printf("metrics on http://%s:%d/metrics\n", host.c_str(), server->metrics_port());
      std::printf("dashboard on http://%s:%d/\n", host.c_str(), server->metrics_port());
    }
    std::fflush(stdout);
    if (!port_file.empty()) {
      TESSERA_RETURN_IF_ERROR(WriteFileAtomically(port_file, std::to_string(server->port())));
    }
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    server->Shutdown();
    return Status::Ok();
  });
}
