// Schedules made of functions and of other schedules: PyTorch's LambdaLR, MultiplicativeLR,
// SequentialLR and ChainedScheduler. Torch-free; equal to PyTorch at every step for the cases in
// lr/reference_test.cc.
//
//   // linear warmup for 500 steps, then cosine over the rest (SequentialLR)
//   std::vector<std::unique_ptr<Schedule>> parts;
//   parts.push_back(LinearRampSchedule::Create({.peak_lr = 0.1, .start_factor = 0.01,
//                                               .end_factor = 1, .total_steps = 500}).value());
//   parts.push_back(CosineSchedule::Create({.peak_lr = 0.1, .total_steps = 9500}).value());
//   auto s = SequentialSchedule::Create(std::move(parts), {500}).value();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "lr/schedule.h"

namespace tessera::lr {

// A factor of the step: lr = base * factor(step).
using StepFactor = std::function<double(int64_t step)>;

// PyTorch LambdaLR: lr = peak_lr * factor(step). `name` goes into Describe().
class LambdaSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<LambdaSchedule>> Create(double peak_lr, StepFactor factor,
                                                        std::string name = "lambda");
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return peak_lr_; }
  std::string Describe() const override;

 private:
  LambdaSchedule(double peak_lr, StepFactor factor, std::string name)
      : peak_lr_(peak_lr), factor_(std::move(factor)), name_(std::move(name)) {}
  double peak_lr_;
  StepFactor factor_;
  std::string name_;
};

// PyTorch MultiplicativeLR: lr(0) = peak_lr, lr(k) = lr(k - 1) * factor(k). Products are cached,
// so stepping through a run costs one factor call per step (thread-safe).
class MultiplicativeSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<MultiplicativeSchedule>> Create(
      double peak_lr, StepFactor factor, std::string name = "multiplicative");
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return peak_lr_; }
  std::string Describe() const override;

 private:
  MultiplicativeSchedule(double peak_lr, StepFactor factor, std::string name)
      : peak_lr_(peak_lr), factor_(std::move(factor)), name_(std::move(name)) {}
  double peak_lr_;
  StepFactor factor_;
  std::string name_;
  mutable std::mutex mu_;
  mutable std::vector<double> products_ = {1.0};  // products_[k] = prod of factor(1..k)
};

// PyTorch SequentialLR: schedule i runs from milestone i - 1 (0 for the first) with its own step
// counter restarting at 0, so update k uses schedules[i]->LearningRate(k - milestones[i - 1]).
// Needs one more schedule than milestones; milestones strictly increasing and positive. Metrics
// go to the schedule in force; its state is saved with every part's.
class SequentialSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<SequentialSchedule>> Create(
      std::vector<std::unique_ptr<Schedule>> schedules, std::vector<int64_t> milestones);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return parts_[0]->BaseRate(); }
  double GroupLearningRate(int64_t step, double base_lr) const override;
  std::optional<double> Momentum(int64_t step) const override;
  void ReportMetric(int64_t step, double value) override;
  std::string Describe() const override;
  std::string SaveState() const override;
  Status RestoreState(std::string_view state) override;

 private:
  SequentialSchedule(std::vector<std::unique_ptr<Schedule>> parts, std::vector<int64_t> milestones)
      : parts_(std::move(parts)), milestones_(std::move(milestones)) {}
  // The index of the part in force at `step` and the step in that part's own counter.
  std::pair<size_t, int64_t> PartAt(int64_t step) const;
  std::vector<std::unique_ptr<Schedule>> parts_;
  std::vector<int64_t> milestones_;
};

// PyTorch ChainedScheduler: every schedule applies its factor to the rate, so
//   lr(k) = base * prod_i schedules[i]->GroupLearningRate(k, base) / base.
// This is what PyTorch computes when the chained schedulers are multiplicative (step,
// multi-step, exponential, ConstantLR, LinearLR, MultiplicativeLR, PolynomialLR); chaining a
// cosine or one-cycle in PyTorch compounds its recursive update instead. Momentum comes from
// the last schedule that sets one.
class ChainedSchedule final : public Schedule {
 public:
  // Every schedule needs a BaseRate() > 0.
  static Result<std::unique_ptr<ChainedSchedule>> Create(
      std::vector<std::unique_ptr<Schedule>> schedules);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return parts_[0]->BaseRate(); }
  double GroupLearningRate(int64_t step, double base_lr) const override;
  std::optional<double> Momentum(int64_t step) const override;
  void ReportMetric(int64_t step, double value) override;
  std::string Describe() const override;
  std::string SaveState() const override;
  Status RestoreState(std::string_view state) override;

 private:
  explicit ChainedSchedule(std::vector<std::unique_ptr<Schedule>> parts)
      : parts_(std::move(parts)) {}
  std::vector<std::unique_ptr<Schedule>> parts_;
};

}  // namespace tessera::lr
