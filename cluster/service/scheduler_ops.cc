// The scheduler's admission control and operator commands (issue 15): quotas at submission,
// preempt / requeue / resize of one job. Declared in scheduler.h.
#include <fmt/format.h>

#include "cluster/policy/placement.h"
#include "cluster/service/scheduler.h"

namespace tessera::cluster {

Status Scheduler::Admit(JobSpec& spec) {
  if (!options_.quota) return Status::Ok();
  // The ledger is rebuilt from the active jobs: no second copy of the state to keep consistent
  // (submissions are rare next to the policy's work).
  QuotaLedger ledger(*options_.quota);
  for (const JobRecord& job : jobs_) {
    if (Active(job)) ledger.Add(job.view.spec);
  }
  int capacity = 0;
  for (const NodeRecord& node : nodes_) capacity += node.alive ? node.slots : 0;
  const Admission admission = ledger.Check(spec, capacity);
  switch (admission.kind) {
    case Admission::Kind::kInQuota:
      return Status::Ok();
    case Admission::Kind::kBorrowing:
      spec.borrowed = true;
      return Status::Ok();
    case Admission::Kind::kRefused:
      break;
  }
  return ResourceExhaustedError("admission refused: " + admission.reason);
}

Result<JobRecord*> Scheduler::ActiveJob(const std::string& job_id) {
  JobRecord* job = FindJob(job_id);
  if (job == nullptr) return NotFoundError("no job " + job_id);
  if (!Active(*job)) {
    return FailedPreconditionError(
        fmt::format("{} is already {}", job_id, JobOutcomeName(job->outcome)));
  }
  if (job->cancel_requested) return FailedPreconditionError(job_id + " is being cancelled");
  return job;
}

Result<std::string> Scheduler::JobTenant(const std::string& job_id) {
  JobRecord* job = FindJob(job_id);
  if (job == nullptr) return NotFoundError("no job " + job_id);
  return job->view.spec.tenant;
}

Status Scheduler::Preempt(const std::string& job_id, double now) {
  TESSERA_ASSIGN_OR_RETURN(JobRecord * job, ActiveJob(job_id));
  if (job->held) return FailedPreconditionError(job_id + " is already held");
  if (job->relocating) {
    return FailedPreconditionError(job_id + " is being resized or migrated; try again");
  }
  AccrueAll(now);
  job->held = true;
  if (job->view.state == JobState::kRunning) {
    job->view.state = JobState::kCheckpointing;
    job->stop_requested = true;
    job->view.last_change = now;
    ++job->view.preemptions;
  }
  TESSERA_RETURN_IF_ERROR(SaveJob(*job));
  TESSERA_RETURN_IF_ERROR(
      Event(now, fmt::format("{} preempted by an operator: held{}", job_id,
                             job->run_node >= 0 ? " after its checkpoint" : " (was not running)")));
  return Reschedule(now);
}

Status Scheduler::Requeue(const std::string& job_id, double now) {
  TESSERA_ASSIGN_OR_RETURN(JobRecord * job, ActiveJob(job_id));
  if (job->relocating) {
    return FailedPreconditionError(job_id + " is being resized or migrated; try again");
  }
  AccrueAll(now);
  std::string what;
  if (job->held) {
    job->held = false;
    what = "released: back in the queue";
  } else if (job->view.state == JobState::kRunning) {
    job->view.state = JobState::kCheckpointing;
    job->stop_requested = true;
    job->view.last_change = now;
    ++job->view.preemptions;
    what = "requeued: checkpoint-and-exit, then the policy places it again";
  } else {
    return FailedPreconditionError(
        fmt::format("{} is {}: nothing to requeue", job_id, JobStateName(job->view.state)));
  }
  TESSERA_RETURN_IF_ERROR(SaveJob(*job));
  TESSERA_RETURN_IF_ERROR(Event(now, fmt::format("{} {} (operator)", job_id, what)));
  return Reschedule(now);
}

Status Scheduler::Resize(const std::string& job_id, int workers, double now) {
  TESSERA_ASSIGN_OR_RETURN(JobRecord * job, ActiveJob(job_id));
  if (job->held || job->view.state != JobState::kRunning || job->relocating) {
    return FailedPreconditionError(fmt::format(
        "{} is not running steadily (state {}{}): only a running job can be resized", job_id,
        job->held ? "held" : JobStateName(job->view.state), job->relocating ? ", relocating" : ""));
  }
  if (!IsValidWorkerCount(job->view.spec, workers)) {
    return InvalidArgumentError(fmt::format(
        "{} cannot run on {} worker(s): want a divisor of its world size {} that is at least "
        "its minimum {}",
        job_id, workers, job->view.spec.requested_workers, job->view.spec.min_workers));
  }
  if (workers == job->view.workers()) {
    return FailedPreconditionError(fmt::format("{} already runs on {} worker(s)", job_id, workers));
  }
  AccrueAll(now);
  std::vector<JobRecord*> by_view_index;
  const ClusterView view = BuildView(now, by_view_index);
  int index = -1;
  for (size_t i = 0; i < by_view_index.size(); ++i) {
    if (by_view_index[i] == job) index = static_cast<int>(i);
  }
  std::vector<int> usable = FreeSlots(view);
  Take(usable, job->view.placement, +1);
  std::optional<Placement> placement = FindCompactPlacement(usable, workers, MaxNodeSlots(view));
  if (!placement || index < 0) {
    return FailedPreconditionError(
        fmt::format("no room for {} worker(s) of {} on free or its own slots", workers, job_id));
  }
  const Action action{Action::Kind::kResize, index, job_id, std::move(*placement)};
  TESSERA_RETURN_IF_ERROR(ValidateActions(view, {action}));
  TESSERA_RETURN_IF_ERROR(
      Event(now, fmt::format("{} resize to {} ordered by an operator", job_id, workers)));
  TESSERA_RETURN_IF_ERROR(CarryOut(*job, view, action, now));
  TESSERA_RETURN_IF_ERROR(SaveJob(*job));
  return Reschedule(now);
}

}  // namespace tessera::cluster
