#include "pipeline/simulator.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <random>

#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

struct Event {
  double time;
  uint64_t seq;  // FIFO among equal times: deterministic
  // kArrival: a message reaches `worker` (forward = activation of task.micro, backward = its
  // gradient) in step `step`; kTaskDone: `worker` finished `task`; kStepStart: `worker` begins
  // step `step`; kRingArrival: the all-reduce chunk of round `round` reaches `worker`.
  enum Kind { kArrival, kTaskDone, kStepStart, kRingArrival } kind;
  int worker;
  int step;
  Task task;
  int round = 0;
  int from = 0;  // kArrival, kRingArrival: the sending worker
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

Status Validate(const SimConfig& c) {
  const int P = static_cast<int>(c.stages.size());
  if (P < 1) return InvalidArgumentError("simulator: no stages");
  if (c.micro_batches < 1) return InvalidArgumentError("simulator: micro_batches must be >= 1");
  if (c.replicas < 1) return InvalidArgumentError("simulator: replicas must be >= 1");
  // The state is per step and micro-batch: bound it so a mistyped count is an error, not an
  // allocation failure.
  if (c.steps < 1 || c.steps > 10000) {
    return InvalidArgumentError("simulator: steps must be in [1, 10000]");
  }
  if (static_cast<double>(c.steps) * c.micro_batches * c.replicas * c.stages.size() > 1e8) {
    return InvalidArgumentError("simulator: steps x micro-batches x workers above 1e8");
  }
  if (static_cast<int>(c.boundary_bytes.size()) != P - 1) {
    return InvalidArgumentError(
        fmt::format("simulator: {} boundary sizes for {} stages", c.boundary_bytes.size(), P));
  }
  for (const StageCost& s : c.stages) {
    if (s.forward_s < 0 || s.recompute_s < 0 || s.backward_s < 0 || s.gradient_bytes < 0 ||
        s.allreduce_s < 0 || s.optimizer_s < 0) {
      return InvalidArgumentError("simulator: negative stage cost");
    }
  }
  for (double b : c.boundary_bytes) {
    if (b < 0) return InvalidArgumentError("simulator: negative boundary size");
  }
  std::vector<const LinkModel*> links = {&c.pipeline_link, &c.allreduce_link};
  if (!c.host_links.empty()) {
    const size_t hosts = c.host_links.links.size();
    for (const auto& row : c.host_links.links) {
      if (row.size() != hosts) return InvalidArgumentError("simulator: host links not square");
      for (const LinkModel& l : row) links.push_back(&l);
    }
    for (int h : c.host_links.host_of_slot) {
      if (h < 0 || static_cast<size_t>(h) >= hosts) {
        return InvalidArgumentError(fmt::format("simulator: host {} has no links", h));
      }
    }
  }
  for (const LinkModel* l : links) {
    if (l->bandwidth_bytes_per_s < 0 || l->latency_s < 0 || l->burst_bytes < 0 ||
        l->message_overhead_bytes < 0 || l->mss_bytes < 0 || l->header_bytes < 0 ||
        l->acks_per_segment < 0) {
      return InvalidArgumentError("simulator: negative link parameter");
    }
  }
  if (c.jitter < 0) return InvalidArgumentError("simulator: negative jitter");
  if (!(c.message_delay_s >= 0 && std::isfinite(c.message_delay_s))) {
    return InvalidArgumentError("simulator: message delay must be finite and >= 0");
  }
  if (c.cores < 0) return InvalidArgumentError("simulator: negative cores");
  if (!(c.compute_cpu_share >= 0 && c.compute_cpu_share <= 1)) {
    return InvalidArgumentError("simulator: compute CPU share must be in [0, 1]");
  }
  for (const StageCost& s : c.stages) {
    if (!(s.comm_cpu_s >= 0)) return InvalidArgumentError("simulator: negative comm CPU");
  }
  return Status::Ok();
}

// One worker's egress: busy until `free`, with a token bucket (tbf's burst) that refills at the
// bandwidth while the link is idle. Each message is metered by the link to its destination
// (with one link for every destination, as tbf on the sender's device does).
class Egress {
 public:
  // Queues `wire_bytes` for `link` at `now` (calls come in time order); returns when the last
  // byte left.
  double Transmit(double now, double wire_bytes, const LinkModel& link) {
    const double start = std::max(free_, now);
    double wire = 0;
    const double rate = link.bandwidth_bytes_per_s;
    if (rate > 0) {
      if (!started_) tokens_ = link.burst_bytes;  // idle since ever: a full bucket
      tokens_ = std::min(link.burst_bytes, tokens_ + (start - refilled_at_) * rate);
      const double taken = std::min(tokens_, wire_bytes);
      tokens_ -= taken;
      wire = (wire_bytes - taken) / rate;
      started_ = true;
    }
    free_ = start + wire;
    refilled_at_ = free_;
    return free_;
  }

 private:
  bool started_ = false;
  double free_ = 0, tokens_ = 0, refilled_at_ = 0;
};

bool Limited(const SimConfig& c) {
  if (c.pipeline_link.bandwidth_bytes_per_s > 0) return true;
  for (const auto& row : c.host_links.links) {
    for (const LinkModel& l : row) {
      if (l.bandwidth_bytes_per_s > 0) return true;
    }
  }
  return false;
}

class Simulation {
 public:
  explicit Simulation(const SimConfig& c)
      : c_(c),
        P_(static_cast<int>(c.stages.size())),
        M_(c.micro_batches),
        ring_on_links_(c.replicas > 1 && Limited(c)),
        rounds_(2 * (c.replicas - 1)),
        rng_(c.seed),
        stretch_(CommCpuStretch(c)),
        end_of_step_(c.steps, 0.0),
        done_in_step_(static_cast<size_t>(c.steps) * P_, 0) {}

  Result<SimResult> Run();

 private:
  struct Worker {
    int stage = 0, replica = 0;
    int step = 0;
    std::optional<TaskCursor> cursor;
    // [step * M + micro]: the activation (forward) / the gradient (backward) has arrived.
    std::vector<bool> input, gradient;
    bool busy = false;
    double start = 0, finish = 0, busy_s = 0;
    std::vector<TimedTask> trace;  // this step, times from its start
    // The ring all-reduce on the links: the round in progress (-1: not in it) and, per
    // [step * rounds + round], whether the previous replica's chunk has arrived.
    int ring_round = -1;
    std::vector<bool> ring_got;
  };

  int Index(int stage, int replica) const { return replica * P_ + stage; }
  // The link a message from worker `from` to worker `to` takes; nullptr: the same host
  // (loopback, no link).
  const LinkModel* LinkBetween(int from, int to) const;
  // Sends `payload` bytes from `from` to `to` through `from`'s egress at `now`; returns when it
  // arrives. The receiver's ACKs go through its own egress, behind what it queued there.
  double Deliver(int from, int to, double now, double payload);
  // The receiver `to`'s ACKs for a message of `payload` bytes from `from`, arrived at `now`.
  void Acknowledge(int to, int from, double now, double payload);
  double Draw(double base);
  void StartStep(int w, double now);
  void TryStart(int w, double now);
  void Send(int from, int to, double now, double payload, int step, Task what);
  void OnTaskDone(const Event& e);
  void FinishStage(int stage, int step, double now);
  void SendRingChunk(int w, double now);
  void AdvanceRing(int w, double now);
  void EndStep(int w, int step, double finish, double allreduce_end);

  const SimConfig& c_;
  const int P_, M_;
  // With a rate-limited link, the all-reduce is simulated as the ring's messages through the
  // egress links (its measured time would contain waits the simulation produces itself).
  const bool ring_on_links_;
  const int rounds_;
  std::mt19937_64 rng_;
  const double stretch_;  // CommCpuStretch: the communication threads' share of the cores
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::vector<std::vector<Task>> tasks_;  // per stage
  std::vector<Worker> workers_;
  std::vector<Egress> egress_;  // per worker
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::vector<double> end_of_step_;  // latest step end over all workers, per step
  std::vector<int> done_in_step_;    // [step * P + stage]: replicas done with their backwards
  std::vector<double> stage_finish_, stage_allreduce_;  // last step, per stage
};

double Simulation::Draw(double base) {
  if (c_.jitter == 0) return base;
  return base * std::max(0.0, 1.0 + c_.jitter * normal_(rng_));
}

void Simulation::StartStep(int w, double now) {
  Worker& x = workers_[w];
  x.cursor.emplace(tasks_[x.stage], c_.opportunistic && c_.schedule == ScheduleKind::kVaruna);
  x.start = now;
  x.busy_s = 0;
  x.trace.clear();
  TryStart(w, now);
}

void Simulation::TryStart(int w, double now) {
  Worker& x = workers_[w];
  if (x.busy || !x.cursor || x.cursor->finished()) return;
  const size_t base = static_cast<size_t>(x.step) * M_;
  auto ready = [&](const Task& t) {
    if (t.kind == TaskKind::kForward) return static_cast<bool>(x.input[base + t.micro]);
    if (t.kind == TaskKind::kBackward) return static_cast<bool>(x.gradient[base + t.micro]);
    return true;
  };
  std::optional<Task> next = x.cursor->Next(ready);
  if (!next) return;
  const StageCost& cost = c_.stages[x.stage];
  const double d = stretch_ * Draw(next->kind == TaskKind::kForward     ? cost.forward_s
                                   : next->kind == TaskKind::kRecompute ? cost.recompute_s
                                                                        : cost.backward_s);
  x.cursor->MarkDone(*next);
  x.busy = true;
  x.busy_s += d;
  x.trace.push_back({*next, now - x.start, now + d - x.start});
  events_.push({now + d, seq_++, Event::kTaskDone, w, x.step, *next});
}

const LinkModel* Simulation::LinkBetween(int from, int to) const {
  if (c_.host_links.empty()) return &c_.pipeline_link;
  const int a = c_.host_links.HostOf(from), b = c_.host_links.HostOf(to);
  return a == b ? nullptr : &c_.host_links.links[a][b];
}

double Simulation::Deliver(int from, int to, double now, double payload) {
  const LinkModel* lm = LinkBetween(from, to);
  if (!lm) return now;
  return egress_[from].Transmit(now, lm->WireBytes(payload), *lm) + lm->latency_s;
}

void Simulation::Acknowledge(int to, int from, double now, double payload) {
  const LinkModel* lm = LinkBetween(to, from);
  if (!lm) return;
  const double acks = LinkBetween(from, to)->AckBytes(payload);
  if (acks > 0) egress_[to].Transmit(now, acks, *lm);
}

void Simulation::Send(int from, int to, double now, double payload, int step, Task what) {
  const double arrival = Deliver(from, to, now, payload) + c_.message_delay_s;
  events_.push({arrival, seq_++, Event::kArrival, to, step, what, 0, from});
}

void Simulation::OnTaskDone(const Event& e) {
  Worker& x = workers_[e.worker];
  x.busy = false;
  const int s = x.stage;
  const size_t slot = static_cast<size_t>(e.step) * M_ + e.task.micro;
  if (e.task.kind == TaskKind::kForward) {
    if (s == P_ - 1) {
      x.gradient[slot] = true;  // the loss is computed here
    } else {
      Send(e.worker, Index(s + 1, x.replica), e.time, c_.boundary_bytes[s], e.step,
           {TaskKind::kForward, e.task.micro});
    }
  } else if (e.task.kind == TaskKind::kBackward && s > 0) {
    Send(e.worker, Index(s - 1, x.replica), e.time, c_.boundary_bytes[s - 1], e.step,
         {TaskKind::kBackward, e.task.micro});
  }
  if (x.cursor->finished()) {
    x.finish = e.time;
    if (ring_on_links_) {
      x.ring_round = 0;
      SendRingChunk(e.worker, e.time);
      AdvanceRing(e.worker, e.time);
    } else if (++done_in_step_[static_cast<size_t>(e.step) * P_ + s] == c_.replicas) {
      FinishStage(s, e.step, e.time);
    }
  }
}

// Ring all-reduce among the replicas of a stage, as pipeline/allreduce.cc runs it: in each of
// 2 (D-1) rounds a replica sends one chunk of G/D bytes to the next replica, then waits for the
// previous replica's chunk of that round. The summing is not modelled (it is memory-bound and
// small next to a rate-limited link).
void Simulation::SendRingChunk(int w, double now) {
  const Worker& x = workers_[w];
  const int to = Index(x.stage, (x.replica + 1) % c_.replicas);
  const double arrival = Deliver(w, to, now, c_.stages[x.stage].gradient_bytes / c_.replicas);
  events_.push({arrival, seq_++, Event::kRingArrival, to, x.step, {}, x.ring_round, w});
}

void Simulation::AdvanceRing(int w, double now) {
  Worker& x = workers_[w];
  const size_t base = static_cast<size_t>(x.step) * rounds_;
  while (x.ring_round >= 0 && x.ring_got[base + x.ring_round]) {
    if (++x.ring_round == rounds_) {
      x.ring_round = -1;
      EndStep(w, x.step, x.finish, now);
      return;
    }
    SendRingChunk(w, now);
  }
}

// `w` finished its backwards of `step` at `finish` and its all-reduce at `allreduce_end`: the
// optimizer runs, then the next step starts.
void Simulation::EndStep(int w, int step, double finish, double allreduce_end) {
  const Worker& x = workers_[w];
  const double end = allreduce_end + c_.stages[x.stage].optimizer_s;
  if (step + 1 < c_.steps) events_.push({end, seq_++, Event::kStepStart, w, step + 1, {}});
  end_of_step_[step] = std::max(end_of_step_[step], end);
  if (step == c_.steps - 1) {
    stage_finish_[x.stage] = std::max(stage_finish_[x.stage], finish - x.start);
    stage_allreduce_[x.stage] = std::max(stage_allreduce_[x.stage], allreduce_end - finish);
  }
}

// Every replica of `stage` finished its backwards of `step` (the last at `now`) and the
// all-reduce is not simulated on the links: it takes its measured (or ring-model) time.
void Simulation::FinishStage(int stage, int step, double now) {
  const StageCost& cost = c_.stages[stage];
  const double whole = cost.allreduce_s > 0 ? cost.allreduce_s
                                            : RingAllreduceSeconds(cost.gradient_bytes, c_.replicas,
                                                                   c_.allreduce_link);
  const int buckets = std::max(1, cost.allreduce_buckets);
  const double allreduce =
      std::max(whole / buckets, whole - stretch_ * cost.backward_s * (buckets - 1) / buckets);
  for (int r = 0; r < c_.replicas; ++r) {
    const int w = Index(stage, r);
    EndStep(w, step, workers_[w].finish, now + allreduce);
  }
}

Result<SimResult> Simulation::Run() {
  TESSERA_ASSIGN_OR_RETURN(tasks_, AllStageTasks(c_.schedule, P_, M_));
  const size_t slots = static_cast<size_t>(c_.steps) * M_;
  workers_.resize(static_cast<size_t>(P_) * c_.replicas);
  for (int r = 0; r < c_.replicas; ++r) {
    for (int s = 0; s < P_; ++s) {
      Worker& x = workers_[Index(s, r)];
      x.stage = s;
      x.replica = r;
      x.input.assign(slots, s == 0);
      x.gradient.assign(slots, false);
      x.ring_got.assign(static_cast<size_t>(c_.steps) * rounds_, false);
    }
  }
  egress_.assign(workers_.size(), Egress());
  stage_finish_.assign(P_, 0);
  stage_allreduce_.assign(P_, 0);
  for (size_t w = 0; w < workers_.size(); ++w) StartStep(static_cast<int>(w), 0);
  while (!events_.empty()) {
    Event e = events_.top();
    events_.pop();
    Worker& x = workers_[e.worker];
    switch (e.kind) {
      case Event::kArrival: {
        const size_t slot = static_cast<size_t>(e.step) * M_ + e.task.micro;
        (e.task.kind == TaskKind::kForward ? x.input : x.gradient)[slot] = true;
        // The receiver acknowledges through its own egress, behind whatever it queued there.
        const int boundary = e.task.kind == TaskKind::kForward ? x.stage - 1 : x.stage;
        Acknowledge(e.worker, e.from, e.time, c_.boundary_bytes[boundary]);
        break;
      }
      case Event::kTaskDone:
        OnTaskDone(e);
        break;
      case Event::kRingArrival: {
        x.ring_got[static_cast<size_t>(e.step) * rounds_ + e.round] = true;
        Acknowledge(e.worker, e.from, e.time, c_.stages[x.stage].gradient_bytes / c_.replicas);
        if (e.step == x.step) AdvanceRing(e.worker, e.time);
        continue;  // the worker computes nothing until its step ends
      }
      case Event::kStepStart:
        x.step = e.step;
        StartStep(e.worker, e.time);
        continue;  // StartStep already tried to run a task
    }
    TryStart(e.worker, e.time);
  }
  for (const Worker& x : workers_) {
    if (x.step != c_.steps - 1 || !x.cursor->finished() || x.ring_round >= 0) {
      return InternalError(
          fmt::format("simulator: stage {} replica {} deadlocked", x.stage, x.replica));
    }
  }

  SimResult result;
  result.finish_s = stage_finish_;
  result.allreduce_s = stage_allreduce_;
  result.pipeline_s = *std::max_element(stage_finish_.begin(), stage_finish_.end());
  result.step_s = c_.steps == 1 ? end_of_step_[0]
                                : (end_of_step_.back() - end_of_step_.front()) / (c_.steps - 1);
  double bubble_sum = 0;
  for (int s = 0; s < P_; ++s) {
    Worker& x = workers_[Index(s, 0)];
    const double span = x.finish - x.start;
    const double bubble = span > 0 ? 1.0 - x.busy_s / span : 0.0;
    if (s == 0) result.bubble_stage0 = bubble;
    bubble_sum += bubble;
    result.busy_s.push_back(x.busy_s);
    result.trace.push_back(std::move(x.trace));
  }
  result.bubble_mean = bubble_sum / P_;
  return result;
}

}  // namespace

double LinkModel::WireBytes(double payload) const {
  const double stream = payload + message_overhead_bytes;
  if (mss_bytes <= 0) return stream;
  return stream + std::ceil(stream / mss_bytes) * header_bytes;
}

double LinkModel::AckBytes(double payload) const {
  if (mss_bytes <= 0) return 0;
  return std::ceil((payload + message_overhead_bytes) / mss_bytes) * acks_per_segment *
         header_bytes;
}

double LinkModel::TransferSeconds(double payload) const {
  return latency_s + (bandwidth_bytes_per_s > 0 ? WireBytes(payload) / bandwidth_bytes_per_s : 0);
}

LinkModel WithTcpFraming(LinkModel link) {
  link.message_overhead_bytes = 16;
  link.mss_bytes = 1448;
  link.header_bytes = 66;
  link.acks_per_segment = 0.4;
  return link;
}

double CommCpuStretch(const SimConfig& c) {
  const int P = static_cast<int>(c.stages.size());
  if (c.cores <= 0 || P == 0) return 1.0;
  auto tasks = AllStageTasks(c.schedule, P, c.micro_batches);
  if (!tasks.ok()) return 1.0;
  double compute = 0, comm = 0, longest = 0;
  for (int s = 0; s < P; ++s) {
    const StageCost& cost = c.stages[s];
    double t = 0;
    for (const Task& task : (*tasks)[s]) {
      t += task.kind == TaskKind::kForward     ? cost.forward_s
           : task.kind == TaskKind::kRecompute ? cost.recompute_s
                                               : cost.backward_s;
    }
    compute += c.replicas * t;
    comm += c.replicas * cost.comm_cpu_s;
    longest = std::max(longest, t);
  }
  if (compute <= 0 || comm <= 0) return 1.0;
  const double workers = static_cast<double>(P) * c.replicas;
  const double spare = std::max(0.0, c.cores - workers) * longest;
  const double share =
      c.compute_cpu_share > 0 ? c.compute_cpu_share : std::min(1.0, c.cores / workers);
  return 1.0 + std::max(0.0, comm - spare) / (share * compute);
}

double RingAllreduceSeconds(double bytes, int replicas, const LinkModel& link) {
  if (replicas <= 1) return 0;
  const double steps = 2.0 * (replicas - 1);
  return steps * link.TransferSeconds(bytes / replicas);
}

Result<SimResult> Simulate(const SimConfig& config) {
  TESSERA_RETURN_IF_ERROR(Validate(config));
  return Simulation(config).Run();
}

}  // namespace tessera::pipeline
