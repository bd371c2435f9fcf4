#include "lr/forecast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tessera::lr {
namespace {

TEST(FitExponential, RecoversAnExactDecay) {
  // b = -0.1 sits between grid points; the fit must still be close and forecast the asymptote.
  std::vector<double> y;
  for (int t = 1; t <= 30; ++t) y.push_back(2.0 * std::exp(-0.1 * t) + 0.5);
  auto fit = FitExponential(y).value();
  EXPECT_NEAR(fit.At(15), y[14], 1e-2);
  EXPECT_NEAR(ForecastLoss(y, 1000).value(), 0.5, 0.05);
}

TEST(FitExponential, NeverForecastsARisingSeriesBelowItsStart) {
  // Only decays are fitted (a rising series is the caller's divergence check's business), but
  // a rising series must not look like an improving one.
  std::vector<double> y;
  for (int t = 1; t <= 20; ++t) y.push_back(1.0 + 0.01 * std::exp(0.2 * t));
  EXPECT_GT(ForecastLoss(y, 100).value(), y.front());
}

TEST(FitExponential, FlatNoisySeriesForecastsNearItsMean) {
  std::vector<double> y = {1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02, 0.98};
  EXPECT_NEAR(ForecastLoss(y, 80).value(), 1.0, 0.15);
}

TEST(FitExponential, ClipsAtZeroForNonNegativeLosses) {
  std::vector<double> y = {1.0, 0.7, 0.4, 0.1};  // a straight line heading below zero
  EXPECT_GE(ForecastLoss(y, 100).value(), 0.0);
}

TEST(FitExponential, RejectsBadInput) {
  std::vector<double> short_series = {1.0, 2.0};
  EXPECT_FALSE(FitExponential(short_series).ok());
  std::vector<double> nan_series = {1.0, NAN, 2.0};
  EXPECT_FALSE(FitExponential(nan_series).ok());
  std::vector<double> ok = {3.0, 2.0, 1.5};
  EXPECT_FALSE(ForecastLoss(ok, -1).ok());
}

}  // namespace
}  // namespace tessera::lr
