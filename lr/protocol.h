// The experiment protocol of docs/lr.md: does a schedule beat another, with the peak learning
// rate of each tuned, on paired seeds, with confidence intervals?
//
// For every task and budget (a fraction of the task's full budget):
//   1. Tuning. Every schedule (the tuner excepted) is run at each peak of the task's log grid,
//      on tuning seeds disjoint from the evaluation seeds; its peak is the one with the best
//      mean VALIDATION metric (accuracy on held-out training images, or held-out loss for the
//      LM). The test set plays no part in the choice.
//   2. Evaluation. Every schedule runs at its tuned peak on seeds 1..N. The two schedules that
//      pick their own rate have no tuning stage (that is their point) and start from the grid's
//      geometric centre: "tuner" (the online tuner, lr/tuner.h) and "rangetest" (Knee whose peak
//      a range test sets, lr/range_test.h) spend their trial / sweep steps as extra compute;
//      "trials" (Knee whose peak annealed trials set, TrialTuneOptions in lr/trainer.h) spends
//      them inside the budget: equal compute with a schedule run.
//   3. Analysis. Per schedule, the mean test metric with a 95 % t-interval, and the paired
//      difference schedule - reference (Knee) on the same seeds with its 95 % t-interval; a
//      difference whose interval holds 0 is reported as "no difference".
//
// Every run is reproducible from its seed (lr/trainer.h) and recorded, keyed by task, stage,
// schedule, budget, peak and seed, in <out_dir>/results.csv as it ends (lr/results_store.h): a
// killed grid restarted with the same options redoes only the runs not recorded. Schedules,
// budgets, seeds and peaks may be added on a rerun; <out_dir>/tasks.txt records each task's
// data and budget, and a rerun with another configuration of a recorded task is refused.
//
// Writes <out_dir>/results.csv, report.md (the tables), <task>-budget-<schedule>.csv and, with
// gnuplot, <task>-budget.png (test metric against budget with the intervals).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "lr/trainer.h"

namespace tessera::lr {

struct ProtocolTask {
  std::string name;           // "mlp", "cnn" or "lm" (names in tables and keys)
  TrainConfig base;           // model, optimizer, data, full budget, validation set
  std::vector<double> peaks;  // the log grid of peak learning rates (>= 2 points)
};

// The standard tasks: "mlp" (Fashion-MNIST MLP, SGD momentum 0.9), "cnn" (the small CNN of
// lr/models.h on 6,400 Fashion-MNIST images, SGD momentum 0.9), "lm" (the fortunes byte-level
// transformer, AdamW, one epoch of its training text). `quick` shrinks data and budgets so that a
// whole grid takes a few minutes on one core (the demo). INVALID_ARGUMENT for another name.
Result<ProtocolTask> StandardTask(std::string_view name, bool quick);

struct ProtocolOptions {
  std::string out_dir = "out/lr-protocol";
  std::vector<ProtocolTask> tasks;
  std::vector<std::string> schedules = {"knee", "cosine",   "linear", "step",      "onecycle",
                                        "wsd",  "constant", "tuner",  "rangetest", "trials"};
  std::vector<double> budgets = {1.0, 0.5, 0.25};
  int seeds = 10;      // evaluation seeds 1..seeds
  int tune_seeds = 1;  // tuning seeds 1001..1000+tune_seeds
  std::string reference = "knee";
  bool plots = true;  // needs gnuplot
};

// The schedule spec a protocol schedule name runs as on a task (warmup for the LM's AdamW).
std::string ProtocolSpec(const std::string& schedule, const ProtocolTask& task);

using TrainFn = std::function<Result<TrainResult>(const TrainConfig&)>;
using ProtocolProgress = std::function<void(const std::string&)>;

struct ProtocolReport {
  std::string markdown;  // the tables
  int64_t runs_trained = 0;
  int64_t runs_reused = 0;  // found in results.csv
};

// Runs (or resumes) the grid with `train` (lr::Train in the binary; a fake in tests).
Result<ProtocolReport> RunProtocol(const ProtocolOptions& options, const TrainFn& train,
                                   const ProtocolProgress& progress);

// The number of runs and of optimizer steps of the grid (tuner trials excluded), for a task
// whose full budget is `full_steps`.
struct GridSize {
  int64_t runs = 0;
  int64_t steps = 0;
};
GridSize CountGrid(const ProtocolOptions& options, const ProtocolTask& task, int64_t full_steps);

}  // namespace tessera::lr
