// The scheduler daemon: Scheduler (scheduler.h) behind a gRPC server, driven by the wall clock
// and a periodic tick.
//
//   TESSERA_ASSIGN_OR_RETURN(auto server, SchedulerServer::Start(options));
//   std::cout << server->port();   // options.listen may ask for port 0
//   ...
//   server->Shutdown();
//
// The metrics are also served as Prometheus text over HTTP when options.metrics_listen is set.
//
// Every RPC and every tick takes one mutex: the scheduler core is single-threaded by design
// (its decisions are microseconds; the policy is pure).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "cluster/policy/policy.h"
#include "core/status.h"

namespace tessera::cluster {

struct ServerOptions {
  std::string listen = "127.0.0.1:0";
  std::filesystem::path state_dir;  // RocksDB
  std::filesystem::path job_root;   // job directories (checkpoints), shared with the agents
  std::string policy = "singularity";
  SingularityOptions singularity;  // used when policy == "singularity"
  double heartbeat_timeout_s = 2.0;
  double restart_grace_s = 5.0;
  int max_crashes = 3;
  int master_port_base = 29500;  // MASTER_PORT range of gang runs (SchedulerOptions)
  std::chrono::milliseconds tick{250};
  // host:port for Prometheus scrapes over HTTP (GET /metrics) and the dashboard (GET /, data at
  // GET /api/state; dashboard.h); empty = none, port 0 = any.
  std::string metrics_listen;
  // Per-tenant tokens (auth.h); empty = no authentication.
  std::filesystem::path tokens_file;
  // Per-tenant quotas (cluster/policy/quota.h); empty = no admission control.
  std::filesystem::path quota_file;
};

class SchedulerServer {
 public:
  static Result<std::unique_ptr<SchedulerServer>> Start(const ServerOptions& options);
  ~SchedulerServer();

  int port() const;
  int metrics_port() const;  // 0 when metrics_listen was empty
  void Shutdown();

  struct Impl;

 private:
  explicit SchedulerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Wall-clock seconds since the Unix epoch: the scheduler's `now`, comparable across restarts.
double WallSeconds();

}  // namespace tessera::cluster
