// Issue #12 over real politician and citizen processes on loopback, every run audited:
//  * evidence and blacklisting: one politician of five equivocates (two signed pools per
//    height), another frames an honest politician with forged evidence, and a third signs
//    executions with a wrong new root; every honest citizen must blacklist the equivocator and
//    the wrong executor on evidence it verified itself (re-executing the block), none may
//    blacklist an honest politician, and committed tx/s must stay at the level of an honest
//    network measured in the same test;
//  * forced BA* recovery: period-0 proposals reach disjoint halves of the committee, so no
//    period-0 value can gather a quorum; heights must still commit (in later periods), and
//    must not with recovery switched off.
#include <gtest/gtest.h>

#include <iostream>

#include "ledger/net/localnet_testing.h"

namespace tessera::ledger::net {
namespace {

// The shared five-politician network (localnet_testing.h) with 15 s of load.
LocalnetConfig Five() {
  LocalnetConfig c = FivePoliticianNetwork();
  c.duration_s = 15;
  return c;
}

void PrintBlacklisting(const LocalnetReport& r) {
  std::cerr << "blacklisted (citizen, politician) pairs: " << r.blacklisted_malicious
            << " malicious, " << r.blacklisted_honest << " honest; evidence refused "
            << r.evidence_refused << "; honest citizens blacklisting each politician:";
  for (uint64_t n : r.blacklisted_by) std::cerr << " " << n;
  std::cerr << "\n";
}

// 30 s of load for the throughput comparison: in 15 s (7 blocks honest) one block that took
// 6 s moved the ratio below the bar (67%, session 8's CI, with another test beside it).
LocalnetConfig Thirty() {
  LocalnetConfig c = Five();
  c.duration_s = 30;
  return c;
}

TEST(EvidenceLocalnetTest, HonestCitizensBlacklistAnEquivocatorAndNoHonestPolitician) {
  auto honest = RunHonestBaseline("honest", Thirty());
  ASSERT_TRUE(honest.ok()) << honest.status();
  PrintBlacklisting(honest->report);
  EXPECT_EQ(honest->report.blacklisted_malicious + honest->report.blacklisted_honest, 0u);
  EXPECT_EQ(honest->report.evidence_refused, 0u);

  LocalnetConfig c = Thirty();
  // Politician 0 equivocates, 1 frames politician 4, 2 signs wrong execution roots.
  c.malicious_politicians = 0.6;
  c.politician_behaviours = {"equivocate", "frame", "wrong"};
  auto r = RunNetwork("equivocate_frame", c);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->malicious_politicians, 3u);
  PrintBlacklisting(*r);
  ExpectSafe(*r);
  // Every honest citizen holds verified evidence against the equivocator and the wrong
  // executor -- caught by itself or relayed by a politician, and re-executed either way (the
  // framer signed nothing false: it is not blacklisted) ...
  EXPECT_EQ(r->blacklisted_malicious, 2 * r->honest_citizens);
  // ... read the framer's forged evidence, and refused it.
  EXPECT_GT(r->evidence_refused, 0u);
  EXPECT_EQ(r->blacklisted_honest, 0u);
  // Liveness does not depend on blacklisting, and blacklisting costs none: three of five
  // politicians lying, the chain keeps the honest network's throughput (0.7: this shared
  // machine's run-to-run noise, docs/ledger-network.md).
  ExpectThroughputVsHonest("equivocate_frame", *r, c, honest->tx_per_s, 0.7);
}

// The split network fault (citizen.h CitizenTiming::split_proposals) cuts the eight honest
// citizens into halves of four that see different period-0 blocks; T = 6, so no period-0
// value reaches a soft quorum, every member next-votes bottom at the period's deadline and
// period 1's proposals (seen by all) commit the height.
TEST(RecoveryLocalnetTest, SplitPeriodZeroHeightsCommitThroughNextVotes) {
  LocalnetConfig c = Five();
  c.duration_s = 20;  // about 5 s per height: period 0's 4 s next-vote deadline, then period 1
  c.timing.split_proposals = true;
  auto r = RunNetwork("split", c);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectSafe(*r);
  EXPECT_GE(r->blocks, 2u);
  EXPECT_GT(r->committed_txs, 0u);
  // Not one height was decided in period 0: each needed recovery.
  EXPECT_EQ(r->recovered_blocks, r->blocks);
  EXPECT_GE(r->max_period, 1u);

  // The same split without recovery (agreement::Params::recovery = false: one soft and one
  // cert vote per height, no next votes): the first height never commits.
  c.timing.recovery = false;
  c.duration_s = 10;
  auto stalled = RunNetwork("split_no_recovery", c);
  ASSERT_TRUE(stalled.ok()) << stalled.status();
  ExpectSafe(*stalled);
  EXPECT_EQ(stalled->blocks, 0u);
  EXPECT_EQ(stalled->committed_txs, 0u);
}

}  // namespace
}  // namespace tessera::ledger::net
