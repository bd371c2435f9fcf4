#include "lr/paired_stats.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>

namespace tessera::lr {

double StudentT975(int df) {
  // t_{0.975, df} for df = 1..30 (standard tables).
  static constexpr std::array<double, 30> kTable = {
      12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
      2.262157,  2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
      2.109816,  2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
      2.059539,  2.055529, 2.051831, 2.048407, 2.045230, 2.042272};
  if (df < 1) return std::numeric_limits<double>::quiet_NaN();
  if (df <= 30) return kTable[static_cast<size_t>(df - 1)];
  // Cornish-Fisher expansion around the normal quantile z = 1.959964.
  const double z = 1.959963984540054;
  const double n = df;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

Result<Interval> MeanInterval(const std::vector<double>& sample) {
  if (sample.empty()) return InvalidArgumentError("interval of an empty sample");
  double mean = 0;
  for (double x : sample) {
    if (!std::isfinite(x)) return InvalidArgumentError(fmt::format("non-finite value {}", x));
    mean += x;
  }
  const auto n = static_cast<double>(sample.size());
  mean /= n;
  Interval r{.mean = mean, .lo = mean, .hi = mean, .n = static_cast<int>(sample.size())};
  if (sample.size() < 2) return r;
  double ss = 0;
  for (double x : sample) ss += (x - mean) * (x - mean);
  const double half = StudentT975(r.n - 1) * std::sqrt(ss / (n - 1)) / std::sqrt(n);
  r.lo = mean - half;
  r.hi = mean + half;
  return r;
}

Result<Interval> PairedDifference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) {
    return InvalidArgumentError(fmt::format(
        "paired samples need equal, non-zero sizes, got {} and {}", a.size(), b.size()));
  }
  std::vector<double> d;
  for (size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
  return MeanInterval(d);
}

}  // namespace tessera::lr
