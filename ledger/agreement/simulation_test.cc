// The seeded agreement simulation (simulation.h): 10,000 adversarial schedules, committees
// drawn per (height, period, step), without a fork, an invalid decision, a double vote or a
// stall; and the switches that must make it fail -- recovery off (a split height never moves
// on), the vote journal off (a restarted player votes twice) and one committee per height (a
// height whose draw is short never moves on).
#include "ledger/agreement/simulation.h"

#include <gtest/gtest.h>

namespace tessera::ledger::agreement {
namespace {

TEST(AgreementSimulation, TenThousandAdversarialSchedulesAreSafeAndLive) {
  SimSummary s = SimulateMany(SimOptions{}, 1, 10000);
  EXPECT_EQ(s.unsafe, 0u) << s.first_failure;
  EXPECT_EQ(s.stalled, 0u) << s.first_failure;
  // The schedules do exercise recovery, restarts and replayed tickets.
  EXPECT_GT(s.recovered, 1000u);
  EXPECT_GT(s.crashed, 1000u);
  EXPECT_GT(s.replayed_tickets_rejected, 0u);
  // ... and committees too short to reach T, including a height's first cert committee, which
  // the later draws of the height got past (no stall above).
  EXPECT_GT(s.short_committees, 1000u);
  EXPECT_GT(s.short_first_draw, 1000u);
  std::cout << "schedules " << s.schedules << ", needed a later period " << s.recovered
            << ", highest period " << s.max_period << ", crashed " << s.crashed << ", deliveries "
            << s.deliveries << ", short step committees " << s.short_committees
            << ", schedules with a short first cert committee " << s.short_first_draw << "\n";
}

// Everyone on every committee (the configuration before committees were drawn per step).
TEST(AgreementSimulation, EveryoneOnEveryCommitteeSchedulesAreSafeAndLive) {
  SimOptions o;
  o.committee = 0;
  SimSummary s = SimulateMany(o, 1, 2000);
  EXPECT_EQ(s.unsafe, 0u) << s.first_failure;
  EXPECT_EQ(s.stalled, 0u) << s.first_failure;
  EXPECT_EQ(s.short_committees, 0u);
}

// The same draws made once per height (the old per-height committee): a height whose one
// committee holds fewer than T honest members never moves on.
TEST(AgreementSimulation, OneCommitteePerHeightStallsWhereItsDrawIsShort) {
  SimOptions o;
  o.per_height_draw = true;
  o.liveness_ms = 10000;
  SimSummary s = SimulateMany(o, 1, 300);
  EXPECT_EQ(s.unsafe, 0u) << s.first_failure;
  EXPECT_GT(s.stalled, 0u);
  std::cout << "one committee per height: " << s.stalled << " of " << s.schedules
            << " schedules stalled\n";
}

// A larger network: it found a relay storm (PlayerTest.AQuorumIsRelayed...) the 6 + 2 one did not.
TEST(AgreementSimulation, NineHonestThreeMaliciousSchedulesAreSafeAndLive) {
  SimOptions o;
  o.honest = 9;
  o.malicious = 3;
  o.threshold = 9;   // H = T, H + 2M = 15 < 18
  o.committee = 11;  // of 12 per step
  SimSummary s = SimulateMany(o, 1, 1000);
  EXPECT_EQ(s.unsafe, 0u) << s.first_failure;
  EXPECT_EQ(s.stalled, 0u) << s.first_failure;
}

TEST(AgreementSimulation, SameSeedSameRun) {
  SimResult a = Simulate(SimOptions{.seed = 77});
  SimResult b = Simulate(SimOptions{.seed = 77});
  EXPECT_EQ(a.deliveries, b.deliveries);
  EXPECT_EQ(a.decided_ms, b.decided_ms);
  EXPECT_EQ(a.max_period, b.max_period);
}

// Committees per step without repeated next rounds: a period whose next committees hold
// fewer than T honest members never ends.
TEST(AgreementSimulation, WithoutRepeatedNextRoundsShortNextCommitteesStall) {
  SimOptions o;
  o.next_repeat_ms = 0;
  o.liveness_ms = 10000;
  SimSummary s = SimulateMany(o, 1, 300);
  EXPECT_EQ(s.unsafe, 0u) << s.first_failure;
  EXPECT_GT(s.stalled, 0u);
  std::cout << "no repeated next rounds: " << s.stalled << " of " << s.schedules
            << " schedules stalled\n";
}

TEST(AgreementSimulation, WithoutRecoverySplitHeightsStall) {
  SimOptions o;
  o.recovery = false;
  o.liveness_ms = 10000;
  SimSummary s = SimulateMany(o, 1, 300);
  EXPECT_EQ(s.unsafe, 0u) << s.first_failure;  // the old protocol was safe ...
  EXPECT_GT(s.stalled, 0u);                    // ... but not live
  std::cout << "recovery off: " << s.stalled << " of " << s.schedules << " schedules stalled\n";
}

TEST(AgreementSimulation, WithoutTheJournalARestartedPlayerVotesTwice) {
  SimOptions o;
  o.restore_journal = false;
  o.crash_probability = 1.0;
  SimSummary s = SimulateMany(o, 1, 300);
  EXPECT_GT(s.unsafe, 0u);
  std::cout << "journal off: " << s.unsafe << " of " << s.schedules
            << " schedules had a double vote or worse (" << s.first_failure << ")\n";
}

TEST(AgreementSimulation, HonestNetworkWithoutFaultsIsLive) {
  SimOptions o;
  o.adversary = false;
  o.gst_max_ms = 0;
  o.crash_probability = 0;
  SimSummary s = SimulateMany(o, 1, 200);
  EXPECT_EQ(s.unsafe + s.stalled, 0u) << s.first_failure;
}

}  // namespace
}  // namespace tessera::ledger::agreement
