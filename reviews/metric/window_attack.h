// The hijack model of one review window: an adversary holding A of the N identities tries to
// move one item's mean rating by δ in one epoch, against the honest reviews of that same
// window. Honest reviews are drawn from the item's ring, like the adversary's:
//
//   each of the N identities is in the item's ring independently with q = min(1, k/N) (DRAC);
//   X ~ Binomial(A, q)        adversary identities in the ring, each posting one review at e;
//   H ~ Binomial(N − A, q·ρ)  honest identities in the ring that review (participation ρ),
//                             with mean rating μ;
//   the attack succeeds iff X >= 1 and the window's mean moves by at least δ:
//       (H·μ + X·e)/(H + X) is δ or more away from μ  <=>  X >= c·H,  c = δ / (|μ − e| − δ)
//   (with H = 0 any adversary review sets the mean, a success).
//
// The success probability P(A) = Σ_h Pr[H = h] · Pr[X >= max(1, ceil(c·h))] is computed exactly
// (binomial sums in log space). Because both X and H scale with q, the cost of a 50% attack is
// roughly A/N ≈ cρ / (1 + cρ) whatever k is (DRAC does not make this cost grow with N/k, unlike
// the fixed-honest-reviews model this replaces); small k only adds variance, which lets a small
// adversary win some items outright. This file is ours (docs/reviews.md, "Hijack model").
#pragma once

#include <cstdint>
#include <optional>

#include "core/status.h"

namespace tessera::reviews::metric {

struct WindowAttack {
  uint64_t identities = 0;     // N
  uint64_t ring_size = 0;      // k (q = min(1, k/N))
  double participation = 0.5;  // ρ: the share of honest ring members who review
  double honest_mean = 4.0;    // μ
  double extreme = 1.0;        // e: the scale end the adversary pushes toward
  double delta = 0.5;          // δ
};

// INVALID_ARGUMENT for N = 0, k = 0, ρ outside (0, 1], δ <= 0 or δ >= |μ − e| (the extreme
// cannot pull that far), or adversary > N.
Result<double> AttackSuccessProbability(const WindowAttack& model, uint64_t adversary);

// The smallest A with P(A) >= p (P grows with A); nullopt when even A = N falls short.
Result<std::optional<uint64_t>> MinAdversary(const WindowAttack& model, double p);

// c = δ / (|μ − e| − δ): adversary reviews needed per honest review in the window.
double ReviewsPerHonestReview(const WindowAttack& model);

}  // namespace tessera::reviews::metric
