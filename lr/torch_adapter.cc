#include "lr/torch_adapter.h"

#include <fmt/format.h>
#include <torch/torch.h>

namespace tessera::lr {

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

Result<ScheduleAdapter> ScheduleAdapter::Create(torch::optim::Optimizer& optimizer,
                                                const Schedule& schedule) {
  const std::vector<double> base = GroupLearningRates(optimizer);
  if (base.empty()) return FailedPreconditionError("optimizer has no parameter groups");
  if (!(base[0] > 0)) {
    return FailedPreconditionError(fmt::format(
        "first parameter group's learning rate must be > 0 to define ratios, got {}", base[0]));
  }
  std::vector<double> ratios;
  for (double lr : base) ratios.push_back(lr / base[0]);
  return ScheduleAdapter(optimizer, schedule, std::move(ratios));
}

double ScheduleAdapter::Apply(int64_t step) {
  const double lr = schedule_->LearningRate(step);
  SetRate(lr);
  return lr;
}

void ScheduleAdapter::SetRate(double lr) {
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size() && i < ratios_.size(); ++i) {
    groups[i].options().set_lr(lr * ratios_[i]);
  }
}

}  // namespace tessera::lr
