#include "lr/tuner_bridge.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "lr/range_test.h"
#include "lr/schedule_spec.h"
#include "lr/tuner.h"

namespace tessera::lr {
namespace {

// The tuner's view of a run.
class RunTrainable final : public Trainable {
 public:
  explicit RunTrainable(Run& run) : run_(run) {}
  Status Snapshot() override {
    TESSERA_ASSIGN_OR_RETURN(snapshot_, run_.Snapshot());
    return Status::Ok();
  }
  Status Restore() override {
    if (snapshot_.empty()) return FailedPreconditionError("restore before any snapshot");
    return run_.Restore(snapshot_);
  }
  Result<double> Step(double lr) override {
    run_.SetRate(lr);
    return run_.TrainStep();
  }
  void Committed(int64_t, double lr, double loss, TunerPhase phase) override {
    Status s = run_.Commit(lr, loss, TunerPhaseName(phase));
    if (!s.ok() && status_.ok()) status_ = s;
  }
  void TunerStateChanged(const std::string& state) override { run_.SetTunerState(state); }
  bool ShouldStop() override { return run_.ShouldStop(); }
  Status status() const { return status_; }

 private:
  Run& run_;
  std::string snapshot_;
  Status status_;
};

}  // namespace

Result<TrainResult> RunTuned(Run& run, const TrainConfig& c) {
  const auto start = std::chrono::steady_clock::now();
  TunerOptions o = c.tuner;
  o.initial_lr = c.lr;
  o.total_steps = run.total_steps();
  RunTrainable trainable(run);
  // A run resumed from a checkpoint continues the tuner from the state saved with it.
  std::optional<TunerState> resume;
  if (run.resumed_from() > 0) {
    if (run.tuner_state().empty()) {
      return DataLossError("checkpoint of a tuner run holds no tuner state");
    }
    TESSERA_ASSIGN_OR_RETURN(resume, TunerState::Parse(run.tuner_state()));
    if (resume->step != run.resumed_from()) {
      return DataLossError("checkpoint's tuner state is not at the checkpoint's step");
    }
  }
  TESSERA_ASSIGN_OR_RETURN(TunerReport report, RunTuner(o, trainable, resume ? &*resume : nullptr));
  TESSERA_RETURN_IF_ERROR(trainable.status());
  if (report.stopped) TESSERA_RETURN_IF_ERROR(run.CheckpointAfterStop());
  TESSERA_ASSIGN_OR_RETURN(TrainResult r, run.Finish(start));
  r.tuner_lr = report.chosen_lr;
  r.tuner_explore_steps = report.explore_steps;
  r.tuner_trial_steps = report.trial_steps;
  r.tuner_end_reason = report.explore_end_reason;
  if (const ProgressFn& progress = run.progress()) {
    for (const TunerRound& round : report.rounds) {
      std::string cands;
      for (size_t i = 0; i < round.candidates.size(); ++i) {
        cands += fmt::format(" {:.3g}->{:.4g}", round.candidates[i], round.forecasts[i]);
      }
      progress(fmt::format("tuner round at step {}: lr {:.4g}, round loss {:.4f}{}", round.step,
                           round.chosen_lr, round.round_mean_loss,
                           cands.empty() ? "" : ";" + cands));
    }
    progress(fmt::format(
        "tuner: explore at {:.4g} for {} steps (ended: {}), {} trial steps = {:.1f}% extra",
        report.chosen_lr, report.explore_steps, report.explore_end_reason, report.trial_steps,
        100 * report.ExtraComputeFraction()));
  }
  return r;
}

Result<TrainResult> RunRangeTuned(Run& run, const TrainConfig& c) {
  int64_t sweep_steps = 0;
  if (run.tuned_peak() > 0) {
    // Resumed after the sweep: its choice is in the checkpoint.
    TESSERA_RETURN_IF_ERROR(run.UsePeak(run.tuned_peak()));
  } else {
    RangeTestOptions o = c.range_test;
    if (o.min_lr == 0) o.min_lr = c.lr / 1000;
    if (o.max_lr == 0) o.max_lr = c.lr * 100;
    if (o.steps == 0) o.steps = std::clamp<int64_t>(run.total_steps() / 10, 20, 100);
    RunTrainable trainable(run);
    TESSERA_ASSIGN_OR_RETURN(RangeTestReport report, RunRangeTest(o, trainable));
    sweep_steps = report.steps_done;
    if (run.progress()) {
      run.progress()(fmt::format(
          "range test: {} steps from {:.3g} to {:.3g}, smoothed minimum at {:.4g}{}, peak {:.4g}",
          report.steps_done, o.min_lr, o.max_lr, report.min_loss_lr,
          report.diverged ? " (then diverged)" : "", report.chosen_lr));
    }
    TESSERA_RETURN_IF_ERROR(run.UsePeak(report.chosen_lr));
  }
  TESSERA_ASSIGN_OR_RETURN(TrainResult r, run.RunSchedule());
  r.tuner_lr = run.tuned_peak();
  r.tuner_trial_steps = sweep_steps;
  return r;
}

}  // namespace tessera::lr

namespace tessera::lr {

Result<TrainResult> RunTrialTuned(Run& run, const TrainConfig& c, int64_t trial_steps) {
  const TrialTuneOptions& o = c.trials;
  int64_t spent = 0;
  if (run.tuned_peak() > 0) {
    // Resumed after the trials: their choice is in the checkpoint.
    TESSERA_RETURN_IF_ERROR(run.UsePeak(run.tuned_peak()));
  } else {
    TESSERA_ASSIGN_OR_RETURN(std::string initial, run.Snapshot());
    double best_peak = 0, best_score = std::numeric_limits<double>::infinity();
    std::string summary;
    for (int i = 0; i < o.candidates; ++i) {
      const double peak = c.lr * std::pow(o.spacing, i - static_cast<double>(o.candidates - 1) / 2);
      TESSERA_RETURN_IF_ERROR(run.Restore(initial));
      TESSERA_ASSIGN_OR_RETURN(auto schedule, MakeSchedule(c.schedule, peak, trial_steps));
      double tail_sum = 0;
      int64_t tail_count = 0;
      bool finite = true;
      for (int64_t k = 0; k < trial_steps; ++k) {
        run.SetRate(schedule->LearningRate(k));
        const double loss = run.TrainStep();
        ++spent;
        if (!std::isfinite(loss)) {
          // Diverged: the remaining steps of this trial are still spent (equal compute).
          finite = false;
        }
        if (4 * k >= 3 * trial_steps) {
          tail_sum += loss;
          ++tail_count;
        }
      }
      double score = std::numeric_limits<double>::infinity();
      if (finite && run.has_validation()) {
        TESSERA_ASSIGN_OR_RETURN(EvalResult v, run.EvaluateValidation());
        score = v.loss;
      } else if (finite) {
        score = tail_sum / static_cast<double>(tail_count);
      }
      if (!std::isfinite(score)) score = std::numeric_limits<double>::infinity();
      // Ties go to the larger peak (candidates ascend): the wide-minima preference.
      if (score <= best_score) {
        best_score = score;
        best_peak = peak;
      }
      summary += fmt::format(" {:.3g}->{:.4f}", peak, score);
    }
    if (!std::isfinite(best_score)) {
      return FailedPreconditionError(
          fmt::format("every trial diverged (peaks around {:.3g}):{}", c.lr, summary));
    }
    TESSERA_RETURN_IF_ERROR(run.Restore(initial));
    if (run.progress()) {
      run.progress()(
          fmt::format("trials: {} x {} steps ({} score):{}; peak {:.4g}", o.candidates, trial_steps,
                      run.has_validation() ? "validation loss" : "tail loss", summary, best_peak));
    }
    TESSERA_RETURN_IF_ERROR(run.UsePeak(best_peak));
  }
  TESSERA_ASSIGN_OR_RETURN(TrainResult r, run.RunSchedule());
  r.tuner_lr = run.tuned_peak();
  r.tuner_trial_steps = spent;
  return r;
}

}  // namespace tessera::lr
