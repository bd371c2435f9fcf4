// The report `ledger-thresholds` prints (thresholds.h computes it): the committee size and
// threshold for a malicious fraction and a per-block risk budget, their exact fork and stall
// risks, the sound validation sample, and the risks of the 2/3 rule for comparison.
#pragma once

#include <cstdint>
#include <ostream>

#include "core/status.h"

namespace tessera::ledger::agreement {

struct ThresholdQuery {
  double malicious_fraction = 0.25;
  double epsilon = 1e-9;    // per block, for fork, stall and invalid certificate alike
  uint64_t population = 0;  // 0: Poisson limit (any large population)
  uint64_t committee = 0;   // 0: choose the smallest C
  uint64_t threshold = 0;   // with committee: evaluate this T instead of choosing it
  bool fixed = false;       // committee = exactly `committee` members (localnets)
};

// Writes the report; FAILED_PRECONDITION (after writing) when the given or chosen parameters
// miss the budget, so scripts can check the exit status.
Status WriteThresholdReport(const ThresholdQuery& q, std::ostream& out);

}  // namespace tessera::ledger::agreement
