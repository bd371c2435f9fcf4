// The training tasks of the harness: data, minibatches, loss and evaluation. Internal to the lr
// trainer (torch header).
//
//   * Fashion-MNIST (models "mlp", "resnet"): the Debian package's images, normalised; the
//     training set shuffled per epoch by a generator seeded with (seed, epoch). A validation set
//     of TrainConfig::validation images is held out from the END of the 60,000 training images
//     and never trained on; the test set is the 10,000 t10k images.
//   * the fortunes character LM (model "transformer"): the last 10 % of the corpus is the test
//     text; a validation text of TrainConfig::validation bytes is held out from the end of the
//     rest. Minibatches are windows drawn by a generator seeded with (seed, step).
//
// Batch(step) is a pure function of (seed, step), so resuming needs no data-loader state.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "core/status.h"
#include "lr/models.h"
#include "lr/trainer.h"

namespace tessera::lr {

struct EvalResult {
  double loss = 0;      // mean cross-entropy, nats (per byte for the LM)
  double accuracy = 0;  // Fashion-MNIST only
};

class Task {
 public:
  virtual ~Task() = default;
  virtual int64_t StepsPerEpoch() const = 0;
  // The minibatch of update `step`: a pure function of (seed, step).
  virtual std::pair<torch::Tensor, torch::Tensor> Batch(int64_t step) = 0;
  virtual torch::Tensor Loss(const torch::Tensor& logits, const torch::Tensor& y) const = 0;
  // On the test set.
  virtual EvalResult Evaluate(Net& net) = 0;
  // On the held-out validation set; FAILED_PRECONDITION without one.
  virtual Result<EvalResult> EvaluateValidation(Net& net) = 0;
  virtual bool has_validation() const = 0;
};

// The task of `config` (task, data_dir, limits, validation, batch size, seed, LM shape). Decoded
// data is cached per process: experiment grids run many trainings on the same files.
Result<std::unique_ptr<Task>> MakeTask(const TrainConfig& config);

}  // namespace tessera::lr
