#include "lr/range_test.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tessera::lr {

Result<RangeTestReport> RunRangeTest(const RangeTestOptions& o, Trainable& t) {
  if (!(o.min_lr > 0) || !(o.max_lr > o.min_lr) || !std::isfinite(o.max_lr)) {
    return InvalidArgumentError(
        fmt::format("range test needs 0 < min_lr < max_lr, got {} and {}", o.min_lr, o.max_lr));
  }
  if (o.steps < 5 || !(o.smoothing >= 0 && o.smoothing < 1) || !(o.divergence_factor > 1) ||
      !(o.divisor >= 1)) {
    return InvalidArgumentError(
        "range test needs steps >= 5, smoothing in [0, 1), divergence_factor > 1, divisor >= 1");
  }
  TESSERA_RETURN_IF_ERROR(t.Snapshot());
  RangeTestReport r;
  double average = 0;
  double best = std::numeric_limits<double>::infinity();
  const double ratio = o.max_lr / o.min_lr;
  for (int64_t i = 0; i < o.steps; ++i) {
    const double lr =
        o.min_lr * std::pow(ratio, static_cast<double>(i) / static_cast<double>(o.steps - 1));
    TESSERA_ASSIGN_OR_RETURN(double loss, t.Step(lr));
    ++r.steps_done;
    if (!std::isfinite(loss)) {
      r.diverged = true;
      break;
    }
    average = o.smoothing * average + (1 - o.smoothing) * loss;
    const double smoothed =
        average / (1 - std::pow(o.smoothing, static_cast<double>(i + 1)));  // bias correction
    r.lrs.push_back(lr);
    r.smoothed.push_back(smoothed);
    if (smoothed < best) {
      best = smoothed;
      r.min_loss_lr = lr;
    }
    if (i > 0 && smoothed > o.divergence_factor * best) {
      r.diverged = true;
      break;
    }
  }
  TESSERA_RETURN_IF_ERROR(t.Restore());
  if (r.lrs.empty()) return FailedPreconditionError("range test: the first step diverged");
  r.chosen_lr = r.min_loss_lr / o.divisor;
  return r;
}

}  // namespace tessera::lr
