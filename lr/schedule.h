// Learning-rate schedules: pure functions from an optimizer step to a learning rate.
//
// Torch-free on purpose: schedules compile in a second and are tested without libtorch. The
// adapter in lr/torch_adapter.h applies one to a torch::optim::Optimizer.
//
// Step convention: `step` counts optimizer updates from 0; LearningRate(k) is the rate used by
// update k. A budget of `total_steps` updates uses steps 0 .. total_steps-1. Past the budget
// the decaying schedules (Knee, linear, WSD, cosine, one-cycle) stay at their end value instead
// of extrapolating; step and multi-step keep PyTorch's semantics (they have no budget).
//
//   auto knee = KneeSchedule::Create({.peak_lr = 0.1, .explore_steps = 500, .total_steps = 1000});
//   for (int64_t k = 0; k < 1000; ++k) { opt.set_lr((*knee)->LearningRate(k)); ... }
//
// Only ReduceOnPlateauSchedule has state (it reacts to reported metrics); it saves and
// restores that state as text so checkpoints can resume it exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::lr {

class Schedule {
 public:
  virtual ~Schedule() = default;

  // The learning rate of update `step` (>= 0).
  virtual double LearningRate(int64_t step) const = 0;

  // Feeds an evaluation metric (lower is better) measured after update `step`. Only feedback
  // schedules (reduce-on-plateau) use it; the others ignore it.
  virtual void ReportMetric(int64_t step, double value) {
    (void)step;
    (void)value;
  }

  // A one-line description with every parameter, e.g.
  // "knee(peak=0.1,warmup=0,explore=500,total=1000)".
  virtual std::string Describe() const = 0;

  // Mutable state as text (empty for pure schedules) and its inverse, for checkpoints.
  virtual std::string SaveState() const { return ""; }
  virtual Status RestoreState(std::string_view state);
};

// lr = peak_lr for every step.
class ConstantSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<ConstantSchedule>> Create(double peak_lr);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit ConstantSchedule(double peak_lr) : peak_lr_(peak_lr) {}
  double peak_lr_;
};

// PyTorch StepLR: lr = peak_lr * gamma^floor(step / step_size).
class StepSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<StepSchedule>> Create(double peak_lr, int64_t step_size,
                                                      double gamma = 0.1);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  StepSchedule(double peak_lr, int64_t step_size, double gamma)
      : peak_lr_(peak_lr), step_size_(step_size), gamma_(gamma) {}
  double peak_lr_;
  int64_t step_size_;
  double gamma_;
};

// PyTorch MultiStepLR: lr = peak_lr * gamma^(number of milestones <= step). Milestones must be
// strictly increasing and positive.
class MultiStepSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<MultiStepSchedule>> Create(double peak_lr,
                                                           std::vector<int64_t> milestones,
                                                           double gamma = 0.1);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  MultiStepSchedule(double peak_lr, std::vector<int64_t> milestones, double gamma)
      : peak_lr_(peak_lr), milestones_(std::move(milestones)), gamma_(gamma) {}
  double peak_lr_;
  std::vector<int64_t> milestones_;
  double gamma_;
};

// Linear warmup then half-cosine annealing (SGDR / CosineAnnealingLR without restarts):
//   step < W:      lr = peak_lr * (step + 1) / W
//   W <= step < T: lr = min_lr + (peak_lr - min_lr) * (1 + cos(pi * (step - W) / (T - W))) / 2
//   step >= T:     lr = min_lr
struct CosineOptions {
  double peak_lr = 0;
  int64_t warmup_steps = 0;
  int64_t total_steps = 0;
  double min_lr = 0;
};
class CosineSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<CosineSchedule>> Create(const CosineOptions& options);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit CosineSchedule(const CosineOptions& o) : o_(o) {}
  CosineOptions o_;
};

// PyTorch OneCycleLR, two-phase, cosine annealing (the defaults of torch.optim.lr_scheduler):
// starts at peak_lr / div_factor, rises to peak_lr at step pct_start * T - 1, then falls to
// peak_lr / div_factor / final_div_factor at step T - 1. Momentum cycling is not done (the
// adapter only sets learning rates).
struct OneCycleOptions {
  double peak_lr = 0;
  int64_t total_steps = 0;
  double pct_start = 0.3;
  double div_factor = 25;
  double final_div_factor = 1e4;
};
class OneCycleSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<OneCycleSchedule>> Create(const OneCycleOptions& options);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit OneCycleSchedule(const OneCycleOptions& o) : o_(o) {}
  OneCycleOptions o_;
};

// Knee (Iyer et al., "Wide-minima Density Hypothesis and the Explore-Exploit Learning Rate
// Schedule"), exactly the authors' knee_lr_schedule.py at HEAD, whose counter k = step + 1:
//   k <= W:          lr = peak_lr * k / W                       (optional warmup from 0)
//   k <= W + E:      lr = peak_lr                               (explore)
//   otherwise:       lr = max(0, peak_lr * (1 - (k - W - E) / D)),  D = T - W - E  (exploit)
// so the last update of the budget (step T - 1) has lr exactly 0. Requires W + E <= T.
struct KneeOptions {
  double peak_lr = 0;
  int64_t warmup_steps = 0;
  int64_t explore_steps = 0;
  int64_t total_steps = 0;
};
class KneeSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<KneeSchedule>> Create(const KneeOptions& options);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit KneeSchedule(const KneeOptions& o) : o_(o) {}
  KneeOptions o_;
};

// Linear decay to 0 over the budget, after an optional warmup: Knee with no explore phase,
// the "Linear" column of the Knee paper and the budgeted-training baseline.
class LinearDecaySchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<LinearDecaySchedule>> Create(double peak_lr, int64_t warmup_steps,
                                                             int64_t total_steps);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit LinearDecaySchedule(std::unique_ptr<KneeSchedule> knee) : knee_(std::move(knee)) {}
  std::unique_ptr<KneeSchedule> knee_;
};

// Warmup-stable-decay (MiniCPM): linear warmup over W steps, peak_lr until T - D, then a
// linear decay that reaches final_lr at the last step T - 1:
//   step < W:             lr = peak_lr * (step + 1) / W
//   step < T - D:         lr = peak_lr
//   T - D <= step < T:    lr = peak_lr + (final_lr - peak_lr) * (step - (T - D) + 1) / D
// MiniCPM anneals exponentially; we use a linear decay so that WSD differs from Knee only in
// the length of the decay (about 10 % of the budget instead of about 50 %).
struct WsdOptions {
  double peak_lr = 0;
  int64_t warmup_steps = 0;
  int64_t decay_steps = 0;
  int64_t total_steps = 0;
  double final_lr = 0;
};
class WsdSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<WsdSchedule>> Create(const WsdOptions& options);
  double LearningRate(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit WsdSchedule(const WsdOptions& o) : o_(o) {}
  WsdOptions o_;
};

// PyTorch ReduceLROnPlateau (mode "min", threshold_mode "rel"): each reported metric that is
// not below best * (1 - threshold) counts as bad; after more than `patience` bad reports in a
// row (outside a cooldown) the rate is multiplied by `factor`, floored at min_lr, and the
// change is skipped when it would be smaller than eps. The rate applies from the step after the
// report on.
struct PlateauOptions {
  double peak_lr = 0;
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  int64_t cooldown = 0;
  double min_lr = 0;
  double eps = 1e-8;
};
class ReduceOnPlateauSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<ReduceOnPlateauSchedule>> Create(const PlateauOptions& options);
  double LearningRate(int64_t step) const override;
  void ReportMetric(int64_t step, double value) override;
  std::string Describe() const override;
  std::string SaveState() const override;
  Status RestoreState(std::string_view state) override;

 private:
  explicit ReduceOnPlateauSchedule(const PlateauOptions& o) : o_(o), lr_(o.peak_lr) {}
  PlateauOptions o_;
  double lr_;
  double best_ = 0;
  bool has_best_ = false;
  int64_t num_bad_ = 0;
  int64_t cooldown_left_ = 0;
  int64_t reductions_ = 0;
};

}  // namespace tessera::lr
