// ledger-thresholds: committee size and vote threshold such that fork and stall risks per
// block stay below a budget, computed exactly from binomial/Poisson tails (thresholds.h).
#include <iostream>

#include "core/cli.h"
#include "ledger/agreement/threshold_report.h"

int main(int argc, char** argv) {
  using namespace tessera::ledger::agreement;
  tessera::cli::Program program(
      "ledger-thresholds",
      "Committee size and threshold with fork and stall risk below a budget per block.");
  CLI::App& app = program.app();
  ThresholdQuery q;
  app.add_option("--malicious-fraction", q.malicious_fraction, "Malicious citizens (f)");
  app.add_option("--epsilon", q.epsilon, "Risk budget per block");
  app.add_option("--population", q.population, "Registered citizens N (0: Poisson limit)");
  app.add_option("--committee", q.committee, "Expected committee size C (0: choose)");
  app.add_option("--threshold", q.threshold, "Threshold T to evaluate (needs --committee)");
  app.add_flag("--fixed", q.fixed, "The committee is exactly C citizens (no sortition)");
  return program.Run(argc, argv, [&]() { return WriteThresholdReport(q, std::cout); });
}
