// The live scheduler's brain: the cluster's state, the policy calls and the bookkeeping of
// every order, independent of RPC, clocks and threads (the server in server.h adds those).
//
// It owns nodes (registered by agents) and jobs (submitted by users). On every event - a
// submission, a cancel, a node joining or going silent, a job run reporting progress or exit,
// a periodic tick - it accrues each job's SLA accounting, builds a ClusterView, asks the policy
// (cluster/policy, the same code the trace replay runs) what to change, and turns the actions
// into per-node assignments that agents fetch with their next heartbeat:
//
//   Start    -> a new run of the job on the node holding most of its slots (workers = slots)
//   Preempt  -> the running run is asked to checkpoint and exit; the job is suspended once the
//               agent reports the checkpointed exit, and later restarts from that checkpoint
//   Resize / Migrate -> checkpoint-and-exit of the current run, then a new run on the new
//               placement with the new worker count (the world size never changes)
//
// A node silent for longer than the heartbeat timeout is declared dead: its runs died with it
// (agents run jobs with PR_SET_PDEATHSIG), so its jobs are suspended and restart from their last
// periodic checkpoint wherever the policy puts them.
//
// Every change is written through a StateStore (store.h) before it is acknowledged, so a
// restarted scheduler continues with the same jobs; agents keep running their jobs meanwhile.
//
// Not thread-safe: the server serializes calls.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "cluster/policy/policy.h"
#include "cluster/policy/quota.h"
#include "cluster/service/store.h"
#include "core/status.h"

namespace tessera::cluster {

struct SchedulerOptions {
  double heartbeat_timeout_s = 2.0;
  // After a restart, nodes loaded from the store are not declared dead before this many
  // seconds: their agents first have to notice the new scheduler and reconnect.
  double restart_grace_s = 5.0;
  // Crashes (runs that exit without an exit report, node losses excluded) before a job fails.
  int max_crashes = 3;
  // Where job directories live (storage every node can reach): <job_root>/<job id>.
  std::filesystem::path job_root;
  // MASTER_PORT of gang runs (command jobs): master_port_base + a hash of job and run number
  // modulo master_port_span, so a restarted gang never reuses its previous run's port.
  int master_port_base = 29500;
  int master_port_span = 2000;
  // Admission control (cluster/policy/quota.h, the code the replay runs): a guaranteed job beyond
  // its tenant's quota borrows idle quota or is refused (RESOURCE_EXHAUSTED, saying which quota).
  // Unset: every valid submission is admitted.
  std::optional<QuotaConfig> quota;
};

class Scheduler {
 public:
  // Loads the state in `store` (empty on first start). Nodes loaded from the store get
  // restart_grace_s from `now` to check in again.
  static Result<std::unique_ptr<Scheduler>> Create(SchedulerOptions options,
                                                   std::unique_ptr<Policy> policy,
                                                   std::unique_ptr<StateStore> store, double now);

  // Users.
  Result<std::string> Submit(const rpc::SubmitRequest& request, double now);
  Status Cancel(const std::string& job_id, double now);
  // The tenant owning a job (for authorization); NOT_FOUND for an unknown id.
  Result<std::string> JobTenant(const std::string& job_id);

  // Operators (scheduler_ops.cc). Preempt: checkpoint-and-exit a running job and hold it (kept
  // out of the policy's view) until Requeue; a waiting job is just held. Requeue: release a held
  // job, or checkpoint a running one back into the queue. Resize: checkpoint a running job and
  // restart it on `workers` slots (a valid count, on its free or own slots) now; the policy may
  // change it later by its own rules. FAILED_PRECONDITION when the job's state does not allow it.
  Status Preempt(const std::string& job_id, double now);
  Status Requeue(const std::string& job_id, double now);
  Status Resize(const std::string& job_id, int workers, double now);
  std::vector<rpc::JobInfo> ListJobs(double now) const;
  std::vector<rpc::NodeInfo> ListNodes(double now) const;
  std::vector<rpc::Event> ListEvents(int limit) const;

  // Agents.
  // `address`: where other nodes reach this node's job processes (empty = 127.0.0.1).
  Status RegisterNode(const std::string& node_id, int slots, double now,
                      const std::string& address = "");
  Result<rpc::HeartbeatReply> Heartbeat(const rpc::HeartbeatRequest& request, double now);

  // Periodic: declares silent nodes dead and lets the policy act on the passage of time.
  Status Tick(double now);

  const SchedulerOptions& options() const { return options_; }
  const Policy& policy() const { return *policy_; }

  // Counters for metrics.
  struct Stats {
    int64_t decisions = 0;
    int64_t actions = 0;
    int64_t rejected_decisions = 0;  // ValidateActions refused the policy's answer
    int64_t node_losses = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  Scheduler(SchedulerOptions options, std::unique_ptr<Policy> policy,
            std::unique_ptr<StateStore> store);

  int NodeIndex(const std::string& id) const;  // -1 if unknown
  JobRecord* FindJob(const std::string& id);
  static bool Active(const JobRecord& job) { return job.outcome == JobOutcome::kNone; }

  void AccrueAll(double now);
  // The policy's view of the active jobs that are not held; by_view_index[i] is the record of
  // view.jobs[i].
  ClusterView BuildView(double now, std::vector<JobRecord*>& by_view_index);
  Status Reschedule(double now);
  // Carries out one (validated) action on `job`, as ordered by the policy or an operator.
  Status CarryOut(JobRecord& job, const ClusterView& view, const Action& action, double now);
  // Admission control of a new job (options_.quota): may mark it borrowed; RESOURCE_EXHAUSTED.
  Status Admit(JobSpec& spec);
  // The active job `job_id`, or NOT_FOUND / FAILED_PRECONDITION.
  Result<JobRecord*> ActiveJob(const std::string& job_id);
  Status ApplyAction(const Action& action, double now);
  Status HandleReport(const rpc::RunReport& report, const std::string& node, double now);
  // The current run of `job` is gone (its node died, or it crashed): back to the queue.
  void LoseRun(JobRecord& job, double now, const std::string& why);
  void StartRunOnPlacement(JobRecord& job, double now);
  // Gang runs (command jobs): one part per node of the run's placement.
  static bool IsGang(const JobRecord& job);
  // A run with a part on every node of its placement: command (gang) and pipeline jobs.
  static bool SpansNodes(const JobRecord& job);
  bool RunUsesNode(const JobRecord& job, int node) const;
  void AddAssignments(const JobRecord& job, int node, rpc::HeartbeatReply& reply) const;
  // A part's report; true when the job's run changed (an exit, the first progress).
  Result<bool> HandleGangReport(JobRecord& job, const rpc::RunReport& report, int node, double now);
  // SLA from measured steps: a run that resumes below the highest step reported lost the
  // difference, and the progress accrued for it is taken back.
  void AccountSteps(JobRecord& job, int64_t step, double now);
  void Finish(JobRecord& job, JobOutcome outcome, double now, const std::string& message);
  Status Event(double now, std::string text);
  Status SaveJob(const JobRecord& job);
  std::string DescribePlacement(const Placement& placement) const;

  SchedulerOptions options_;
  std::unique_ptr<Policy> policy_;
  std::unique_ptr<StateStore> store_;
  std::vector<NodeRecord> nodes_;  // index = the node's index in every ClusterView
  std::vector<JobRecord> jobs_;    // in submission order
  std::vector<rpc::Event> events_;
  int64_t next_job_ = 1;
  Stats stats_;
};

}  // namespace tessera::cluster
