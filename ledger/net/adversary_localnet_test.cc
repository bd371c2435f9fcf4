// Issue #12's acceptance run (label `slow`; CI runs it too, alone: about 12 minutes on 2 cores):
// 80% of the politicians (4 of 5) running each adversary in turn, and a mix of them, plus 25%
// malicious citizens (one `inconsistent`, one `silent` of 8), then the politicians' mix with the 2
// malicious citizens running citizen-side adversaries (three runs, two adversaries each: every
// one of the five); each run audited (no fork, no certified invalid or unappliable block at any
// honest politician) and held to at least half the committed tx/s of an honest network
// measured first in the same test.
//
// TESSERA_VOTE_COMMITTEES=per-step runs every network of the test (the honest one too) with
// BA* committees drawn per step (genesis.h VoteCommittees); unset, the genesis default
// (per height). With the committee = all 8 citizens every citizen wins every step's draw, so
// per step changes how members vote (a ticket per step, carried in votes and certificates),
// not who votes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/net/faults.h"
#include "ledger/net/genesis.h"
#include "ledger/net/localnet_testing.h"

namespace tessera::ledger::net {
namespace {

// The five-politician network with clients that send each transfer to every politician (the
// safe sample of a client facing 80% malicious politicians): with fanout 2, 60% of transfers
// reach only censoring politicians and wait for the load generator's 6 s resend, which capped
// the 80/25 runs at about 35% of the honest tx/s while blocks came as fast as in the honest
// run (docs/ledger-network.md). The honest run uses the same clients.
//
// 40 s of load, not the 20 s of FivePoliticianNetwork: at 1.6-2 s a block, 20 s held 6-12
// blocks, so one block that waited 6 s (a member still learning which politicians execute
// slowly) moved a run across the bar -- `slow_execute` at 49.1% and 56.9% of honest in two
// clean-clone CI runs whose steady blocks came as fast as the honest run's (session 7).
// 60 s since session 22: a `slow_execute` run's ratio is set by how many of its heights need
// BA* period 1 (5.7-10 s each against about 1.9 s): with 40 s of load, none gave 76-93% of
// honest, one 48-73%, two or three 59-66% over 18 runs (docs/ledger-network.md,
// "slow_execute's margin, diagnosed from the members' logs"). A longer window does not move the
// mean; it makes one such height cost 10-17 points instead of 15-25, so that the bar measures
// the adversary's sustained cost rather than whether one height fell into period 1.
// ctest runs this test alone (SERIAL in CMakeLists.txt): next to another test the honest run
// and an adversary's run did not share a machine load, and the ratio measured that instead
// (`flood` 44.8% at load average 35).
LocalnetConfig Five() {
  LocalnetConfig c = FivePoliticianNetwork();
  c.fanout = 5;
  c.duration_s = 60;
  return c;
}

// TESSERA_VOTE_COMMITTEES's value: unset or empty, the default (per height); a value that names
// no mode is an error, so that a typo does not measure the default under another name.
Result<VoteCommittees> VoteCommitteesFromEnv(const char* value) {
  const std::string v = value == nullptr ? "" : value;
  if (v.empty() || v == "per-height") return VoteCommittees::kPerHeight;
  if (v == "per-step") return VoteCommittees::kPerStep;
  return InvalidArgumentError("TESSERA_VOTE_COMMITTEES must be per-height or per-step, not '" + v +
                              "'");
}

// One adversarial network of the test: 4 of 5 politicians cycle over `politicians`, 2 of 8
// citizens over `citizens` (localnet.cc gives each malicious citizen one behaviour, so a run
// holds at most two citizen behaviours).
struct AdversaryRun {
  std::string name;  // what TESSERA_ADVERSARY selects
  std::vector<std::string> politicians;
  std::vector<std::string> citizens;
};

std::vector<AdversaryRun> AdversaryRuns() {
  const std::vector<std::string> mix = {"withhold_data", "unresponsive", "equivocate", "flood"};
  const std::vector<std::string> voters = {"inconsistent", "silent"};
  std::vector<AdversaryRun> runs;
  for (const char* one :
       {"withhold_data", "slow_execute", "unresponsive", "equivocate", "flood", "forge"}) {
    runs.push_back({.name = one, .politicians = {one}, .citizens = voters});
  }
  runs.push_back({.name = "mix", .politicians = mix, .citizens = voters});
  // The citizen-side adversaries beside the politicians' mix, two per run (two malicious
  // citizens): proposer attacks whose defence is the politicians' relaying of proposals, which
  // 4 withholding, unresponsive, equivocating or flooding politicians undermine -- two blocks
  // under one ticket, a proposal held back to the next-vote deadline; then votes for the
  // adversary's common value with empty proposals; then replayed tickets of other periods with
  // withheld votes. (Until session 18 the last four ran only beside 5 honest politicians,
  // LocalnetTest.AQuarterOfCitizens..., and once by hand at 80/25.)
  runs.push_back({.name = "citizen_mix", .politicians = mix, .citizens = {"equivocate", "late"}});
  runs.push_back({.name = "collude_empty", .politicians = mix, .citizens = {"collude", "empty"}});
  runs.push_back({.name = "replay_silent", .politicians = mix, .citizens = {"replay", "silent"}});
  return runs;
}

bool Selected(const AdversaryRun& run, const char* only) {
  return only == nullptr || run.name == only;
}

LocalnetConfig RunConfig(const LocalnetConfig& base, const AdversaryRun& run) {
  LocalnetConfig c = base;
  c.malicious_politicians = 0.8;
  c.politician_behaviours = run.politicians;
  c.malicious_citizens = 0.25;
  c.citizen_behaviours = run.citizens;
  // Forging at the bench's 0.25, which citizens raise to the sound sample
  // (validation_sample.h).
  if (run.politicians[0] == "forge") c.validation_sample = 0.25;
  return c;
}

// One run's line of the summary printed at the end of the test.
struct Row {
  std::string name;
  bool ran = false;
  LocalnetReport report;
  double tx_per_s = 0;
  std::string verdict;  // "pass", or which of the test's checks it failed
};

// CI keeps only the tail of a failed test's log, and the per-run lines are spread over eight
// minutes of progress output (session 12's failed CI printed only honest and mix): the last
// lines therefore name every run with its figures and the checks it failed.
void PrintSummary(const std::vector<Row>& rows, double honest_tx_per_s, VoteCommittees committees) {
  std::string out = std::string("AdversaryTest summary, vote committees ") +
                    VoteCommitteesName(committees) +
                    " (committed tx/s over the load period; blocks certified after period 0; CPU "
                    "s of the malicious politicians / honest politicians / citizens):\n";
  for (const Row& r : rows) {
    char line[320];
    if (!r.ran) {
      std::snprintf(line, sizeof line, "  %-13s run failed  %s\n", r.name.c_str(),
                    r.verdict.c_str());
    } else {
      const LocalnetReport& p = r.report;
      std::snprintf(line, sizeof line,
                    "  %-13s %6.1f tx/s %6.1f%% %3llu blocks (%llu after period 0) %7.0f member "
                    "B/block  CPU %5.1f / %5.1f / %5.1f  %s\n",
                    r.name.c_str(), r.tx_per_s,
                    honest_tx_per_s > 0 ? 100 * r.tx_per_s / honest_tx_per_s : 0.0,
                    static_cast<unsigned long long>(p.blocks),
                    static_cast<unsigned long long>(p.recovered_blocks),
                    p.citizen_member_bytes_per_block, p.cpu_s_malicious_politicians,
                    p.cpu_s_politicians - p.cpu_s_malicious_politicians, p.cpu_s_citizens,
                    r.verdict.c_str());
    }
    out += line;
  }
  std::cerr << out;
}

TEST(AdversaryTest, EightyPercentPoliticiansAndQuarterOfCitizensMaliciousStaySafeAndLive) {
  auto committees = VoteCommitteesFromEnv(std::getenv("TESSERA_VOTE_COMMITTEES"));
  ASSERT_TRUE(committees.ok()) << committees.status();
  LocalnetConfig base = Five();
  base.vote_committees = *committees;
  constexpr double kBar = 0.5;  // of the honest run's committed tx/s (issue #12)
  auto baseline = RunHonestBaseline("honest", base);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  const LocalnetReport& honest = baseline->report;
  const double honest_tx_per_s = baseline->tx_per_s;
  std::vector<Row> rows = {{.name = "honest",
                            .ran = true,
                            .report = honest,
                            .tx_per_s = honest_tx_per_s,
                            .verdict = Safe(honest) ? "pass" : "FAIL: audit"}};
  // Every run is audited, and held to half the honest run's committed transactions per second
  // over the whole load period (issue #12), every adversary. Session 5 printed four of them
  // (unresponsive 0-46%, slow_execute 56-68%, equivocate 47-107%, flood 49-77%); session 6
  // found and fixed the causes (hedged calls passing over a busy honest politician for good,
  // posts lost the same way, blacklisting shrinking the sample to one politician:
  // docs/ledger-network.md, "The 80/25 stall, diagnosed").
  // TESSERA_ADVERSARY=flood (a run's name: an adversary, "mix" or "citizen_mix") runs only that
  // one, to measure one adversary without the other 8 minutes; CI sets nothing and runs them all.
  const char* only = std::getenv("TESSERA_ADVERSARY");
  for (const AdversaryRun& run : AdversaryRuns()) {
    if (!Selected(run, only)) continue;
    const LocalnetConfig c = RunConfig(base, run);
    const std::string& name = run.name;
    SCOPED_TRACE(name);
    auto r = RunNetwork(name, c);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) {
      rows.push_back({.name = name,
                      .ran = false,
                      .report = {},
                      .tx_per_s = 0,
                      .verdict = "FAIL: " + r.status().ToString()});
      continue;
    }
    EXPECT_EQ(r->malicious_politicians, 4u);
    EXPECT_EQ(r->malicious_citizens, 2u);
    ExpectSafe(*r);
    const double tx_per_s = ExpectThroughputVsHonest(name, *r, c, honest_tx_per_s, kBar);
    // What a flood costs a committee member in bytes: a member downloaded every commitment a
    // flooder listed (4 x 2,000 a round), 1.6-1.7 MB a block against the honest run's 61 KB
    // (26x); since it stops after a flooder's surplus (citizen.cc kMaxSurplusCommitments), 0.5
    // MB (8x, most of it the flooders' listings of hashes, which are not bounded).
    std::cerr << name << ": " << r->citizen_member_bytes_per_block
              << " bytes per block per committee member vs honest "
              << honest.citizen_member_bytes_per_block << "\n";
    if (name == "flood") {
      EXPECT_LE(r->citizen_member_bytes_per_block, 12 * honest.citizen_member_bytes_per_block);
    }
    std::string failed;
    if (!Safe(*r)) failed += " audit";
    if (r->malicious_politicians != 4 || r->malicious_citizens != 2) failed += " adversary-count";
    if (tx_per_s < kBar * honest_tx_per_s) failed += " below-50%-of-honest";
    if (name == "flood" &&
        r->citizen_member_bytes_per_block > 12 * honest.citizen_member_bytes_per_block) {
      failed += " member-bytes-over-12x";
    }
    rows.push_back({.name = name,
                    .ran = true,
                    .report = *r,
                    .tx_per_s = tx_per_s,
                    .verdict = failed.empty() ? "pass" : "FAIL:" + failed});
  }
  PrintSummary(rows, honest_tx_per_s, *committees);
}

// The test's switches and run list, without a network (milliseconds).
TEST(AdversaryTestRuns, VoteCommitteesDefaultToPerHeightAndATypoIsAnError) {
  EXPECT_EQ(*VoteCommitteesFromEnv(nullptr), VoteCommittees::kPerHeight);
  EXPECT_EQ(*VoteCommitteesFromEnv(""), VoteCommittees::kPerHeight);
  EXPECT_EQ(*VoteCommitteesFromEnv("per-height"), VoteCommittees::kPerHeight);
  EXPECT_EQ(*VoteCommitteesFromEnv("per-step"), VoteCommittees::kPerStep);
  EXPECT_FALSE(VoteCommitteesFromEnv("perstep").ok());
  EXPECT_FALSE(VoteCommitteesFromEnv("per-period").ok());
  // The switch reaches the networks' config; the default config stays per height.
  EXPECT_EQ(Five().vote_committees, VoteCommittees::kPerHeight);
}

TEST(AdversaryTestRuns, EveryRunIsSelectableByItsOwnNameAt80Over25) {
  const std::vector<AdversaryRun> runs = AdversaryRuns();
  std::set<std::string> names;
  for (const AdversaryRun& run : runs) {
    EXPECT_TRUE(names.insert(run.name).second) << "two runs named " << run.name;
    int selected = 0;
    for (const AdversaryRun& other : runs) selected += Selected(other, run.name.c_str());
    EXPECT_EQ(selected, 1) << run.name;
    EXPECT_TRUE(Selected(run, nullptr)) << run.name;
    const LocalnetConfig c = RunConfig(Five(), run);
    EXPECT_EQ(static_cast<uint32_t>(c.malicious_politicians * c.politicians + 1e-9), 4u);
    EXPECT_EQ(static_cast<uint32_t>(c.malicious_citizens * c.citizens + 1e-9), 2u);
    EXPECT_EQ(c.politician_behaviours, run.politicians);
    EXPECT_EQ(c.citizen_behaviours, run.citizens);
    EXPECT_EQ(c.vote_committees, VoteCommittees::kPerHeight) << run.name;
    LocalnetConfig per_step = Five();
    per_step.vote_committees = VoteCommittees::kPerStep;
    EXPECT_EQ(RunConfig(per_step, run).vote_committees, VoteCommittees::kPerStep) << run.name;
    for (const std::string& b : run.politicians) {
      PoliticianFaults f;
      EXPECT_TRUE(f.Add(b).ok()) << run.name << ": " << b;
    }
    // No behaviour left unused: localnet.cc cycles them over the 2 malicious citizens.
    EXPECT_LE(run.citizens.size(), 2u) << run.name;
    for (const std::string& b : run.citizens) {
      EXPECT_TRUE(ParseCitizenFault(b).ok()) << run.name << ": " << b;
    }
  }
  EXPECT_EQ(names.count("mix"), 1u);
}

// Issue #12's gap of sessions 15-17: the citizen-side adversaries ran at 80/25 only by hand,
// then two of the five. Every one of them now runs in some run of the suite, beside the
// politicians' mix, paired with another citizen behaviour (two malicious citizens).
TEST(AdversaryTestRuns, EveryCitizenSideAdversaryRunsBesideTheMixPoliticians) {
  const std::set<std::string> citizen_side = {"collude", "empty", "equivocate", "late", "replay"};
  std::set<std::string> covered;
  for (const AdversaryRun& run : AdversaryRuns()) {
    int side = 0;
    for (const std::string& b : run.citizens) side += citizen_side.count(b);
    if (side == 0) continue;
    EXPECT_EQ(run.citizens.size(), 2u) << run.name;
    EXPECT_NE(run.citizens[0], run.citizens[1]) << run.name << ": a mix, not one behaviour twice";
    EXPECT_EQ(run.politicians.size(), 4u) << run.name << ": the politicians' mix";
    for (const std::string& b : run.citizens) {
      if (citizen_side.count(b)) covered.insert(b);
    }
  }
  EXPECT_EQ(covered, citizen_side);
}

}  // namespace
}  // namespace tessera::ledger::net
