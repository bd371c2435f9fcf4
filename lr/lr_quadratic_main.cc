// lr-quadratic: runs the online tuner on a noisy quadratic whose best learning rate is known in
// closed form, and prints each search round, the chosen rate and the best one.
#include <fmt/format.h>

#include <iostream>

#include "core/cli.h"
#include "lr/quadratic.h"
#include "lr/tuner.h"

int main(int argc, char** argv) {
  tessera::cli::Program program("lr-quadratic",
                                "Runs the online LR tuner on a noisy quadratic with a known best "
                                "rate and compares the two.");
  std::vector<double> curvatures = {0.1, 0.3, 1, 3, 10};
  double sigma = 0.05, x0 = 3.0, initial_lr = 4.0;
  int64_t steps = 400;
  uint64_t seed = 1;
  auto& app = program.app();
  app.add_option("--curvatures", curvatures, "the quadratic's curvatures h_i")->delimiter(',');
  app.add_option("--sigma", sigma, "gradient noise")->capture_default_str();
  app.add_option("--x0", x0, "starting point of every coordinate")->capture_default_str();
  app.add_option("--initial-lr", initial_lr, "the tuner's initial guess")->capture_default_str();
  app.add_option("--steps", steps, "budget of committed steps")->capture_default_str();
  app.add_option("--seed", seed, "noise seed")->capture_default_str();
  return program.Run(argc, argv, [&]() -> tessera::Status {
    if (curvatures.empty())
      return tessera::cli::UsageError("usage: --curvatures must not be empty");
    for (double h : curvatures) {
      if (!(h > 0)) return tessera::cli::UsageError("usage: curvatures must be > 0");
    }
    if (!(sigma >= 0)) return tessera::cli::UsageError("usage: --sigma must be >= 0");
    tessera::lr::NoisyQuadratic q(curvatures, x0, sigma, seed);
    TESSERA_ASSIGN_OR_RETURN(
        auto report, tessera::lr::RunTuner({.initial_lr = initial_lr, .total_steps = steps}, q));
    for (const auto& r : report.rounds) {
      std::string cands;
      for (size_t i = 0; i < r.candidates.size(); ++i) {
        cands += fmt::format(" {:.3g}->{:.3g}", r.candidates[i], r.forecasts[i]);
      }
      std::cout << fmt::format(
          "round at step {:4d}: explore lr {:.4g} (floor {:.3g}), round loss {:.4g}{}\n", r.step,
          r.chosen_lr, r.floor_lr, r.round_mean_loss,
          cands.empty() ? "  (search stopped)" : ";" + cands);
    }
    const double best = q.BestRate(report.explore_steps, steps);
    std::cout << fmt::format(
        "chosen lr {:.4g}, best lr {:.4g} (closed form), ratio {:.2f}; explored {} of {} steps "
        "(ended: {}); final loss {:.4g} vs {:.4g} expected at the best lr; {} trial steps = "
        "{:.0f}% extra\n",
        report.chosen_lr, best, report.chosen_lr / best, report.explore_steps, steps,
        report.explore_end_reason, q.Loss(), q.ExpectedFinalLoss(best, report.explore_steps, steps),
        report.trial_steps, 100 * report.ExtraComputeFraction());
    return tessera::Status::Ok();
  });
}
