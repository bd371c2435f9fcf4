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
  if (c.task == "fmnist" && c.model != "mlp" && c.model != "resnet") {
    return InvalidArgumentError("fmnist models: mlp, resnet");
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
  if (c.tune_method != "online" && c.tune_method != "range") {
    return InvalidArgumentError(
        fmt::format("unknown tune_method '{}' (online, range)", c.tune_method));
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
  const int64_t total = TotalSteps(c, *task);
  const LmShape shape{c.lm_context, c.lm_d_model, c.lm_layers, c.lm_heads};
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Net> net, MakeNet(c.model, shape));
  TESSERA_ASSIGN_OR_RETURN(auto opt, MakeOptimizer(c, *net));
  Run run(c, std::move(task), std::move(net), std::move(opt), total, progress);
  TESSERA_RETURN_IF_ERROR(run.Init());
  try {
    if (!c.tune) return run.RunSchedule();
    return c.tune_method == "range" ? RunRangeTuned(run, c) : RunTuned(run, c);
  } catch (const std::exception& e) {
    return InternalError(fmt::format("training failed: {}", e.what()));
  }
}

}  // namespace tessera::lr
