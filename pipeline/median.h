// The median of a set of timings, the one definition the profile (model.cc) and the speed probe
// (cpu_speed.cc) share: the middle value, the mean of the two middle values for an even count,
// 0 for none. Torch-free, header-only.
#pragma once

#include <algorithm>
#include <vector>

namespace tessera::pipeline {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t half = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + half, v.end());
  const double upper = v[half];
  if (v.size() % 2) return upper;
  return 0.5 * (*std::max_element(v.begin(), v.begin() + half) + upper);
}

}  // namespace tessera::pipeline
