// The node agent's job runs, without RPC: starts and stops job processes so that the node runs
// exactly the runs the scheduler assigned, and reports on each.
//
//   RunManager runs({.job_binary = "bin/cluster-train-job", .log_dir = "logs"});
//   runs.Reconcile(reply.assignments());   // start new runs, order stops, kill unwanted runs
//   std::vector<rpc::RunReport> reports = runs.Collect();   // poll processes and job dirs
//
// A run is one process of the job's program, started with the assignment's flags plus
// --world-size, and the control environment of cluster/job/control.h (TESSERA_JOB_ID,
// TESSERA_JOB_DIR, TESSERA_JOB_WORKERS). The program is the job type's (cluster/job/job_type.h):
// a leading "--job-type=<type>" arg picks one of options.job_programs, none options.job_binary.
// A stop is a checkpoint-and-exit order through the job
// directory; the run's exit report then tells an obeyed order (CHECKPOINTED), a completed job
// (FINISHED) and a crash (CRASHED: no exit report or a non-zero exit code) apart.
//
// A run that ignores a stop order for options.stop_timeout is killed.
//
// A pipeline job whose placement spans nodes has a part on each of them (the same program, told
// its part by TESSERA_RUN, TESSERA_NODE_RANK, TESSERA_NUM_NODES, TESSERA_NODE_ADDRESS and
// TESSERA_LOCAL_SLOTS): the launcher on node rank 0, a server of its workers on the others.
//
// A command job's run (assignment.gang) is one process per rank of this node's block of ranks,
// see gang_run.h: torchrun's environment, a log per rank, SIGTERM -> term_grace -> SIGKILL for
// programs without the interposition layer, a failed rank fails the part.
//
// A run the scheduler no longer lists (it was moved while this node was thought dead) is killed
// at once: the job already restarts elsewhere from a checkpoint, and two live runs must not
// share a job directory. Runs are started with PR_SET_PDEATHSIG, so they die with the agent.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "cluster/agent/gang_run.h"
#include "cluster/job/control.h"
#include "cluster/job/process.h"
#include "core/status.h"

namespace tessera::cluster {

struct RunManagerOptions {
  std::filesystem::path job_binary;  // the default job type's program
  // Programs of the other job types, by type name (e.g. "lr" -> bin/lr-cluster-job). A run of a
  // type without a program here crashes at once (exit code 127).
  std::map<std::string, std::filesystem::path> job_programs;
  std::filesystem::path log_dir;  // <job>-run<N>.log per run
  // A run that has not exited this long after a stop order is killed (and reported CRASHED, so
  // the job restarts from its last periodic checkpoint): a hung job must not hold slots forever.
  std::chrono::milliseconds stop_timeout{30000};
  // Command jobs (gang_run.h): SIGTERM -> SIGKILL, and the interposition layer's Python
  // directory for the ranks' PYTHONPATH (empty = none). A gang running the layer gets
  // stop_timeout for its barrier checkpoint before SIGTERM.
  std::chrono::milliseconds term_grace{10000};
  std::filesystem::path python_path{};
};

class RunManager {
 public:
  explicit RunManager(RunManagerOptions options);

  // Makes the node's runs match `assignments` (the scheduler's full list for this node).
  // Returns true when something changed (a run started, stopped or was killed).
  template <typename Assignments>
  bool Reconcile(const Assignments& assignments) {
    std::vector<rpc::Assignment> list(assignments.begin(), assignments.end());
    return ReconcileList(list);
  }
  bool ReconcileList(const std::vector<rpc::Assignment>& assignments);

  // Polls every run. Returns one report per known run; sets `*changed` when a run exited or
  // reported its first progress since the last call (worth an early heartbeat).
  std::vector<rpc::RunReport> Collect(bool* changed = nullptr);

  // Orders every live run to checkpoint and exit, waits up to `grace`, then kills the rest.
  void StopAll(std::chrono::milliseconds grace);

  int live_runs() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Run {
    Run(rpc::Assignment a) : assignment(std::move(a)), dir(ControlDir(assignment)) {}
    bool alive() const { return (process || gang) && !exited_at; }
    rpc::Assignment assignment;
    JobDir dir;  // the job directory; a gang's: this run's directory (<job dir>/runs/<run>)
    std::optional<Process> process;
    std::optional<GangRun> gang;  // a command job's ranks on this node
    Clock::time_point started_at;
    std::optional<Clock::time_point> first_progress_at;
    std::optional<Clock::time_point> stop_ordered_at;
    std::optional<Clock::time_point> exited_at;
    rpc::RunReport report;  // last state
  };

  // Where a run's control files are: the job directory; a gang's run directory; a pipeline
  // job's part on a node other than the launcher's: its part directory (pipeline_job.h).
  static std::filesystem::path ControlDir(const rpc::Assignment& a);
  void Start(Run& run);
  void Update(Run& run, bool* changed);
  void StartGang(Run& run, const JobCommand& command);
  void Kill(Run& run);

  RunManagerOptions options_;
  std::map<std::string, Run> runs_;  // by job id: at most one run of a job per node
};

}  // namespace tessera::cluster
