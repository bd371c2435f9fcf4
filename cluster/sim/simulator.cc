#include "cluster/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <queue>
#include <unordered_set>

#include "cluster/policy/sla.h"

namespace tessera::cluster::sim {

double JobOutcome::fraction() const {
  const double real = jct();
  return real <= 0 ? 1.0 : std::min(1.0, duration / real);
}

double JobOutcome::slowdown() const {
  const double real = jct();
  return duration <= 0 ? 1.0 : std::max(1.0, real / duration);
}

bool JobOutcome::sla_met() const { return MeetsSla(spec.tier, fraction()); }

double SimResult::utilization() const {
  const double span = last_submit - start;
  return span <= 0 || capacity() <= 0 ? 0 : window_allocated_slot_s / (capacity() * span);
}

double SimResult::backlog_utilization() const {
  return backlog_s <= 0 || capacity() <= 0 ? 0
                                           : backlog_allocated_slot_s / (capacity() * backlog_s);
}

namespace {

struct Event {
  enum class Type : uint8_t { kFinish, kCheckpointDone, kDrainDone };
  double time;
  uint64_t seq;  // FIFO among equal times: determinism
  Type type;
  int job;              // simulator job index (kFinish, kCheckpointDone)
  int node;             // kDrainDone
  int slots;            // kDrainDone
  uint64_t generation;  // kFinish: stale if the job changed since
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

class Simulation {
 public:
  Simulation(const std::vector<SimJob>& jobs, Policy& policy, const SimOptions& options)
      : jobs_(jobs), policy_(policy), options_(options) {}

  Result<SimResult> Run() {
    TESSERA_RETURN_IF_ERROR(Setup());
    const auto wall_start = std::chrono::steady_clock::now();
    // Timer decisions are bounded by the span of the trace; the rest by the work per job.
    const int64_t max_decisions = 200 * static_cast<int64_t>(order_.size()) + 1000 + TimerBound();
    size_t next = 0;  // next arrival in order_
    while (next < order_.size() || !events_.empty()) {
      // Completions made stale by a later change must not move the clock.
      while (!events_.empty() && events_.top().type == Event::Type::kFinish &&
             events_.top().generation != generation_[events_.top().job]) {
        events_.pop();
      }
      double t = next < order_.size() ? jobs_[order_[next]].spec.submit_time : INFINITY;
      if (!events_.empty()) t = std::min(t, events_.top().time);
      if (t == INFINITY) break;  // only stale events were left
      // The policy's timer, while jobs hold slots or wait.
      const bool active = held_ > 0 || waiting_ > 0;
      if (active && last_decision_ + options_.decision_interval_s < t) {
        t = last_decision_ + options_.decision_interval_s;
        free_slots_changed_ = true;
      }
      Advance(t);
      while (next < order_.size() && jobs_[order_[next]].spec.submit_time <= t) {
        Arrive(order_[next++]);
      }
      while (!events_.empty() && events_.top().time <= t) {
        const Event e = events_.top();
        events_.pop();
        TESSERA_RETURN_IF_ERROR(Handle(e));
      }
      if (waiting_ == 0 && !free_slots_changed_) continue;  // nothing a policy could do
      free_slots_changed_ = false;
      last_decision_ = t;
      if (++result_.decisions > max_decisions) {
        return ResourceExhaustedError("policy " + std::string(policy_.name()) +
                                      " keeps acting without letting jobs finish (" +
                                      std::to_string(result_.decisions) + " decisions)");
      }
      MaybeCompact();
      result_.viewed_jobs += static_cast<int64_t>(view_.jobs.size());
      std::vector<Action> actions = policy_.Decide(view_);
      if (options_.validate) {
        Status valid = ValidateActions(view_, actions);
        if (!valid.ok())
          return InternalError("policy " + std::string(policy_.name()) + ": " + valid.message());
      }
      for (const Action& a : actions) TESSERA_RETURN_IF_ERROR(Apply(a));
      result_.actions += static_cast<int64_t>(actions.size());
      if (options_.progress && result_.decisions % options_.progress_every == 0) {
        options_.progress(view_.now, result_.decisions);
      }
    }
    result_.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    for (const JobOutcome& o : result_.jobs) result_.end = std::max(result_.end, o.finish);
    // Drop the rejected jobs' placeholders.
    std::vector<JobOutcome> kept;
    kept.reserve(result_.jobs.size());
    for (size_t i = 0; i < result_.jobs.size(); ++i) {
      if (!rejected_[i]) kept.push_back(std::move(result_.jobs[i]));
    }
    result_.jobs = std::move(kept);
    return std::move(result_);
  }

 private:
  Status Setup() {
    if (options_.nodes <= 0 || options_.slots_per_node <= 0) {
      return InvalidArgumentError("the cluster needs at least one node and one slot per node");
    }
    if (!(options_.checkpoint_s >= 0) || !(options_.restore_s >= 0) ||
        !(options_.series_bucket_s > 0) || !(options_.decision_interval_s > 0)) {
      return InvalidArgumentError(
          "checkpoint/restore times must be >= 0, bucket and decision interval > 0");
    }
    std::unordered_set<std::string> ids;
    for (const SimJob& job : jobs_) {
      if (!ids.insert(job.spec.id).second) {
        return InvalidArgumentError("duplicate job id '" + job.spec.id + "'");
      }
      if (!(job.duration > 0) || !std::isfinite(job.duration)) {
        return InvalidArgumentError("job '" + job.spec.id + "' needs a positive duration");
      }
      if (job.spec.requested_workers <= 0 || job.spec.min_workers <= 0 ||
          job.spec.min_workers > job.spec.requested_workers) {
        return InvalidArgumentError("job '" + job.spec.id + "' has bad worker counts");
      }
      if (!std::isfinite(job.spec.submit_time)) {
        return InvalidArgumentError("job '" + job.spec.id + "' has a bad submit time");
      }
    }
    for (int n = 0; n < options_.nodes; ++n) {
      view_.nodes.push_back({"n" + std::to_string(n), options_.slots_per_node, true, 0});
    }
    used_.assign(options_.nodes, 0);
    const int capacity = options_.nodes * options_.slots_per_node;
    result_.policy = std::string(policy_.name());
    result_.options = options_;
    result_.options.progress = nullptr;
    result_.jobs.resize(jobs_.size());
    rejected_.assign(jobs_.size(), false);
    generation_.assign(jobs_.size(), 0);
    view_index_.assign(jobs_.size(), -1);
    running_pos_.assign(jobs_.size(), -1);
    if (options_.quota) {
      TESSERA_RETURN_IF_ERROR(ValidateQuota(*options_.quota, capacity));
      ledger_.emplace(*options_.quota);
    }
    for (size_t i = 0; i < jobs_.size(); ++i) {
      result_.jobs[i].spec = jobs_[i].spec;
      result_.jobs[i].requested_tier = jobs_[i].spec.tier;
      result_.jobs[i].duration = jobs_[i].duration;
      if (jobs_[i].spec.requested_workers > capacity) {
        rejected_[i] = true;
        ++result_.rejected;
      } else {
        order_.push_back(static_cast<int>(i));
      }
    }
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      return jobs_[a].spec.submit_time < jobs_[b].spec.submit_time;
    });
    result_.start = order_.empty() ? 0 : jobs_[order_.front()].spec.submit_time;
    result_.end = result_.start;
    result_.last_submit = order_.empty() ? 0 : jobs_[order_.back()].spec.submit_time;
    view_.now = result_.start;
    last_ = result_.start;
    last_decision_ = result_.start;
    return Status::Ok();
  }

  // An upper bound on timer decisions: the time jobs can be active over the interval.
  int64_t TimerBound() const {
    double work = 0;
    for (int i : order_) work += jobs_[i].duration * 8;  // slowed down by splicing and waits
    const double span =
        (order_.empty() ? 0 : jobs_[order_.back()].spec.submit_time) - result_.start + work;
    return static_cast<int64_t>(std::min(1e12, span / options_.decision_interval_s));
  }

  // Brings accounting and metrics from last_ to t.
  void Advance(double t) {
    if (t <= last_) {
      view_.now = std::max(view_.now, t);
      return;
    }
    const double dt = t - last_;
    double useful = 0;
    for (int i : running_) {
      JobView& job = ViewOf(i);
      const double from = std::max(last_, job.stalled_until);
      if (t > from) useful += (t - from) * job.workers();
      JobOutcome& out = result_.jobs[i];
      out.allocated_slot_s += dt * job.workers();
      out.lost_slot_s +=
          (std::min(t, job.stalled_until) - std::min(last_, job.stalled_until)) * job.workers();
      AccrueProgress(job, last_, t);
    }
    result_.useful_slot_s += useful;
    result_.allocated_slot_s += held_ * dt;
    const double in_window = std::min(t, result_.last_submit) - last_;
    if (in_window > 0) result_.window_allocated_slot_s += held_ * in_window;
    result_.draining_slot_s += draining_ * dt;
    if (waiting_ > 0) {
      result_.backlog_s += dt;
      result_.backlog_allocated_slot_s += held_ * dt;
    }
    // Spread held_ * dt over the series buckets the interval covers.
    const double w = options_.series_bucket_s;
    double a = last_ - result_.start;
    const double b = t - result_.start;
    while (a < b) {
      const size_t bucket = static_cast<size_t>(a / w);
      const double edge = std::min(b, (bucket + 1) * w);
      if (result_.busy_series.size() <= bucket) result_.busy_series.resize(bucket + 1, 0.0);
      result_.busy_series[bucket] += held_ * (edge - a) / w;
      a = edge;
    }
    last_ = t;
    view_.now = t;
  }

  void Arrive(int i) {
    JobView job;
    job.spec = jobs_[i].spec;
    if (ledger_) {
      Admission a = ledger_->Check(job.spec, options_.nodes * options_.slots_per_node);
      if (a.kind == Admission::Kind::kRefused) {
        job.spec.tier = Tier::kBasic;
        ++result_.quota_refused;
      } else if (a.kind == Admission::Kind::kBorrowing) {
        job.spec.borrowed = true;
        ++result_.quota_borrowing;
      }
      ledger_->Add(job.spec);
      result_.jobs[i].spec = job.spec;
    }
    view_index_[i] = static_cast<int>(view_.jobs.size());
    view_.jobs.push_back(std::move(job));
    sim_index_.push_back(i);
    ++waiting_;
  }

  JobView& ViewOf(int i) { return view_.jobs[view_index_[i]]; }

  // The running jobs, so that accounting costs O(running), not O(view), per event.
  void AddRunning(int i) {
    running_pos_[i] = static_cast<int>(running_.size());
    running_.push_back(i);
  }
  void RemoveRunning(int i) {
    const int pos = running_pos_[i];
    if (pos < 0) return;
    running_[pos] = running_.back();
    running_pos_[running_[pos]] = pos;
    running_.pop_back();
    running_pos_[i] = -1;
  }

  void Push(Event::Type type, double time, int job, int node = 0, int slots = 0,
            uint64_t generation = 0) {
    events_.push({time, seq_++, type, job, node, slots, generation});
  }

  void ScheduleFinish(int i) {
    JobView& job = ViewOf(i);
    const double rate = SpeedFraction(job.workers(), job.spec.requested_workers);
    const double remaining = std::max(0.0, jobs_[i].duration - job.progress);
    const double begin = std::max(view_.now, job.stalled_until);
    Push(Event::Type::kFinish, begin + remaining / rate, i, 0, 0, ++generation_[i]);
  }

  Status Handle(const Event& e) {
    switch (e.type) {
      case Event::Type::kFinish: {
        if (e.generation != generation_[e.job]) return Status::Ok();  // stale
        JobView& job = ViewOf(e.job);
        if (job.state != JobState::kRunning) return Status::Ok();
        JobOutcome& out = result_.jobs[e.job];
        out.finish = view_.now;
        out.first_start = job.first_start;
        out.preemptions = job.preemptions;
        out.migrations = job.migrations;
        out.resizes = job.resizes;
        Release(job.placement);
        RemoveRunning(e.job);
        job.placement.clear();
        job.progress = jobs_[e.job].duration;
        job.state = JobState::kFinished;
        if (ledger_) ledger_->Remove(job.spec);
        ++finished_in_view_;
        free_slots_changed_ = true;
        return Status::Ok();
      }
      case Event::Type::kCheckpointDone: {
        JobView& job = ViewOf(e.job);
        if (job.state != JobState::kCheckpointing) {
          return InternalError("checkpoint completion for a " +
                               std::string(JobStateName(job.state)) + " job");
        }
        Release(job.placement);
        job.placement.clear();
        job.state = JobState::kSuspended;
        ++waiting_;
        free_slots_changed_ = true;
        return Status::Ok();
      }
      case Event::Type::kDrainDone:
        view_.nodes[e.node].draining -= e.slots;
        used_[e.node] -= e.slots;
        draining_ -= e.slots;
        free_slots_changed_ = true;
        return Status::Ok();
    }
    return Status::Ok();
  }

  void Release(const Placement& placement) {
    for (const Slice& s : placement) {
      used_[s.node] -= s.slots;
      held_ -= s.slots;
    }
  }

  // Claims the slots of `placement` beyond `own` (the job's current slots); INTERNAL if that
  // over-allocates a node or uses a dead or unknown one.
  Status Claim(const Action& a, const Placement& own) {
    for (const Slice& s : a.placement) {
      if (s.node < 0 || s.node >= options_.nodes || s.slots <= 0 || !view_.nodes[s.node].alive) {
        return InternalError("policy " + std::string(policy_.name()) +
                             " used a bad slice: " + DescribeAction(view_, a));
      }
      int mine = 0;
      for (const Slice& o : own) mine += o.node == s.node ? o.slots : 0;
      const int extra = s.slots - mine;
      if (extra > 0 && used_[s.node] + extra > view_.nodes[s.node].slots) {
        return InternalError("policy " + std::string(policy_.name()) + " over-allocated node " +
                             view_.nodes[s.node].id + ": " + DescribeAction(view_, a));
      }
    }
    return Status::Ok();
  }

  Status Apply(const Action& a) {
    if (a.job < 0 || static_cast<size_t>(a.job) >= view_.jobs.size()) {
      return InternalError("policy returned an action for an unknown job");
    }
    const int i = sim_index_[a.job];
    JobView& job = view_.jobs[a.job];
    const double now = view_.now;
    auto wrong_state = [&]() {
      return InternalError("policy " + std::string(policy_.name()) + " cannot " +
                           DescribeAction(view_, a) + " (job is " +
                           std::string(JobStateName(job.state)) + ")");
    };
    switch (a.kind) {
      case Action::Kind::kStart: {
        if (job.state != JobState::kPending && job.state != JobState::kSuspended) {
          return wrong_state();
        }
        if (!IsValidWorkerCount(job.spec, TotalSlots(a.placement))) {
          return InternalError("invalid worker count: " + DescribeAction(view_, a));
        }
        TESSERA_RETURN_IF_ERROR(Claim(a, {}));
        for (const Slice& s : a.placement) used_[s.node] += s.slots;
        held_ += TotalSlots(a.placement);
        job.stalled_until = job.state == JobState::kSuspended ? now + options_.restore_s : now;
        job.state = JobState::kRunning;
        job.placement = a.placement;
        if (job.first_start < 0) job.first_start = now;
        job.last_change = now;
        --waiting_;
        AddRunning(i);
        ScheduleFinish(i);
        return Status::Ok();
      }
      case Action::Kind::kPreempt:
        if (job.state != JobState::kRunning) return wrong_state();
        job.state = JobState::kCheckpointing;
        RemoveRunning(i);
        ++job.preemptions;
        // It holds its slots without progress until the checkpoint is written.
        result_.jobs[i].allocated_slot_s += options_.checkpoint_s * job.workers();
        result_.jobs[i].lost_slot_s += options_.checkpoint_s * job.workers();
        ++generation_[i];  // its completion is off
        Push(Event::Type::kCheckpointDone, now + options_.checkpoint_s, i);
        return Status::Ok();
      case Action::Kind::kResize:
      case Action::Kind::kMigrate: {
        if (job.state != JobState::kRunning) return wrong_state();
        if (!IsValidWorkerCount(job.spec, TotalSlots(a.placement))) {
          return InternalError("invalid worker count: " + DescribeAction(view_, a));
        }
        TESSERA_RETURN_IF_ERROR(Claim(a, job.placement));
        // New slots are claimed now; the ones given up drain until the checkpoint is written.
        for (const Slice& s : a.placement) {
          int mine = 0;
          for (const Slice& o : job.placement) mine += o.node == s.node ? o.slots : 0;
          if (s.slots > mine) used_[s.node] += s.slots - mine;
        }
        for (const Slice& o : job.placement) {
          int kept = 0;
          for (const Slice& s : a.placement) kept += s.node == o.node ? s.slots : 0;
          const int released = o.slots - std::min(o.slots, kept);
          if (released > 0) {
            result_.jobs[i].lost_slot_s += options_.checkpoint_s * released;
            view_.nodes[o.node].draining += released;
            draining_ += released;
            Push(Event::Type::kDrainDone, now + options_.checkpoint_s, i, o.node, released);
          }
        }
        held_ += TotalSlots(a.placement) - job.workers();
        job.placement = a.placement;
        job.stalled_until = now + options_.checkpoint_s + options_.restore_s;
        job.last_change = now;
        if (a.kind == Action::Kind::kResize) {
          ++job.resizes;
        } else {
          ++job.migrations;
        }
        ScheduleFinish(i);
        return Status::Ok();
      }
    }
    return Status::Ok();
  }

  // Drops finished jobs from the view once they are a good part of it (amortized O(1)).
  void MaybeCompact() {
    if (finished_in_view_ < 256 || finished_in_view_ * 4 < view_.jobs.size()) return;
    size_t out = 0;
    for (size_t in = 0; in < view_.jobs.size(); ++in) {
      if (view_.jobs[in].state == JobState::kFinished) {
        view_index_[sim_index_[in]] = -1;
        continue;
      }
      if (out != in) {
        view_.jobs[out] = std::move(view_.jobs[in]);
        sim_index_[out] = sim_index_[in];
      }
      view_index_[sim_index_[out]] = static_cast<int>(out);
      ++out;
    }
    view_.jobs.resize(out);
    sim_index_.resize(out);
    finished_in_view_ = 0;
  }

  const std::vector<SimJob>& jobs_;
  Policy& policy_;
  std::optional<QuotaLedger> ledger_;  // when options_.quota is set
  const SimOptions& options_;
  SimResult result_;
  ClusterView view_;
  std::vector<int> order_;  // jobs to submit, by submit time
  std::vector<bool> rejected_;
  std::vector<int> view_index_;  // simulator job -> index in view_.jobs (-1: not there)
  std::vector<int> sim_index_;   // index in view_.jobs -> simulator job
  std::vector<uint64_t> generation_;
  std::vector<int> running_;      // simulator jobs in kRunning
  std::vector<int> running_pos_;  // simulator job -> index in running_ (-1: not running)
  std::vector<int> used_;         // per node: held + draining slots
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  double last_ = 0;
  double last_decision_ = 0;
  int64_t held_ = 0;
  int64_t draining_ = 0;
  int64_t waiting_ = 0;  // pending + suspended jobs
  size_t finished_in_view_ = 0;
  bool free_slots_changed_ = false;
};

}  // namespace

Result<SimResult> Simulate(const std::vector<SimJob>& jobs, Policy& policy,
                           const SimOptions& options) {
  return Simulation(jobs, policy, options).Run();
}

}  // namespace tessera::cluster::sim
