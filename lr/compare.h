// The comparison experiments behind docs/lr.md: every schedule (and the online tuner) at the
// full budget, the Knee paper's baselines and Knee at shortened budgets, several seeds, on
// Fashion-MNIST (MLP, SGD with momentum) and on the fortunes character LM (transformer, AdamW).
// Writes per-run CSV logs, a results CSV, a mean +- std table (Markdown) and gnuplot plots.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::lr {

struct CompareOptions {
  std::string out_dir = "out/lr-compare";
  std::vector<std::string> tasks = {"fmnist", "lm"};
  int seeds = 3;
  // Full-budget schedules (the tuner is added as "tuner").
  std::vector<std::string> schedules = {"constant", "step", "multistep", "cosine", "onecycle",
                                        "linear",   "wsd",  "plateau",   "knee"};
  bool tuner = true;
  // Shortened budgets (fractions of the full one) and the schedules run at them; the LM, about
  // 10x costlier per run on the CPU, gets a smaller set.
  std::vector<double> short_budgets = {0.5, 0.75};
  std::vector<std::string> short_schedules = {"knee", "cosine", "linear", "multistep"};
  std::vector<double> lm_short_budgets = {0.5};
  std::vector<std::string> lm_short_schedules = {"knee", "cosine", "linear"};
  int64_t fmnist_epochs = 8;
  int64_t fmnist_train_limit = 20000;  // first N of the 60,000 training images (0: all)
  double fmnist_lr = 0.1;
  int64_t lm_steps = 200;
  double lm_lr = 3e-3;
  bool plots = true;  // needs gnuplot
};

// Runs the grid; `progress` gets one line per run. Returns the Markdown tables.
Result<std::string> RunComparison(const CompareOptions& options,
                                  const std::function<void(const std::string&)>& progress);

}  // namespace tessera::lr
