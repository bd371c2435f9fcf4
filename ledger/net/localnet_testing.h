// What the ledger's loopback tests share (localnet_test.cc and the availability, committee,
// evidence and adversary localnet tests): running a network of real politician and citizen
// processes (localnet.h) from a test, the safety audit every run must pass, issue #12's
// liveness bar (committed tx/s against an honest run of the same network, measured in the same
// test), and the five-politician network the adversarial runs are measured on.
//
//   auto honest = RunHonestBaseline("honest", config);  // TESSERA_BIN_DIR from ctest
//   ASSERT_TRUE(honest.ok()) << honest.status();
//   LocalnetConfig a = config;
//   a.malicious_politicians = 0.2;
//   auto r = RunNetwork("withhold_data", a);
//   ASSERT_TRUE(r.ok()) << r.status();
//   ExpectSafe(*r);
//   ExpectThroughputVsHonest("withhold_data", *r, a, honest->tx_per_s, 0.7);
#pragma once

#include <string>

#include "core/status.h"
#include "ledger/net/localnet.h"

namespace tessera::ledger::net {

// Where RunNetwork writes each run's whole progress, relative to the working directory (under
// ctest: the test's directory in the build tree), as <run name>.log.
inline constexpr char kProgressDir[] = "localnet-progress";

// Runs the network in a fresh temporary directory (kept, with the processes' logs, when the
// run fails; removed otherwise). Its per-second and per-block progress goes to
// kProgressDir/<name>.log; stderr gets the run's other lines (the network, faults, audit), a
// one-line summary, and on failure the error and the last progress lines. Needs
// TESSERA_BIN_DIR (set by ctest) for the daemons.
Result<LocalnetReport> RunNetwork(const std::string& name, const LocalnetConfig& config);

// The audit of localnet.h, as gtest expectations: no fork, no certified invalid or unappliable
// block at any honest politician, honest politicians and citizens agree, balances conserved,
// no double spend committed, every proof checks.
void ExpectSafe(const LocalnetReport& report);
// The same audit as one answer (for summaries that say which run failed it).
bool Safe(const LocalnetReport& report);

// Committed transactions per second over the whole load period (duration_s). The report's
// tx_per_s ends at the last committed block, so a chain that stalls early would look fast.
double CommittedPerSecond(const LocalnetReport& report, const LocalnetConfig& config);

// An honest run that an adversarial run of the same network is measured against.
struct HonestBaseline {
  LocalnetReport report;
  double tx_per_s = 0;  // CommittedPerSecond of the run
};

// Runs `config` as the honest baseline named `name` (RunNetwork) and checks it as every
// liveness test does: the audit as gtest expectations (ExpectSafe, which fail the test but
// return), then an error unless it committed something -- a baseline of 0 tx/s would let any
// adversarial run pass the bar. Errors: RunNetwork's; UNAVAILABLE if it committed nothing.
Result<HonestBaseline> RunHonestBaseline(const std::string& name, const LocalnetConfig& config);

// Issue #12's liveness verdict: prints "<name>: X tx/s vs honest Y (Z%)" to stderr, X being
// CommittedPerSecond(report, config), and expects X >= fraction * honest_tx_per_s (a gtest
// expectation: the test goes on; its failure message ends with report.log_digest). Returns X, for
// the test's own lines and checks.
double ExpectThroughputVsHonest(const std::string& name, const LocalnetReport& report,
                                const LocalnetConfig& config, double honest_tx_per_s,
                                double fraction);

// Five politicians, eight citizens (committee = all: T_w 3, T_soft = T_cert 6, so a pool is
// required at 5 witnesses), 120 accounts offering 40 transfers/s for 20 s, 10% double spends,
// four expected proposers per period (with two, no citizen of 8 wins a period-0 ticket at
// about 10% of heights and the round waits out its 8 s timeout -- in a 20 s run that noise
// swamps any adversary's effect; docs/ledger-network.md).
LocalnetConfig FivePoliticianNetwork();

}  // namespace tessera::ledger::net
