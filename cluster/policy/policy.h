// Scheduling policy API of the cluster scheduler: one policy code drives both the live
// scheduler service (cluster/service) and the trace-replay simulator (cluster/sim).
//
// The API is pure: no I/O, no clocks, no threads, no torch. A caller (the service or the
// simulator) owns the state of the cluster, builds a ClusterView snapshot of it, calls
// Policy::Decide(view) and carries out the returned actions. The live service calls Decide on
// every event (job submitted, job finished, checkpoint done, node joined or lost) and on a timer
// (policies also act on time passing: a shrunk job grows back after a while), and carries out
// the actions through its node agents; the simulator does the same on every simulated event.
//
//   std::unique_ptr<Policy> policy = NewSingularityPolicy();
//   ClusterView view = ...;                          // built from the service's state
//   std::vector<Action> actions = policy->Decide(view);
//   TESSERA_RETURN_IF_ERROR(ValidateActions(view, actions));  // optional safety net
//   for (const Action& a : actions) Execute(a);     // node agents: start, checkpoint, ...
//
// Model (shared by every policy, the simulator and the service):
//
// * A node has `slots` worker slots; a slot stands for one accelerator.
// * A job has a world size `requested_workers` (n) fixed for its whole life, and may run on
//   k slots for any k that divides n with min_workers <= k <= n. With k < n the job runs by
//   *replica splicing* (Singularity): its n ranks are time-sliced, n/k ranks per slot, so it
//   progresses at the known fraction k/n of its ideal speed (SpeedFraction in sla.h). The world
//   size, hence the training semantics, never changes.
// * Gang placement: all k workers are placed at once, on the fewest nodes possible
//   (IsCompactPlacement): a job that fits in one node uses one node, a larger one uses
//   ceil(k / largest node size) nodes. Fragmented free slots therefore cannot host a large job
//   until jobs are migrated, which is what Migrate actions are for.
// * SLA tiers (Singularity's GPU-fraction SLA, T_ideal / T_real): premium >= 95 %, standard
//   >= 70 % of ideal speed, basic best effort. A job's *achieved fraction* at time t is
//   progress / (t - submit_time), where progress counts ideal seconds of work done (seconds
//   it would have run at full speed on n workers). At completion this is exactly
//   T_ideal / T_real, queueing included. It needs no knowledge of the job's duration, so a
//   live service can compute it too. Helpers: cluster/policy/sla.h.
// * Costs: preempting, resizing or migrating a job writes a checkpoint at a step boundary and
//   restores it; the job makes no progress meanwhile. A Preempt keeps the job's slots until
//   its checkpoint is written (state kCheckpointing), then frees them (kSuspended); a Resize or
//   Migrate releases the slots it gives up only then too (NodeView::draining). A job started
//   from kSuspended, resized or migrated restores first (JobView::stalled_until): it holds its
//   slots but makes no progress until then. The durations are the caller's (the
//   simulator's options, the agents' measurements); policies only see their effect in the view.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::cluster {

// ---------------------------------------------------------------------------------------------
// Tiers

enum class Tier : uint8_t { kPremium = 0, kStandard = 1, kBasic = 2 };
inline constexpr int kNumTiers = 3;

// "premium", "standard", "basic".
std::string_view TierName(Tier tier);
// Inverse of TierName; INVALID_ARGUMENT for anything else.
Result<Tier> ParseTier(std::string_view name);
// The promised fraction of ideal speed: 0.95, 0.70, 0 (best effort).
double TierTarget(Tier tier);

// ---------------------------------------------------------------------------------------------
// Jobs, nodes, placements

// What the submitter asked for. Immutable for the job's life.
struct JobSpec {
  std::string id;  // unique within the cluster
  std::string tenant;
  Tier tier = Tier::kBasic;
  int requested_workers = 1;  // world size n; the job runs at full speed on n slots
  int min_workers = 1;        // fewest slots it may be spliced onto (1 <= min <= n)
  double submit_time = 0;     // seconds, on the caller's clock (the view's `now` clock)
  // Admitted on other tenants' idle quota (quota.h): any in-quota job of its tier or a higher
  // one may evict it, whatever the policy's other rules.
  bool borrowed = false;
};

// True when the job may run on k slots: min_workers <= k <= requested_workers and k divides
// requested_workers (replica splicing time-slices an equal number of ranks on every slot).
bool IsValidWorkerCount(const JobSpec& spec, int k);

// Largest valid worker count <= limit, or 0 when none.
int LargestValidWorkerCount(const JobSpec& spec, int limit);

enum class JobState : uint8_t {
  kPending,        // submitted, never started
  kRunning,        // holds its placement; progresses unless stalled (restoring)
  kCheckpointing,  // a Preempt was ordered; still holds its slots until the checkpoint is written
  kSuspended,      // checkpointed, holds no slots; resumes from its checkpoint when started
  kFinished,       // done; ignored by policies
};
std::string_view JobStateName(JobState state);

// Slots a job holds on one node. `node` is an index into ClusterView::nodes (not an id):
// indices keep Decide fast on large views; the caller maps them to node ids.
struct Slice {
  int node = 0;
  int slots = 0;
  friend bool operator==(const Slice&, const Slice&) = default;
};
// A job's placement: at most one Slice per node, each with slots > 0.
using Placement = std::vector<Slice>;
int TotalSlots(const Placement& placement);

// A job as the policy sees it.
struct JobView {
  JobSpec spec;
  JobState state = JobState::kPending;
  Placement placement;  // held slots (kRunning, kCheckpointing); empty otherwise

  // Accounting, kept by the caller with the helpers of sla.h.
  double progress = 0;       // ideal seconds of work done (see the model above)
  double stalled_until = 0;  // kRunning but restoring (no progress) until this time
  double first_start = -1;   // when it first started; -1 if never
  double last_change = -1;   // when it last started, resized or migrated; -1 if never
  int preemptions = 0;
  int migrations = 0;
  int resizes = 0;

  int workers() const { return TotalSlots(placement); }
};

struct NodeView {
  std::string id;
  int slots = 0;
  bool alive = true;  // a dead node gets no new work; its jobs are the caller's to recover
  // Slots no job holds any more but that are not usable yet: released by a Resize or Migrate
  // whose checkpoint is still being written. They become free when it is.
  int draining = 0;
};

// A snapshot of the cluster. `jobs` holds the jobs the caller still tracks; finished ones may be
// present and are ignored. Jobs should appear in nondecreasing submit_time order (ties broken
// any fixed way): policies use that order as the FIFO order (they re-sort if it is violated,
// which costs O(n log n) per call).
struct ClusterView {
  double now = 0;
  std::vector<NodeView> nodes;
  std::vector<JobView> jobs;
};

// ---------------------------------------------------------------------------------------------
// Actions

// What a policy asks the caller to do. Every action is a checkpoint/restore transition, and
// slots are only ever handed to a job once nobody uses them:
// * Start may only use slots free in the view: not held by any job (kCheckpointing ones
//   included) and not draining.
// * Preempt keeps the job's slots until its checkpoint is written (kCheckpointing); they become
//   free afterwards, so a job waiting for them starts in a later Decide call.
// * Resize and Migrate may use free slots plus the job's own current ones. Its old slots that
//   the new placement does not reuse are released as draining (NodeView::draining) until the
//   checkpoint is written. The job then stalls (restores) before progressing again.
// Actions are checked in order against the slots left by the previous ones (ValidateActions).
struct Action {
  enum class Kind : uint8_t {
    kStart,    // kPending or kSuspended job -> kRunning on `placement` (a suspended job restores)
    kPreempt,  // kRunning job -> kCheckpointing -> kSuspended; `placement` is empty
    kResize,   // kRunning job -> kRunning on `placement` with a different worker count
    kMigrate,  // kRunning job -> kRunning on `placement` with the same worker count
  };
  Kind kind = Kind::kStart;
  int job = 0;         // index into ClusterView::jobs
  std::string job_id;  // ClusterView::jobs[job].spec.id, for logs and the service
  Placement placement;
};
std::string_view ActionKindName(Action::Kind kind);
// "start job-7 on n3:4,n5:4" (node ids taken from the view), for logs and tests.
std::string DescribeAction(const ClusterView& view, const Action& action);

// True when `placement` uses live nodes at most once each, positive slot counts, and the fewest
// nodes a job of that many workers can use (see the model above).
bool IsCompactPlacement(const ClusterView& view, const Placement& placement);

// Checks that `actions` are legal for `view`: known jobs in the right state, at most one action
// per job, valid worker counts, compact placements, and no slot of any node allocated twice or
// beyond its capacity. The simulator runs it on every decision in debug builds and tests; the
// service may run it before touching any node. INVALID_ARGUMENT naming the first bad action.
Status ValidateActions(const ClusterView& view, const std::vector<Action>& actions);

// ---------------------------------------------------------------------------------------------
// Policies

class Policy {
 public:
  virtual ~Policy() = default;
  // Returns what to change now. Deterministic: the same view gives the same actions. Must not
  // keep references into `view`. May keep its own state between calls (e.g. for hysteresis),
  // but the shipped policies are stateless so that a restarted service decides the same.
  virtual std::vector<Action> Decide(const ClusterView& view) = 0;
  virtual std::string_view name() const = 0;
};

// FIFO gang scheduling without preemption: jobs start in submit order on `requested_workers`
// slots; the first job that does not fit blocks every job behind it (no backfilling, no
// resizing, no migration). The classic baseline.
std::unique_ptr<Policy> NewFifoPolicy();

// Tiresias-style discretized two-dimensional least-attained-service (NSDI'19): a job's attained
// service is its GPU time (slot-seconds held); jobs are put in priority queues by thresholds on
// it, FIFO within a queue; higher queues preempt lower ones. Gang, no resizing, tier-blind.
struct TiresiasOptions {
  // Attained-service thresholds (slot-seconds) between the queues. Tiresias' defaults use two
  // queues; the threshold here is one GPU-hour.
  std::vector<double> queue_thresholds = {3600.0};
  // A running job is not preempted before it ran this long since its last (re)start, so that
  // checkpoint costs are not paid for seconds of work (Tiresias' lease-like guard).
  double min_run_s = 300;
};
std::unique_ptr<Policy> NewTiresiasPolicy(TiresiasOptions options = {});

// Tier-aware strict priority, the baseline a Singularity-style policy has to beat: premium before
// standard before basic, FIFO within a tier, running jobs never preempted by waiting jobs of
// their own tier; the prefix of that ranking that fits the cluster by slot count runs (smaller
// jobs backfill), lower-tier jobs outside it are preempted. Full gangs only: no replica splicing,
// no migration, no headroom, no SLA slack.
std::unique_ptr<Policy> NewStrictPriorityPolicy();

// Singularity-style SLA-aware policy (the design is ours; Singularity publishes no policy, see
// docs/cluster-replay.md): tiers in strict priority, each job kept at or above its tier's
// target, the rest of the fleet filled by best-effort work.
struct SingularityOptions {
  // Slots kept free (when possible by evicting basic jobs in the background), preferably on the
  // emptiest nodes, so that a premium job that arrives starts at once instead of waiting for a
  // checkpoint. Premium and standard jobs may use them; basic jobs may not. Capped at an eighth
  // of the live slots, so that a small cluster still runs basic work.
  int premium_headroom_slots = 8;
  // Basic jobs are started shrunk (replica splicing, down to min_workers) rather than kept
  // waiting, shrunk in place to make room for guaranteed jobs, and grown back when slots free
  // up. Premium and standard jobs always get their full gang.
  bool elastic = true;
  // Migrate small jobs to free a whole node when a waiting gang needs one.
  bool defragment = true;
  // Make room for a guaranteed gang of one node on the node where that delays its victims least
  // (basic victims before standard ones; a shrink costs its checkpoint/restore plus the progress
  // lost at the lower speed for min_run_s, a preemption its checkpoint/restore plus min_run_s of
  // waiting) instead of the best-fit node.
  bool evict_by_cost = true;
  // The policy's estimates of a checkpoint and a restore, for the cost of an eviction (the
  // simulator's defaults; the service may pass measured ones).
  double checkpoint_s = 10;
  double restore_s = 30;
  // Within this many seconds of a job's last change (start, resize, migration), it is neither
  // evicted to make headroom nor grown back, so that a checkpoint/restore is not paid for a few
  // seconds of work. Guaranteed jobs that need slots evict regardless.
  double min_run_s = 300;
};
std::unique_ptr<Policy> NewSingularityPolicy(SingularityOptions options = {});

// "fifo", "tiresias", "strict", "singularity" with default options; INVALID_ARGUMENT otherwise.
Result<std::unique_ptr<Policy>> NewPolicyByName(std::string_view name);
// The names NewPolicyByName accepts.
std::vector<std::string> PolicyNames();

}  // namespace tessera::cluster
