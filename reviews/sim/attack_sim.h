// Monte Carlo hijack simulation of one item's review window, checked against the closed-form
// window model (metric/window_attack.h).
//
// Model (ours; it replaces a first model that fixed 100 honest reviews whatever the ring size,
// which a ring of 10 cannot hold):
//   * N identities, each with a review key; the adversary holds the first A of them, chosen
//     before the epoch's seed exists;
//   * a seed is drawn per trial and the real DRAC lottery decides which identities are in the
//     item's ring: the expected-k draw (drac::IsEligible, Binomial(N, k/N) members; what the
//     closed form models) or, with `exact_k`, the exact-k draw the ledger uses
//     (drac::EligibleKeys, exactly k members; the closed form is then an approximation);
//   * an honest ring member reviews with probability ρ (participation), with an integer
//     rating around μ (normal, sd `honest_rating_sd`, rounded, clamped to 1..5; sd 0 gives
//     exactly μ, which must then be an integer); each adversarial ring member posts one review
//     at the extreme e (one: the URS tag makes a second review by a key detectable);
//   * the attack on the item succeeds in this window iff the adversary posted at least one
//     review and the window's mean is at least δ away from the honest reviews' mean (with no
//     honest review, any adversarial review is a success).
// Reported per ring size: the adversary share A/N needed to win the item in half of the
// trials (median over trials of the smallest winning A), and the per-item success rate at
// fixed adversary shares, each beside the closed form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::reviews::sim {

struct AttackConfig {
  uint64_t identities = 10000;  // N
  uint64_t ring_size = 50;      // k
  double participation = 0.5;   // ρ
  double honest_mean = 4.0;     // μ
  double honest_rating_sd = 0.8;
  double extreme = 1.0;  // e
  double delta = 0.5;    // δ
  // Adversary shares A/N at which the per-item success rate is reported.
  std::vector<double> shares = {0.01, 0.05, 0.1};
  int trials = 200;
  uint64_t seed = 1;
  bool exact_k = false;  // the ledger's exact-k draw instead of the expected-k draw
};

struct ShareResult {
  double share = 0;
  uint64_t adversary = 0;  // A = round(share * N)
  double simulated = 0;    // per-item success rate over the trials
  double predicted = 0;    // metric::AttackSuccessProbability
};

struct AttackResult {
  AttackConfig config;
  double factor = 0;          // N/k
  uint64_t median = 0;        // smallest winning A, median over trials (0: not reached)
  uint64_t p10 = 0, p90 = 0;  // percentiles of the same (0: not reached)
  int failed_trials = 0;      // trials where even A = N did not win
  bool predicted_feasible = false;
  uint64_t predicted = 0;  // metric::MinAdversary(p = 1/2)
  std::vector<ShareResult> shares;
};

// INVALID_ARGUMENT for nonsensical configurations (N or k zero, trials < 1, a share outside
// [0, 1], a non-integer μ with sd 0, ...).
Result<AttackResult> RunAttack(const AttackConfig& config);

// A fixed-width table, one row per result, with a header.
std::string FormatTable(const std::vector<AttackResult>& results);
// CSV with a header line; the plot script reads it.
std::string FormatCsv(const std::vector<AttackResult>& results);
// Runs gnuplot on `csv_path`: the share of N needed, and the per-item success rate at each
// share, against k (log x), into `png_path`.
Status PlotWithGnuplot(const std::string& csv_path, const std::string& png_path,
                       const std::vector<double>& shares);

}  // namespace tessera::reviews::sim
