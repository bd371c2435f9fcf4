#include "lr/decay_schedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lr/schedule_checks.h"

namespace tessera::lr {

using internal::CheckRate;
using internal::CheckSteps;

// ---- exponential

Result<std::unique_ptr<ExponentialSchedule>> ExponentialSchedule::Create(double peak_lr,
                                                                         double gamma) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("gamma", gamma, false));
  return std::unique_ptr<ExponentialSchedule>(new ExponentialSchedule(peak_lr, gamma));
}
double ExponentialSchedule::LearningRate(int64_t step) const {
  return peak_lr_ * std::pow(gamma_, static_cast<double>(std::max<int64_t>(step, 0)));
}
std::string ExponentialSchedule::Describe() const {
  return fmt::format("exponential(peak={},gamma={})", peak_lr_, gamma_);
}

// ---- polynomial

Result<std::unique_ptr<PolynomialSchedule>> PolynomialSchedule::Create(const PolynomialOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("min_lr", o.min_lr, true));
  TESSERA_RETURN_IF_ERROR(CheckSteps("total_steps", o.total_steps, 1));
  if (!(o.power > 0) || !std::isfinite(o.power)) {
    return InvalidArgumentError(fmt::format("polynomial power must be > 0, got {}", o.power));
  }
  return std::unique_ptr<PolynomialSchedule>(new PolynomialSchedule(o));
}
double PolynomialSchedule::LearningRate(int64_t step) const {
  return GroupLearningRate(step, o_.peak_lr);
}
double PolynomialSchedule::GroupLearningRate(int64_t step, double base_lr) const {
  const double done = static_cast<double>(std::clamp<int64_t>(step, 0, o_.total_steps)) /
                      static_cast<double>(o_.total_steps);
  return o_.min_lr + (base_lr - o_.min_lr) * std::pow(1.0 - done, o_.power);
}
std::string PolynomialSchedule::Describe() const {
  return fmt::format("polynomial(peak={},total={},power={},min={})", o_.peak_lr, o_.total_steps,
                     o_.power, o_.min_lr);
}

// ---- PyTorch LinearLR

Result<std::unique_ptr<LinearRampSchedule>> LinearRampSchedule::Create(const LinearRampOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckSteps("total_steps", o.total_steps, 1));
  // PyTorch: start_factor in (0, 1], end_factor in [0, 1].
  if (!(o.start_factor > 0 && o.start_factor <= 1) || !(o.end_factor >= 0 && o.end_factor <= 1)) {
    return InvalidArgumentError(
        fmt::format("linear ramp needs start_factor in (0, 1] and end_factor in [0, 1], got {} "
                    "and {}",
                    o.start_factor, o.end_factor));
  }
  return std::unique_ptr<LinearRampSchedule>(new LinearRampSchedule(o));
}
double LinearRampSchedule::LearningRate(int64_t step) const {
  const double done = static_cast<double>(std::clamp<int64_t>(step, 0, o_.total_steps));
  return o_.peak_lr * (o_.start_factor + (o_.end_factor - o_.start_factor) * done /
                                             static_cast<double>(o_.total_steps));
}
std::string LinearRampSchedule::Describe() const {
  return fmt::format("linear_ramp(peak={},start={},end={},total={})", o_.peak_lr, o_.start_factor,
                     o_.end_factor, o_.total_steps);
}

// ---- PyTorch ConstantLR

Result<std::unique_ptr<ConstantFactorSchedule>> ConstantFactorSchedule::Create(
    double peak_lr, double factor, int64_t total_steps) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckSteps("total_steps", total_steps, 0));
  if (!(factor >= 0 && factor <= 1)) {
    return InvalidArgumentError(fmt::format("constant factor must be in [0, 1], got {}", factor));
  }
  return std::unique_ptr<ConstantFactorSchedule>(
      new ConstantFactorSchedule(peak_lr, factor, total_steps));
}
double ConstantFactorSchedule::LearningRate(int64_t step) const {
  return step < total_steps_ ? peak_lr_ * factor_ : peak_lr_;
}
std::string ConstantFactorSchedule::Describe() const {
  return fmt::format("constant_factor(peak={},factor={},total={})", peak_lr_, factor_,
                     total_steps_);
}

// ---- inverse square root

Result<std::unique_ptr<InverseSqrtSchedule>> InverseSqrtSchedule::Create(
    const InverseSqrtOptions& options) {
  InverseSqrtOptions o = options;
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckSteps("warmup_steps", o.warmup_steps, 0));
  TESSERA_RETURN_IF_ERROR(CheckSteps("timescale", o.timescale, 0));
  if (o.timescale == 0) o.timescale = o.warmup_steps > 0 ? o.warmup_steps : 10'000;
  return std::unique_ptr<InverseSqrtSchedule>(new InverseSqrtSchedule(o));
}
double InverseSqrtSchedule::LearningRate(int64_t step) const {
  step = std::max<int64_t>(step, 0);
  if (step < o_.warmup_steps) {
    return o_.peak_lr * static_cast<double>(step + 1) / static_cast<double>(o_.warmup_steps);
  }
  // Hugging Face's arithmetic: shift = timescale - warmup; 1 / sqrt((step + shift) / timescale).
  const int64_t shift = o_.timescale - o_.warmup_steps;
  return o_.peak_lr *
         (1.0 / std::sqrt(static_cast<double>(step + shift) / static_cast<double>(o_.timescale)));
}
std::string InverseSqrtSchedule::Describe() const {
  return fmt::format("inverse_sqrt(peak={},warmup={},timescale={})", o_.peak_lr, o_.warmup_steps,
                     o_.timescale);
}

}  // namespace tessera::lr
