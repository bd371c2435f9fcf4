#include "reviews/metric/hijack.h"

#include <cmath>

namespace tessera::reviews::metric {

std::optional<uint64_t> ReviewsNeeded(uint64_t honest_reviews, double honest_mean, double extreme,
                                      double delta) {
  double room = std::fabs(honest_mean - extreme) - delta;
  if (room <= 0) return std::nullopt;
  // The small epsilon keeps exact ratios (e.g. 20.0000000001 from rounding) from rounding up.
  double t = std::ceil(delta * static_cast<double>(honest_reviews) / room - 1e-9);
  return std::max<uint64_t>(1, static_cast<uint64_t>(t));
}

double BinomialTailAtLeast(uint64_t a, double q, uint64_t t) {
  if (t == 0) return 1.0;
  if (a < t) return 0.0;
  if (q >= 1.0) return 1.0;
  if (q <= 0.0) return 0.0;
  // 1 - Pr[X <= t-1]; the lower sum has t terms, and t is small next to a in practice.
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  const double lg_a1 = std::lgamma(static_cast<double>(a) + 1);
  double below = 0;
  for (uint64_t j = 0; j < t; ++j) {
    double dj = static_cast<double>(j);
    below += std::exp(lg_a1 - std::lgamma(dj + 1) - std::lgamma(static_cast<double>(a - j) + 1) +
                      dj * log_q + static_cast<double>(a - j) * log_1mq);
  }
  return std::max(0.0, 1.0 - below);
}

std::optional<uint64_t> MinIdentities(uint64_t t, double q, double p, uint64_t limit) {
  if (BinomialTailAtLeast(limit, q, t) < p) return std::nullopt;
  // The tail is increasing in a: binary search on [t, limit].
  uint64_t lo = t, hi = limit;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (BinomialTailAtLeast(mid, q, t) >= p) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

Result<HijackResistance> ComputeHijackResistance(const HijackInput& in) {
  if (in.identities == 0) return InvalidArgumentError("identities (N) must be positive");
  if (in.ring_size == 0) return InvalidArgumentError("ring size (k) must be positive");
  if (!(in.scale_min < in.scale_max)) return InvalidArgumentError("empty rating scale");
  if (in.honest_reviews > 0 && (in.honest_mean < in.scale_min || in.honest_mean > in.scale_max)) {
    return InvalidArgumentError("honest mean is outside the rating scale");
  }
  if (!(in.delta > 0)) return InvalidArgumentError("delta must be positive");
  if (!(in.success_probability > 0 && in.success_probability < 1)) {
    return InvalidArgumentError("success probability must be in (0, 1)");
  }
  HijackResistance out;
  out.eligibility = std::min(1.0, static_cast<double>(in.ring_size) / in.identities);
  out.predicted_factor = 1.0 / out.eligibility;
  // With no reviews yet, any single review sets the mean: one review suffices.
  double mean = in.honest_reviews == 0 ? (in.scale_min + in.scale_max) / 2 : in.honest_mean;
  std::optional<uint64_t> best;
  for (double e : {in.scale_min, in.scale_max}) {
    auto t = in.honest_reviews == 0 ? std::optional<uint64_t>(1)
                                    : ReviewsNeeded(in.honest_reviews, mean, e, in.delta);
    if (t && (!best || *t < *best)) {
      best = t;
      out.target_extreme = e;
    }
  }
  if (!best) return out;  // infeasible: the shift is larger than the room on both sides
  out.reviews_needed = *best;
  out.identities_without_drac = *best;
  auto a = MinIdentities(*best, out.eligibility, in.success_probability, in.identities);
  if (!a) return out;
  out.feasible = true;
  out.identities_with_drac = *a;
  out.cost = in.cost_per_identity * static_cast<double>(*a);
  return out;
}

}  // namespace tessera::reviews::metric
