// Loss-curve forecasting for the online tuner: fits L(t) = a * exp(b * t) + c to a short
// training-loss series and extrapolates it.
//
// The exponential-plus-constant family is the one AutoLRS (Jin et al., ICLR 2021) fits to its
// short LR trials. We fit it without an iterative optimiser: for each rate b on a fixed grid
// (decays only, scaled to the series length) a and c follow from 2x2 linear least
// squares, and the b with the smallest squared error wins. That is deterministic, cannot fail
// to converge, and costs microseconds for the tens of points a trial produces. When every loss
// is >= 0 the asymptote c is constrained to c >= 0 (a loss cannot level off below zero; an
// unconstrained fit to a short noisy tail often does, and then every candidate forecasts 0).
#pragma once

#include <span>

#include "core/status.h"

namespace tessera::lr {

struct ExponentialFit {
  double a = 0;
  double b = 0;
  double c = 0;
  double sse = 0;  // sum of squared residuals over the series

  // The fitted loss at time t (the series' points sit at t = 1 .. n).
  double At(double t) const;
};

// Fits the series (losses[i] observed at t = i + 1). Needs at least 3 finite points;
// INVALID_ARGUMENT otherwise.
Result<ExponentialFit> FitExponential(std::span<const double> losses);

// The fitted loss at t = horizon, clipped below at 0 when every observed loss is >= 0 (a
// training loss cannot be negative, and an exponential fit to a noisy tail can overshoot).
Result<double> ForecastLoss(std::span<const double> losses, double horizon);

}  // namespace tessera::lr
