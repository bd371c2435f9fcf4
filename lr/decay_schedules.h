// Decay schedules beyond lr/schedule.h: PyTorch's ExponentialLR, PolynomialLR, LinearLR and
// ConstantLR, and the inverse-square-root schedule of Transformer training (Hugging Face's
// get_inverse_sqrt_schedule). Pure functions of the step, torch-free; the stepping convention
// is lr/schedule.h's (LearningRate(k) is the rate of update k, counted from 0), which is
// PyTorch's: each of these equals its PyTorch scheduler at every step (lr/reference_test.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "lr/schedule.h"

namespace tessera::lr {

// PyTorch ExponentialLR: lr = peak_lr * gamma^step.
class ExponentialSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<ExponentialSchedule>> Create(double peak_lr, double gamma);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return peak_lr_; }
  std::string Describe() const override;

 private:
  ExponentialSchedule(double peak_lr, double gamma) : peak_lr_(peak_lr), gamma_(gamma) {}
  double peak_lr_;
  double gamma_;
};

// PyTorch PolynomialLR (min_lr = 0) and Hugging Face's polynomial decay without warmup (its
// lr_end is min_lr, absolute):
//   lr = min_lr + (peak_lr - min_lr) * (1 - min(step, T) / T)^power
// so the rate reaches min_lr at step T, one step after a budget of T updates ends.
struct PolynomialOptions {
  double peak_lr = 0;
  int64_t total_steps = 0;  // T: PyTorch's total_iters
  double power = 1;
  double min_lr = 0;
};
class PolynomialSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<PolynomialSchedule>> Create(const PolynomialOptions& options);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return o_.peak_lr; }
  double GroupLearningRate(int64_t step, double base_lr) const override;
  std::string Describe() const override;

 private:
  explicit PolynomialSchedule(const PolynomialOptions& o) : o_(o) {}
  PolynomialOptions o_;
};

// PyTorch LinearLR: the factor moves linearly from start_factor to end_factor over T steps,
//   lr = peak_lr * (start + (end - start) * min(step, T) / T)
// Used as a warmup (start < 1, end 1) or a decay. Note the convention: LinearLR to 0 over T
// reaches 0 at step T, after the budget; LinearDecaySchedule reaches it at the last update T - 1
// (Knee's convention), so LinearDecaySchedule(T)(k) == LinearRamp(1 -> 0, T)(k + 1).
struct LinearRampOptions {
  double peak_lr = 0;
  double start_factor = 1.0 / 3;
  double end_factor = 1.0;
  int64_t total_steps = 5;  // PyTorch's total_iters
};
class LinearRampSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<LinearRampSchedule>> Create(const LinearRampOptions& options);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return o_.peak_lr; }
  std::string Describe() const override;

 private:
  explicit LinearRampSchedule(const LinearRampOptions& o) : o_(o) {}
  LinearRampOptions o_;
};

// PyTorch ConstantLR: lr = peak_lr * factor for steps < T, then peak_lr.
class ConstantFactorSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<ConstantFactorSchedule>> Create(double peak_lr, double factor,
                                                                int64_t total_steps);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return peak_lr_; }
  std::string Describe() const override;

 private:
  ConstantFactorSchedule(double peak_lr, double factor, int64_t total_steps)
      : peak_lr_(peak_lr), factor_(factor), total_steps_(total_steps) {}
  double peak_lr_;
  double factor_;
  int64_t total_steps_;
};

// Inverse square root (Vaswani et al.; Hugging Face get_inverse_sqrt_schedule): linear warmup
// over W steps, then
//   lr = peak_lr / sqrt((step + timescale - W) / timescale)
// which is peak_lr at step W and falls as 1/sqrt(step). timescale 0 means W (or 10,000 when
// W = 0), as in Hugging Face. Warmup is ours, (step + 1) / W like every warmup here; Hugging
// Face's is step / W (its rate at step 0 is 0), so during warmup ours equals its rate one step
// later, and from step W on the two are identical.
struct InverseSqrtOptions {
  double peak_lr = 0;
  int64_t warmup_steps = 0;
  int64_t timescale = 0;
};
class InverseSqrtSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<InverseSqrtSchedule>> Create(const InverseSqrtOptions& options);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return o_.peak_lr; }
  std::string Describe() const override;

 private:
  explicit InverseSqrtSchedule(const InverseSqrtOptions& o) : o_(o) {}
  InverseSqrtOptions o_;
};

}  // namespace tessera::lr
