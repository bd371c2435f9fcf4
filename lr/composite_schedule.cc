#include "lr/composite_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lr/schedule_checks.h"

namespace tessera::lr {

using internal::CheckRate;

namespace {

Status CheckParts(std::string_view what, const std::vector<std::unique_ptr<Schedule>>& parts) {
  if (parts.empty()) return InvalidArgumentError(fmt::format("{} needs a schedule", what));
  for (const auto& p : parts) {
    if (p == nullptr) return InvalidArgumentError(fmt::format("{}: null schedule", what));
  }
  return Status::Ok();
}

std::string DescribeParts(const std::vector<std::unique_ptr<Schedule>>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ";" : "") + parts[i]->Describe();
  return out;
}

std::string SaveParts(const std::vector<std::unique_ptr<Schedule>>& parts) {
  std::vector<std::string> states;
  for (const auto& p : parts) states.push_back(p->SaveState());
  // Pure parts save "", so a composite of pure schedules has no state either.
  for (const auto& s : states) {
    if (!s.empty()) return internal::JoinStates(states);
  }
  return "";
}

Status RestoreParts(const std::vector<std::unique_ptr<Schedule>>& parts, std::string_view state) {
  if (state.empty()) {
    for (const auto& p : parts) TESSERA_RETURN_IF_ERROR(p->RestoreState(""));
    return Status::Ok();
  }
  TESSERA_ASSIGN_OR_RETURN(auto states, internal::SplitStates(state, parts.size()));
  for (size_t i = 0; i < parts.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(parts[i]->RestoreState(states[i]));
  }
  return Status::Ok();
}

}  // namespace

// ---- lambda

Result<std::unique_ptr<LambdaSchedule>> LambdaSchedule::Create(double peak_lr, StepFactor factor,
                                                               std::string name) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  if (!factor) return InvalidArgumentError("lambda schedule needs a factor function");
  return std::unique_ptr<LambdaSchedule>(
      new LambdaSchedule(peak_lr, std::move(factor), std::move(name)));
}
double LambdaSchedule::LearningRate(int64_t step) const {
  return peak_lr_ * factor_(std::max<int64_t>(step, 0));
}
std::string LambdaSchedule::Describe() const { return fmt::format("{}(peak={})", name_, peak_lr_); }

// ---- multiplicative

Result<std::unique_ptr<MultiplicativeSchedule>> MultiplicativeSchedule::Create(double peak_lr,
                                                                               StepFactor factor,
                                                                               std::string name) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  if (!factor) return InvalidArgumentError("multiplicative schedule needs a factor function");
  return std::unique_ptr<MultiplicativeSchedule>(
      new MultiplicativeSchedule(peak_lr, std::move(factor), std::move(name)));
}
double MultiplicativeSchedule::LearningRate(int64_t step) const {
  const auto k = static_cast<size_t>(std::max<int64_t>(step, 0));
  std::lock_guard lock(mu_);
  while (products_.size() <= k) {
    products_.push_back(products_.back() * factor_(static_cast<int64_t>(products_.size())));
  }
  // PyTorch multiplies the group's rate in place: ((peak * f(1)) * f(2)) * ...; the product of
  // the factors first differs only in rounding.
  return peak_lr_ * products_[k];
}
std::string MultiplicativeSchedule::Describe() const {
  return fmt::format("{}(peak={})", name_, peak_lr_);
}

// ---- sequential

Result<std::unique_ptr<SequentialSchedule>> SequentialSchedule::Create(
    std::vector<std::unique_ptr<Schedule>> schedules, std::vector<int64_t> milestones) {
  TESSERA_RETURN_IF_ERROR(CheckParts("sequential schedule", schedules));
  if (milestones.size() + 1 != schedules.size()) {
    return InvalidArgumentError(
        fmt::format("sequential schedule: {} schedules need {} milestones, got {}",
                    schedules.size(), schedules.size() - 1, milestones.size()));
  }
  for (size_t i = 0; i < milestones.size(); ++i) {
    if (milestones[i] < 1 || (i > 0 && milestones[i] <= milestones[i - 1])) {
      return InvalidArgumentError(
          "sequential schedule milestones must be positive and strictly increasing");
    }
  }
  return std::unique_ptr<SequentialSchedule>(
      new SequentialSchedule(std::move(schedules), std::move(milestones)));
}
std::pair<size_t, int64_t> SequentialSchedule::PartAt(int64_t step) const {
  step = std::max<int64_t>(step, 0);
  const auto i = static_cast<size_t>(
      std::upper_bound(milestones_.begin(), milestones_.end(), step) - milestones_.begin());
  return {i, i == 0 ? step : step - milestones_[i - 1]};
}
double SequentialSchedule::LearningRate(int64_t step) const {
  auto [i, local] = PartAt(step);
  return parts_[i]->LearningRate(local);
}
double SequentialSchedule::GroupLearningRate(int64_t step, double base_lr) const {
  auto [i, local] = PartAt(step);
  return parts_[i]->GroupLearningRate(local, base_lr);
}
std::optional<double> SequentialSchedule::Momentum(int64_t step) const {
  auto [i, local] = PartAt(step);
  return parts_[i]->Momentum(local);
}
void SequentialSchedule::ReportMetric(int64_t step, double value) {
  auto [i, local] = PartAt(step);
  parts_[i]->ReportMetric(local, value);
}
std::string SequentialSchedule::Describe() const {
  std::string at;
  for (size_t i = 0; i < milestones_.size(); ++i)
    at += fmt::format("{}{}", i ? "/" : "", milestones_[i]);
  return fmt::format("sequential(at={};{})", at, DescribeParts(parts_));
}
std::string SequentialSchedule::SaveState() const { return SaveParts(parts_); }
Status SequentialSchedule::RestoreState(std::string_view state) {
  return RestoreParts(parts_, state);
}

// ---- chained

Result<std::unique_ptr<ChainedSchedule>> ChainedSchedule::Create(
    std::vector<std::unique_ptr<Schedule>> schedules) {
  TESSERA_RETURN_IF_ERROR(CheckParts("chained schedule", schedules));
  for (const auto& p : schedules) {
    if (!(p->BaseRate() > 0)) {
      return InvalidArgumentError(fmt::format(
          "chained schedule: {} has no base rate to take a factor from", p->Describe()));
    }
  }
  return std::unique_ptr<ChainedSchedule>(new ChainedSchedule(std::move(schedules)));
}
double ChainedSchedule::LearningRate(int64_t step) const {
  return GroupLearningRate(step, BaseRate());
}
double ChainedSchedule::GroupLearningRate(int64_t step, double base_lr) const {
  double lr = base_lr;
  for (const auto& p : parts_) lr *= p->LearningRate(step) / p->BaseRate();
  return lr;
}
std::optional<double> ChainedSchedule::Momentum(int64_t step) const {
  std::optional<double> m;
  for (const auto& p : parts_) {
    if (auto pm = p->Momentum(step)) m = pm;
  }
  return m;
}
void ChainedSchedule::ReportMetric(int64_t step, double value) {
  for (const auto& p : parts_) p->ReportMetric(step, value);
}
std::string ChainedSchedule::Describe() const {
  return fmt::format("chained({})", DescribeParts(parts_));
}
std::string ChainedSchedule::SaveState() const { return SaveParts(parts_); }
Status ChainedSchedule::RestoreState(std::string_view state) { return RestoreParts(parts_, state); }

}  // namespace tessera::lr
