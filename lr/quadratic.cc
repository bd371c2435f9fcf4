#include "lr/quadratic.h"

#include <cmath>
#include <limits>

namespace tessera::lr {

NoisyQuadratic::NoisyQuadratic(std::vector<double> curvatures, double x0, double sigma,
                               uint64_t seed)
    : h_(std::move(curvatures)), x0_(x0), x_(h_.size(), x0), sigma_(sigma), rng_(seed) {}

Status NoisyQuadratic::Snapshot() {
  saved_x_ = x_;
  saved_rng_ = rng_;
  return Status::Ok();
}

Status NoisyQuadratic::Restore() {
  if (saved_x_.empty() && !x_.empty()) return FailedPreconditionError("restore before snapshot");
  x_ = saved_x_;
  rng_ = saved_rng_;  // trials of every candidate see the same gradient noise
  return Status::Ok();
}

Result<double> NoisyQuadratic::Step(double lr) {
  ++steps_;
  const double loss = Loss();
  std::normal_distribution<double> noise(0.0, 1.0);
  for (size_t i = 0; i < x_.size(); ++i) x_[i] -= lr * (h_[i] * x_[i] + sigma_ * noise(rng_));
  return loss;
}

void NoisyQuadratic::Committed(int64_t step, double lr, double, TunerPhase phase) {
  if (step != committed_) in_order_ = false;
  ++committed_;
  last_lr_ = lr;
  if (phase == TunerPhase::kExploit) ++exploit_steps_;
}

double NoisyQuadratic::Loss() const {
  double f = 0;
  for (size_t i = 0; i < x_.size(); ++i) f += 0.5 * h_[i] * x_[i] * x_[i];
  return f;
}

double NoisyQuadratic::ExpectedFinalLoss(double lr, int64_t explore, int64_t total) const {
  double f = 0;
  const int64_t decay = total - explore;
  for (double h : h_) {
    double m = x0_ * x0_;
    for (int64_t t = 0; t < total; ++t) {
      const double r =
          t < explore
              ? lr
              : lr * (1.0 - static_cast<double>(t - explore + 1) / static_cast<double>(decay));
      m = (1 - r * h) * (1 - r * h) * m + r * r * sigma_ * sigma_;
      if (!std::isfinite(m)) return std::numeric_limits<double>::infinity();
    }
    f += 0.5 * h * m;
  }
  return f;
}

double NoisyQuadratic::BestRate(int64_t explore, int64_t total) const {
  double best_lr = 0, best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= 2000; ++i) {
    const double lr = 1e-4 * std::pow(1e5, i / 2000.0);
    const double f = ExpectedFinalLoss(lr, explore, total);
    if (f < best) best = f, best_lr = lr;
  }
  return best_lr;
}

}  // namespace tessera::lr
