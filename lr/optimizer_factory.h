// The optimizer of a training run: SGD with momentum, Adam or AdamW over two parameter groups,
// the model's body at TrainConfig::lr and its output layer at lr * head_lr_ratio. Internal to
// the lr trainer (torch header).
#pragma once

#include <torch/torch.h>

#include <memory>

#include "core/status.h"
#include "lr/models.h"
#include "lr/trainer.h"

namespace tessera::lr {

// INVALID_ARGUMENT for an unknown TrainConfig::optimizer.
Result<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(const TrainConfig& config, Net& net);

}  // namespace tessera::lr
