// What the ledger's loopback tests share (localnet_test.cc, availability_localnet_test.cc,
// adversary_localnet_test.cc): running a network of real politician and citizen processes
// (localnet.h) from a test, the safety audit every run must pass, and the five-politician
// network the adversarial runs are measured on.
//
//   auto r = RunNetwork("withhold_data", config);  // TESSERA_BIN_DIR from ctest
//   ASSERT_TRUE(r.ok()) << r.status();
//   ExpectSafe(*r);
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

// Five politicians, eight citizens (committee = all: T_w 3, T_soft = T_cert 6, so a pool is
// required at 5 witnesses), 120 accounts offering 40 transfers/s for 20 s, 10% double spends,
// four expected proposers per period (with two, no citizen of 8 wins a period-0 ticket at
// about 10% of heights and the round waits out its 8 s timeout -- in a 20 s run that noise
// swamps any adversary's effect; docs/ledger-network.md).
LocalnetConfig FivePoliticianNetwork();

}  // namespace tessera::ledger::net
