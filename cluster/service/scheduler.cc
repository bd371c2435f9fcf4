#include "cluster/service/scheduler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <set>

#include "cluster/job/job_type.h"
#include "cluster/policy/sla.h"
#include "cluster/service/gang.h"

namespace tessera::cluster {

namespace {

constexpr double kNotRestoredYet = std::numeric_limits<double>::infinity();
// What the policy is told about a run whose restore has not been reported yet: it is expected
// to take about this long (restores measured here take a fraction of a second).
constexpr double kExpectedRestoreS = 1.0;

// Flags the agent sets itself; a submission must not override them.
constexpr std::string_view kReservedFlags[] = {"--world-size", "--workers", "--job-id",
                                               "--job-dir"};

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::Create(SchedulerOptions options,
                                                     std::unique_ptr<Policy> policy,
                                                     std::unique_ptr<StateStore> store,
                                                     double now) {
  if (!policy) return InvalidArgumentError("no policy");
  if (!store) return InvalidArgumentError("no state store");
  if (options.job_root.empty()) return InvalidArgumentError("no job root directory");
  if (!(options.heartbeat_timeout_s > 0)) {
    return InvalidArgumentError("heartbeat timeout must be positive");
  }
  std::unique_ptr<Scheduler> s(
      new Scheduler(std::move(options), std::move(policy), std::move(store)));
  TESSERA_ASSIGN_OR_RETURN(StateStore::Contents contents, s->store_->Load());
  s->jobs_ = std::move(contents.jobs);
  s->nodes_ = std::move(contents.nodes);
  s->events_ = std::move(contents.events);
  s->next_job_ = std::max<int64_t>(contents.next_job, static_cast<int64_t>(s->jobs_.size()) + 1);
  for (NodeRecord& node : s->nodes_) {
    node.alive = true;
    node.last_heartbeat = now;
    node.grace_until = now + s->options_.restart_grace_s;
  }
  if (!s->jobs_.empty() || !s->nodes_.empty()) {
    size_t active = std::count_if(s->jobs_.begin(), s->jobs_.end(),
                                  [](const JobRecord& j) { return Active(j); });
    TESSERA_RETURN_IF_ERROR(
        s->Event(now, fmt::format("scheduler restarted: {} job(s) ({} active), {} node(s) "
                                  "restored from the state store",
                                  s->jobs_.size(), active, s->nodes_.size())));
  }
  return s;
}

Scheduler::Scheduler(SchedulerOptions options, std::unique_ptr<Policy> policy,
                     std::unique_ptr<StateStore> store)
    : options_(std::move(options)), policy_(std::move(policy)), store_(std::move(store)) {}

int Scheduler::NodeIndex(const std::string& id) const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

JobRecord* Scheduler::FindJob(const std::string& id) {
  // Ids are "j<number>" and jobs_[number - 1] holds job <number>.
  if (id.size() < 2 || id[0] != 'j') return nullptr;
  int64_t number = 0;
  for (size_t i = 1; i < id.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(id[i])) || number > (int64_t{1} << 40)) {
      return nullptr;
    }
    number = number * 10 + (id[i] - '0');
  }
  if (number < 1 || number > static_cast<int64_t>(jobs_.size())) return nullptr;
  JobRecord& job = jobs_[number - 1];
  return job.view.spec.id == id ? &job : nullptr;
}

Status Scheduler::SaveJob(const JobRecord& job) {
  return store_->PutJob(&job - jobs_.data() + 1, job);
}

Status Scheduler::Event(double now, std::string text) {
  spdlog::info("{}", text);
  rpc::Event event;
  event.set_time(now);
  event.set_text(std::move(text));
  events_.push_back(event);
  return store_->AppendEvent(static_cast<int64_t>(events_.size()), event);
}

std::string Scheduler::DescribePlacement(const Placement& placement) const {
  std::string out;
  for (const Slice& slice : placement) {
    if (!out.empty()) out += ",";
    out += fmt::format("{}:{}", nodes_[slice.node].id, slice.slots);
  }
  return out.empty() ? "-" : out;
}

Result<std::string> Scheduler::Submit(const rpc::SubmitRequest& request, double now) {
  JobRecord job;
  JobSpec& spec = job.view.spec;
  spec.tenant = request.tenant().empty() ? "default" : request.tenant();
  Result<Tier> tier = ParseTier(request.tier());
  if (!tier.ok()) {
    return InvalidArgumentError(
        fmt::format("unknown tier '{}' (premium, standard or basic)", request.tier()));
  }
  spec.tier = *tier;
  spec.requested_workers = request.requested_workers();
  spec.min_workers = request.min_workers() == 0 ? spec.requested_workers : request.min_workers();
  if (spec.requested_workers < 1 || spec.requested_workers > 1024) {
    return InvalidArgumentError("requested workers must be in [1, 1024]");
  }
  if (spec.min_workers < 1 || spec.min_workers > spec.requested_workers) {
    return InvalidArgumentError("minimum workers must be in [1, requested workers]");
  }
  const bool command_job =
      IsCommandJob(std::vector<std::string>(request.args().begin(), request.args().end()));
  for (const std::string& arg : request.args()) {
    // A command's args are the user's program's own: any flag is fine.
    for (std::string_view reserved : kReservedFlags) {
      if (command_job) break;
      if (arg == reserved || arg.starts_with(std::string(reserved) + "=")) {
        return InvalidArgumentError(fmt::format("{} is set by the agent, not by the job", arg));
      }
    }
    job.args.push_back(arg);
  }
  TESSERA_RETURN_IF_ERROR(Admit(spec));
  spec.id = fmt::format("j{}", next_job_);
  spec.submit_time = now;
  job.last_accrual = now;
  ++next_job_;
  jobs_.push_back(std::move(job));
  JobRecord& stored = jobs_.back();
  TESSERA_RETURN_IF_ERROR(store_->PutNextJob(next_job_));
  TESSERA_RETURN_IF_ERROR(SaveJob(stored));
  TESSERA_RETURN_IF_ERROR(Event(
      now, fmt::format("{} submitted: tenant {}, {}, {} worker(s) (min {}){}", stored.view.spec.id,
                       stored.view.spec.tenant, TierName(stored.view.spec.tier),
                       stored.view.spec.requested_workers, stored.view.spec.min_workers,
                       stored.view.spec.borrowed ? ", on borrowed quota" : "")));
  std::string id = stored.view.spec.id;
  TESSERA_RETURN_IF_ERROR(Reschedule(now));
  return id;
}

Status Scheduler::Cancel(const std::string& job_id, double now) {
  JobRecord* job = FindJob(job_id);
  if (job == nullptr) return NotFoundError("no job " + job_id);
  if (!Active(*job)) {
    return FailedPreconditionError(
        fmt::format("{} is already {}", job_id, JobOutcomeName(job->outcome)));
  }
  AccrueAll(now);
  if (job->run_node >= 0) {
    // Its process must checkpoint and exit first; the slots are freed when it has.
    job->cancel_requested = true;
    job->stop_requested = true;
    TESSERA_RETURN_IF_ERROR(SaveJob(*job));
    return Event(now, fmt::format("{} cancel requested: stopping its run", job_id));
  }
  Finish(*job, JobOutcome::kCancelled, now, "cancelled by user");
  TESSERA_RETURN_IF_ERROR(SaveJob(*job));
  return Reschedule(now);
}

Status Scheduler::RegisterNode(const std::string& node_id, int slots, double now,
                               const std::string& address) {
  if (node_id.empty()) return InvalidArgumentError("empty node id");
  if (slots < 1 || slots > 4096) return InvalidArgumentError("slots must be in [1, 4096]");
  int index = NodeIndex(node_id);
  if (index < 0) {
    nodes_.push_back(
        {.id = node_id, .slots = slots, .alive = true, .last_heartbeat = now, .address = address});
    index = static_cast<int>(nodes_.size()) - 1;
    TESSERA_RETURN_IF_ERROR(store_->PutNode(index, nodes_[index]));
    TESSERA_RETURN_IF_ERROR(
        Event(now, fmt::format("node {} joined with {} slot(s)", node_id, slots)));
  } else {
    NodeRecord& node = nodes_[index];
    node.slots = slots;
    node.address = address;
    node.alive = true;
    node.last_heartbeat = now;
    TESSERA_RETURN_IF_ERROR(store_->PutNode(index, node));
    TESSERA_RETURN_IF_ERROR(
        Event(now, fmt::format("node {} (re)registered with {} slot(s)", node_id, slots)));
    // A registering agent is a fresh process: runs of an earlier agent on this node died with
    // it (PR_SET_PDEATHSIG).
    AccrueAll(now);
    for (JobRecord& job : jobs_) {
      if (Active(job) && RunUsesNode(job, index)) {
        LoseRun(job, now, fmt::format("the agent on {} restarted", node_id));
        TESSERA_RETURN_IF_ERROR(SaveJob(job));
      }
    }
  }
  return Reschedule(now);
}

Result<rpc::HeartbeatReply> Scheduler::Heartbeat(const rpc::HeartbeatRequest& request, double now) {
  rpc::HeartbeatReply reply;
  int index = NodeIndex(request.node_id());
  if (index < 0 || !nodes_[index].alive) {
    reply.set_unknown_node(true);
    return reply;
  }
  nodes_[index].last_heartbeat = now;
  bool changed = false;
  for (const rpc::RunReport& report : request.runs()) {
    JobRecord* job = FindJob(report.job_id());
    if (job != nullptr && Active(*job) && job->run == report.run() && SpansNodes(*job) &&
        RunUsesNode(*job, index)) {
      TESSERA_ASSIGN_OR_RETURN(bool gang_changed, HandleGangReport(*job, report, index, now));
      changed = changed || gang_changed;
      continue;
    }
    if (job == nullptr || !Active(*job) || job->run != report.run() || job->run_node != index) {
      continue;  // a stale run: it is not in the assignments, so the agent lets it go
    }
    if (report.step_reported()) AccountSteps(*job, report.step(), now);
    bool was_started = job->run_started;
    if (report.exit() != rpc::RunReport::RUNNING || (report.started() && !was_started)) {
      AccrueAll(now);
      TESSERA_RETURN_IF_ERROR(HandleReport(report, request.node_id(), now));
      changed = true;
    } else if (report.step() != job->step) {
      job->step = report.step();
      job->total_steps = report.total_steps();
      job->loss = report.loss();
    }
  }
  if (changed) TESSERA_RETURN_IF_ERROR(Reschedule(now));
  for (const JobRecord& job : jobs_) {
    if (Active(job)) AddAssignments(job, index, reply);
  }
  return reply;
}

bool Scheduler::IsGang(const JobRecord& job) { return IsCommandJob(job.args); }

bool Scheduler::SpansNodes(const JobRecord& job) {
  return IsCommandJob(job.args) || IsPipelineJob(job.args);
}

bool Scheduler::RunUsesNode(const JobRecord& job, int node) const {
  if (job.run_node < 0) return false;
  if (!SpansNodes(job)) return job.run_node == node;
  return std::any_of(job.run_placement.begin(), job.run_placement.end(),
                     [&](const Slice& s) { return s.node == node; });
}

void Scheduler::AddAssignments(const JobRecord& job, int node, rpc::HeartbeatReply& reply) const {
  if (!RunUsesNode(job, node)) return;
  rpc::Assignment a;
  a.set_job_id(job.view.spec.id);
  a.set_run(job.run);
  a.set_workers(job.run_workers);
  a.set_world_size(job.view.spec.requested_workers);
  for (const std::string& arg : job.args) a.add_args(arg);
  a.set_job_dir((options_.job_root / job.view.spec.id).string());
  a.set_stop(job.stop_requested || job.cancel_requested);
  if (!SpansNodes(job)) {
    *reply.add_assignments() = std::move(a);
    return;
  }
  const std::vector<GangPart> parts = GangParts(job.run_placement, job.view.spec.requested_workers);
  if (parts.empty()) return;
  const std::string& master = nodes_[parts.front().node].address;
  for (const GangPart& part : parts) {
    if (part.node != node) continue;
    const std::string& address = nodes_[node].address;
    a.set_node_address(address.empty() ? "127.0.0.1" : address);
    a.set_local_slots(part.local_slots);
    a.set_node_rank(part.node_rank);
    a.set_num_nodes(static_cast<int>(parts.size()));
    a.set_master_addr(master.empty() ? "127.0.0.1" : master);
    if (!IsGang(job)) {  // a pipeline job's part: the launcher's node or a worker host
      *reply.add_assignments() = a;
      continue;
    }
    a.set_gang(true);
    a.set_rank_offset(part.rank_offset);
    a.set_local_ranks(part.local_ranks);
    a.set_master_port(job.master_port);
    *reply.add_assignments() = a;
  }
}

Result<bool> Scheduler::HandleGangReport(JobRecord& job, const rpc::RunReport& report, int node,
                                         double now) {
  const bool leader = node == job.run_node;  // the node of rank 0, which reports the steps
  if (leader && report.step_reported()) AccountSteps(job, report.step(), now);
  if (leader && !IsGang(job) &&
      (report.exit() == rpc::RunReport::FINISHED ||
       report.exit() == rpc::RunReport::CHECKPOINTED)) {
    job.step = report.step();  // a pipeline launcher's exit names its checkpoint's step exactly
  }
  if (report.exit() == rpc::RunReport::RUNNING) {
    if (leader && report.step() != job.step && report.step_reported()) {
      job.step = report.step();
      job.total_steps = report.total_steps();
      job.loss = report.loss();
    }
    if (!leader || !report.started() || job.run_started) return false;
    AccrueAll(now);
    rpc::RunReport started = report;
    if (!report.step_reported()) {  // keep the last known step until the job reports one
      started.set_step(job.step);
      started.set_total_steps(job.total_steps);
      started.set_loss(job.loss);
    }
    TESSERA_RETURN_IF_ERROR(HandleReport(started, nodes_[node].id, now));
    return true;
  }
  if (job.part_exits.contains(node)) return false;  // heard already
  job.part_exits[node] = report;
  AccrueAll(now);
  const std::string where = nodes_[node].id;
  if (report.exit() == rpc::RunReport::CRASHED && !job.stop_requested && !job.cancel_requested) {
    // A failed rank fails the gang: the scheduler stops assigning the run, and the agents kill
    // the other ranks; the job restarts (from its checkpoint, if it has one) or fails.
    job.last_exit = fmt::format("{}: {}", where, report.detail());
    TESSERA_RETURN_IF_ERROR(
        Event(now, fmt::format("{} run {}: part on {} failed ({}), stopping the whole gang",
                               job.view.spec.id, job.run, where, report.detail())));
    rpc::RunReport crashed = report;
    crashed.set_step(job.step);
    TESSERA_RETURN_IF_ERROR(HandleReport(crashed, where, now));
    return true;
  }
  if (job.part_exits.size() < job.run_placement.size()) return false;
  // Every part has exited: the run is over.
  bool all_finished = true;
  std::string detail;
  double checkpoint_seconds = 0;
  for (const auto& [n, part] : job.part_exits) {
    all_finished = all_finished && part.exit() == rpc::RunReport::FINISHED;
    checkpoint_seconds = std::max(checkpoint_seconds, part.checkpoint_seconds());
    detail +=
        fmt::format("{}{}: {}", detail.empty() ? "" : "; ", nodes_[n].id,
                    part.detail().empty() ? rpc::RunReport::Exit_Name(part.exit()) : part.detail());
  }
  job.last_exit = detail;
  rpc::RunReport combined = report;
  combined.set_exit(all_finished ? rpc::RunReport::FINISHED : rpc::RunReport::CHECKPOINTED);
  if (!all_finished && !job.stop_requested && !job.cancel_requested) {
    combined.set_exit(rpc::RunReport::CRASHED);  // parts ended on their own, some not cleanly
  }
  combined.set_step(job.step);
  combined.set_checkpoint_seconds(checkpoint_seconds);
  combined.set_detail(detail);
  TESSERA_RETURN_IF_ERROR(HandleReport(combined, where, now));
  return true;
}

void Scheduler::AccountSteps(JobRecord& job, int64_t step, double now) {
  if (!job.run_step_seen) {
    job.run_step_seen = true;
    if (step < job.max_step) {
      AccrueAll(now);
      // Progress per step computed so far, lost ones included.
      const double per_step =
          job.computed_steps > 0 ? (job.view.progress + job.lost_progress) / job.computed_steps : 0;
      const int64_t lost = job.max_step - step;
      const double taken = std::min(job.view.progress, per_step * static_cast<double>(lost));
      job.view.progress -= taken;
      job.lost_steps += lost;
      job.lost_progress += taken;
      Event(now, fmt::format("{} run {} resumed at step {} after reaching step {}: {} step(s) "
                             "lost, {:.2f} s of SLA progress taken back",
                             job.view.spec.id, job.run, step, job.max_step, lost, taken))
          .ok();  // best effort, the record is saved by the caller
      job.max_step = step;
    }
  }
  if (step > job.max_step) {
    job.computed_steps += step - job.max_step;
    job.max_step = step;
  }
}

Status Scheduler::HandleReport(const rpc::RunReport& report, const std::string& node, double now) {
  JobRecord& job = *FindJob(report.job_id());
  const std::string& id = job.view.spec.id;
  job.step = report.step();
  job.total_steps = report.total_steps();
  job.loss = report.loss();
  if (report.started() && !job.run_started) {
    job.run_started = true;
    job.restore_seconds = report.restore_seconds();
    if (job.view.stalled_until > now) job.view.stalled_until = now;
    if (IsGang(job) && !report.step_reported()) {
      // A command job's ranks count as started when they run; steps come later, if ever.
      TESSERA_RETURN_IF_ERROR(
          Event(now, fmt::format("{} run {}: ranks started on {} ({} slot(s) for world size {})",
                                 id, job.run, DescribePlacement(job.run_placement), job.run_workers,
                                 job.view.spec.requested_workers)));
    } else {
      TESSERA_RETURN_IF_ERROR(
          Event(now, fmt::format("{} run {} on {} with {} worker(s) is training from step {} "
                                 "(process start to first step report {:.2f} s)",
                                 id, job.run, node, report.workers(), report.step(),
                                 report.restore_seconds())));
    }
  }
  switch (report.exit()) {
    case rpc::RunReport::RUNNING:
      break;
    case rpc::RunReport::FINISHED:
      Finish(job, JobOutcome::kFinished, now, "");
      break;
    case rpc::RunReport::CHECKPOINTED:
      job.checkpoint_seconds = report.checkpoint_seconds();
      if (!report.detail().empty()) {
        TESSERA_RETURN_IF_ERROR(
            Event(now, fmt::format("{} run {} stopped (order to exit {:.2f} s): {}", id, job.run,
                                   report.checkpoint_seconds(), report.detail())));
      } else {
        TESSERA_RETURN_IF_ERROR(
            Event(now, fmt::format("{} run {} checkpointed at step {} and exited (order to exit "
                                   "{:.2f} s)",
                                   id, job.run, report.step(), report.checkpoint_seconds())));
      }
      if (job.cancel_requested) {
        Finish(job, JobOutcome::kCancelled, now, "cancelled by user");
      } else if (job.relocating) {
        StartRunOnPlacement(job, now);
        TESSERA_RETURN_IF_ERROR(
            Event(now, fmt::format("{} restarts as run {} on {} ({} worker(s))", id, job.run,
                                   DescribePlacement(job.view.placement), job.run_workers)));
      } else if (job.view.state == JobState::kCheckpointing) {
        job.view.state = JobState::kSuspended;
        job.view.placement.clear();
        job.run_placement.clear();
        job.run_node = -1;
        job.stop_requested = false;
      } else {
        LoseRun(job, now, "its run exited without being asked to");
      }
      break;
    case rpc::RunReport::CRASHED:
      ++job.crashes;
      if (job.cancel_requested) {
        Finish(job, JobOutcome::kCancelled, now, "cancelled by user");
      } else if (job.crashes > options_.max_crashes) {
        Finish(
            job, JobOutcome::kFailed, now,
            fmt::format("crashed {} times (last exit code {})", job.crashes, report.exit_code()));
      } else {
        LoseRun(job, now,
                fmt::format("its run crashed (exit code {}{})", report.exit_code(),
                            report.detail().empty() ? "" : ", " + report.detail()));
      }
      break;
    default:
      break;
  }
  return SaveJob(job);
}

void Scheduler::LoseRun(JobRecord& job, double now, const std::string& why) {
  if (job.cancel_requested) {
    Finish(job, JobOutcome::kCancelled, now, "cancelled by user");
    return;
  }
  job.part_exits.clear();
  job.view.state = JobState::kSuspended;
  job.view.placement.clear();
  job.run_placement.clear();
  job.run_node = -1;
  job.stop_requested = false;
  job.relocating = false;
  ++job.recoveries;
  Event(now, fmt::format("{} lost run {} ({}): it will resume from its last checkpoint",
                         job.view.spec.id, job.run, why))
      .ok();  // the event log is best effort here; the job record is saved by the caller
}

void Scheduler::StartRunOnPlacement(JobRecord& job, double now) {
  // One process per job: it runs on the node holding most of the job's slots, with as many
  // worker threads as the placement has slots.
  const Slice* host = &job.view.placement.front();
  for (const Slice& slice : job.view.placement) {
    if (slice.slots > host->slots) host = &slice;
  }
  // A gang (command job) runs one process per rank on every node of the placement; its
  // leader is the node of rank 0, the placement's first. A pipeline job runs its launcher
  // there and a part serving its workers on every other node.
  if (SpansNodes(job)) host = &job.view.placement.front();
  ++job.run;
  const int64_t job_number = &job - jobs_.data() + 1;
  job.master_port =
      options_.master_port_base +
      static_cast<int>((job_number * 7919 + job.run) % std::max(1, options_.master_port_span));
  job.part_exits.clear();
  job.run_step_seen = false;
  job.run_node = host->node;
  job.run_workers = TotalSlots(job.view.placement);
  job.run_placement = job.view.placement;
  job.run_started = false;
  job.stop_requested = false;
  job.relocating = false;
  job.view.stalled_until = kNotRestoredYet;
  job.view.last_change = now;
}

void Scheduler::Finish(JobRecord& job, JobOutcome outcome, double now, const std::string& message) {
  job.outcome = outcome;
  job.message = message;
  job.view.state = JobState::kFinished;
  job.view.placement.clear();
  job.run_placement.clear();
  job.run_node = -1;
  job.part_exits.clear();
  job.stop_requested = false;
  job.relocating = false;
  job.finish_time = now;
  double elapsed = now - job.view.spec.submit_time;
  double fraction = elapsed > 0 ? job.view.progress / elapsed : 1.0;
  Event(now, fmt::format("{} {}{}: {:.1f} s after submission, {:.0f}% of ideal speed "
                         "(target {:.0f}%), {} preemption(s), {} recoveries",
                         job.view.spec.id, JobOutcomeName(outcome),
                         message.empty() ? "" : " (" + message + ")", elapsed, 100 * fraction,
                         100 * TierTarget(job.view.spec.tier), job.view.preemptions,
                         job.recoveries))
      .ok();  // best effort, see LoseRun
}

void Scheduler::AccrueAll(double now) {
  for (JobRecord& job : jobs_) {
    if (!Active(job)) continue;
    AccrueProgress(job.view, job.last_accrual, now);
    job.last_accrual = std::max(job.last_accrual, now);
  }
}

Status Scheduler::Tick(double now) {
  AccrueAll(now);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeRecord& node = nodes_[i];
    if (!node.alive || now < node.grace_until ||
        now - node.last_heartbeat <= options_.heartbeat_timeout_s) {
      continue;
    }
    node.alive = false;
    ++stats_.node_losses;
    TESSERA_RETURN_IF_ERROR(
        Event(now, fmt::format("node {} declared dead: no heartbeat for {:.1f} s", node.id,
                               now - node.last_heartbeat)));
    for (JobRecord& job : jobs_) {
      if (!Active(job)) continue;
      bool uses_node = std::any_of(job.view.placement.begin(), job.view.placement.end(),
                                   [&](const Slice& s) { return s.node == static_cast<int>(i); });
      if (job.run_node == static_cast<int>(i) ||
          (SpansNodes(job) && RunUsesNode(job, static_cast<int>(i)))) {
        // A gang with ranks on the node lost them: the others cannot go on without them.
        LoseRun(job, now, "node " + node.id + " died");
      } else if (uses_node && job.run_node >= 0) {
        // Its process lives elsewhere but some of its slots are gone: checkpoint and requeue.
        job.view.state = JobState::kCheckpointing;
        job.relocating = false;
        job.stop_requested = true;
      }
      TESSERA_RETURN_IF_ERROR(SaveJob(job));
    }
  }
  return Reschedule(now);
}

ClusterView Scheduler::BuildView(double now, std::vector<JobRecord*>& by_view_index) {
  ClusterView view;
  view.now = now;
  for (const NodeRecord& node : nodes_) {
    view.nodes.push_back({.id = node.id, .slots = node.slots, .alive = node.alive, .draining = 0});
  }
  // Slots a relocating job gave up stay unusable until its old run has checkpointed.
  for (const JobRecord& job : jobs_) {
    if (!Active(job) || !job.relocating) continue;
    for (const Slice& old_slice : job.run_placement) {
      int kept = 0;
      for (const Slice& s : job.view.placement) {
        if (s.node == old_slice.node) kept = s.slots;
      }
      if (old_slice.slots > kept) view.nodes[old_slice.node].draining += old_slice.slots - kept;
    }
  }
  by_view_index.clear();
  for (JobRecord& job : jobs_) {
    if (!Active(job)) continue;
    // A held job (operator preempt) that holds no slots is not the policy's to start.
    if (job.held && job.run_node < 0) continue;
    JobView jv = job.view;
    if (job.cancel_requested || job.held) jv.state = JobState::kCheckpointing;  // inert
    if (jv.stalled_until == kNotRestoredYet) jv.stalled_until = now + kExpectedRestoreS;
    view.jobs.push_back(std::move(jv));
    by_view_index.push_back(&job);
  }
  return view;
}

Status Scheduler::Reschedule(double now) {
  AccrueAll(now);
  std::vector<JobRecord*> by_view_index;
  const ClusterView view = BuildView(now, by_view_index);
  std::vector<Action> actions = policy_->Decide(view);
  ++stats_.decisions;
  if (actions.empty()) {
    for (JobRecord* job : by_view_index) TESSERA_RETURN_IF_ERROR(SaveJob(*job));
    return Status::Ok();
  }
  if (Status valid = ValidateActions(view, actions); !valid.ok()) {
    // Never carry out an illegal plan; the next event asks again.
    ++stats_.rejected_decisions;
    spdlog::error("policy {} proposed illegal actions, none carried out: {}", policy_->name(),
                  valid.ToString());
    return Status::Ok();
  }
  for (const Action& action : actions) {
    TESSERA_RETURN_IF_ERROR(CarryOut(*by_view_index[action.job], view, action, now));
    ++stats_.actions;
  }
  for (JobRecord* job : by_view_index) TESSERA_RETURN_IF_ERROR(SaveJob(*job));
  return Status::Ok();
}

Status Scheduler::CarryOut(JobRecord& job, const ClusterView& view, const Action& action,
                           double now) {
  std::string what = DescribeAction(view, action);
  switch (action.kind) {
    case Action::Kind::kStart: {
      bool resumed = job.view.state == JobState::kSuspended;
      job.view.state = JobState::kRunning;
      job.view.placement = action.placement;
      if (job.view.first_start < 0) job.view.first_start = now;
      StartRunOnPlacement(job, now);
      return Event(
          now,
          fmt::format(
              "{} ({}) as run {}{}", what, TierName(job.view.spec.tier), job.run,
              resumed
                  ? fmt::format(", resuming from its last checkpoint (last reported step {})",
                                job.step)
                  : fmt::format(", {:.2f} s after submission", now - job.view.spec.submit_time)));
    }
    case Action::Kind::kPreempt:
      job.view.state = JobState::kCheckpointing;
      job.relocating = false;
      job.stop_requested = true;
      job.view.last_change = now;
      ++job.view.preemptions;
      return Event(now, fmt::format("{} ({}): checkpoint-and-exit ordered", what,
                                    TierName(job.view.spec.tier)));
    case Action::Kind::kResize:
    case Action::Kind::kMigrate:
      job.view.placement = action.placement;
      job.view.last_change = now;
      job.view.stalled_until = kNotRestoredYet;
      job.relocating = true;
      job.stop_requested = true;
      if (action.kind == Action::Kind::kResize) {
        ++job.view.resizes;
      } else {
        ++job.view.migrations;
      }
      return Event(now, fmt::format("{}: checkpoint, then restart there", what));
  }
  return Status::Ok();
}

std::vector<rpc::JobInfo> Scheduler::ListJobs(double now) const {
  std::vector<rpc::JobInfo> out;
  for (const JobRecord& job : jobs_) {
    rpc::JobInfo info;
    const JobSpec& spec = job.view.spec;
    info.set_id(spec.id);
    info.set_tenant(spec.tenant);
    info.set_tier(std::string(TierName(spec.tier)));
    std::string state(Active(job) ? JobStateName(job.view.state) : JobOutcomeName(job.outcome));
    if (Active(job) && job.relocating) state = "relocating";  // resize or migration under way
    if (Active(job) && job.cancel_requested) state = "cancelling";
    info.set_state(state);
    info.set_workers(Active(job) ? job.view.workers() : 0);
    info.set_requested_workers(spec.requested_workers);
    info.set_min_workers(spec.min_workers);
    info.set_step(job.step);
    info.set_total_steps(job.total_steps);
    JobView accrued = job.view;
    double at = Active(job) ? now : job.finish_time;
    if (Active(job)) AccrueProgress(accrued, job.last_accrual, now);
    info.set_sla_fraction(AchievedFraction(accrued, at));
    info.set_sla_target(TierTarget(spec.tier));
    info.set_placement(DescribePlacement(job.view.placement));
    info.set_submit_time(spec.submit_time);
    info.set_time_to_workers(job.view.first_start >= 0 ? job.view.first_start - spec.submit_time
                                                       : -1);
    info.set_preemptions(job.view.preemptions);
    info.set_migrations(job.view.migrations);
    info.set_resizes(job.view.resizes);
    info.set_recoveries(job.recoveries);
    info.set_loss(job.loss);
    info.set_finish_time(job.finish_time);
    info.set_message(job.message);
    info.set_lost_steps(job.lost_steps);
    info.set_lost_progress_s(job.lost_progress);
    info.set_last_exit(job.last_exit);
    info.set_borrowed(spec.borrowed);
    info.set_held(job.held);
    if (Active(job) && job.held && job.run_node < 0) info.set_state("held");
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<rpc::NodeInfo> Scheduler::ListNodes(double now) const {
  std::vector<rpc::NodeInfo> out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    rpc::NodeInfo info;
    info.set_id(nodes_[i].id);
    info.set_slots(nodes_[i].slots);
    info.set_alive(nodes_[i].alive);
    info.set_heartbeat_age_s(now - nodes_[i].last_heartbeat);
    int used = 0;
    std::string jobs;
    for (const JobRecord& job : jobs_) {
      if (!Active(job)) continue;
      for (const Slice& slice : job.view.placement) {
        if (slice.node != static_cast<int>(i)) continue;
        used += slice.slots;
        jobs += fmt::format("{}{}:{}", jobs.empty() ? "" : " ", job.view.spec.id, slice.slots);
      }
    }
    info.set_used(used);
    info.set_jobs(jobs);
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<rpc::Event> Scheduler::ListEvents(int limit) const {
  size_t start = limit > 0 && static_cast<size_t>(limit) < events_.size()
                     ? events_.size() - static_cast<size_t>(limit)
                     : 0;
  return std::vector<rpc::Event>(events_.begin() + static_cast<std::ptrdiff_t>(start),
                                 events_.end());
}

}  // namespace tessera::cluster
