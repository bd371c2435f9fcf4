// pipeline-example-worker: a worker binary with a model of its own, the way a user adds one
// (pipeline/model_registry.h). "residual-mlp" is an input projection, `layers` residual blocks
// (x + W2 relu(W1 x)) and a classifier head, one unit each, trained on --data (a torch.save'd
// tuple (inputs [n, features], integer labels [n])):
//
//   pipeline-launch --model residual-mlp --worker bin/pipeline-example-worker --data data.pt \
//     --layers 4 --width 32 --classes 4 --stages 2 ...
#include <torch/torch.h>

#include "pipeline/model_registry.h"
#include "pipeline/worker_cli.h"

namespace {

namespace pl = tessera::pipeline;

class Projection final : public pl::Unit {
 public:
  explicit Projection(int width) : in_(register_module("in", torch::nn::Linear(8, width))) {}
  torch::Tensor Forward(const torch::Tensor& x) override { return in_(x); }

 private:
  torch::nn::Linear in_;
};

class ResidualBlock final : public pl::Unit {
 public:
  explicit ResidualBlock(int width)
      : fc1_(register_module("fc1", torch::nn::Linear(width, 2 * width))),
        fc2_(register_module("fc2", torch::nn::Linear(2 * width, width))) {}
  torch::Tensor Forward(const torch::Tensor& x) override { return x + fc2_(torch::relu(fc1_(x))); }

 private:
  torch::nn::Linear fc1_, fc2_;
};

class Head final : public pl::Unit {
 public:
  Head(int width, int classes) : out_(register_module("out", torch::nn::Linear(width, classes))) {}
  torch::Tensor Forward(const torch::Tensor& x) override { return out_(x); }

 private:
  torch::nn::Linear out_;
};

tessera::Status RegisterResidualMlp() {
  pl::ModelDefinition def;
  def.count_units = [](const pl::ModelSpec& spec) -> tessera::Result<int> {
    return spec.layers + 2;
  };
  def.build_unit = [](const pl::ModelSpec& spec,
                      int u) -> tessera::Result<std::shared_ptr<pl::Unit>> {
    if (u == 0) return std::make_shared<Projection>(spec.width);
    if (u <= spec.layers) return std::make_shared<ResidualBlock>(spec.width);
    return std::make_shared<Head>(spec.width, spec.classes);
  };
  return pl::RegisterModel("residual-mlp", std::move(def));
}

}  // namespace

int main(int argc, char** argv) {
  if (auto s = RegisterResidualMlp(); !s.ok()) return 1;
  return tessera::pipeline::WorkerMain(argc, argv);
}
