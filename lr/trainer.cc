#include "lr/trainer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "lr/models.h"
#include "lr/optimizer_factory.h"
#include "lr/run.h"
#include "lr/tasks.h"
#include "lr/tuner_bridge.h"

namespace tessera::lr {
namespace {

Status Validate(const TrainConfig& c) {
  if (c.task != "fmnist" && c.task != "lm") {
    return InvalidArgumentError(fmt::format("unknown task '{}' (fmnist, lm)", c.task));
  }
  if (c.task == "fmnist" && c.model != "mlp" && c.model != "resnet" && c.model != "cnn") {
    return InvalidArgumentError("fmnist models: mlp, resnet, cnn");
  }
  if (c.task == "lm" && c.model != "transformer")
    return InvalidArgumentError("lm model: transformer");
  if (!(c.lr > 0) || !std::isfinite(c.lr)) return InvalidArgumentError("lr must be > 0");
  if (!(c.head_lr_ratio > 0) || !std::isfinite(c.head_lr_ratio)) {
    return InvalidArgumentError("head_lr_ratio must be > 0");
  }
  if (!(c.budget_fraction > 0 && c.budget_fraction <= 1)) {
    return InvalidArgumentError("budget_fraction must be in (0, 1]");
  }
  if (c.batch_size < 1 || c.epochs < 0 || c.steps < 0 || (c.epochs == 0 && c.steps == 0)) {
    return InvalidArgumentError("need batch_size >= 1 and a budget (epochs or steps)");
  }
  if (c.validation < 0) return InvalidArgumentError("validation must be >= 0");
  if (c.tune_method != "online" && c.tune_method != "range" && c.tune_method != "trials") {
    return InvalidArgumentError(
        fmt::format("unknown tune_method '{}' (online, range, trials)", c.tune_method));
  }
  const TrialTuneOptions& t = c.trials;
  if (t.candidates < 2 || !(t.spacing > 1) || !std::isfinite(t.spacing) ||
      !(t.budget_share > 0 && t.budget_share < 1) || t.min_trial_steps < 1) {
    return InvalidArgumentError(
        "trials need candidates >= 2, spacing > 1, budget_share in (0, 1), min_trial_steps >= 1");
  }
  if (c.train_limit < 0 || c.test_limit < 0 || c.evals < 0 || c.metric_every < 0 ||
      c.checkpoint_every < 0 || c.stop_after < 0 || c.threads < 1) {
    return InvalidArgumentError(
        "limits, evals, metric_every, checkpoint_every, stop_after must be >= 0 and threads >= 1");
  }
  if (c.resume && c.checkpoint_dir.empty())
    return InvalidArgumentError("resume needs a checkpoint_dir");
  return Status::Ok();
}

// The budget in updates of a run of `c` on `task`.
int64_t TotalSteps(const TrainConfig& c, const Task& task) {
  const int64_t full = c.steps > 0 ? c.steps : c.epochs * task.StepsPerEpoch();
  return std::max<int64_t>(
      static_cast<int64_t>(std::llround(c.budget_fraction * static_cast<double>(full))), 2);
}

TrainConfig WithDefaults(const TrainConfig& config) {
  TrainConfig c = config;
  if (c.model.empty()) c.model = c.task == "lm" ? "transformer" : "mlp";
  return c;
}

}  // namespace

Result<int64_t> BudgetSteps(const TrainConfig& config) {
  const TrainConfig c = WithDefaults(config);
  TESSERA_RETURN_IF_ERROR(Validate(c));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeTask(c));
  return TotalSteps(c, *task);
}

Result<TrainResult> Train(const TrainConfig& config, const ProgressFn& progress) {
  const TrainConfig c = WithDefaults(config);
  TESSERA_RETURN_IF_ERROR(Validate(c));
  torch::set_num_threads(c.threads);
  torch::manual_seed(c.seed);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeTask(c));
  const int64_t budget = TotalSteps(c, *task);
  // A "trials" run spends part of its budget on trials: the schedule gets the rest.
  int64_t trial_steps_each = 0;
  if (c.tune && c.tune_method == "trials") {
    trial_steps_each = static_cast<int64_t>(c.trials.budget_share * static_cast<double>(budget)) /
                       c.trials.candidates;
    if (trial_steps_each < c.trials.min_trial_steps) {
      return InvalidArgumentError(fmt::format(
          "a budget of {} steps is too short for {} trials of >= {} steps in {:g} of it", budget,
          c.trials.candidates, c.trials.min_trial_steps, c.trials.budget_share));
    }
  }
  const int64_t total = budget - c.trials.candidates * trial_steps_each;
  const LmShape shape{c.lm_context, c.lm_d_model, c.lm_layers, c.lm_heads};
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Net> net, MakeNet(c.model, shape));
  TESSERA_ASSIGN_OR_RETURN(auto opt, MakeOptimizer(c, *net));
  Run run(c, std::move(task), std::move(net), std::move(opt), total, progress);
  TESSERA_RETURN_IF_ERROR(run.Init());
  try {
    if (!c.tune) return run.RunSchedule();
    if (c.tune_method == "trials") {
      TESSERA_ASSIGN_OR_RETURN(TrainResult r, RunTrialTuned(run, c, trial_steps_each));
      // Equal compute: trials and schedule together ran exactly the budget.
      if (r.resumed_from == 0 && r.finished && r.optimizer_steps != budget) {
        return InternalError(
            fmt::format("trials run did {} updates, its budget is {}", r.optimizer_steps, budget));
      }
      return r;
    }
    return c.tune_method == "range" ? RunRangeTuned(run, c) : RunTuned(run, c);
  } catch (const std::exception& e) {
    return InternalError(fmt::format("training failed: {}", e.what()));
  }
}

}  // namespace tessera::lr
