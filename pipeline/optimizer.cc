#include "pipeline/optimizer.h"

#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

bool IsAdam(const JobConfig& job) { return job.optimizer == "adam" || job.optimizer == "adamw"; }

// torch::optim keys its per-parameter state by the tensor's implementation pointer.
std::string StateKey(const torch::Tensor& p) {
  return c10::guts::to_string(p.unsafeGetTensorImpl());
}

}  // namespace

Result<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(const JobConfig& job,
                                                               std::vector<torch::Tensor> params) {
  namespace optim = torch::optim;
  if (job.optimizer == "sgd") {
    return std::unique_ptr<optim::Optimizer>(std::make_unique<optim::SGD>(
        std::move(params), optim::SGDOptions(job.lr).momentum(job.momentum)));
  }
  if (job.optimizer == "adam") {
    return std::unique_ptr<optim::Optimizer>(std::make_unique<optim::Adam>(
        std::move(params), optim::AdamOptions(job.lr).weight_decay(job.weight_decay)));
  }
  if (job.optimizer == "adamw") {
    return std::unique_ptr<optim::Optimizer>(std::make_unique<optim::AdamW>(
        std::move(params), optim::AdamWOptions(job.lr).weight_decay(job.weight_decay)));
  }
  return InvalidArgumentError(fmt::format("unknown optimizer '{}'", job.optimizer));
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

TensorData ToData(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kFloat).contiguous();
  TensorData d;
  d.shape.assign(c.sizes().begin(), c.sizes().end());
  d.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return d;
}

Status CopyInto(const TensorData& d, torch::Tensor& t) {
  if (std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) != d.shape) {
    return InvalidArgumentError("checkpoint tensor shape differs from the model's");
  }
  torch::NoGradGuard no_grad;
  t.copy_(torch::from_blob(const_cast<float*>(d.values.data()), d.shape, torch::kFloat));
  return Status::Ok();
}

void ExportState(const JobConfig& job, torch::optim::Optimizer& optimizer,
                 const torch::Tensor& param, TensorData& first, TensorData& second) {
  auto& state = optimizer.state();
  auto it = state.find(StateKey(param));
  const torch::Tensor zeros = torch::zeros_like(param);
  if (IsAdam(job)) {
    if (it == state.end()) {
      first = second = ToData(zeros);
    } else if (job.optimizer == "adam") {
      auto& s = static_cast<torch::optim::AdamParamState&>(*it->second);
      first = ToData(s.exp_avg());
      second = ToData(s.exp_avg_sq());
    } else {
      auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
      first = ToData(s.exp_avg());
      second = ToData(s.exp_avg_sq());
    }
    return;
  }
  second = TensorData();
  if (it == state.end()) {
    first = ToData(zeros);
    return;
  }
  const auto& buffer = static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer();
  first = ToData(buffer.defined() ? buffer : zeros);
}

Status ImportState(const JobConfig& job, torch::optim::Optimizer& optimizer,
                   const torch::Tensor& param, const TensorData& first,
                   const std::vector<TensorData>& second, size_t index, int64_t steps_done) {
  auto make = [&](const TensorData& d) -> Result<torch::Tensor> {
    torch::Tensor t = torch::zeros_like(param);
    TESSERA_RETURN_IF_ERROR(CopyInto(d, t));
    return t;
  };
  TESSERA_ASSIGN_OR_RETURN(torch::Tensor m, make(first));
  auto& state = optimizer.state();
  if (IsAdam(job)) {
    if (index >= second.size()) {
      return InvalidArgumentError("the checkpoint holds no second moment (written by SGD?)");
    }
    TESSERA_ASSIGN_OR_RETURN(torch::Tensor v, make(second[index]));
    if (job.optimizer == "adam") {
      auto s = std::make_unique<torch::optim::AdamParamState>();
      s->step(steps_done);
      s->exp_avg(m);
      s->exp_avg_sq(v);
      state[StateKey(param)] = std::move(s);
    } else {
      auto s = std::make_unique<torch::optim::AdamWParamState>();
      s->step(steps_done);
      s->exp_avg(m);
      s->exp_avg_sq(v);
      state[StateKey(param)] = std::move(s);
    }
    return Status::Ok();
  }
  if (job.momentum == 0 || steps_done == 0) return Status::Ok();  // torch keeps no buffer
  auto s = std::make_unique<torch::optim::SGDParamState>();
  s->momentum_buffer(m);
  state[StateKey(param)] = std::move(s);
  return Status::Ok();
}

}  // namespace tessera::pipeline
