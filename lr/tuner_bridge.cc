#include "lr/tuner_bridge.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "lr/range_test.h"
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
