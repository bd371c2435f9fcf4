// Periodic schedules: PyTorch's CyclicLR (with momentum cycling) and
// CosineAnnealingWarmRestarts (SGDR). Torch-free, equal to PyTorch at every step
// (lr/reference_test.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "lr/schedule.h"

namespace tessera::lr {

// PyTorch CyclicLR (Smith, "Cyclical Learning Rates"): the rate climbs linearly from base_lr to
// max_lr over up_steps, falls back over down_steps, and repeats. The height of cycle c (from 1)
// is scaled by 1 (triangular), 1 / 2^(c - 1) (triangular2) or gamma^step (exp_range). With
// cycle_momentum, momentum runs the other way, max_momentum at base_lr and base_momentum at
// max_lr (PyTorch's default; the adapter refuses optimizers without momentum, as PyTorch does).
// BaseRate() is max_lr: a group with base rate b cycles between base_lr * b / max_lr and b.
enum class CyclicMode { kTriangular, kTriangular2, kExpRange };
struct CyclicOptions {
  double base_lr = 0;
  double max_lr = 0;
  int64_t up_steps = 2000;
  int64_t down_steps = 0;  // 0: up_steps
  CyclicMode mode = CyclicMode::kTriangular;
  double gamma = 1.0;  // exp_range only
  bool cycle_momentum = true;
  double base_momentum = 0.8;
  double max_momentum = 0.9;
};
class CyclicSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<CyclicSchedule>> Create(const CyclicOptions& options);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return o_.max_lr; }
  std::optional<double> Momentum(int64_t step) const override;
  std::string Describe() const override;

 private:
  explicit CyclicSchedule(const CyclicOptions& o) : o_(o) {}
  // PyTorch's scale_factor * scale_fn for `step`: the fraction of the cycle's height reached.
  double Height(int64_t step) const;
  CyclicOptions o_;
};

// PyTorch CosineAnnealingWarmRestarts: cosine from the peak to min_lr over a period of T_0 steps,
// then a restart at the peak with a period T_mult times longer:
//   lr = min_lr + (peak - min_lr) * (1 + cos(pi * T_cur / T_i)) / 2
// where T_cur counts steps since the last restart and T_i is the current period. min_lr is
// absolute (PyTorch's eta_min).
struct CosineRestartsOptions {
  double peak_lr = 0;
  int64_t period_steps = 0;  // T_0
  int64_t period_mult = 1;   // T_mult
  double min_lr = 0;
};
class CosineRestartsSchedule final : public Schedule {
 public:
  static Result<std::unique_ptr<CosineRestartsSchedule>> Create(
      const CosineRestartsOptions& options);
  double LearningRate(int64_t step) const override;
  double BaseRate() const override { return o_.peak_lr; }
  double GroupLearningRate(int64_t step, double base_lr) const override;
  std::string Describe() const override;

 private:
  explicit CosineRestartsSchedule(const CosineRestartsOptions& o) : o_(o) {}
  CosineRestartsOptions o_;
};

}  // namespace tessera::lr
