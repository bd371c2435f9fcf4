// Declaring your own model for the pipeline trainer: an ordered list of units with cut points
// between them (Varuna's CutPoint), registered under a name that `pipeline-launch --model NAME`
// and every pipeline-worker look up.
//
//   class MyBlock : public tessera::pipeline::Unit { ... Forward(x) ... };
//
//   tessera::pipeline::ModelDefinition def;
//   def.count_units = [](const ModelSpec& spec) -> Result<int> { return spec.layers; };
//   def.build_unit = [](const ModelSpec& spec, int u) -> Result<std::shared_ptr<Unit>> {
//     return std::make_shared<MyBlock>(spec.width);
//   };
//   TESSERA_RETURN_IF_ERROR(RegisterModel("mymodel", std::move(def)));
//   // then, in the same binary: RunWorker / Launch with job.model.kind = "mymodel"
//
// A worker calls build_unit only for the units of its own stage, with the torch generator
// seeded from (seed, unit) just before, so weights agree across workers and layouts without
// any exchange, and a stage holds only its own parameters. Registration is per process: a model
// of your own needs your own worker binary (RunWorkerMain in pipeline/runtime.h), or a
// TorchScript file ("torchscript", below), which needs no C++ at all.
//
// Built in: "gpt" and "cnn" (pipeline/job.h's ModelSpec fields) and "torchscript": a
// torch.jit.save'd module whose top-level children, in order, are the units; its loss is
// cross-entropy for integer targets and mean squared error for floating-point ones.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "pipeline/job.h"

namespace tessera::pipeline {

// One piece of a model between two cut points.
class Unit : public torch::nn::Module {
 public:
  virtual torch::Tensor Forward(const torch::Tensor& x) = 0;
  // The unit's trainable tensors, in a fixed order (checkpoints are keyed by it).
  virtual std::vector<torch::Tensor> Parameters() { return parameters(); }
};

struct ModelDefinition {
  // The number of units of the model described by `spec`.
  std::function<Result<int>(const ModelSpec& spec)> count_units;
  // Builds unit `unit` (0-based). Randomly initialized weights come from the torch generator,
  // which the caller has seeded for this unit.
  std::function<Result<std::shared_ptr<Unit>>(const ModelSpec& spec, int unit)> build_unit;
  // The loss of the last unit's output; empty: cross-entropy over the last dimension for
  // integer targets, mean squared error for floating-point ones.
  std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)> loss;
};

// ALREADY_EXISTS if the name is taken (the built-in names included); INVALID_ARGUMENT if
// count_units or build_unit is empty.
Status RegisterModel(const std::string& name, ModelDefinition definition);

// NOT_FOUND naming the registered models.
Result<const ModelDefinition*> FindModel(const std::string& name);

// ResolveModel (pipeline/profile.h, torch-free) fills spec.units for a torchscript or registered
// model before the launcher writes the job description.

}  // namespace tessera::pipeline
