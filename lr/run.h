// One training run in progress: the loop of lr::Train(). Owns the task, the model, the
// optimizer, the schedule and its adapter, the logs and the checkpoints. A schedule run is
// RunSchedule(); the tuner drives the same run step by step through TrainStep()/Commit() and
// in-memory snapshots (lr/tuner_bridge.h). Internal to the lr trainer (torch header).
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "lr/models.h"
#include "lr/run_archive.h"
#include "lr/run_log.h"
#include "lr/schedule.h"
#include "lr/tasks.h"
#include "lr/torch_adapter.h"
#include "lr/trainer.h"

namespace tessera::lr {

class Run {
 public:
  // `config` must outlive the run.
  Run(const TrainConfig& config, std::unique_ptr<Task> task, std::shared_ptr<Net> net,
      std::unique_ptr<torch::optim::Optimizer> optimizer, int64_t total_steps, ProgressFn progress);

  // Builds the schedule and the adapter, resumes from a checkpoint when asked, opens the logs.
  Status Init();

  // The whole budget under the schedule (or up to a stop), then the final evaluations.
  Result<TrainResult> RunSchedule();

  // ---- for the tuner (lr/tuner_bridge.h)

  // One update on the minibatch of the current step, at whatever rates the groups hold.
  double TrainStep();
  // Sets every group to `lr` times its ratio to the first group.
  void SetRate(double lr) { adapter_->SetRate(lr); }
  // After a step that counts: log, feed the schedule, evaluate, checkpoint.
  Status Commit(double lr, double loss, const char* phase);
  // The validation loss and accuracy now (FAILED_PRECONDITION without a validation set).
  Result<EvalResult> EvaluateValidation() { return task_->EvaluateValidation(*net_); }
  bool has_validation() const { return task_->has_validation(); }
  // The complete state as bytes, and back (in memory).
  Result<std::string> Snapshot();
  Status Restore(std::string_view snapshot);
  // The result so far, with the final evaluations.
  Result<TrainResult> Finish(std::chrono::steady_clock::time_point start);

  // Replaces the schedule by `schedule` (TrainConfig::schedule) at peak `peak`: a range test's
  // choice. Recorded in checkpoints.
  Status UsePeak(double peak);
  // The peak UsePeak set, or the one a resumed checkpoint recorded (0: none).
  double tuned_peak() const { return tuned_peak_; }
  // The online tuner's state, kept for checkpoints (set after every committed step).
  void SetTunerState(std::string state) { tuner_state_ = std::move(state); }
  const std::string& tuner_state() const { return tuner_state_; }
  int64_t resumed_from() const { return resumed_from_; }
  // At a step boundary before the end: whether stop_after or the stop hook ends the run here.
  bool ShouldStop();
  // After a stop: a stop by the hook is checkpointed here (stop_after's was in Commit).
  Status CheckpointAfterStop();

  int64_t total_steps() const { return total_; }
  const ProgressFn& progress() const { return progress_; }

 private:
  void Evaluate();
  std::string CheckpointPath() const;
  Status SaveCheckpoint();
  Status LoadCheckpoint();
  LoopState State() const;

  const TrainConfig& c_;
  std::unique_ptr<Task> task_;
  std::shared_ptr<Net> net_;
  std::unique_ptr<torch::optim::Optimizer> opt_;
  int64_t total_;
  ProgressFn progress_;
  std::unique_ptr<Schedule> schedule_;
  std::optional<ScheduleAdapter> adapter_;
  RunLog log_;
  int64_t step_ = 0;
  int64_t updates_ = 0;  // optimizer updates run by this process (trials included)
  int64_t resumed_from_ = 0;
  bool hook_stopped_ = false;
  int64_t eval_every_ = 1;
  int64_t metric_every_ = 1;
  double window_sum_ = 0;
  int64_t window_count_ = 0;
  double last_lr_ = 0;
  double last_loss_ = 0;
  double tuned_peak_ = 0;
  std::string tuner_state_;
  EvalResult last_eval_;
};

}  // namespace tessera::lr
