// A synthetic problem with a known best learning rate, for testing and demonstrating the tuner:
// the noisy quadratic model f(x) = 1/2 sum_i h_i x_i^2 with stochastic gradients
// g_i = h_i x_i + sigma * N(0, 1). Under SGD with rate r the second moments follow
// E[x'^2] = (1 - r h)^2 E[x^2] + r^2 sigma^2 exactly, so expected losses -- and the best rate --
// are computed in closed form rather than estimated.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "lr/tuner.h"

namespace tessera::lr {

class NoisyQuadratic : public Trainable {
 public:
  NoisyQuadratic(std::vector<double> curvatures, double x0, double sigma, uint64_t seed);

  Status Snapshot() override;
  Status Restore() override;
  Result<double> Step(double lr) override;  // returns f(x) before the update
  void Committed(int64_t step, double lr, double loss, TunerPhase phase) override;

  double Loss() const;

  // Expected final loss from x0 of the tuner's schedule shape with explore rate `lr`:
  // `explore` updates at lr, then Knee's linear decay to 0 over the rest of `total`.
  double ExpectedFinalLoss(double lr, int64_t explore, int64_t total) const;
  // The explore rate minimising ExpectedFinalLoss, on a log grid of 2,001 rates in [1e-4, 10].
  double BestRate(int64_t explore, int64_t total) const;

  int64_t steps() const { return steps_; }          // all updates, trials included
  int64_t committed() const { return committed_; }  // updates that counted
  int64_t exploit_steps() const { return exploit_steps_; }
  double last_committed_lr() const { return last_lr_; }
  bool committed_in_order() const { return in_order_; }

 private:
  std::vector<double> h_;
  double x0_;
  std::vector<double> x_, saved_x_;
  double sigma_;
  std::mt19937_64 rng_, saved_rng_;
  int64_t steps_ = 0;
  int64_t committed_ = 0;
  int64_t exploit_steps_ = 0;
  double last_lr_ = -1;
  bool in_order_ = true;
};

}  // namespace tessera::lr
