#include "ledger/net/localnet_testing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>

namespace tessera::ledger::net {

Result<LocalnetReport> RunNetwork(const std::string& name, const LocalnetConfig& config) {
  const char* bin = std::getenv("TESSERA_BIN_DIR");
  if (bin == nullptr) return FailedPreconditionError("TESSERA_BIN_DIR not set (run through ctest)");
  const auto out = std::filesystem::temp_directory_path() /
                   ("ledger_localnet_" + name + "_" + std::to_string(::getpid()));
  auto report = RunLocalnet(config, bin, out, std::cerr);
  if (report.ok()) {
    std::filesystem::remove_all(out);
    std::cerr << "RESULT " << name << ": " << report->blocks << " blocks, " << report->committed_txs
              << " txs, " << report->tx_per_s << " tx/s\n";
  } else {
    std::cerr << "RESULT " << name << ": failed, logs kept in " << out << "\n";
  }
  return report;
}

void ExpectSafe(const LocalnetReport& r) {
  EXPECT_EQ(r.forks, 0u);
  EXPECT_EQ(r.invalid_blocks, 0u);
  EXPECT_TRUE(r.politicians_agree);
  EXPECT_TRUE(r.citizens_agree);
  EXPECT_TRUE(r.balances_conserved);
  EXPECT_EQ(r.double_spends_committed, 0u);
  EXPECT_TRUE(r.proofs_ok);
}

bool Safe(const LocalnetReport& r) {
  return r.forks == 0 && r.invalid_blocks == 0 && r.politicians_agree && r.citizens_agree &&
         r.balances_conserved && r.double_spends_committed == 0 && r.proofs_ok;
}

double CommittedPerSecond(const LocalnetReport& report, const LocalnetConfig& config) {
  return static_cast<double>(report.committed_txs) / config.duration_s;
}

Result<HonestBaseline> RunHonestBaseline(const std::string& name, const LocalnetConfig& config) {
  auto r = RunNetwork(name, config);
  if (!r.ok()) return r.status();
  ExpectSafe(*r);
  HonestBaseline baseline{.report = *std::move(r), .tx_per_s = 0};
  baseline.tx_per_s = CommittedPerSecond(baseline.report, config);
  if (!(baseline.tx_per_s > 0)) {
    return UnavailableError("honest baseline " + name + " committed nothing (" +
                            std::to_string(baseline.report.blocks) + " blocks)");
  }
  return baseline;
}

double ExpectThroughputVsHonest(const std::string& name, const LocalnetReport& report,
                                const LocalnetConfig& config, double honest_tx_per_s,
                                double fraction) {
  const double tx_per_s = CommittedPerSecond(report, config);
  std::cerr << name << ": " << tx_per_s << " tx/s vs honest " << honest_tx_per_s << " ("
            << (honest_tx_per_s > 0 ? 100 * tx_per_s / honest_tx_per_s : 0.0) << "%)\n";
  EXPECT_GE(tx_per_s, fraction * honest_tx_per_s)
      << name << "; honest " << honest_tx_per_s << ", bar " << fraction << " of it";
  return tx_per_s;
}

LocalnetConfig FivePoliticianNetwork() {
  LocalnetConfig c;
  c.politicians = 5;
  c.citizens = 8;
  c.citizens_per_process = 8;
  c.proposers = 4;
  c.accounts = 120;
  c.rate = 40;
  c.duration_s = 20;
  c.double_spend_fraction = 0.1;
  return c;
}

}  // namespace tessera::ledger::net
