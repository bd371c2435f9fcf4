#include "ledger/agreement/threshold_report.h"

#include <iomanip>

#include "ledger/agreement/thresholds.h"

namespace tessera::ledger::agreement {

namespace {

std::string Model(const CommitteeModel& m) {
  if (m.fixed) return "fixed committee (every member votes in every step)";
  if (m.population == 0) return "Poisson (population much larger than the committee)";
  return "binomial, population " + std::to_string(m.population);
}

void Risks(std::ostream& out, const CommitteeModel& m, uint64_t t) {
  double fork = ForkProbability(m, t), stall = StallProbability(m, t);
  out << std::scientific << std::setprecision(3) << "    fork per step " << fork;
  if (!m.fixed) {
    out << "; across a cert and a next committee " << CrossStepForkProbability(m, t) << " (x "
        << kNextStepsPerPeriod << " next-type steps)";
  }
  out << "; per block " << ForkPerBlock(m, t) << "\n    stall per step " << stall << ", per block "
      << kStepsPerPeriod * stall << "\n"
      << std::defaultfloat;
}

}  // namespace

Status WriteThresholdReport(const ThresholdQuery& q, std::ostream& out) {
  if (q.malicious_fraction < 0 || q.malicious_fraction >= 1) {
    return InvalidArgumentError("usage: --malicious-fraction must be in [0, 1)");
  }
  if (q.epsilon <= 0 || q.epsilon >= 1) return InvalidArgumentError("usage: --epsilon in (0, 1)");
  if (q.fixed && q.committee == 0) return InvalidArgumentError("usage: --fixed needs --committee");
  if (q.threshold && !q.committee)
    return InvalidArgumentError("usage: --threshold needs --committee");
  CommitteeModel m{.expected = static_cast<double>(q.committee),
                   .malicious_fraction = q.malicious_fraction,
                   .population = q.population,
                   .fixed = q.fixed};
  out << "model: " << Model(m) << "; malicious fraction f = " << q.malicious_fraction << "; budget "
      << q.epsilon << " per block (" << kStepsPerPeriod << " voting steps per period";
  if (!m.fixed) {
    out << " and the cross-step event of committees drawn per step, " << kNextStepsPerPeriod
        << " next-type steps";
  }
  out << ", union bound)\n";

  uint64_t c = q.committee, t = q.threshold;
  bool within = true;
  if (t == 0) {
    Result<CommitteeChoice> choice =
        c ? ChooseThreshold(m, q.epsilon) : ChooseCommittee(m, q.epsilon);
    if (!choice.ok()) {
      out << "no parameters meet the budget: " << choice.status().message() << "\n";
      return FailedPreconditionError(choice.status().message());
    }
    c = choice->expected;
    t = choice->threshold;
    out << (q.committee ? "threshold for" : "smallest") << " expected committee C = " << c
        << ": threshold T = " << t << " (T/C = " << std::setprecision(4)
        << static_cast<double>(t) / static_cast<double>(c) << ")\n";
  } else {
    out << "given committee C = " << c << ", threshold T = " << t << "\n";
  }
  m.expected = static_cast<double>(c);
  Risks(out, m, t);
  within = ForkPerBlock(m, t) < q.epsilon && kStepsPerPeriod * StallProbability(m, t) < q.epsilon;

  Result<double> sample = SoundSampleFraction(m, t, q.epsilon);
  if (sample.ok()) {
    out << "sound validation sample: each honest member checks each signature with probability q "
           ">= "
        << std::setprecision(4) << *sample << " (invalid block certified: " << std::scientific
        << std::setprecision(3) << InvalidCertificateProbability(m, t, *sample) << std::defaultfloat
        << ")\n";
  } else {
    out << "sound validation sample: none (" << sample.status().message() << ")\n";
  }
  uint64_t two_thirds = 2 * c / 3 + 1;
  if (two_thirds != t) {
    out << "for comparison, T = floor(2C/3) + 1 = " << two_thirds << ":\n";
    Risks(out, m, two_thirds);
  }
  if (!within) {
    out << "NOT within the budget\n";
    return FailedPreconditionError("fork or stall risk above the budget");
  }
  return Status::Ok();
}

}  // namespace tessera::ledger::agreement
