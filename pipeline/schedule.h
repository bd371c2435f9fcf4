// Micro-batch schedules of a pipeline: which task each stage runs, and in which order.
//
// A training step splits a replica's batch into M micro-batches that flow through P stages.
// Each stage runs, per micro-batch, a forward (F), optionally a recompute (R: the forward again,
// this time recording autograd, from the stashed stage input) and a backward (B). A schedule is
// the ordered task list of every stage; it is a pure function of (P, M, stage) and is shared by
// the runtime (pipeline/stage_runtime.h) and the simulator (pipeline/simulator.h), so both walk
// exactly the same order.
//
//   Varuna   forwards are front-loaded, bounded only by gradient arrival; non-last stages run
//            forwards without autograd and recompute "just in time" (Varuna's genschedule,
//            research note §4.1); the last stage is 1F1B without recompute.
//   GPipe    all forwards, then recompute + backward in reverse micro-batch order, on every stage
//            (GPipe's re-materialization).
//   1F1B     PipeDream-Flush: P-s-1 warm-up forwards, strict F/B alternation, cool-down; every
//            forward records autograd, no recompute.
//
// This header is torch-free.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::pipeline {

enum class TaskKind : unsigned char { kForward, kRecompute, kBackward };

struct Task {
  TaskKind kind;
  int micro;  // micro-batch index in [0, M)
  friend bool operator==(const Task&, const Task&) = default;
};

enum class ScheduleKind { kVaruna, kGPipe, kOneFOneB };

// "varuna", "gpipe", "1f1b".
std::string_view ScheduleName(ScheduleKind kind);
Result<ScheduleKind> ParseScheduleKind(std::string_view name);
inline constexpr ScheduleKind kAllSchedules[] = {ScheduleKind::kVaruna, ScheduleKind::kGPipe,
                                                 ScheduleKind::kOneFOneB};

// True when `stage` runs its forwards without autograd (stashing only its input) and recomputes
// each micro-batch before the backward.
bool StageRecomputes(ScheduleKind kind, int stages, int stage);

// The ordered task list of one stage. INVALID_ARGUMENT unless 1 <= stages, 1 <= micro_batches
// and 0 <= stage < stages.
Result<std::vector<Task>> StageTasks(ScheduleKind kind, int stages, int micro_batches, int stage);

// The task lists of all stages (Varuna's generator runs once rather than once per stage).
Result<std::vector<std::vector<Task>>> AllStageTasks(ScheduleKind kind, int stages,
                                                     int micro_batches);

// Checks that `tasks` holds exactly one F and one B per micro-batch (and one R when
// `recomputes`), with F before R before B.
Status ValidateStageTasks(const std::vector<Task>& tasks, int micro_batches, bool recomputes);

// "F0 F1 R0 B0 ...".
std::string FormatTasks(const std::vector<Task>& tasks);

// Varuna's schedule generator in unit time slots (forward 1, recompute 1, backward 2; per slot
// priority: second half of a backward > backward start > recompute > forward; an event in slot t
// is visible to other stages in slot t+1). StageTasks(kVaruna, ...) is the task order of this
// timeline.
struct UnitTimeline {
  int makespan = 0;                      // slots until the last backward ends
  std::vector<std::vector<Task>> tasks;  // per stage, in start order
  std::vector<std::string> rows;         // per stage, one token per slot: F3 R3 B3 b3 or "."
};
Result<UnitTimeline> VarunaUnitTimeline(int stages, int micro_batches);

// Idle slots of `stage` divided by the makespan (the bubble measure of the research note §4.4).
double UnitBubbleFraction(const UnitTimeline& timeline, int stage = 0);

// Walks one stage's task list at run time. Tasks run in list order, except Varuna's
// opportunistic forward: when the next task is a recompute whose gradient has not arrived yet,
// the first pending forward whose input has arrived is pulled ahead (Varuna pulls it ahead
// unconditionally; requiring its input keeps a stage from blocking on a receive while its
// neighbour waits for it).
class TaskCursor {
 public:
  // `ready(task)`: for a forward, its input is present; for a backward, its output gradient is
  // present. Recomputes are always runnable.
  using ReadyFn = std::function<bool(const Task&)>;

  TaskCursor(std::vector<Task> tasks, bool opportunistic);

  // The task to run now, or nullopt when the next one must wait for a message.
  std::optional<Task> Next(const ReadyFn& ready) const;
  // Marks `task` (returned by Next) as run.
  void MarkDone(const Task& task);
  bool finished() const { return remaining_ == 0; }
  // Number of forwards that ran ahead of a recompute so far.
  int pulled_ahead() const { return pulled_ahead_; }

 private:
  std::vector<Task> tasks_;
  std::vector<bool> done_;
  size_t first_pending_ = 0;
  size_t remaining_;
  bool opportunistic_;
  int pulled_ahead_ = 0;
};

}  // namespace tessera::pipeline
