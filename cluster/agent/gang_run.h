// One node's part of a gang run: any program run as a job (job type "command"), one process
// per rank, started exactly as torchrun starts its workers.
//
//   TESSERA_ASSIGN_OR_RETURN(GangRun run, GangRun::Start(assignment, job_command, options));
//   run.OrderStop();                      // preempt, resize, migrate, cancel
//   while (!run.Poll(report)) sleep;      // signals on schedule, reaps, fills the report
//
// Every rank process gets torchrun's environment - RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT, OMP_NUM_THREADS=1 (unless the
// agent's environment sets it) - plus the job's:
//
//   TESSERA_JOB_ID, TESSERA_JOB_DIR      the job and its directory (shared storage)
//   TESSERA_CHECKPOINT_DIR               <job dir>/ckpt: survives runs, for the job's own use
//   TESSERA_RUN, TESSERA_RUN_DIR         this incarnation and <job dir>/runs/<run>
//   TESSERA_JOB_WORKERS                  slots granted to the whole run (<= WORLD_SIZE)
//   PYTHONPATH                           the interposition layer first (cluster/interpose)
//
// Logs go to <log dir>/<job>-run<N>-rank<R>.log, one file per rank.
//
// Logical ranks (JobCommand::logical_ranks, `cluster-ctl submit --logical-ranks`): one process
// per slot instead of one per rank. RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE are then the
// process's slot among the run's `workers` slots, and the process runs its slot's block of the
// job's ranks (rank_dealing.h) as logical ranks, told by
//
//   TESSERA_LOGICAL_WORLD_SIZE           the job's world size W (never changes)
//   TESSERA_LOGICAL_RANKS                "first-last", the slot's ranks
//
// (the C++ interposition library's logical-rank mode reads them). Failed ranks, logs and
// rank-<R>.layer/.exit files are then per process.
//
// MASTER_PORT. The scheduler picks it per run (a hash of job and run number); the node of
// rank 0, where c10d's TCPStore will listen on it, checks that it is free before starting any
// rank (CheckPortFree). A taken port fails the part (UNAVAILABLE, "MASTER_PORT ... is not
// free"), and the scheduler's next run of the gang gets another port. The check and the
// store's bind are seconds apart: a port taken in between fails the gang the same way.
//
// Stopping. The order is written to <run dir>/order. A rank with the interposition layer
// announces itself with <run dir>/rank-<R>.layer; such a gang gets barrier_timeout to take its
// barrier checkpoint and exit (each rank then writes <run dir>/rank-<R>.exit,
// "checkpointed step=N"). A program without the layer is stopped the way Kubernetes and Slurm
// do it: SIGTERM to each rank's process group at once, SIGKILL term_grace later. Whatever the
// exit codes, a part that exits after a stop order was stopped, not crashed.
//
// Failure. Without a stop order, a rank that exits non-zero fails the part: the node's other
// ranks are killed at once and the part reports CRASHED with the failing rank and its code
// (the scheduler then stops the other nodes' parts: a failed rank fails the gang).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "cluster/job/job_type.h"
#include "cluster/job/process.h"
#include "core/status.h"

namespace tessera::cluster {

struct GangOptions {
  std::filesystem::path log_dir;
  // The interposition layer's Python directory (holds sitecustomize.py), put first on the
  // ranks' PYTHONPATH; empty = none.
  std::filesystem::path python_path;
  // A gang whose ranks run the layer gets this long for its barrier checkpoint before SIGTERM.
  std::chrono::milliseconds barrier_timeout{30000};
  // SIGTERM -> SIGKILL.
  std::chrono::milliseconds term_grace{10000};
};

// OK if a TCP socket can bind `port` on `address` (an IPv4 address; anything else checks every
// local address) with SO_REUSEADDR, as c10d's TCPStore binds. UNAVAILABLE naming the port
// otherwise.
Status CheckPortFree(const std::string& address, int port);

class GangRun {
 public:
  using Clock = std::chrono::steady_clock;

  // `job.args`: the program and its args (the job's args without the job type). A program
  // name without '/' is looked up on the agent's PATH.
  static Result<GangRun> Start(const rpc::Assignment& assignment, const JobCommand& job,
                               const GangOptions& options);
  static std::filesystem::path RunDir(const rpc::Assignment& assignment);

  GangRun(GangRun&&) noexcept = default;
  GangRun& operator=(GangRun&&) noexcept = default;

  // Writes the order (once) and starts the stop schedule.
  Status OrderStop();
  bool stop_ordered() const { return stop_ordered_at_.has_value(); }
  // Reaps exited ranks, sends the signals that are due and fills `report` (exit, exit_code,
  // failed_rank, detail). True once every rank of this part has exited.
  bool Poll(rpc::RunReport& report);
  // SIGKILL to every rank's process group, and reap.
  void Kill();
  int live_ranks() const;

 private:
  struct Rank {
    int rank = 0;
    Process process;
    std::optional<int> status;
  };
  GangRun(rpc::Assignment assignment, GangOptions options)
      : assignment_(std::move(assignment)), options_(std::move(options)) {}
  bool LayerActive() const;
  void SignalLive(int signal);
  std::string Describe() const;  // how the part ended

  rpc::Assignment assignment_;
  GangOptions options_;
  std::vector<Rank> ranks_;
  std::optional<Clock::time_point> stop_ordered_at_;
  std::optional<Clock::time_point> term_sent_at_;
  bool kill_sent_ = false;
  int failed_rank_ = -1;
  int failed_code_ = 0;
};

}  // namespace tessera::cluster
