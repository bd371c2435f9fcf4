#include "lr/optimizer_factory.h"

#include <fmt/format.h>

#include <vector>

namespace tessera::lr {

Result<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(const TrainConfig& c, Net& net) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto group = [&](std::vector<torch::Tensor> params,
                   double lr) -> Result<torch::optim::OptimizerParamGroup> {
    if (c.optimizer == "sgd") {
      return torch::optim::OptimizerParamGroup(
          params,
          std::make_unique<torch::optim::SGDOptions>(
              torch::optim::SGDOptions(lr).momentum(c.momentum).weight_decay(c.weight_decay)));
    }
    if (c.optimizer == "adam") {
      return torch::optim::OptimizerParamGroup(
          params, std::make_unique<torch::optim::AdamOptions>(
                      torch::optim::AdamOptions(lr).weight_decay(c.weight_decay)));
    }
    if (c.optimizer == "adamw") {
      return torch::optim::OptimizerParamGroup(
          params, std::make_unique<torch::optim::AdamWOptions>(
                      torch::optim::AdamWOptions(lr).weight_decay(c.weight_decay)));
    }
    return InvalidArgumentError(
        fmt::format("unknown optimizer '{}' (sgd, adam, adamw)", c.optimizer));
  };
  TESSERA_ASSIGN_OR_RETURN(auto body, group(net.BodyParameters(), c.lr));
  TESSERA_ASSIGN_OR_RETURN(auto head, group(net.HeadParameters(), c.lr * c.head_lr_ratio));
  groups.push_back(std::move(body));
  groups.push_back(std::move(head));
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (c.optimizer == "sgd") {
    opt = std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(c.lr));
  } else if (c.optimizer == "adam") {
    opt = std::make_unique<torch::optim::Adam>(groups, torch::optim::AdamOptions(c.lr));
  } else {
    opt = std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(c.lr));
  }
  return opt;
}

}  // namespace tessera::lr
