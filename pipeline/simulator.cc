#include "pipeline/simulator.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <random>

#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

struct Event {
  double time;
  uint64_t seq;  // FIFO among equal times: deterministic
  enum Kind { kArrival, kTaskDone } kind;
  int stage;
  Task task;  // kArrival: forward = activation for task.micro, backward = its gradient
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

Status Validate(const SimConfig& c) {
  const int P = static_cast<int>(c.stages.size());
  if (P < 1) return InvalidArgumentError("simulator: no stages");
  if (c.micro_batches < 1) return InvalidArgumentError("simulator: micro_batches must be >= 1");
  if (c.replicas < 1) return InvalidArgumentError("simulator: replicas must be >= 1");
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
  for (const LinkModel* l : {&c.pipeline_link, &c.allreduce_link}) {
    if (l->bandwidth_bytes_per_s < 0 || l->latency_s < 0 || l->burst_bytes < 0) {
      return InvalidArgumentError("simulator: negative bandwidth or latency");
    }
  }
  if (c.jitter < 0) return InvalidArgumentError("simulator: negative jitter");
  return Status::Ok();
}

struct ReplicaResult {
  std::vector<double> busy, finish;
  std::vector<std::vector<TimedTask>> trace;
};

Result<ReplicaResult> SimulateReplica(const SimConfig& c, std::mt19937_64& rng) {
  const int P = static_cast<int>(c.stages.size());
  const int M = c.micro_batches;
  std::normal_distribution<double> normal(0.0, 1.0);
  auto draw = [&](double base) {
    if (c.jitter == 0) return base;
    return base * std::max(0.0, 1.0 + c.jitter * normal(rng));
  };

  struct StageState {
    std::optional<TaskCursor> cursor;
    std::vector<bool> input, gradient;
    bool busy = false;
  };
  std::vector<StageState> st(P);
  const bool opportunistic = c.opportunistic && c.schedule == ScheduleKind::kVaruna;
  TESSERA_ASSIGN_OR_RETURN(auto all_tasks, AllStageTasks(c.schedule, P, M));
  for (int s = 0; s < P; ++s) {
    st[s].cursor.emplace(std::move(all_tasks[s]), opportunistic);
    st[s].input.assign(M, s == 0);
    st[s].gradient.assign(M, false);
  }
  // Directed links: up[b] carries activations b -> b+1, down[b] gradients b+1 -> b. Each is
  // busy until `free`, and holds a token bucket (tbf's burst) that refills at the bandwidth.
  struct Link {
    double free = 0, tokens = 0, refilled_at = 0;
  };
  const LinkModel& lm = c.pipeline_link;
  std::vector<Link> up(std::max(P - 1, 0)), down(std::max(P - 1, 0));
  for (Link& l : up) l.tokens = lm.burst_bytes;
  for (Link& l : down) l.tokens = lm.burst_bytes;
  // Sends `bytes` at `now`; returns the arrival time.
  auto transmit = [&](Link& l, double now, double bytes) {
    const double start = std::max(l.free, now);
    double wire = 0;
    if (lm.bandwidth_bytes_per_s > 0) {
      l.tokens =
          std::min(lm.burst_bytes, l.tokens + (start - l.refilled_at) * lm.bandwidth_bytes_per_s);
      const double taken = std::min(l.tokens, bytes);
      l.tokens -= taken;
      wire = (bytes - taken) / lm.bandwidth_bytes_per_s;
    }
    l.free = start + wire;
    l.refilled_at = l.free;
    return l.free + lm.latency_s;
  };

  ReplicaResult out;
  out.busy.assign(P, 0);
  out.finish.assign(P, 0);
  out.trace.resize(P);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t seq = 0;

  auto try_start = [&](int s, double now) {
    StageState& x = st[s];
    if (x.busy || x.cursor->finished()) return;
    auto ready = [&](const Task& t) {
      if (t.kind == TaskKind::kForward) return static_cast<bool>(x.input[t.micro]);
      if (t.kind == TaskKind::kBackward) return static_cast<bool>(x.gradient[t.micro]);
      return true;
    };
    std::optional<Task> next = x.cursor->Next(ready);
    if (!next) return;
    const StageCost& cost = c.stages[s];
    double d = next->kind == TaskKind::kForward     ? cost.forward_s
               : next->kind == TaskKind::kRecompute ? cost.recompute_s
                                                    : cost.backward_s;
    d = draw(d);
    x.cursor->MarkDone(*next);
    x.busy = true;
    out.busy[s] += d;
    out.trace[s].push_back({*next, now, now + d});
    events.push({now + d, seq++, Event::kTaskDone, s, *next});
  };

  for (int s = 0; s < P; ++s) try_start(s, 0);
  while (!events.empty()) {
    Event e = events.top();
    events.pop();
    StageState& x = st[e.stage];
    if (e.kind == Event::kArrival) {
      if (e.task.kind == TaskKind::kForward) {
        x.input[e.task.micro] = true;
      } else {
        x.gradient[e.task.micro] = true;
      }
    } else {
      x.busy = false;
      const int s = e.stage;
      if (e.task.kind == TaskKind::kForward) {
        if (s == P - 1) {
          x.gradient[e.task.micro] = true;  // the loss is computed here
        } else {
          events.push({transmit(up[s], e.time, c.boundary_bytes[s]),
                       seq++,
                       Event::kArrival,
                       s + 1,
                       {TaskKind::kForward, e.task.micro}});
        }
      } else if (e.task.kind == TaskKind::kBackward) {
        out.finish[s] = e.time;
        if (s > 0) {
          events.push({transmit(down[s - 1], e.time, c.boundary_bytes[s - 1]),
                       seq++,
                       Event::kArrival,
                       s - 1,
                       {TaskKind::kBackward, e.task.micro}});
        }
      }
    }
    try_start(e.stage, e.time);
  }
  for (int s = 0; s < P; ++s) {
    if (!st[s].cursor->finished()) {
      return InternalError(fmt::format("simulator: stage {} deadlocked", s));
    }
  }
  return out;
}

}  // namespace

double LinkModel::TransferSeconds(double bytes) const {
  return latency_s + (bandwidth_bytes_per_s > 0 ? bytes / bandwidth_bytes_per_s : 0.0);
}

double RingAllreduceSeconds(double bytes, int replicas, const LinkModel& link) {
  if (replicas <= 1) return 0;
  const double steps = 2.0 * (replicas - 1);
  return steps * link.TransferSeconds(bytes / replicas);
}

Result<SimResult> Simulate(const SimConfig& config) {
  TESSERA_RETURN_IF_ERROR(Validate(config));
  const int P = static_cast<int>(config.stages.size());
  std::mt19937_64 rng(config.seed);
  SimResult result;
  result.finish_s.assign(P, 0);
  for (int r = 0; r < config.replicas; ++r) {
    TESSERA_ASSIGN_OR_RETURN(ReplicaResult rep, SimulateReplica(config, rng));
    for (int s = 0; s < P; ++s) result.finish_s[s] = std::max(result.finish_s[s], rep.finish[s]);
    if (r == 0) {
      result.busy_s = rep.busy;
      result.trace = std::move(rep.trace);
      const double makespan = *std::max_element(rep.finish.begin(), rep.finish.end());
      double idle_sum = 0;
      for (int s = 0; s < P; ++s) idle_sum += makespan - rep.busy[s];
      if (makespan > 0) {
        result.bubble_stage0 = (makespan - rep.busy[0]) / makespan;
        result.bubble_mean = idle_sum / P / makespan;
      }
    }
  }
  result.pipeline_s = *std::max_element(result.finish_s.begin(), result.finish_s.end());
  result.allreduce_s.resize(P);
  for (int s = 0; s < P; ++s) {
    const StageCost& cost = config.stages[s];
    result.allreduce_s[s] =
        cost.allreduce_s > 0
            ? cost.allreduce_s
            : RingAllreduceSeconds(cost.gradient_bytes, config.replicas, config.allreduce_link);
    result.step_s =
        std::max(result.step_s, result.finish_s[s] + result.allreduce_s[s] + cost.optimizer_s);
  }
  return result;
}

}  // namespace tessera::pipeline
