#include "lr/torch_adapter.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

namespace tessera::lr {
namespace {

// Sets a group's momentum; false if its optimizer has none.
bool SetMomentum(torch::optim::OptimizerOptions& options, double momentum) {
  if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
    sgd->momentum(momentum);
  } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
    adam->betas({momentum, std::get<1>(adam->betas())});
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
    adamw->betas({momentum, std::get<1>(adamw->betas())});
  } else if (auto* rms = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) {
    rms->momentum(momentum);
  } else {
    return false;
  }
  return true;
}

Result<double> MomentumOf(const torch::optim::OptimizerOptions& options) {
  if (auto* sgd = dynamic_cast<const torch::optim::SGDOptions*>(&options)) return sgd->momentum();
  if (auto* adam = dynamic_cast<const torch::optim::AdamOptions*>(&options)) {
    return std::get<0>(adam->betas());
  }
  if (auto* adamw = dynamic_cast<const torch::optim::AdamWOptions*>(&options)) {
    return std::get<0>(adamw->betas());
  }
  if (auto* rms = dynamic_cast<const torch::optim::RMSpropOptions*>(&options)) {
    return rms->momentum();
  }
  return FailedPreconditionError("optimizer has no momentum (SGD, RMSprop) or beta1 (Adam)");
}

}  // namespace

std::vector<double> GroupLearningRates(const torch::optim::Optimizer& optimizer) {
  std::vector<double> out;
  for (const auto& group : optimizer.param_groups()) out.push_back(group.options().get_lr());
  return out;
}

Status SetGroupLearningRates(torch::optim::Optimizer& optimizer, const std::vector<double>& lrs) {
  auto& groups = optimizer.param_groups();
  if (groups.size() != lrs.size()) {
    return InvalidArgumentError(
        fmt::format("optimizer has {} parameter groups, got {} rates", groups.size(), lrs.size()));
  }
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  return Status::Ok();
}

Result<std::vector<double>> GroupMomenta(const torch::optim::Optimizer& optimizer) {
  std::vector<double> out;
  for (const auto& group : optimizer.param_groups()) {
    TESSERA_ASSIGN_OR_RETURN(double m, MomentumOf(group.options()));
    out.push_back(m);
  }
  return out;
}

Result<ScheduleAdapter> ScheduleAdapter::Create(torch::optim::Optimizer& optimizer,
                                                const Schedule& schedule, AdapterOptions options) {
  const std::vector<double> base = GroupLearningRates(optimizer);
  if (base.empty()) return FailedPreconditionError("optimizer has no parameter groups");
  if (!(base[0] > 0)) {
    return FailedPreconditionError(fmt::format(
        "first parameter group's learning rate must be > 0 to define ratios, got {}", base[0]));
  }
  if (schedule.Momentum(0).has_value()) {
    auto momenta = GroupMomenta(optimizer);
    if (!momenta.ok()) {
      return FailedPreconditionError(
          fmt::format("{} cycles momentum: {}", schedule.Describe(), momenta.status().message()));
    }
  }
  ScheduleAdapter adapter(optimizer, schedule, options);
  adapter.AdoptNewGroups();
  return adapter;
}

void ScheduleAdapter::AdoptNewGroups() {
  const auto& groups = optimizer_->param_groups();
  for (size_t i = base_rates_.size(); i < groups.size(); ++i) {
    const double lr = groups[i].options().get_lr();
    base_rates_.push_back(lr);
    ratios_.push_back(lr / base_rates_[0]);
  }
}

double ScheduleAdapter::Apply(int64_t step) {
  AdoptNewGroups();
  auto& groups = optimizer_->param_groups();
  const double first = schedule_->LearningRate(step);
  for (size_t i = 0; i < groups.size(); ++i) {
    const double lr = options_.group_rates == GroupRates::kFromOptimizer
                          ? schedule_->GroupLearningRate(step, base_rates_[i])
                          : first * ratios_[i];
    groups[i].options().set_lr(lr);
  }
  if (const auto momentum = schedule_->Momentum(step)) {
    for (auto& group : groups) SetMomentum(group.options(), *momentum);
  }
  last_step_ = step;
  return groups[0].options().get_lr();
}

void ScheduleAdapter::SetRate(double lr) {
  AdoptNewGroups();
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lr * ratios_[i]);
}

std::string ScheduleAdapter::SaveState() const {
  // "adapter-v1 <mode> <last step> <n> <base rates as %a>": hex floats round-trip exactly.
  std::string out =
      fmt::format("adapter-v1 {} {} {}",
                  options_.group_rates == GroupRates::kFromOptimizer ? "from_optimizer" : "ratio",
                  last_step_, base_rates_.size());
  for (double b : base_rates_) out += fmt::format(" {:a}", b);
  return out;
}

Status ScheduleAdapter::RestoreState(std::string_view state) {
  std::istringstream in{std::string(state)};
  std::string version, mode;
  int64_t last_step = 0;
  size_t n = 0;
  if (!(in >> version >> mode >> last_step >> n) || version != "adapter-v1" || n == 0 ||
      n > 1'000'000) {
    return InvalidArgumentError(
        fmt::format("adapter state '{}' is malformed", state.substr(0, 80)));
  }
  const char* want =
      options_.group_rates == GroupRates::kFromOptimizer ? "from_optimizer" : "ratio";
  if (mode != want) {
    return InvalidArgumentError(
        fmt::format("adapter state is for group rates '{}', this adapter uses '{}'", mode, want));
  }
  if (n > optimizer_->param_groups().size()) {
    return InvalidArgumentError(fmt::format("adapter state has {} groups, the optimizer {}", n,
                                            optimizer_->param_groups().size()));
  }
  std::vector<double> bases;
  for (size_t i = 0; i < n; ++i) {
    std::string text;
    if (!(in >> text)) return InvalidArgumentError("adapter state: missing base rate");
    char* end = nullptr;
    const double b = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(b) || b < 0 || (i == 0 && b == 0)) {
      return InvalidArgumentError(fmt::format("adapter state: bad base rate '{}'", text));
    }
    bases.push_back(b);
  }
  std::string extra;
  if (in >> extra) return InvalidArgumentError("adapter state: trailing data");
  base_rates_ = std::move(bases);
  ratios_.clear();
  for (double b : base_rates_) ratios_.push_back(b / base_rates_[0]);
  last_step_ = last_step;
  AdoptNewGroups();  // groups the saved run did not have yet
  return Status::Ok();
}

}  // namespace tessera::lr
