// The training harness of the experiments: one run of a model on Fashion-MNIST or on a
// character-level fortunes corpus, with a schedule (lr/schedule_spec.h) or the online tuner
// (lr/tuner.h), per-step CSV logs, and checkpoint/resume.
//
// Torch-free header: binaries and tests that only call Train() compile without libtorch.
//
// Structure (one purpose per file): lr/tasks.h (data, batches, evaluation), lr/optimizer_factory.h,
// lr/run.h (the loop), lr/run_archive.h (checkpoint format), lr/run_log.h (CSV logs),
// lr/tuner_bridge.h (the tuner on a run), lr/train_flags.cc (the command line), trainer.cc
// (Train(): checks the config and assembles the pieces).
//
// Determinism: with the same config a run is bit-for-bit repeatable on one machine: the seed
// fixes the initialisation (torch::manual_seed) and the data order is a pure function of
// (seed, step) -- Fashion-MNIST shuffles per epoch with a seeded generator, the LM samples its
// windows from a generator seeded with (seed, step). So a resumed run needs no data-loader
// state, and a run resumed from a checkpoint continues with the identical learning rate and the
// identical loss as an uninterrupted one (tested in lr/trainer_test.cc).
//
// Checkpoints (one file, <checkpoint_dir>/checkpoint.pt, replaced atomically) hold the model,
// the optimizer state, the step, every group's learning rate (libtorch 1.13 drops them on load),
// the schedule's state (reduce-on-plateau) and a fingerprint of the config, so resuming with a
// different config is refused.
//
// Stop hook: TrainConfig::should_stop is asked at every step boundary whether to stop there; a
// run it stops is checkpointed (when checkpoint_dir is set) and returns unfinished, exactly like
// one cut short by stop_after. A job scheduler wraps its preemption orders in it
// (cluster/job/lr_job.h) without lr knowing of any scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "lr/range_test.h"
#include "lr/tuner.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tessera::lr {

// A step boundary, as the stop hook sees it: `step` updates are done, update `step` is next.
struct StepInfo {
  int64_t step = 0;
  int64_t total_steps = 0;
  int64_t resumed_from = 0;  // step this run started at
  double lr = 0;             // first group's rate at the last step done (0 before any)
  double loss = 0;           // training loss of the last step done (0 before any)
};

// Returns true to stop the run at this boundary.
using StopFn = std::function<bool(const StepInfo&)>;

// The "trials" tuner (TrainConfig::tune_method): short annealed runs of the schedule at
// candidate peaks, INSIDE the run's budget, choose its peak. With a budget of T updates, each of
// the `candidates` trials runs L = floor(budget_share * T / candidates) updates from the initial
// state -- the schedule compressed to L steps, so it ends annealed (Knee: explore, then decay to
// 0) -- and is scored by its validation loss (the mean training loss of its last quarter
// without a validation set). The run then restarts from the initial state and runs the schedule
// at the best candidate (ties: the larger) for T - candidates * L updates: trials plus training
// are exactly T optimizer updates, the budget of a schedule run (equal compute; Train checks it).
// Scoring an annealed trial removes what biased short constant-rate trials towards small rates:
// a loss measured at the trial's rate carries a noise floor that grows with the rate.
struct TrialTuneOptions {
  int candidates = 5;           // peaks lr * spacing^(i - (candidates - 1) / 2), i = 0..n-1
  double spacing = 2;           // factor between neighbouring candidates (> 1)
  double budget_share = 0.25;   // fraction of the budget spent on trials, in (0, 1)
  int64_t min_trial_steps = 4;  // a shorter trial is refused (the budget is too short)
};

struct TrainConfig {
  std::string task = "fmnist";    // "fmnist" or "lm"
  std::string model;              // fmnist: "mlp" (default) or "resnet"; lm: "transformer"
  std::string optimizer = "sgd";  // "sgd" (with momentum), "adam" or "adamw"
  double lr = 0.1;                // the schedule's peak rate; the tuner's initial guess
  double momentum = 0.9;          // SGD only
  double weight_decay = 0;        // SGD and Adam: L2; AdamW: decoupled
  double head_lr_ratio = 1.0;     // output layer's rate relative to the body (a 2nd group)
  std::string schedule = "knee";  // a spec for MakeSchedule; ignored when tune is set
  bool tune = false;              // tune the rate instead of using `lr` as the peak
  // "online": the online tuner (lr/tuner.h) replaces the schedule; checkpointable (its search
  // state is in the checkpoint).
  // "range": a range test (lr/range_test.h) from `lr` / 1000 to `lr` * 100 sets the peak of
  // `schedule` (Knee by default); checkpointable (the chosen peak is in the checkpoint).
  // "trials": annealed trials inside the budget set the peak of `schedule` (TrialTuneOptions);
  // equal compute with a schedule run; checkpointable (the chosen peak is in the checkpoint).
  std::string tune_method = "online";
  TrialTuneOptions trials;
  TunerOptions tuner;  // initial_lr and total_steps are filled in by Train()
  // min_lr / max_lr 0: lr / 1000 and lr * 100; steps 0: budget / 10, clamped to [20, 100].
  RangeTestOptions range_test = {.steps = 0};

  int64_t epochs = 1;            // budget in epochs (when steps == 0)
  int64_t steps = 0;             // budget in steps; overrides epochs when > 0
  double budget_fraction = 1.0;  // shortened budgets: the budget is scaled by this
  int64_t batch_size = 128;
  uint64_t seed = 1;

  std::string data_dir;     // default: the Debian package's directory
  int64_t train_limit = 0;  // use only the first N training examples (fmnist) / bytes (lm)
  int64_t test_limit = 0;   // evaluate on the first N test examples / windows; 0: all
  // Hold out the last N of the 60,000 training images (fmnist) or N bytes before the test text
  // (lm) as a validation set, never trained on; evaluated once at the end (TrainResult::val_*).
  // 0: no validation set.
  int64_t validation = 0;
  int64_t lm_context = 64;
  int64_t lm_d_model = 64;
  int64_t lm_layers = 2;
  int64_t lm_heads = 4;
  int64_t evals = 0;         // evaluations spread over the run; 0: once per epoch
  int64_t metric_every = 0;  // feed plateau the mean train loss every N steps; 0: budget/20

  std::string log_csv;           // per-step log (step,lr,loss,phase); evaluations go to
                                 // <log_csv minus .csv>.eval.csv (step,epoch,test_loss,test_acc)
  std::string checkpoint_dir;    // empty: no checkpoints
  int64_t checkpoint_every = 0;  // steps; 0: only at stop_after and at the end
  bool resume = false;           // continue from <checkpoint_dir>/checkpoint.pt if it exists
  int64_t stop_after = 0;        // stop (after checkpointing) once this many steps are done
  int threads = 1;               // torch::set_num_threads
  // Asked before every update of a schedule run (not after the last one); true stops the run
  // there, checkpointed when checkpoint_dir is set. Not part of the checkpoint's config
  // fingerprint. Tuner runs stop only after committed steps, never inside a trial.
  StopFn should_stop;
};

struct TrainResult {
  int64_t total_steps = 0;   // the budget (a "trials" run: the budget less its trial steps)
  int64_t steps_done = 0;    // == total_steps unless stop_after cut the run short
  int64_t resumed_from = 0;  // step the run resumed at (0: fresh)
  bool finished = false;
  bool stopped = false;         // should_stop or stop_after ended the run before its budget
  double final_lr = 0;          // first group's rate at the last step done
  double last_loss = 0;         // training loss of the last step done
  double test_loss = 0;         // final evaluation (cross-entropy, nats; per byte for lm)
  double test_accuracy = 0;     // fmnist only, in [0, 1]
  bool has_validation = false;  // config.validation > 0 and the run finished
  double val_loss = 0;          // on the validation set, at the end
  double val_accuracy = 0;      // fmnist only
  double seconds = 0;           // wall time of the training loop
  // FNV-1a (64 bit) over the bytes of every parameter and buffer of the model at the end: equal
  // fingerprints of two runs mean bit-identical models.
  uint64_t parameters_fingerprint = 0;
  // Tuner runs only (range: tuner_lr is the peak the range test chose, tuner_trial_steps its
  // sweep's updates, 0 for a run resumed after the sweep):
  double tuner_lr = 0;
  int64_t tuner_explore_steps = 0;
  int64_t tuner_trial_steps = 0;
  std::string tuner_end_reason;
  // Optimizer updates this process ran, trials and sweeps included (a resumed run counts from
  // its checkpoint). A fresh "trials" run's is exactly its budget.
  int64_t optimizer_steps = 0;
};

// Progress lines (one per epoch or evaluation) for long runs; may be empty.
using ProgressFn = std::function<void(const std::string&)>;

Result<TrainResult> Train(const TrainConfig& config, const ProgressFn& progress = {});

// The number of updates Train(config) would run (the budget after budget_fraction), without
// training: loads the data (cached) to count the steps of an epoch.
Result<int64_t> BudgetSteps(const TrainConfig& config);

// Adds lr-train's flags (--task, --lr, --schedule, ..., --threads) for `config` to `app`, so every
// program that runs Train() takes the same command line.
void AddTrainFlags(CLI::App& app, TrainConfig& config);

}  // namespace tessera::lr
