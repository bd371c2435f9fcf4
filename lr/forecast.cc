#include "lr/forecast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::lr {

double ExponentialFit::At(double t) const { return a * std::exp(b * t) + c; }

Result<ExponentialFit> FitExponential(std::span<const double> losses) {
  const size_t n = losses.size();
  if (n < 3) return InvalidArgumentError(fmt::format("need >= 3 losses to fit, got {}", n));
  for (double v : losses) {
    if (!std::isfinite(v)) return InvalidArgumentError("cannot fit a loss series with NaN or inf");
  }
  const double len = static_cast<double>(n);
  const bool nonnegative =
      std::all_of(losses.begin(), losses.end(), [](double v) { return v >= 0; });
  ExponentialFit best;
  best.sse = std::numeric_limits<double>::infinity();
  // Decay rates r per series length, 0.01 .. 30 on a log grid (b = -r / n). No growth
  // (b > 0): fitted to a noisy flat tail, growth extrapolates to absurd losses, and a
  // diverging trial is caught by the caller's divergence check before any forecast.
  constexpr int kGrid = 60;
  {
    for (int i = 0; i < kGrid; ++i) {
      const double r = 0.01 * std::pow(3000.0, static_cast<double>(i) / (kGrid - 1));
      const double b = -r / len;
      // Least squares for loss ~ a * e + c with e = exp(b t).
      double se = 0, see = 0, sy = 0, sey = 0;
      for (size_t k = 0; k < n; ++k) {
        const double e = std::exp(b * static_cast<double>(k + 1));
        se += e;
        see += e * e;
        sy += losses[k];
        sey += e * losses[k];
      }
      const double det = len * see - se * se;
      if (!(std::abs(det) > 1e-12 * len * see)) continue;  // e nearly constant: no information
      double a = (len * sey - se * sy) / det;
      double c = (sy - a * se) / len;
      if (nonnegative && c < 0) {
        // A loss curve cannot level off below zero: refit with the asymptote pinned at 0.
        c = 0;
        a = sey / see;
      }
      double sse = 0;
      for (size_t k = 0; k < n; ++k) {
        const double resid = a * std::exp(b * static_cast<double>(k + 1)) + c - losses[k];
        sse += resid * resid;
      }
      if (sse < best.sse) best = {a, b, c, sse};
    }
  }
  if (!std::isfinite(best.sse)) {
    // Every basis was degenerate (cannot happen for n >= 3 with this grid, kept as a guard):
    // fall back to the mean as a flat forecast.
    double mean = 0;
    for (double v : losses) mean += v;
    best = {0, 0, mean / len, 0};
  }
  return best;
}

Result<double> ForecastLoss(std::span<const double> losses, double horizon) {
  if (!(horizon >= 0) || !std::isfinite(horizon)) {
    return InvalidArgumentError(fmt::format("forecast horizon must be >= 0, got {}", horizon));
  }
  TESSERA_ASSIGN_OR_RETURN(ExponentialFit fit, FitExponential(losses));
  double value = fit.At(horizon);
  if (!std::isfinite(value)) value = std::numeric_limits<double>::infinity();
  const bool nonnegative =
      std::all_of(losses.begin(), losses.end(), [](double v) { return v >= 0; });
  if (nonnegative) value = std::max(value, 0.0);
  return value;
}

}  // namespace tessera::lr
