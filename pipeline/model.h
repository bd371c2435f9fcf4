// Models with cut points, and their data. A model is a sequence of units (the pieces between
// cut points, Varuna's CutPoint; pipeline/model_registry.h declares them); a stage runs a
// contiguous range of units and builds only those: unit u's weights are drawn from a generator
// seeded with (seed, u), so workers agree on initial weights without any exchange and a worker
// holds only its own stage's parameters.
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
#include "pipeline/model_registry.h"

namespace tessera::pipeline {

// Identifies a micro-batch for dropout seeding.
struct RngKey {
  uint64_t seed = 0;
  int64_t step = 0;
  int64_t global_micro = 0;
};

class CutModel {
 public:
  // Builds units [begin, end) of the model (end = -1: through the last unit); the others are
  // never constructed.
  static Result<std::unique_ptr<CutModel>> Build(const ModelSpec& spec, uint64_t seed,
                                                 int begin = 0, int end = -1);

  int num_units() const { return num_units_; }
  int begin() const { return begin_; }
  int end() const { return begin_ + static_cast<int>(units_.size()); }
  // Bytes of every parameter this object holds (its units only).
  double ParameterBytes() const;
  // Parameters of an owned unit (begin() <= unit < end()).
  std::vector<torch::Tensor> UnitParameters(int unit) const;
  // Runs owned units [begin, end) on x, reseeding dropout before each unit (see above).
  torch::Tensor ForwardRange(int begin, int end, torch::Tensor x, const RngKey& key);
  // Mean cross-entropy of the last unit's output against the targets.
  torch::Tensor Loss(const torch::Tensor& output, const torch::Tensor& target) const;
  void SetTraining(bool on);
  // Gives every parameter of the owned units that has no gradient yet a dense zero gradient.
  // The gpt's token embedding produces sparse gradients (its rows of the micro-batch only), and
  // autograd adds a sparse gradient into a dense one in place; without a dense one bound first,
  // .grad would become a sparse tensor, which the optimizers and clipping do not take. The
  // runtime binds views of its flat buffer instead; the profile, the in-process reference and
  // the plain loop call this before their first backward.
  void BindDenseGradients();

 private:
  explicit CutModel(ModelSpec spec) : spec_(std::move(spec)) {}
  ModelSpec spec_;
  const ModelDefinition* definition_ = nullptr;
  int num_units_ = 0, begin_ = 0;
  std::vector<std::shared_ptr<Unit>> units_;  // units begin_ .. end() - 1
};

struct Batch {
  torch::Tensor input;   // gpt: int64 [n, seq]; cnn: float [n, 1, image, image]
  torch::Tensor target;  // gpt: int64 [n, seq]; cnn: int64 [n]
};

// Deterministic training data: with n training samples (all but the last spec.eval_samples),
// step t's global batch is samples (t * B + k) mod n, k < B.
class Dataset {
 public:
  // Synthetic data for gpt and cnn; spec.text_path (characters) or spec.data_path (tokens or
  // tensors, pipeline/job.h) when set. INVALID_ARGUMENT for a file that holds too few samples.
  static Result<std::unique_ptr<Dataset>> Create(const ModelSpec& spec, uint64_t seed);
  // Rows [first, first + count) of step `step`'s global batch of `global_batch` samples.
  Batch Rows(int64_t step, int global_batch, int first, int count) const;
  // Held-out rows [first, first + count) (count clipped to what is left).
  Batch EvalRows(int first, int count) const;
  int64_t train_size() const { return train_size_; }
  int64_t eval_size() const { return inputs_.size(0) - train_size_; }

 private:
  Dataset() = default;
  torch::Tensor inputs_, targets_;  // all samples, the held-out ones last
  int64_t train_size_ = 0;
};

}  // namespace tessera::pipeline
