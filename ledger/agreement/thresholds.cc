#include "ledger/agreement/thresholds.h"

#include <algorithm>
#include <cmath>

namespace tessera::ledger::agreement {

namespace {

// pmf of Binomial(n, p) or Poisson(lambda) over 0..k_max, from log-space terms.
std::vector<double> Pmf(double n, double p, bool poisson, double lambda) {
  double mean = poisson ? lambda : n * p;
  if (mean <= 0) return {1.0};
  double sd = std::sqrt(std::max(mean, 1.0));
  uint64_t k_max = static_cast<uint64_t>(mean + 40 * sd + 50);
  if (!poisson) k_max = std::min<uint64_t>(k_max, static_cast<uint64_t>(n));
  std::vector<double> pmf(k_max + 1);
  for (uint64_t k = 0; k <= k_max; ++k) {
    double kk = static_cast<double>(k);
    double log_p;
    if (poisson) {
      log_p = kk * std::log(lambda) - lambda - std::lgamma(kk + 1);
    } else if (p >= 1.0) {
      log_p = k == static_cast<uint64_t>(n) ? 0.0 : -INFINITY;
    } else {
      log_p = std::lgamma(n + 1) - std::lgamma(kk + 1) - std::lgamma(n - kk + 1) +
              kk * std::log(p) + (n - kk) * std::log1p(-p);
    }
    pmf[k] = std::exp(log_p);
  }
  return pmf;
}

// `copies` independent committees' members pooled (the malicious members of two committees:
// Poisson(2fC), or Binomial(2fN, C/N)); 1 for one committee.
std::vector<double> MemberPmf(const CommitteeModel& m, bool honest, double keep,
                              double copies = 1) {
  double share = (honest ? 1 - m.malicious_fraction : m.malicious_fraction) * copies;
  if (m.fixed) {
    auto malicious = static_cast<uint64_t>(std::llround(m.expected * m.malicious_fraction));
    auto total = static_cast<uint64_t>(std::llround(m.expected));
    double count = static_cast<double>(honest ? total - malicious : malicious);
    // Fixed members, each kept independently with probability `keep` (sample thinning).
    return Pmf(count, keep, false, 0);
  }
  if (m.population == 0) return Pmf(0, 0, true, m.expected * share * keep);
  double p = std::min(1.0, m.expected / static_cast<double>(m.population));
  double n = std::round(static_cast<double>(m.population) * share);
  return Pmf(n, p * keep, false, 0);
}

// Suffix sums: tail[k] = P(X >= k), summed from the small end of the tail upward.
std::vector<double> UpperTail(const std::vector<double>& pmf) {
  std::vector<double> tail(pmf.size() + 1, 0.0);
  for (size_t k = pmf.size(); k-- > 0;) tail[k] = tail[k + 1] + pmf[k];
  return tail;
}

double TailAt(const std::vector<double>& tail, int64_t k) {
  if (k <= 0) return tail.empty() ? 0 : std::min(1.0, tail[0]);
  return static_cast<size_t>(k) < tail.size() ? tail[k] : 0.0;
}

// P(A + weight * M >= target) for independent A, M.
double SumTail(const std::vector<double>& a_pmf, const std::vector<double>& m_pmf, int64_t weight,
               int64_t target) {
  std::vector<double> tail = UpperTail(a_pmf);
  double total = 0;
  for (size_t m = 0; m < m_pmf.size(); ++m) {
    total += m_pmf[m] * TailAt(tail, target - weight * static_cast<int64_t>(m));
  }
  return std::min(1.0, total);
}

}  // namespace

std::vector<double> HonestPmf(const CommitteeModel& model, double keep) {
  return MemberPmf(model, /*honest=*/true, keep);
}
std::vector<double> MaliciousPmf(const CommitteeModel& model) {
  return MemberPmf(model, /*honest=*/false, 1.0);
}

double StallProbability(const CommitteeModel& model, uint64_t threshold) {
  std::vector<double> h = HonestPmf(model);
  double below = 0;
  for (size_t k = 0; k < h.size() && k < threshold; ++k) below += h[k];
  return std::min(1.0, below);
}

double ForkProbability(const CommitteeModel& model, uint64_t threshold) {
  return SumTail(HonestPmf(model), MaliciousPmf(model), 2, 2 * static_cast<int64_t>(threshold));
}

double CrossStepForkProbability(const CommitteeModel& model, uint64_t threshold) {
  if (model.fixed) return ForkProbability(model, threshold);
  return SumTail(HonestPmf(model), MemberPmf(model, /*honest=*/false, 1.0, /*copies=*/2), 1,
                 2 * static_cast<int64_t>(threshold));
}

double ForkPerBlock(const CommitteeModel& model, uint64_t threshold) {
  double fork = kStepsPerPeriod * ForkProbability(model, threshold);
  if (!model.fixed) fork += kNextStepsPerPeriod * CrossStepForkProbability(model, threshold);
  return std::min(1.0, fork);
}

double InvalidCertificateProbability(const CommitteeModel& model, uint64_t threshold,
                                     double sample) {
  return SumTail(HonestPmf(model, 1 - sample), MaliciousPmf(model), 1,
                 static_cast<int64_t>(threshold));
}

Result<CommitteeChoice> ChooseThreshold(const CommitteeModel& model, double epsilon) {
  const double per_step = epsilon / kStepsPerPeriod;
  uint64_t c = static_cast<uint64_t>(std::ceil(model.expected));
  // Fork risk falls as T grows: the smallest T with fork below the budget.
  uint64_t lo = 1, hi = 3 * c + 100;
  if (ForkPerBlock(model, hi) >= epsilon) {
    return NotFoundError("no threshold makes forks unlikely enough at this committee size");
  }
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (ForkPerBlock(model, mid) < epsilon)
      hi = mid;
    else
      lo = mid + 1;
  }
  CommitteeChoice choice;
  choice.expected = c;
  choice.threshold = lo;
  choice.fork_per_step = ForkProbability(model, lo);
  choice.stall_per_step = StallProbability(model, lo);
  choice.cross_per_step = model.fixed ? 0 : CrossStepForkProbability(model, lo);
  choice.fork_per_block = ForkPerBlock(model, lo);
  choice.stall_per_block = kStepsPerPeriod * choice.stall_per_step;
  if (choice.stall_per_step >= per_step) {
    return NotFoundError("committee " + std::to_string(c) + ": the smallest safe threshold " +
                         std::to_string(lo) + " stalls with probability " +
                         std::to_string(choice.stall_per_block) + " per block");
  }
  return choice;
}

Result<CommitteeChoice> ChooseCommittee(const CommitteeModel& model, double epsilon,
                                        uint64_t max_expected) {
  auto feasible = [&](uint64_t c) {
    CommitteeModel m = model;
    m.expected = static_cast<double>(c);
    if (m.population && c > m.population) return false;
    return ChooseThreshold(m, epsilon).ok();
  };
  // Coarse scan, then the exact smallest C in the last step (feasibility is monotone in C up
  // to the integer rounding of T, which the exact scan handles).
  uint64_t step = 50, c = 50;
  while (c <= max_expected && !feasible(c)) c += step;
  if (c > max_expected) return NotFoundError("no committee up to " + std::to_string(max_expected));
  uint64_t first = c >= step ? c - step + 1 : 1;
  for (uint64_t k = first; k <= c; ++k) {
    if (feasible(k)) {
      c = k;
      break;
    }
  }
  CommitteeModel m = model;
  m.expected = static_cast<double>(c);
  return ChooseThreshold(m, epsilon);
}

Result<double> SoundSampleFraction(const CommitteeModel& model, uint64_t threshold,
                                   double epsilon) {
  if (InvalidCertificateProbability(model, threshold, 1.0) >= epsilon) {
    return NotFoundError("malicious members alone reach the threshold too often");
  }
  int lo = 0, hi = 10000;  // q = k / 10000
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (InvalidCertificateProbability(model, threshold, mid / 10000.0) < epsilon)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo / 10000.0;
}

}  // namespace tessera::ledger::agreement
