#include "pipeline/schedule.h"

#include <algorithm>
#include <array>
#include <deque>
#include <utility>

#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

Status CheckShape(int stages, int micro_batches) {
  if (stages < 1) return InvalidArgumentError(fmt::format("stages must be >= 1, got {}", stages));
  if (micro_batches < 1) {
    return InvalidArgumentError(fmt::format("micro-batches must be >= 1, got {}", micro_batches));
  }
  // The slot simulation is quadratic-free but keep absurd inputs out of memory.
  if (stages > 4096 || micro_batches > 1 << 20) {
    return InvalidArgumentError("stages or micro-batches too large");
  }
  return Status::Ok();
}

char Letter(TaskKind kind) {
  switch (kind) {
    case TaskKind::kForward:
      return 'F';
    case TaskKind::kRecompute:
      return 'R';
    case TaskKind::kBackward:
      return 'B';
  }
  return '?';
}

std::vector<Task> GPipeTasks(int stages, int micro_batches) {
  std::vector<Task> tasks;
  for (int i = 0; i < micro_batches; ++i) tasks.push_back({TaskKind::kForward, i});
  for (int i = micro_batches - 1; i >= 0; --i) {
    tasks.push_back({TaskKind::kRecompute, i});
    tasks.push_back({TaskKind::kBackward, i});
  }
  return tasks;
}

std::vector<Task> OneFOneBTasks(int stages, int micro_batches, int stage) {
  const int warmup = std::min(stages - stage - 1, micro_batches);
  std::vector<Task> tasks;
  for (int i = 0; i < warmup; ++i) tasks.push_back({TaskKind::kForward, i});
  for (int i = 0; i + warmup < micro_batches; ++i) {
    tasks.push_back({TaskKind::kForward, i + warmup});
    tasks.push_back({TaskKind::kBackward, i});
  }
  for (int i = micro_batches - warmup; i < micro_batches; ++i) {
    tasks.push_back({TaskKind::kBackward, i});
  }
  return tasks;
}

}  // namespace

std::string_view ScheduleName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kVaruna:
      return "varuna";
    case ScheduleKind::kGPipe:
      return "gpipe";
    case ScheduleKind::kOneFOneB:
      return "1f1b";
  }
  return "unknown";
}

Result<ScheduleKind> ParseScheduleKind(std::string_view name) {
  for (ScheduleKind kind : kAllSchedules) {
    if (ScheduleName(kind) == name) return kind;
  }
  return InvalidArgumentError(
      fmt::format("unknown schedule '{}' (want varuna, gpipe or 1f1b)", name));
}

bool StageRecomputes(ScheduleKind kind, int stages, int stage) {
  switch (kind) {
    case ScheduleKind::kVaruna:
      return stage != stages - 1;
    case ScheduleKind::kGPipe:
      return true;
    case ScheduleKind::kOneFOneB:
      return false;
  }
  return false;
}

Result<std::vector<Task>> StageTasks(ScheduleKind kind, int stages, int micro_batches, int stage) {
  TESSERA_RETURN_IF_ERROR(CheckShape(stages, micro_batches));
  if (stage < 0 || stage >= stages) {
    return InvalidArgumentError(fmt::format("stage {} out of range [0, {})", stage, stages));
  }
  switch (kind) {
    case ScheduleKind::kVaruna: {
      TESSERA_ASSIGN_OR_RETURN(UnitTimeline timeline, VarunaUnitTimeline(stages, micro_batches));
      return std::move(timeline.tasks[stage]);
    }
    case ScheduleKind::kGPipe:
      return GPipeTasks(stages, micro_batches);
    case ScheduleKind::kOneFOneB:
      return OneFOneBTasks(stages, micro_batches, stage);
  }
  return InvalidArgumentError("unknown schedule kind");
}

Result<std::vector<std::vector<Task>>> AllStageTasks(ScheduleKind kind, int stages,
                                                     int micro_batches) {
  TESSERA_RETURN_IF_ERROR(CheckShape(stages, micro_batches));
  if (kind == ScheduleKind::kVaruna) {
    TESSERA_ASSIGN_OR_RETURN(UnitTimeline timeline, VarunaUnitTimeline(stages, micro_batches));
    return std::move(timeline.tasks);
  }
  std::vector<std::vector<Task>> out;
  for (int s = 0; s < stages; ++s) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<Task> tasks, StageTasks(kind, stages, micro_batches, s));
    out.push_back(std::move(tasks));
  }
  return out;
}

Status ValidateStageTasks(const std::vector<Task>& tasks, int micro_batches, bool recomputes) {
  // Per micro-batch: position of F, R, B (-1 = absent).
  std::vector<std::array<int, 3>> seen(micro_batches, {-1, -1, -1});
  for (size_t pos = 0; pos < tasks.size(); ++pos) {
    const Task& t = tasks[pos];
    if (t.micro < 0 || t.micro >= micro_batches) {
      return InvalidArgumentError(
          fmt::format("task {} has micro-batch {} out of range", pos, t.micro));
    }
    int& slot = seen[t.micro][static_cast<int>(t.kind)];
    if (slot != -1) {
      return InvalidArgumentError(fmt::format("{}{} appears twice", Letter(t.kind), t.micro));
    }
    slot = static_cast<int>(pos);
  }
  for (int i = 0; i < micro_batches; ++i) {
    auto [f, r, b] = seen[i];
    if (f < 0 || b < 0) return InvalidArgumentError(fmt::format("micro-batch {} lacks F or B", i));
    if (recomputes != (r >= 0)) {
      return InvalidArgumentError(
          fmt::format("micro-batch {}: recompute {} expected", i, recomputes ? "is" : "is not"));
    }
    if (f > b || (r >= 0 && (r < f || r > b))) {
      return InvalidArgumentError(fmt::format("micro-batch {}: tasks out of order", i));
    }
  }
  return Status::Ok();
}

std::string FormatTasks(const std::vector<Task>& tasks) {
  std::string out;
  for (const Task& t : tasks) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}{}", Letter(t.kind), t.micro);
  }
  return out;
}

Result<UnitTimeline> VarunaUnitTimeline(int stages, int micro_batches) {
  TESSERA_RETURN_IF_ERROR(CheckShape(stages, micro_batches));
  const int P = stages;
  const int M = micro_batches;
  struct StageState {
    std::deque<int> forward_ready;    // input visible
    std::deque<int> recompute_ready;  // a later stage started this micro-batch's backward
    std::deque<int> backward_ready;   // recomputed (or, last stage, forwarded) and gradient in
    std::vector<bool> recomputed, have_gradient;
    int second_half = -1;  // micro-batch whose backward occupies the next slot
    int backwards_done = 0;
  };
  std::vector<StageState> st(P);
  for (auto& s : st) {
    s.recomputed.assign(M, false);
    s.have_gradient.assign(M, false);
  }
  for (int i = 0; i < M; ++i) st[0].forward_ready.push_back(i);

  // Events produced in slot t, applied at the start of slot t+1.
  enum class Event { kForwardDone, kBackwardStarted, kRecomputeDone, kBackwardDone };
  struct Pending {
    Event event;
    int stage, micro;
  };
  std::vector<Pending> pending;

  UnitTimeline out;
  out.tasks.resize(P);
  out.rows.resize(P);
  auto gradient_in = [&](int s, int i) {
    if (st[s].recomputed[i] && st[s].have_gradient[i]) st[s].backward_ready.push_back(i);
  };
  int finished = 0;
  for (int slot = 0; finished < P; ++slot) {
    for (const Pending& p : pending) {
      switch (p.event) {
        case Event::kForwardDone:
          if (p.stage == P - 1) {
            // The last stage computes the loss itself: its backward needs nothing else.
            st[p.stage].backward_ready.push_back(p.micro);
          } else {
            st[p.stage + 1].forward_ready.push_back(p.micro);
          }
          break;
        case Event::kBackwardStarted:
          if (p.stage > 0) st[p.stage - 1].recompute_ready.push_back(p.micro);
          break;
        case Event::kRecomputeDone:
          st[p.stage].recomputed[p.micro] = true;
          gradient_in(p.stage, p.micro);
          break;
        case Event::kBackwardDone:
          if (p.stage > 0) {
            st[p.stage - 1].have_gradient[p.micro] = true;
            gradient_in(p.stage - 1, p.micro);
          }
          break;
      }
    }
    pending.clear();
    for (int s = 0; s < P; ++s) {
      StageState& x = st[s];
      std::string token = ".";
      if (x.second_half >= 0) {
        token = fmt::format("b{}", x.second_half);
        pending.push_back({Event::kBackwardDone, s, x.second_half});
        x.second_half = -1;
        if (++x.backwards_done == M) ++finished;
      } else if (!x.backward_ready.empty()) {
        const int i = x.backward_ready.front();
        x.backward_ready.pop_front();
        token = fmt::format("B{}", i);
        out.tasks[s].push_back({TaskKind::kBackward, i});
        pending.push_back({Event::kBackwardStarted, s, i});
        x.second_half = i;
      } else if (!x.recompute_ready.empty()) {
        const int i = x.recompute_ready.front();
        x.recompute_ready.pop_front();
        token = fmt::format("R{}", i);
        out.tasks[s].push_back({TaskKind::kRecompute, i});
        pending.push_back({Event::kRecomputeDone, s, i});
      } else if (!x.forward_ready.empty()) {
        const int i = x.forward_ready.front();
        x.forward_ready.pop_front();
        token = fmt::format("F{}", i);
        out.tasks[s].push_back({TaskKind::kForward, i});
        pending.push_back({Event::kForwardDone, s, i});
      }
      if (!out.rows[s].empty()) out.rows[s] += ' ';
      out.rows[s] += token;
    }
    out.makespan = slot + 1;
    if (pending.empty() && finished < P) {
      return InternalError("Varuna unit timeline stalled");  // cannot happen: rules are total
    }
  }
  return out;
}

double UnitBubbleFraction(const UnitTimeline& timeline, int stage) {
  if (timeline.makespan == 0 || stage < 0 || stage >= static_cast<int>(timeline.rows.size())) {
    return 0;
  }
  int idle = 0;
  for (size_t i = 0; i < timeline.rows[stage].size(); ++i) {
    const std::string& row = timeline.rows[stage];
    if (row[i] == '.' && (i == 0 || row[i - 1] == ' ')) ++idle;
  }
  return static_cast<double>(idle) / timeline.makespan;
}

TaskCursor::TaskCursor(std::vector<Task> tasks, bool opportunistic)
    : tasks_(std::move(tasks)),
      done_(tasks_.size(), false),
      remaining_(tasks_.size()),
      opportunistic_(opportunistic) {}

std::optional<Task> TaskCursor::Next(const ReadyFn& ready) const {
  if (first_pending_ >= tasks_.size()) return std::nullopt;
  const Task& next = tasks_[first_pending_];
  if (next.kind == TaskKind::kRecompute) {
    if (opportunistic_ && !ready({TaskKind::kBackward, next.micro})) {
      for (size_t i = first_pending_ + 1; i < tasks_.size(); ++i) {
        if (done_[i] || tasks_[i].kind != TaskKind::kForward) continue;
        if (ready(tasks_[i])) return tasks_[i];
        break;  // only the first pending forward may run ahead, keeping forwards in order
      }
    }
    return next;
  }
  if (ready(next)) return next;
  return std::nullopt;
}

void TaskCursor::MarkDone(const Task& task) {
  for (size_t i = first_pending_; i < tasks_.size(); ++i) {
    if (!done_[i] && tasks_[i] == task) {
      if (i != first_pending_) ++pulled_ahead_;
      done_[i] = true;
      --remaining_;
      break;
    }
  }
  while (first_pending_ < tasks_.size() && done_[first_pending_]) ++first_pending_;
}

}  // namespace tessera::pipeline
