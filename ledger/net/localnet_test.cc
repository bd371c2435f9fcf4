// Integration tests: real politician and citizen processes on loopback (ledger-localnet's
// library), each run followed by the independent audit of localnet.h. Small networks and few
// blocks keep each run to seconds; bench/ledger/net_run.sh runs the large ones.
#include "ledger/net/localnet.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "ledger/net/localnet_testing.h"
#include "ledger/net/process.h"

namespace tessera::ledger::net {
namespace {

LocalnetConfig Small(uint32_t politicians, uint32_t citizens, uint64_t blocks) {
  LocalnetConfig c;
  c.politicians = politicians;
  c.citizens = citizens;
  c.citizens_per_process = 8;
  c.accounts = 40;
  c.rate = 30;
  c.blocks = blocks;
  c.duration_s = 60;
  c.double_spend_fraction = 0.2;
  return c;
}

// Small, measured against an honest run in the same test (issue #12's liveness bar): four
// expected proposers -- with Small's two, a height has no period-0 proposer among ten citizens
// with probability about 0.8^10 = 11% and waits out its period, noise that swamps a 12 s run
// (FivePoliticianNetwork); with four, 0.6^10 = 0.6% -- fixed keys, 12 s of load, no block limit.
LocalnetConfig SmallForRatio(uint32_t politicians, uint32_t citizens) {
  LocalnetConfig c = Small(politicians, citizens, 0);
  c.proposers = 4;
  c.key_seed = 7;
  c.duration_s = 12;
  return c;
}

TEST(LocalnetTest, HonestNetworkCommitsBlocksConservingBalancesWithoutDoubleSpends) {
  LocalnetConfig c = Small(3, 8, 5);  // genesis: 6 citizens, T 6 (2/3 of C = 8); block 4 on: 8
  c.late_citizens = 2;                // registered at block 2, eligible from block 4 (delay 2)
  c.register_at = 2;
  auto r = RunNetwork("honest", c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->blocks, 5u);
  EXPECT_EQ(r->late_signed_too_early, 0u);
  EXPECT_GE(r->late_first_signed, 4u);  // late citizens did join the committee, not before 4
  // Registered on the chain (registration.h): block 2 carried both registrations, and from
  // block 4 on every node drew and counted committees for the live population of 8 with the
  // tool's T for it (6), not the genesis count of 6.
  EXPECT_EQ(r->registered_on_chain, 2u);
  EXPECT_EQ(r->last_block_population, 8u);
  EXPECT_EQ(r->last_block_cert_threshold, 6u);
  EXPECT_GT(r->committed_txs, 0u);
  EXPECT_GT(r->double_spend_attempts, 0u);
  // The citizens of a daemon verify each VRF ticket and each signature once between them
  // (citizen_daemon.h, share_checks): 1.1-2.8 VRF and 6-7 Ed25519 verifications per committee
  // round here, against 10.6 and 72 with each citizen checking for itself (the daemon's scopes
  // removed, session 21).
  std::cerr << "citizens' VRF / Ed25519 verifications: " << r->citizen_vrf_verifications << " / "
            << r->citizen_ed25519_verifications << " in " << r->committee_rounds
            << " committee rounds\n";
  ASSERT_GT(r->committee_rounds, 0u);
  EXPECT_LT(r->citizen_vrf_verifications, 6 * r->committee_rounds);
  EXPECT_LT(r->citizen_ed25519_verifications, 25 * r->committee_rounds);
  ExpectSafe(*r);
}

// Issue #12's liveness bar: committed tx/s at least half an honest run's of the same network,
// measured in this test (as AQuarterOfCitizens... below), each run audited.
TEST(LocalnetTest, SafeAndLiveWithHalfThePoliticiansAndTenPercentOfCitizensMalicious) {
  const LocalnetConfig c = SmallForRatio(4, 10);
  auto honest = RunHonestBaseline("50_10_honest", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  LocalnetConfig a = c;
  a.malicious_politicians = 0.5;  // withhold, wrong state root
  a.malicious_citizens = 0.1;     // votes for everything, proposes a wrong root
  auto r = RunNetwork("50_10", a);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->malicious_politicians, 2u);
  EXPECT_EQ(r->malicious_citizens, 1u);
  ExpectThroughputVsHonest("50_10", *r, a, honest->tx_per_s, 0.5);
  ExpectSafe(*r);
}

// Issue #12: a safe sample k smaller than the politicians (every other loopback test samples
// them all). Half the politicians malicious, the first ones (withholding data and refusing
// Execute, answering nothing, in turn); each citizen talks to k of them per round (citizen.h,
// safe_sample.h), k one more than the malicious, so every sample holds an honest politician
// but none need hold a given one. Against an honest run with the same k: >= half its committed
// tx/s.
void ExpectSafeSampleSmallerThanThePoliticiansKeepsHalfTheHonestThroughput(uint32_t politicians,
                                                                           uint32_t safe_sample) {
  LocalnetConfig c = SmallForRatio(politicians, 8);
  c.safe_sample = safe_sample;
  // 24 s of load, not 12: with one transfer in flight per account, blocks alternate full
  // (~33 transfers) and nearly empty, so in 12 s the phase alone decided between 2 and 3 full
  // adversarial blocks against 4: the 4-of-6 ratio ranged 49-74% over 47 runs (session 24),
  // one under the bar; with 24 s, 60-67% in five, and 70-88% in three once citizens stopped
  // waiting out slow politicians for withheld pools (docs/ledger-network.md, session 24).
  c.duration_s = 24;
  // Round summaries in the log digest of a failure: the 4-of-6 network once committed 1 block
  // in a clean-clone CI (session 24) and in none of 27 runs here, and its logs were gone.
  c.log_level = "info";
  const std::string run =  // names the runs' directories and progress files
      "sample_" + std::to_string(safe_sample) + "_of_" + std::to_string(politicians);
  const std::string name =
      "safe sample " + std::to_string(safe_sample) + " of " + std::to_string(politicians);
  auto honest = RunHonestBaseline(run + "_honest", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  LocalnetConfig a = c;
  a.malicious_politicians = 0.5;
  a.politician_behaviours = {"withhold_data", "unresponsive"};
  auto r = RunNetwork(run, a);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->malicious_politicians, politicians / 2);
  ASSERT_GT(a.safe_sample, r->malicious_politicians);  // every k-subset holds an honest one
  ASSERT_LT(a.safe_sample, a.politicians);
  // The citizens did talk to k politicians per round, not to all of them.
  EXPECT_EQ(honest->report.citizen_largest_sample, c.safe_sample);
  EXPECT_EQ(r->citizen_largest_sample, a.safe_sample);
  ExpectThroughputVsHonest(name, *r, a, honest->tx_per_s, 0.5);
  std::cerr << name << ": blocks " << r->blocks << " vs " << honest->report.blocks << "\n";
  ExpectSafe(*r);
}

TEST(LocalnetTest, ASafeSampleSmallerThanThePoliticiansKeepsHalfTheHonestThroughput) {
  ExpectSafeSampleSmallerThanThePoliticiansKeepsHalfTheHonestThroughput(6, 4);
}

// The same with eight politicians, four malicious, and samples of five (session 19: k < P had
// run in one network only).
TEST(LocalnetTest, ASafeSampleOfFiveOfEightPoliticiansKeepsHalfTheHonestThroughput) {
  ExpectSafeSampleSmallerThanThePoliticiansKeepsHalfTheHonestThroughput(8, 5);
}

// The default adversaries at 80/25, two of which AdversaryTest does not run (`wrong`: a wrong
// state root in every Execute; `stale`: reads and executes on the state one block back), held
// to the same bar.
TEST(LocalnetTest, SafeWithEightyPercentOfPoliticiansAndQuarterOfCitizensMalicious) {
  const LocalnetConfig c = SmallForRatio(5, 8);
  auto honest = RunHonestBaseline("80_25_honest", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  LocalnetConfig a = c;
  a.malicious_politicians = 0.8;  // withhold, wrong, equivocate, stale
  a.malicious_citizens = 0.25;    // one inconsistent voter, one silent
  auto r = RunNetwork("80_25", a);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->malicious_politicians, 4u);
  EXPECT_EQ(r->malicious_citizens, 2u);
  ExpectThroughputVsHonest("80_25", *r, a, honest->tx_per_s, 0.5);
  ExpectSafe(*r);
}

// The fault tests below (kill -9, a forger, a drawn committee, overload) are held to issue
// #12's liveness bar as the adversarial ones are: committed tx/s over a fixed load period at
// least half that of the same network without the fault, run first in the same test. Each
// runs with SmallForRatio's four expected proposers: with two, about 10% of heights have no
// period-0 proposer among 8 citizens and take ~4 s more, which in a 15 s run can decide the
// ratio (the forger's test failed in session 19's CI at 48.9%: 4 blocks against 9, two heights
// of ~5.5 s; whether the lottery or the forger made them slow is not in the logs kept).

TEST(LocalnetTest, PoliticianKilledWithSigkillRestartsCatchesUpAndServesCorrectProofsWhilePruning) {
  LocalnetConfig c = Small(3, 4, 0);
  c.proposers = 4;  // SmallForRatio's, see above
  c.duration_s = 15;
  c.keep_versions = 2;  // politicians prune old state every block or so, the restarted one too
  auto honest = RunHonestBaseline("kill9_honest", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  LocalnetConfig a = c;
  a.kill_politician = 0;
  a.kill_at_block = 2;
  // Down for 3 s, a few blocks at this network's pace, so that it must fetch what it missed
  // from its peers: restarted after 0.5 s it caught up on the vote relay alone, and the test
  // stayed green with catch-up from peers removed (session 21; with 3 s it fails).
  a.restart_after_ms = 3000;
  auto r = RunNetwork("kill9", a);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->restarted);
  EXPECT_TRUE(r->restarted_caught_up);
  EXPECT_TRUE(r->restarted_proofs_ok);
  ExpectThroughputVsHonest("kill9", *r, a, honest->tx_per_s, 0.5);
  ExpectSafe(*r);
}

TEST(LocalnetTest, SampledValidationCatchesAPoliticianThatForgesSignatures) {
  LocalnetConfig c = Small(3, 8, 0);
  c.proposers = 4;  // SmallForRatio's, see above
  // The bench's unsound 0.25 (a forged transfer was certified with it, issue #12): citizens
  // raise it to the sound fraction for this committee (validation_sample.h), over 0.99 for 8.
  c.validation_sample = 0.25;
  c.duration_s = 15;
  auto honest = RunHonestBaseline("forge_honest", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  LocalnetConfig a = c;
  a.malicious_politicians = 0.34;  // one forger: a forged transfer in every pool, and lies
  a.politician_behaviours = {"forge"};
  auto r = RunNetwork("forge", a);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectThroughputVsHonest("forge", *r, a, honest->tx_per_s, 0.5);
  ExpectSafe(*r);  // the audit re-verifies every signature: no forged transfer was applied
  EXPECT_GT(r->bad_politician_answers, 0u);  // citizens caught the forger's false claims
  EXPECT_GT(r->txs_validated, 0u);
  EXPECT_GT(r->signatures_checked, 0.97 * r->txs_validated);  // not 25%
}

// Also the compact follow (chain_follower.h): a citizen off the committee spends at most 5 KB
// per block it follows -- headers by long-poll, and here a certificate every second block --
// where following by GetStatus cost 120 KB - 2 MB per block (docs/ledger-engine.md). The
// network without the fault: the same 24 citizens, every one on every committee.
TEST(LocalnetTest, ACommitteeDrawnByVrfFromALargerCitizenSetCommitsBlocks) {
  LocalnetConfig c = Small(3, 24, 0);
  c.proposers = 4;  // SmallForRatio's, see above
  // Per height: only the height's committee plays, the others follow (what this test
  // measures). Per step every eligible citizen plays every height and nobody follows.
  c.vote_committees = VoteCommittees::kPerHeight;
  c.citizens_per_process = 12;
  c.key_seed = 7;  // reproducible committees (with random keys ~1% of runs draw one < T_cert)
  c.duration_s = 15;
  c.timing.follow.certify_every = 2;
  auto honest = RunHonestBaseline("committee_all", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  LocalnetConfig a = c;
  a.committee_size = 16;  // expected committee 16 of 24 citizens; T_cert = 11
  auto r = RunNetwork("committee", a);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectThroughputVsHonest("committee 16 of 24", *r, a, honest->tx_per_s, 0.5);
  // Fewer committee seats were played than if every citizen served every block.
  EXPECT_LT(r->committee_rounds, 24u * r->blocks);
  EXPECT_GT(r->committee_rounds, 0u);
  std::cerr << "non-member bytes per block followed: " << r->citizen_nonmember_bytes_per_block
            << ", member bytes per committee block: " << r->citizen_member_bytes_per_block << "\n";
  EXPECT_GT(r->citizen_nonmember_bytes_per_block, 0);
  EXPECT_LE(r->citizen_nonmember_bytes_per_block, 5000);
  ExpectSafe(*r);
}

// Back-pressure end to end: offered far more than tiny pools can carry, politicians turn the
// excess away (RESOURCE_EXHAUSTED with a retry hint) and the network keeps committing -- at
// least half what it commits offered a load under its capacity, measured first.
TEST(LocalnetTest, OverloadIsTurnedAwayAtAdmissionAndBlocksKeepCommitting) {
  LocalnetConfig c = Small(3, 4, 0);
  c.proposers = 4;  // SmallForRatio's, see above
  c.accounts = 400;
  c.max_pool_txs = 10;  // a pool carries at most 10 transfers
  c.backlog_pools = 1;  // a mempool holds one pool's worth
  c.rate = 10;          // under 3 politicians x 10 per block at ~0.6 blocks/s
  c.fanout = 1;
  c.double_spend_fraction = 0;
  c.duration_s = 15;
  auto under = RunHonestBaseline("overload_under_capacity", c);
  ASSERT_TRUE(under.ok()) << under.status();
  LocalnetConfig a = c;
  a.rate = 400;  // far above it
  auto r = RunNetwork("overload", a);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectThroughputVsHonest("overload", *r, a, under->tx_per_s, 0.5);
  EXPECT_GT(r->busy_submissions, 0u);
  // The refused calls: at least one, at most two per turned-away transfer (the load
  // generator asks no third politician) and one per resend.
  EXPECT_GT(r->busy_answers, 0u);
  EXPECT_LE(r->busy_answers, 2 * r->busy_submissions + r->resent_submissions);
  EXPECT_GT(r->committed_txs, 0u);
  EXPECT_LE(r->txs_per_block, 3 * 10.0 + 1e-9);  // no block beyond the pool limits
  EXPECT_EQ(r->offered_txs,
            r->submitted_txs + r->busy_submissions + r->idle_misses + r->rejected_submissions);
  // The latency breakdown (round_timeline.h): every committed transfer is placed in its
  // politician's pool (fanout 1, nobody killed), and the stages add up to the total.
  const LatencyBreakdown& b = r->latency_breakdown;
  EXPECT_EQ(b.attributed, r->committed_txs);
  EXPECT_EQ(b.unattributed, 0u);
  EXPECT_NEAR(b.admission.tail_mean_s + b.mempool.tail_mean_s + b.pool_to_block.tail_mean_s +
                  b.block_to_visible.tail_mean_s,
              b.total.tail_mean_s, 1e-6);
  EXPECT_GT(b.pool_to_block.p50_s, 0);
  ExpectSafe(*r);
}

// Issue #12: 25% malicious citizens acting together under BA*, in two mixes of the citizen
// adversaries (citizen_agreement.h, faults.h): the adversary's common value, equivocation in
// every step, an equivocating proposer, late proposals; withheld votes, empty proposals,
// replayed tickets of other periods. Each must keep committed tx/s at half the honest
// network's, measured in this test on the same config, and the audit covers every honest
// politician. One expected proposer per period: about a third of the heights (a half, with
// four malicious members) have no honest period-0 proposer, so BA*'s recovery (a bottom next
// quorum, then period 1's proposers) must happen over real processes.
TEST(LocalnetTest, AQuarterOfCitizensMaliciousTogetherKeepHalfTheHonestThroughput) {
  LocalnetConfig c = Small(5, 16, 0);  // committee = all 16, T = 11: H = 12, M = 4
  c.citizens_per_process = 12;
  c.accounts = 60;
  c.duration_s = 12;
  c.key_seed = 7;
  c.proposers = 1;
  auto honest = RunHonestBaseline("ba_honest", c);
  ASSERT_TRUE(honest.ok()) << honest.status();
  uint64_t recovered = honest->report.recovered_blocks;
  for (const std::vector<std::string>& mix :
       {std::vector<std::string>{"collude", "inconsistent", "equivocate", "late"},
        std::vector<std::string>{"silent", "empty", "replay", "collude"}}) {
    LocalnetConfig a = c;
    a.malicious_citizens = 0.25;
    a.citizen_behaviours = mix;
    auto r = RunNetwork("ba_" + mix[0], a);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->malicious_citizens, 4u);
    ExpectSafe(*r);
    ExpectThroughputVsHonest(mix[0] + " mix", *r, a, honest->tx_per_s, 0.5);
    std::cerr << mix[0] << " mix: blocks " << r->blocks << ", recovered " << r->recovered_blocks
              << "\n";
    recovered += r->recovered_blocks;
  }
  EXPECT_GT(recovered, 0u) << "no height needed a later BA* period";
}

// The CPU-by-role figures of the report: a process's CPU seconds grow while it computes; an
// unknown process reads as 0.
TEST(ProcessCpuTest, CountsTheCpuOfARunningProcess) {
  const double before = ProcessCpuSeconds(::getpid());
  volatile uint64_t x = 0;
  for (uint64_t i = 0; ProcessCpuSeconds(::getpid()) < before + 0.05 && i < 4000000000ull; ++i) {
    x = x + i;
  }
  EXPECT_GE(ProcessCpuSeconds(::getpid()), before + 0.05);
  EXPECT_EQ(ProcessCpuSeconds(0x7ffffff0), 0);
}

}  // namespace
}  // namespace tessera::ledger::net
