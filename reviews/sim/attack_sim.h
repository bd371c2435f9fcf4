// Monte Carlo attack simulation: an adversary controlling A identities tries to shift one
// item's displayed mean rating by δ, with and without DRAC; we measure the identities it needs
// and compare them with the hijack-resistance metric (metric/hijack.h) and its N/k factor.
//
// Model (ours):
//   * n_h honest reviews with integer ratings drawn around a target mean (their realized mean
//     μ is what the metric is fed, as a live system would);
//   * the adversary acquires identities before the epoch's seed is known; the seed is drawn;
//     the real DRAC lottery (drac::IsEligible over public keys) decides which of its
//     identities the item's ring admits;
//   * each admitted identity posts one review at the extreme the metric picks (one, because
//     the URS tag makes a second review by the same key detectable); the attack succeeds once
//     the mean has moved by δ;
//   * the identities needed in a trial are the index of the identity whose review completes
//     the shift; over trials we report the median (the metric's A_min is the smallest A that
//     succeeds with probability 1/2) and the 10th/90th percentiles.
// Without DRAC every identity is admitted, so exactly t(δ) identities are needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::reviews::sim {

struct AttackConfig {
  uint64_t identities = 10000;  // N
  uint64_t ring_size = 50;      // k
  uint64_t honest_reviews = 100;
  double honest_mean = 4.0;  // target of the honest rating distribution
  double delta = 0.5;
  int trials = 200;
  uint64_t seed = 1;
};

struct AttackResult {
  AttackConfig config;
  double realized_mean = 0;     // μ of the honest ratings
  double extreme = 0;           // e
  uint64_t reviews_needed = 0;  // t(δ), from the metric
  uint64_t without_drac = 0;    // simulated, every identity eligible
  bool feasible = false;        // median trial succeeded with at most N identities
  uint64_t median = 0;          // identities needed with DRAC, median over trials
  uint64_t p10 = 0, p90 = 0;    // percentiles (0 when that trial failed)
  int failed_trials = 0;        // trials where even N identities did not suffice
  bool predicted_feasible = false;
  uint64_t predicted = 0;  // the metric's A_min
  double factor = 0;       // N/k
};

// INVALID_ARGUMENT for nonsensical configurations (N or k zero, trials < 1, ...).
Result<AttackResult> RunAttack(const AttackConfig& config);

// A fixed-width table, one row per result, with a header.
std::string FormatTable(const std::vector<AttackResult>& results);
// CSV with a header line; the plot script reads it.
std::string FormatCsv(const std::vector<AttackResult>& results);
// Runs gnuplot on `csv_path` to draw identities needed against N/k (log-log) into `png_path`.
Status PlotWithGnuplot(const std::string& csv_path, const std::string& png_path);

}  // namespace tessera::reviews::sim
