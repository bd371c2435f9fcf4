#include "lr/cyclic_schedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "lr/schedule_checks.h"

namespace tessera::lr {

using internal::CheckRate;
using internal::CheckSteps;

// ---- cyclic

Result<std::unique_ptr<CyclicSchedule>> CyclicSchedule::Create(const CyclicOptions& options) {
  CyclicOptions o = options;
  TESSERA_RETURN_IF_ERROR(CheckRate("max_lr", o.max_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("base_lr", o.base_lr, true));
  TESSERA_RETURN_IF_ERROR(CheckSteps("up_steps", o.up_steps, 1));
  TESSERA_RETURN_IF_ERROR(CheckSteps("down_steps", o.down_steps, 0));
  if (o.down_steps == 0) o.down_steps = o.up_steps;
  if (o.base_lr > o.max_lr) {
    return InvalidArgumentError(
        fmt::format("cyclic base_lr {} exceeds max_lr {}", o.base_lr, o.max_lr));
  }
  if (!(o.gamma > 0 && o.gamma <= 1)) {
    return InvalidArgumentError(fmt::format("cyclic gamma must be in (0, 1], got {}", o.gamma));
  }
  if (o.cycle_momentum &&
      !(o.base_momentum >= 0 && o.base_momentum <= o.max_momentum && o.max_momentum < 1)) {
    return InvalidArgumentError("cyclic needs 0 <= base_momentum <= max_momentum < 1");
  }
  return std::unique_ptr<CyclicSchedule>(new CyclicSchedule(o));
}
double CyclicSchedule::Height(int64_t step) const {
  // torch.optim.lr_scheduler.CyclicLR.get_lr, expression for expression.
  const double total = static_cast<double>(o_.up_steps + o_.down_steps);
  const double ratio = static_cast<double>(o_.up_steps) / total;
  const double k = static_cast<double>(std::max<int64_t>(step, 0));
  const double cycle = std::floor(1 + k / total);
  const double x = 1. + k / total - cycle;
  const double scale = x <= ratio ? x / ratio : (x - 1) / (ratio - 1);
  switch (o_.mode) {
    case CyclicMode::kTriangular:
      return scale;
    case CyclicMode::kTriangular2:
      return scale * (1 / std::pow(2.0, cycle - 1));
    case CyclicMode::kExpRange:
      return scale * std::pow(o_.gamma, k);
  }
  return scale;
}
double CyclicSchedule::LearningRate(int64_t step) const {
  return o_.base_lr + (o_.max_lr - o_.base_lr) * Height(step);
}
std::optional<double> CyclicSchedule::Momentum(int64_t step) const {
  if (!o_.cycle_momentum) return std::nullopt;
  return o_.max_momentum - (o_.max_momentum - o_.base_momentum) * Height(step);
}
std::string CyclicSchedule::Describe() const {
  const char* mode = o_.mode == CyclicMode::kTriangular    ? "triangular"
                     : o_.mode == CyclicMode::kTriangular2 ? "triangular2"
                                                           : "exp_range";
  return fmt::format(
      "cyclic(base={},max={},up={},down={},mode={},gamma={}{})", o_.base_lr, o_.max_lr, o_.up_steps,
      o_.down_steps, mode, o_.gamma,
      o_.cycle_momentum ? fmt::format(",momentum={}..{}", o_.base_momentum, o_.max_momentum) : "");
}

// ---- cosine with warm restarts

Result<std::unique_ptr<CosineRestartsSchedule>> CosineRestartsSchedule::Create(
    const CosineRestartsOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("min_lr", o.min_lr, true));
  TESSERA_RETURN_IF_ERROR(CheckSteps("period_steps", o.period_steps, 1));
  TESSERA_RETURN_IF_ERROR(CheckSteps("period_mult", o.period_mult, 1));
  return std::unique_ptr<CosineRestartsSchedule>(new CosineRestartsSchedule(o));
}
double CosineRestartsSchedule::LearningRate(int64_t step) const {
  return GroupLearningRate(step, o_.peak_lr);
}
double CosineRestartsSchedule::GroupLearningRate(int64_t step, double base_lr) const {
  // PyTorch's step(): T_cur += 1; if T_cur >= T_i: T_cur -= T_i, T_i *= T_mult.
  int64_t t_cur = std::max<int64_t>(step, 0);
  int64_t t_i = o_.period_steps;
  if (o_.period_mult == 1) {
    t_cur %= t_i;
  } else {
    while (t_cur >= t_i) {
      t_cur -= t_i;
      t_i *= o_.period_mult;
    }
  }
  return o_.min_lr + (base_lr - o_.min_lr) *
                         (1 + std::cos(std::numbers::pi * static_cast<double>(t_cur) /
                                       static_cast<double>(t_i))) /
                         2;
}
std::string CosineRestartsSchedule::Describe() const {
  return fmt::format("cosine_restarts(peak={},period={},mult={},min={})", o_.peak_lr,
                     o_.period_steps, o_.period_mult, o_.min_lr);
}

}  // namespace tessera::lr
