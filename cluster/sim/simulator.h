// Discrete-event simulator of a cluster driven by a Policy (cluster/policy/policy.h), the same
// policy code the live scheduler service runs.
//
// Event-driven: time jumps from event to event (a job arrives, a job completes, a checkpoint is
// written, or the policy's periodic timer fires while jobs are active). At every event time the
// simulator brings every job's accounting up to date (sla.h), calls Policy::Decide once on its
// ClusterView and carries out the actions with the model of policy.h:
//   Start    pending job: runs at once (the trace duration includes its own start-up);
//            suspended job: restores first, stalled for restore_s.
//   Preempt  kCheckpointing for checkpoint_s (slots held, no progress), then kSuspended.
//   Resize / Migrate
//            the job holds its new placement at once and stalls for checkpoint_s + restore_s;
//            the slots it gives up drain for checkpoint_s before anyone may use them.
// A job finishes when its progress reaches its duration (ideal seconds); its completion event is
// recomputed whenever its speed changes.
//
//   Result<SimResult> r = Simulate(jobs, *NewSingularityPolicy(), SimOptions{});
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster/policy/policy.h"
#include "cluster/policy/quota.h"
#include "core/status.h"

namespace tessera::cluster::sim {

// A job to replay: what the submitter asked for and how long it runs at full speed.
struct SimJob {
  JobSpec spec;
  double duration = 0;  // ideal seconds on spec.requested_workers slots
};

struct SimOptions {
  int nodes = 64;
  int slots_per_node = 8;
  // Time from a preempt/resize/migrate order until the checkpoint is written and the slots are
  // released (barrier + device-to-host copy of the state).
  double checkpoint_s = 10;
  // Time a resumed, resized or migrated job needs before it progresses again (download and
  // restore of the checkpoint).
  double restore_s = 30;
  // Besides every event, Decide is also called at least this often while jobs are active, as
  // the live service does on a timer: policies act on time passing too (a shrunk job may grow
  // back once it ran long enough, a job's attained service crosses a queue threshold).
  double decision_interval_s = 300;
  // Admission control (quota.h, the code the live scheduler runs): every arriving guaranteed job
  // is checked against its tenant's quota; a borrowing one is marked JobSpec::borrowed, a refused
  // one runs as basic (its submitter's fallback). Unset: every job is admitted as it comes.
  std::optional<QuotaConfig> quota;
  // Check every decision with ValidateActions (slow; for tests). An illegal action is an
  // INTERNAL error either way when it would over-allocate a node.
  bool validate = false;
  // Width of the buckets of SimResult::busy_series, seconds.
  double series_bucket_s = 3600;
  // Called every `progress_every` decisions with the simulated time (for progress output).
  std::function<void(double now, int64_t decisions)> progress;
  int64_t progress_every = 100000;
};

// What happened to one job.
struct JobOutcome {
  JobSpec spec;                        // as admitted (tier and borrowed after admission control)
  Tier requested_tier = Tier::kBasic;  // the tier the trace asked for
  double duration = 0;                 // ideal run time
  double first_start = 0;              // when it first got slots
  double finish = 0;
  int preemptions = 0;
  int migrations = 0;
  int resizes = 0;
  // Slot-seconds the job held (running, restoring, checkpointing).
  double allocated_slot_s = 0;
  // Slot-seconds lost to its disturbances: held without progress while its checkpoint was
  // written or restored, plus the slots a resize or migration left draining.
  double lost_slot_s = 0;

  double jct() const { return finish - spec.submit_time; }
  double queueing_delay() const { return first_start - spec.submit_time; }
  // T_ideal / T_real: the achieved fraction of ideal speed over the job's life.
  double fraction() const;
  // T_real / T_ideal (>= 1): how many times slower than alone on its full gang.
  double slowdown() const;
  bool sla_met() const;
};

struct SimResult {
  std::string policy;
  SimOptions options;
  std::vector<JobOutcome> jobs;         // in input order
  int rejected = 0;                     // jobs larger than the whole cluster, never submitted
  int quota_borrowing = 0;              // guaranteed jobs admitted on borrowed quota
  int quota_refused = 0;                // guaranteed jobs refused by admission, run as basic
  double start = 0;                     // first submission
  double last_submit = 0;               // last submission
  double end = 0;                       // last completion
  double allocated_slot_s = 0;          // slots held by jobs (running, restoring, checkpointing)
  double window_allocated_slot_s = 0;   // allocated_slot_s within [start, last_submit]
  double useful_slot_s = 0;             // slots held by jobs making progress
  double draining_slot_s = 0;           // slots released by resize/migrate, not usable yet
  double backlog_s = 0;                 // time with at least one job waiting
  double backlog_allocated_slot_s = 0;  // allocated_slot_s during that time
  int64_t decisions = 0;
  int64_t actions = 0;
  int64_t viewed_jobs = 0;  // sum over decisions of the jobs in the view (cost of Decide)
  double wall_s = 0;        // wall-clock time of the replay
  // Mean allocated slots per bucket of options.series_bucket_s, from `start`.
  std::vector<double> busy_series;

  int capacity() const { return options.nodes * options.slots_per_node; }
  // Utilization over the submission window: window_allocated_slot_s /
  // (capacity * (last_submit - start)). The window excludes the drain-out after the last
  // arrival, where one long job can hold a nearly empty cluster for weeks.
  double utilization() const;
  // Utilization while jobs were waiting: how well the policy used the fleet under pressure.
  double backlog_utilization() const;
};

// Replays `jobs` (any order; submitted at spec.submit_time) under `policy`. Jobs whose gang is
// larger than the cluster are counted in `rejected` and skipped. INVALID_ARGUMENT for bad
// options or jobs (duplicate ids, non-positive duration or workers), INTERNAL if the policy
// returns an illegal action, RESOURCE_EXHAUSTED if it keeps acting without letting jobs finish
// (more than 200 decisions per job).
Result<SimResult> Simulate(const std::vector<SimJob>& jobs, Policy& policy,
                           const SimOptions& options);

}  // namespace tessera::cluster::sim
