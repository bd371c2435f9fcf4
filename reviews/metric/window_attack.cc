#include "reviews/metric/window_attack.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tessera::reviews::metric {
namespace {

// Pr[Binomial(n, p) = j] for j in [lo, hi]; exact at p = 0 and p = 1.
std::vector<double> BinomialPmf(uint64_t n, double p, uint64_t lo, uint64_t hi) {
  std::vector<double> out;
  out.reserve(hi - lo + 1);
  const double lg_n1 = std::lgamma(static_cast<double>(n) + 1);
  for (uint64_t j = lo; j <= hi; ++j) {
    if (p <= 0) {
      out.push_back(j == 0 ? 1.0 : 0.0);
    } else if (p >= 1) {
      out.push_back(j == n ? 1.0 : 0.0);
    } else {
      const double dj = static_cast<double>(j);
      out.push_back(std::exp(lg_n1 - std::lgamma(dj + 1) -
                             std::lgamma(static_cast<double>(n - j) + 1) + dj * std::log(p) +
                             static_cast<double>(n - j) * std::log1p(-p)));
    }
  }
  return out;
}

Status Check(const WindowAttack& m) {
  if (m.identities == 0) return InvalidArgumentError("identities (N) must be positive");
  if (m.ring_size == 0) return InvalidArgumentError("ring size (k) must be positive");
  if (!(m.participation > 0 && m.participation <= 1)) {
    return InvalidArgumentError("participation must be in (0, 1]");
  }
  if (!(m.delta > 0)) return InvalidArgumentError("delta must be positive");
  if (!(std::fabs(m.honest_mean - m.extreme) > m.delta)) {
    return InvalidArgumentError("the extreme cannot move the mean by delta");
  }
  return Status::Ok();
}

}  // namespace

double ReviewsPerHonestReview(const WindowAttack& m) {
  return m.delta / (std::fabs(m.honest_mean - m.extreme) - m.delta);
}

Result<double> AttackSuccessProbability(const WindowAttack& m, uint64_t adversary) {
  TESSERA_RETURN_IF_ERROR(Check(m));
  if (adversary > m.identities) return InvalidArgumentError("adversary exceeds N");
  if (adversary == 0) return 0.0;
  const double q = std::min(1.0, static_cast<double>(m.ring_size) / m.identities);
  const double c = ReviewsPerHonestReview(m);
  // Pr[X >= x] for x = 0..A+1, from the pmf of X.
  std::vector<double> x_pmf = BinomialPmf(adversary, q, 0, adversary);
  std::vector<double> x_tail(adversary + 2, 0.0);
  for (uint64_t x = adversary + 1; x-- > 0;) x_tail[x] = x_tail[x + 1] + x_pmf[x];
  // H over its mean +- 12 standard deviations (the rest weighs < 1e-30).
  const uint64_t n = m.identities - adversary;
  const double ph = q * m.participation;
  const double mean = static_cast<double>(n) * ph;
  const double spread = 12 * std::sqrt(mean * (1 - ph)) + 5;
  const uint64_t lo = static_cast<uint64_t>(std::max(0.0, std::floor(mean - spread)));
  const uint64_t hi = std::min<uint64_t>(n, static_cast<uint64_t>(std::ceil(mean + spread)));
  std::vector<double> h_pmf = BinomialPmf(n, ph, lo, hi);
  double p = 0;
  for (uint64_t h = lo; h <= hi; ++h) {
    // The smallest x with x >= c*h (and x >= 1); the epsilon keeps exact products exact.
    const double need = std::max(1.0, std::ceil(c * static_cast<double>(h) - 1e-9));
    if (need > static_cast<double>(adversary)) continue;
    p += h_pmf[h - lo] * x_tail[static_cast<uint64_t>(need)];
  }
  return std::min(1.0, p);
}

Result<std::optional<uint64_t>> MinAdversary(const WindowAttack& m, double p) {
  TESSERA_ASSIGN_OR_RETURN(double at_n, AttackSuccessProbability(m, m.identities));
  if (at_n < p) return std::optional<uint64_t>();
  uint64_t lo = 1, hi = m.identities;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    TESSERA_ASSIGN_OR_RETURN(double pm, AttackSuccessProbability(m, mid));
    if (pm >= p) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return std::optional<uint64_t>(lo);
}

}  // namespace tessera::reviews::metric
