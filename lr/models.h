// The small models of the experiments (libtorch modules):
//   * "mlp":         784 -> 256 -> 128 -> 10, ReLU                 (Fashion-MNIST)
//   * "resnet":      a 28x28 ResNet: 3x3 stem (16 channels), a residual block, a strided
//                    residual block to 32 channels, global average pooling, linear -> 10
//   * "cnn":         the protocol's small CNN: 28x28 average-pooled to 14x14, two 3x3 conv
//                    layers (16, 32 channels) each with ReLU and 2x2 max-pooling, linear -> 10
//   * "transformer": a pre-LayerNorm decoder-only transformer over bytes (vocabulary 256) with
//                    learned positions and a causal mask                  (character LM)
// Each splits its parameters into body and head (the output layer), so a trainer can give the
// head its own learning-rate ratio.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::lr {

struct LmShape {
  int64_t context = 64;
  int64_t d_model = 64;
  int64_t layers = 2;
  int64_t heads = 4;
};

class Net : public torch::nn::Module {
 public:
  // Images [N, 1, 28, 28] -> logits [N, 10]; or bytes [N, T] (int64) -> logits [N, T, 256].
  virtual torch::Tensor forward(torch::Tensor x) = 0;
  virtual std::vector<torch::Tensor> HeadParameters() = 0;
  std::vector<torch::Tensor> BodyParameters();
};

// "mlp", "resnet", "cnn" or "transformer"; INVALID_ARGUMENT for anything else.
Result<std::shared_ptr<Net>> MakeNet(const std::string& name, const LmShape& lm = {});

}  // namespace tessera::lr
