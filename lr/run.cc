#include "lr/run.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/file.h"
#include "lr/run_archive.h"
#include "lr/schedule_spec.h"

namespace tessera::lr {

Run::Run(const TrainConfig& c, std::unique_ptr<Task> task, std::shared_ptr<Net> net,
         std::unique_ptr<torch::optim::Optimizer> opt, int64_t total, ProgressFn progress)
    : c_(c),
      task_(std::move(task)),
      net_(std::move(net)),
      opt_(std::move(opt)),
      total_(total),
      progress_(std::move(progress)) {}

Status Run::Init() {
  const int64_t evals =
      c_.evals > 0 ? c_.evals : std::max<int64_t>(total_ / task_->StepsPerEpoch(), 1);
  eval_every_ = std::max<int64_t>((total_ + evals - 1) / evals, 1);
  metric_every_ = c_.metric_every > 0 ? c_.metric_every : std::max<int64_t>(total_ / 20, 1);
  // The online tuner sets rates itself (through the adapter's ratios); a range- or trial-tuned
  // run gets its real peak from UsePeak.
  const bool online = c_.tune && c_.tune_method == "online";
  TESSERA_ASSIGN_OR_RETURN(schedule_,
                           MakeSchedule(online ? "constant" : c_.schedule, c_.lr, total_));
  TESSERA_ASSIGN_OR_RETURN(ScheduleAdapter a, ScheduleAdapter::Create(*opt_, *schedule_));
  adapter_.emplace(std::move(a));
  if (!c_.checkpoint_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(c_.checkpoint_dir, ec);
    if (ec) {
      return InternalError(fmt::format("cannot create {}: {}", c_.checkpoint_dir, ec.message()));
    }
    if (c_.resume && std::filesystem::exists(CheckpointPath())) {
      TESSERA_RETURN_IF_ERROR(LoadCheckpoint());
    }
  }
  TESSERA_ASSIGN_OR_RETURN(log_, RunLog::Open(c_.log_csv, step_));
  return Status::Ok();
}

double Run::TrainStep() {
  auto [x, y] = task_->Batch(step_);
  opt_->zero_grad();
  torch::Tensor loss = task_->Loss(net_->forward(x), y);
  loss.backward();
  if (c_.task == "lm") torch::nn::utils::clip_grad_norm_(net_->parameters(), 1.0);
  opt_->step();
  ++step_;
  ++updates_;
  return loss.item<double>();
}

Status Run::Commit(double lr, double loss, const char* phase) {
  const int64_t done = step_;  // steps completed; the row is for update done - 1
  last_lr_ = lr;
  last_loss_ = loss;
  log_.Step(done - 1, lr, loss, phase);
  window_sum_ += loss;
  ++window_count_;
  if (window_count_ == metric_every_) {
    schedule_->ReportMetric(done - 1, window_sum_ / static_cast<double>(window_count_));
    window_sum_ = 0;
    window_count_ = 0;
  }
  if (done % eval_every_ == 0 || done == total_) Evaluate();
  const bool stopping = c_.stop_after > 0 && done >= c_.stop_after && done < total_;
  if (!c_.checkpoint_dir.empty() && ((c_.checkpoint_every > 0 && done % c_.checkpoint_every == 0) ||
                                     stopping || done == total_)) {
    TESSERA_RETURN_IF_ERROR(SaveCheckpoint());
  }
  return Status::Ok();
}

bool Run::ShouldStop() {
  if (c_.stop_after > 0 && step_ >= c_.stop_after) return true;
  if (c_.should_stop && c_.should_stop({.step = step_,
                                        .total_steps = total_,
                                        .resumed_from = resumed_from_,
                                        .lr = last_lr_,
                                        .loss = last_loss_})) {
    hook_stopped_ = true;
    return true;
  }
  return false;
}

Result<TrainResult> Run::RunSchedule() {
  const auto start = std::chrono::steady_clock::now();
  while (step_ < total_ && !ShouldStop()) {
    const double lr = adapter_->Apply(step_);
    const double loss = TrainStep();
    TESSERA_RETURN_IF_ERROR(Commit(lr, loss, "schedule"));
  }
  TESSERA_RETURN_IF_ERROR(CheckpointAfterStop());
  return Finish(start);
}

Status Run::CheckpointAfterStop() {
  // stop_after checkpoints in Commit; a stop by the hook can come at any boundary.
  if (hook_stopped_ && !c_.checkpoint_dir.empty()) return SaveCheckpoint();
  return Status::Ok();
}

Result<TrainResult> Run::Finish(std::chrono::steady_clock::time_point start) {
  TrainResult r;
  r.total_steps = total_;
  r.steps_done = step_;
  r.resumed_from = resumed_from_;
  r.finished = step_ >= total_;
  r.stopped = !r.finished;
  r.final_lr = last_lr_;
  r.last_loss = last_loss_;
  r.test_loss = last_eval_.loss;
  r.test_accuracy = last_eval_.accuracy;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (r.finished && task_->has_validation()) {
    TESSERA_ASSIGN_OR_RETURN(EvalResult v, task_->EvaluateValidation(*net_));
    r.has_validation = true;
    r.val_loss = v.loss;
    r.val_accuracy = v.accuracy;
  }
  r.parameters_fingerprint = ParametersFingerprint(*net_);
  r.optimizer_steps = updates_;
  log_.Flush();
  return r;
}

void Run::Evaluate() {
  last_eval_ = task_->Evaluate(*net_);
  const double epoch = static_cast<double>(step_) / static_cast<double>(task_->StepsPerEpoch());
  log_.Eval(step_ - 1, epoch, last_eval_.loss, last_eval_.accuracy);
  if (progress_) {
    progress_(fmt::format(
        "step {}/{} epoch {:.2f} lr {:.4g} loss {:.4f} test_loss {:.4f}{}", step_, total_, epoch,
        last_lr_, last_loss_, last_eval_.loss,
        c_.task == "fmnist" ? fmt::format(" test_acc {:.4f}", last_eval_.accuracy) : ""));
  }
}

LoopState Run::State() const {
  return {.step = step_,
          .window_sum = window_sum_,
          .window_count = window_count_,
          .lrs = {},
          .schedule_state = schedule_->SaveState(),
          .tuned_peak = tuned_peak_,
          .tuner_state = tuner_state_};
}

Status Run::UsePeak(double peak) {
  TESSERA_ASSIGN_OR_RETURN(auto schedule, MakeSchedule(c_.schedule, peak, total_));
  // The adapter's ratios come from the optimizer's current rates, which are the configured ones
  // here (a range test returns to its snapshot, rates included).
  TESSERA_ASSIGN_OR_RETURN(ScheduleAdapter a, ScheduleAdapter::Create(*opt_, *schedule));
  schedule_ = std::move(schedule);
  adapter_.emplace(std::move(a));
  tuned_peak_ = peak;
  return Status::Ok();
}

Result<std::string> Run::Snapshot() {
  return SerializeRun(*net_, *opt_, State(), ConfigFingerprint(c_));
}

Status Run::Restore(std::string_view snapshot) {
  TESSERA_ASSIGN_OR_RETURN(LoopState s,
                           DeserializeRun(snapshot, *net_, *opt_, ConfigFingerprint(c_), total_));
  TESSERA_RETURN_IF_ERROR(schedule_->RestoreState(s.schedule_state));
  step_ = s.step;
  tuned_peak_ = s.tuned_peak;
  tuner_state_ = s.tuner_state;
  window_sum_ = s.window_sum;
  window_count_ = s.window_count;
  if (!s.lrs.empty()) last_lr_ = s.lrs[0];
  return Status::Ok();
}

std::string Run::CheckpointPath() const {
  return (std::filesystem::path(c_.checkpoint_dir) / "checkpoint.pt").string();
}

Status Run::SaveCheckpoint() {
  // The logs must hold every row up to the checkpoint before it exists: a run killed after
  // this point resumes from here and would otherwise lose rows still in the buffers.
  log_.Flush();
  TESSERA_ASSIGN_OR_RETURN(std::string bytes, Snapshot());
  return WriteFileAtomically(CheckpointPath(), bytes);
}

Status Run::LoadCheckpoint() {
  TESSERA_ASSIGN_OR_RETURN(std::string bytes, ReadFile(CheckpointPath()));
  TESSERA_RETURN_IF_ERROR(Restore(bytes).WithContext(CheckpointPath()));
  resumed_from_ = step_;
  return Status::Ok();
}

}  // namespace tessera::lr
