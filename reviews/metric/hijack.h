// Hijack resistance of one item: how many identities an adversary must control to move the
// item's displayed mean rating by delta.
//
// TrustRate defines a metric called "hijack-resistance", but its formula could not be read
// (shared/research/reviews.md §0, §3). This is the note's PROPOSAL, which we adopt:
//
//   reviews needed   t(δ) = ceil(δ·n_h / (|μ − e| − δ)),  at least 1
//     from (n_h·μ + t·e) / (n_h + t) = μ ∓ δ: n_h honest reviews with mean μ, the adversary
//     posting t reviews at the extreme e of the scale (the farther extreme is the cheaper
//     attack, so we take the minimum over both directions);
//   identities needed A_min(δ) = smallest A with Pr[Binomial(A, q) ≥ t] ≥ p (p = 1/2)
//     where q = k/N is the chance that DRAC admits one identity to the item's ring;
//   hijack resistance HR(δ) = c_id · A_min(δ) (cost per identity times identities).
//
// Without DRAC (q = 1) A_min = t; DRAC multiplies it by about 1/q = N/k. Ours, beyond the note:
// the success probability p is a parameter, an attack that needs more identities than exist
// (A_min > N) is reported as infeasible, and δ >= |μ − e| for both extremes is infeasible.
#pragma once

#include <cstdint>
#include <optional>

#include "core/status.h"

namespace tessera::reviews::metric {

struct HijackInput {
  uint64_t identities = 0;      // N: registered identities (review keys) in the epoch
  uint64_t ring_size = 0;       // k: expected DRAC ring size; k >= N means no DRAC
  uint64_t honest_reviews = 0;  // n_h: reviews so far (assumed honest)
  double honest_mean = 0;       // μ: their mean rating
  double scale_min = 1;         // rating scale [scale_min, scale_max]
  double scale_max = 5;
  double delta = 0.5;                // δ: the shift the adversary wants
  double success_probability = 0.5;  // p
  double cost_per_identity = 1;      // c_id
};

struct HijackResistance {
  bool feasible = false;                 // false: no number of identities <= N achieves the shift
  double target_extreme = 0;             // e: the extreme the cheapest attack pushes toward
  uint64_t reviews_needed = 0;           // t(δ)
  double eligibility = 0;                // q = min(1, k/N)
  uint64_t identities_without_drac = 0;  // t(δ)
  uint64_t identities_with_drac = 0;     // A_min(δ); 0 when infeasible
  double predicted_factor = 0;           // N/k (1 without DRAC)
  double cost = 0;                       // c_id · A_min
};

// INVALID_ARGUMENT for inconsistent input (N = 0, k = 0, μ outside the scale, δ <= 0, p not in
// (0, 1)).
Result<HijackResistance> ComputeHijackResistance(const HijackInput& in);

// t(δ) toward extreme e; nullopt when |μ − e| <= δ (the extreme cannot pull the mean that far).
std::optional<uint64_t> ReviewsNeeded(uint64_t honest_reviews, double honest_mean, double extreme,
                                      double delta);

// Pr[Binomial(a, q) >= t], computed in log space.
double BinomialTailAtLeast(uint64_t a, double q, uint64_t t);

// Smallest a <= limit with Pr[Binomial(a, q) >= t] >= p; nullopt if none.
std::optional<uint64_t> MinIdentities(uint64_t t, double q, double p, uint64_t limit);

}  // namespace tessera::reviews::metric
