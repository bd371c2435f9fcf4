// Confidence intervals for the experiments: the mean of a sample and the mean of paired
// differences, with two-sided 95 % Student-t intervals. Torch-free.
//
// Paired by seed: run i of schedule A and run i of schedule B share the seed, hence the
// initialisation and the data order; the interval of the mean of (a_i - b_i) removes the
// between-seed variance that an unpaired comparison would carry.
#pragma once

#include <vector>

#include "core/status.h"

namespace tessera::lr {

struct Interval {
  double mean = 0;
  double lo = 0;  // 95 % two-sided; lo == hi == mean for n == 1
  double hi = 0;
  int n = 0;

  // Whether `value` lies outside the interval (a difference whose interval excludes 0).
  bool Excludes(double value) const { return n > 1 && (value < lo || value > hi); }
};

// The 0.975 quantile of Student's t with `df` >= 1 degrees of freedom (exact table to 30, then
// the Cornish-Fisher expansion, accurate to 1e-4 there).
double StudentT975(int df);

// INVALID_ARGUMENT for an empty sample or a non-finite value.
Result<Interval> MeanInterval(const std::vector<double>& sample);

// The interval of mean(a_i - b_i); INVALID_ARGUMENT if the sizes differ or are 0.
Result<Interval> PairedDifference(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tessera::lr
