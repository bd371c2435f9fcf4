// Models with cut points, and their data. A model is a sequence of units (the pieces between
// cut points, Varuna's CutPoint); a stage runs a contiguous range of units. Every worker builds
// the whole model from the same seed and keeps only its own units, so initial weights agree
// without any exchange.
//
// Dropout is made repeatable by construction: before unit u runs on micro-batch i of step t,
// the CPU generator is reseeded from (seed, t, i', u), where i' is the micro-batch's index in
// the global batch. The recompute therefore sees exactly the masks of the first forward, and the
// masks do not depend on the number of stages, replicas or the task order (ours; Varuna stashes
// the generator state instead, research note §4.3).
#pragma once

#include <torch/torch.h>

#include <cstdint>
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
};

// Identifies a micro-batch for dropout seeding.
struct RngKey {
  uint64_t seed = 0;
  int64_t step = 0;
  int64_t global_micro = 0;
};

class CutModel {
 public:
  // Builds every unit with weights drawn from `seed`.
  static Result<std::unique_ptr<CutModel>> Build(const ModelSpec& spec, uint64_t seed);

  int num_units() const { return static_cast<int>(units_.size()); }
  std::vector<torch::Tensor> UnitParameters(int unit) const;
  // Runs units [begin, end) on x, reseeding dropout before each unit (see above).
  torch::Tensor ForwardRange(int begin, int end, torch::Tensor x, const RngKey& key);
  // Mean cross-entropy of the last unit's output against the targets.
  torch::Tensor Loss(const torch::Tensor& output, const torch::Tensor& target) const;
  void SetTraining(bool on);

 private:
  explicit CutModel(ModelSpec spec) : spec_(std::move(spec)) {}
  ModelSpec spec_;
  std::vector<std::shared_ptr<Unit>> units_;
};

struct Batch {
  torch::Tensor input;   // gpt: int64 [n, seq]; cnn: float [n, 1, image, image]
  torch::Tensor target;  // gpt: int64 [n, seq]; cnn: int64 [n]
};

// Deterministic training data: step t's global batch is samples (t * B + k) mod size, k < B.
class Dataset {
 public:
  static Result<std::unique_ptr<Dataset>> Create(const ModelSpec& spec, uint64_t seed);
  // Rows [first, first + count) of step `step`'s global batch of `global_batch` samples.
  Batch Rows(int64_t step, int global_batch, int first, int count) const;

 private:
  Dataset() = default;
  torch::Tensor inputs_, targets_;  // all samples
};

}  // namespace tessera::pipeline
