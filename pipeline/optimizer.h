// A stage's optimizer: torch::optim's SGD (with momentum), Adam or AdamW over the parameters of
// the stage's units, and the conversion of its per-parameter state to and from the per-unit
// checkpoint files (pipeline/checkpoint.h), so a job resumes exactly with any stage layout.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "core/status.h"
#include "pipeline/checkpoint.h"
#include "pipeline/job.h"

namespace tessera::pipeline {

// job.optimizer over `params` with job.lr, job.momentum (sgd) and job.weight_decay (adam,
// adamw). INVALID_ARGUMENT for an unknown optimizer.
Result<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(const JobConfig& job,
                                                               std::vector<torch::Tensor> params);

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr);

// The state of `param` as checkpoint tensors: SGD's momentum buffer or Adam's exp_avg in
// `first`, Adam's exp_avg_sq in `second` (left empty for SGD); zeros before the first step.
void ExportState(const JobConfig& job, torch::optim::Optimizer& optimizer,
                 const torch::Tensor& param, TensorData& first, TensorData& second);

// Restores what ExportState wrote, as the state after `steps_done` updates.
// INVALID_ARGUMENT when a shape differs or Adam's second moment is missing.
Status ImportState(const JobConfig& job, torch::optim::Optimizer& optimizer,
                   const torch::Tensor& param, const TensorData& first,
                   const std::vector<TensorData>& second, size_t index, int64_t steps_done);

TensorData ToData(const torch::Tensor& t);
// Copies `d` into `t` (same shape, else INVALID_ARGUMENT).
Status CopyInto(const TensorData& d, torch::Tensor& t);

}  // namespace tessera::pipeline
