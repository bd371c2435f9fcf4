// The agreement player as a state machine: each rule of player.h on hand-made event
// sequences (the simulation test drives whole networks).
#include "ledger/agreement/player.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ledger/crypto/hash.h"

namespace tessera::ledger::agreement {
namespace {

PublicKey Key(int i) {
  Hash256 h = Sha256("player-test " + std::to_string(i));
  PublicKey k;
  std::copy(h.begin(), h.end(), k.begin());
  return k;
}
Value V(const std::string& name) { return Value::Of(Sha256(name)); }
Hash256 Priority(uint8_t first) {
  Hash256 p{};
  p[0] = first;
  return p;
}

constexpr uint64_t kHeight = 5;

class PlayerTest : public ::testing::Test {
 protected:
  PlayerTest() { params_.threshold = 3; }
  Player Make(std::span<const JournalRecord> journal = {}) {
    return Player(params_, kHeight, Key(0), journal, 0);
  }
  // Votes of players 1..count for (period, step, value).
  static std::vector<Vote> Votes(uint32_t period, Step step, const Value& v, int count,
                                 int first = 1) {
    std::vector<Vote> out;
    for (int i = first; i < first + count; ++i) out.push_back({kHeight, period, step, v, Key(i)});
    return out;
  }
  static const Vote* Find(const Actions& a, Step step) {
    for (const JournalRecord& r : a.votes) {
      if (r.vote.step == step) return &r.vote;
    }
    return nullptr;
  }
  Params params_;
};

TEST_F(PlayerTest, SoftVotesTheLowestPriorityValidProposalAtTheFilterDeadline) {
  Player p = Make();
  EXPECT_TRUE(p.OnProposal({0, V("high"), Priority(9), true}, 10).votes.empty());
  EXPECT_TRUE(p.OnProposal({0, V("invalid"), Priority(1), false}, 20).votes.empty());
  EXPECT_TRUE(p.OnProposal({0, V("low"), Priority(5), true}, 30).votes.empty());
  EXPECT_TRUE(p.Tick(params_.filter_ms - 1).votes.empty());  // not before the deadline
  Actions a = p.Tick(params_.filter_ms);
  ASSERT_EQ(a.votes.size(), 1u);
  EXPECT_EQ(a.votes[0].vote.step, Step::kSoft);
  EXPECT_EQ(a.votes[0].vote.value, V("low"));
  EXPECT_EQ(a.votes[0].vote.period, 0u);
  EXPECT_EQ(a.votes[0].vote.height, kHeight);
  // Once per period.
  p.OnProposal({0, V("lower"), Priority(0), true}, params_.filter_ms + 1);
  EXPECT_EQ(Find(p.Tick(params_.filter_ms + 2), Step::kSoft), nullptr);
}

TEST_F(PlayerTest, ProposalsOfAnotherPeriodDoNotCount) {
  Player p = Make();
  p.OnProposal({3, V("later period"), Priority(0), true}, 0);
  EXPECT_EQ(Find(p.Tick(params_.filter_ms), Step::kSoft), nullptr);
}

TEST_F(PlayerTest, CertVotesOnASoftQuorumForAValidatedValueAndCommitsOnCertQuorum) {
  Player p = Make();
  Actions a;
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = p.OnVote(v, 50);
  EXPECT_EQ(Find(a, Step::kCert), nullptr);  // not validated yet
  ASSERT_EQ(a.bundles.size(), 1u);           // the soft quorum is relayed
  EXPECT_EQ(a.bundles[0].size(), 3u);
  a = p.OnValidated(V("b"), 60);
  const Vote* cert = Find(a, Step::kCert);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(cert->value, V("b"));
  for (const Vote& v : Votes(0, Step::kCert, V("b"), 2)) a = p.OnVote(v, 70);
  ASSERT_TRUE(a.commit.has_value());  // two others plus our own
  EXPECT_EQ(a.commit->value, V("b"));
  EXPECT_EQ(a.commit->certificate.size(), 3u);
  EXPECT_TRUE(p.decided());
}

// Committees per step: a cert member that may not execute (Params::cert_on_soft_quorum)
// cert-votes on the soft quorum alone; its own negative verdict still stops it.
TEST_F(PlayerTest, CertOnSoftQuorumVotesWithoutOwnValidationButNotAgainstItsVerdict) {
  params_.cert_on_soft_quorum = true;
  Player p = Make();
  Actions a;
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = p.OnVote(v, 50);
  const Vote* cert = Find(a, Step::kCert);
  ASSERT_NE(cert, nullptr) << p.DebugString();
  EXPECT_EQ(cert->value, V("b"));
  ASSERT_EQ(a.votes.size(), 1u);
  EXPECT_TRUE(a.votes[0].sent);

  Player refuting = Make();
  refuting.OnRefuted(V("b"), 10);
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = refuting.OnVote(v, 50);
  EXPECT_EQ(Find(a, Step::kCert), nullptr);
  // Without the flag the same player waits for its own verdict (the test above).
  params_.cert_on_soft_quorum = false;
  Player waiting = Make();
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = waiting.OnVote(v, 50);
  EXPECT_EQ(Find(a, Step::kCert), nullptr);
}

TEST_F(PlayerTest, NeverCertVotesAfterNextVoting) {
  Player p = Make();
  Actions a = p.Tick(params_.next_ms);
  const Vote* next = Find(a, Step::kNext);
  ASSERT_NE(next, nullptr);
  EXPECT_TRUE(next->value.bottom);  // period 0, nothing certified: bottom
  p.OnValidated(V("b"), params_.next_ms + 1);
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = p.OnVote(v, params_.next_ms + 2);
  EXPECT_EQ(Find(a, Step::kCert), nullptr);
  // ... but it late-next-votes the soft quorum's value.
  const Vote* late = Find(a, Step::kLateNext);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->value, V("b"));
}

TEST_F(PlayerTest, NextVotesTheCertifiedValue) {
  Player p = Make();
  p.OnValidated(V("b"), 0);
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) p.OnVote(v, 10);
  Actions a = p.Tick(params_.next_ms);
  const Vote* next = Find(a, Step::kNext);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->value, V("b"));
}

TEST_F(PlayerTest, ValueNextQuorumStartsTheNextPeriodFromThatValue) {
  Player p = Make();
  Actions a;
  for (const Vote& v : Votes(0, Step::kLateNext, V("b"), 3)) a = p.OnVote(v, 100);
  EXPECT_EQ(p.period(), 1u);
  ASSERT_FALSE(a.bundles.empty());  // the next quorum is relayed
  EXPECT_EQ(p.ReproposalValue(), V("b"));
  // Period 1 soft-votes the starting value, whatever the proposals say.
  p.OnProposal({1, V("other"), Priority(0), true}, 110);
  a = p.Tick(100 + params_.filter_ms);
  const Vote* soft = Find(a, Step::kSoft);
  ASSERT_NE(soft, nullptr);
  EXPECT_EQ(soft->value, V("b"));
  EXPECT_EQ(soft->period, 1u);
  // Next vote in period 1 without a certificate: the starting value, not bottom.
  a = p.Tick(100 + params_.next_ms);
  const Vote* next = Find(a, Step::kNext);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->value, V("b"));
}

TEST_F(PlayerTest, BottomNextQuorumStartsAFreshPeriodWithItsOwnLeader) {
  Player p = Make();
  p.OnProposal({0, V("p0"), Priority(0), true}, 0);
  for (const Vote& v : Votes(0, Step::kNext, Value::Bottom(), 3)) p.OnVote(v, 100);
  EXPECT_EQ(p.period(), 1u);
  EXPECT_EQ(p.ReproposalValue(), std::nullopt);
  p.OnProposal({1, V("p1"), Priority(7), true}, 110);
  Actions a = p.Tick(100 + params_.filter_ms);
  const Vote* soft = Find(a, Step::kSoft);
  ASSERT_NE(soft, nullptr);
  EXPECT_EQ(soft->value, V("p1"));
  // Without a certificate it next-votes bottom, and down-next-votes bottom too.
  a = p.Tick(100 + params_.next_ms);
  ASSERT_NE(Find(a, Step::kNext), nullptr);
  EXPECT_TRUE(Find(a, Step::kNext)->value.bottom);
  ASSERT_NE(Find(a, Step::kDownNext), nullptr);
  EXPECT_TRUE(Find(a, Step::kDownNext)->value.bottom);
}

// A period nobody proposes in (the caller saw no announced proposer ticket): the next vote
// is cast at once rather than at next_ms, for the value the rules give at any time, and the
// cert-before-next rule still binds the player when a soft quorum turns up after all.
TEST_F(PlayerTest, AnExpeditedNextVoteIsCastAtOnceAndStillBindsTheCertVote) {
  params_.next_ms = 10000;
  Player p = Make();
  Actions a = p.ExpediteNextVote(2500);
  const Vote* next = Find(a, Step::kNext);
  ASSERT_NE(next, nullptr) << "due at once, not at " << params_.next_ms;
  EXPECT_TRUE(next->value.bottom);  // period 0, nothing cert-voted: st = bottom
  EXPECT_EQ(p.NextDeadline(), params_.resend_ms);
  // A late proposal gets no soft vote: the window closed with the next vote.
  p.OnProposal({0, V("late"), Priority(1), true}, 2600);
  EXPECT_EQ(Find(p.Tick(2600 + params_.filter_ms), Step::kSoft), nullptr);
  // A soft quorum that reaches it now gets a late-next vote, never a cert vote.
  p.OnValidated(V("late"), 2700);
  for (const Vote& v : Votes(0, Step::kSoft, V("late"), 3)) a = p.OnVote(v, 2700);
  EXPECT_EQ(Find(a, Step::kCert), nullptr);
  ASSERT_NE(Find(a, Step::kLateNext), nullptr);
  // T members that concluded the same end the period: period 1 starts from bottom.
  for (const Vote& v : Votes(0, Step::kNext, Value::Bottom(), 3)) p.OnVote(v, 2800);
  EXPECT_EQ(p.period(), 1u);
  EXPECT_EQ(p.ReproposalValue(), std::nullopt);
  // Period 1 has its own deadline, and after a bottom quorum it wants fresh proposals too.
  EXPECT_EQ(Find(p.Tick(2900), Step::kNext), nullptr);
  ASSERT_NE(Find(p.ExpediteNextVote(2900), Step::kNext), nullptr);
}

// A period that re-proposes a starting value soft-votes it without any proposal: nothing to
// wait for, nothing to give up early.
TEST_F(PlayerTest, APeriodWithAStartingValueIsNotExpedited) {
  params_.next_ms = 10000;
  Player p = Make();
  for (const Vote& v : Votes(0, Step::kLateNext, V("b"), 3)) p.OnVote(v, 100);
  ASSERT_EQ(p.ReproposalValue(), V("b"));
  Actions a = p.ExpediteNextVote(200);
  EXPECT_EQ(Find(a, Step::kNext), nullptr);
  a = p.Tick(100 + params_.filter_ms);
  ASSERT_NE(Find(a, Step::kSoft), nullptr);
  EXPECT_EQ(Find(p.Tick(100 + params_.next_ms - 1), Step::kNext), nullptr);
  EXPECT_NE(Find(p.Tick(100 + params_.next_ms), Step::kNext), nullptr);
}

TEST_F(PlayerTest, CatchesUpByBundleAcrossManyPeriodsButNotBySingleFarVotes) {
  Player p = Make();
  // Single votes far ahead are dropped (bounded memory) ...
  for (const Vote& v : Votes(40, Step::kNext, Value::Bottom(), 3)) p.OnVote(v, 10);
  EXPECT_EQ(p.period(), 0u);
  // ... a whole quorum in one bundle is taken at any distance.
  std::vector<Vote> bundle = Votes(40, Step::kNext, V("b"), 3);
  p.OnBundle(bundle, 20);
  EXPECT_EQ(p.period(), 41u);
  EXPECT_EQ(p.ReproposalValue(), V("b"));
}

TEST_F(PlayerTest, AnEquivocatingVoterCountsOnce) {
  Player p = Make();
  p.OnVote({kHeight, 0, Step::kCert, V("a"), Key(1)}, 1);
  p.OnVote({kHeight, 0, Step::kCert, V("b"), Key(1)}, 2);
  p.OnVote({kHeight, 0, Step::kCert, V("b"), Key(2)}, 3);
  EXPECT_FALSE(p.decided());
  p.OnVote({kHeight, 0, Step::kCert, V("b"), Key(3)}, 4);
  EXPECT_TRUE(p.decided());
}

// The 80/25 stall: an equivocator seen with a and b counts for every value in a quorum, but a
// commit (certificate) needs T signatures for the value itself. With T - 1 honest cert votes
// for c, the player used to decide c although no certificate for c could exist -- it stopped
// voting, the politicians never assembled one, and the height stalled for good.
TEST_F(PlayerTest, ACommitNeedsCertVotesActuallyCastForTheValue) {
  Player p = Make();  // T = 3
  p.OnVote({kHeight, 0, Step::kCert, V("a"), Key(1)}, 1);
  p.OnVote({kHeight, 0, Step::kCert, V("b"), Key(1)}, 2);  // equivocator, never votes c
  p.OnVote({kHeight, 0, Step::kCert, V("c"), Key(2)}, 3);
  p.OnVote({kHeight, 0, Step::kCert, V("c"), Key(3)}, 4);
  EXPECT_FALSE(p.decided());
  p.OnVote({kHeight, 0, Step::kCert, V("c"), Key(4)}, 5);
  ASSERT_TRUE(p.decided());
  EXPECT_EQ(p.decision()->value, V("c"));
}

TEST_F(PlayerTest, AQuorumIsRelayedOnceEvenWhenItsFirstVoterEquivocated) {
  // The equivocator is the voter that sorts first, so its other value leads the bundle.
  std::vector<PublicKey> voters = {Key(1), Key(2), Key(3)};
  std::sort(voters.begin(), voters.end());
  Player p = Make();
  p.OnVote({kHeight, 0, Step::kSoft, V("a"), voters[0]}, 1);
  p.OnVote({kHeight, 0, Step::kSoft, V("b"), voters[0]}, 2);  // counts for every value now
  p.OnVote({kHeight, 0, Step::kSoft, V("b"), voters[1]}, 3);
  Actions a = p.OnVote({kHeight, 0, Step::kSoft, V("b"), voters[2]}, 4);
  ASSERT_EQ(a.bundles.size(), 1u);  // the soft quorum for b, relayed
  EXPECT_EQ(a.bundles[0].front().value, V("a"));
  // Later events do not relay it again (a relay storm in the 9 + 3 simulation).
  for (int i = 5; i < 10; ++i) {
    Vote other{kHeight, 0, Step::kCert, V(std::string("c").append(std::to_string(i))),
               Key(10 + i)};  // no quorum
    EXPECT_TRUE(p.OnVote(other, i).bundles.empty());
  }
}

TEST_F(PlayerTest, VotesOfOtherHeightsAreIgnored) {
  Player p = Make();
  for (int i = 1; i <= 3; ++i) p.OnVote({kHeight + 1, 0, Step::kCert, V("b"), Key(i)}, 1);
  EXPECT_FALSE(p.decided());
}

TEST_F(PlayerTest, ARestoredPlayerResumesItsPeriodAndNeverContradictsItsJournal) {
  std::vector<JournalRecord> journal;
  {
    Player p = Make();
    for (const Vote& v : Votes(0, Step::kNext, Value::Bottom(), 3)) {
      Actions a = p.OnVote(v, 100);
      journal.insert(journal.end(), a.votes.begin(), a.votes.end());
    }
    p.OnProposal({1, V("x"), Priority(3), true}, 110);
    Actions a = p.Tick(100 + params_.filter_ms);
    journal.insert(journal.end(), a.votes.begin(), a.votes.end());
    ASSERT_NE(Find(a, Step::kSoft), nullptr);
    EXPECT_EQ(Find(a, Step::kSoft)->value, V("x"));
  }
  // Restarted: knows it soft-voted x in period 1 (with a bottom quorum before it).
  Player q(params_, kHeight, Key(0), journal, 1000);
  EXPECT_EQ(q.period(), 1u);
  q.OnProposal({1, V("y"), Priority(0), true}, 1000);
  Actions a = q.Tick(1000 + params_.filter_ms);
  EXPECT_EQ(Find(a, Step::kSoft), nullptr);  // it soft-voted x in period 1 already
  a = q.Tick(1000 + params_.next_ms);
  // Period context restored: without a certificate it next-votes bottom (previous bottom
  // quorum), not a starting value, and goes down as well.
  ASSERT_NE(Find(a, Step::kNext), nullptr);
  EXPECT_TRUE(Find(a, Step::kNext)->value.bottom);
  ASSERT_NE(Find(a, Step::kDownNext), nullptr);
  // Its re-sends carry the journaled vote.
  a = q.Tick(1000 + params_.next_ms + params_.resend_ms);
  bool resent = false;
  for (const auto& b : a.bundles) {
    for (const Vote& v : b) resent |= v.step == Step::kSoft && v.value == V("x") && v.period == 1;
  }
  EXPECT_TRUE(resent);
}

TEST_F(PlayerTest, WithoutRecoveryThereAreNoNextVotesAndNoPeriods) {
  params_.recovery = false;
  Player p = Make();
  Actions a = p.Tick(10 * params_.next_ms);
  EXPECT_TRUE(a.votes.empty());
  for (const Vote& v : Votes(0, Step::kNext, Value::Bottom(), 3)) p.OnVote(v, 100);
  EXPECT_EQ(p.period(), 0u);
}

// Committees per step: off the cert committee, the player still "cert-votes" (journaled,
// unsent, not counted), and that decision binds its next votes -- it next-votes the value, not
// bottom, and never casts the cert vote later -- as the safety argument needs.
TEST_F(PlayerTest, OffACommitteeThePlayerActsOnItsUnsentVote) {
  params_.member = [](uint32_t, Step step) { return step != Step::kCert; };
  Player p = Make();
  p.OnValidated(V("b"), 10);
  Actions a;
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = p.OnVote(v, 50);
  ASSERT_NE(Find(a, Step::kCert), nullptr);
  const Vote cert = *Find(a, Step::kCert);
  ASSERT_EQ(a.votes.size(), 1u);
  EXPECT_FALSE(a.votes[0].sent);  // journal it, do not send it
  // Its own unsent vote does not count: two more cert votes are not a quorum of 3.
  for (const Vote& v : Votes(0, Step::kCert, V("b"), 2)) a = p.OnVote(v, 60);
  EXPECT_FALSE(p.decided());
  a = p.Tick(params_.next_ms);
  const Vote* next = Find(a, Step::kNext);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->value, V("b"));
  // Re-sends carry only sent votes.
  Actions later = p.Tick(params_.next_ms + params_.resend_ms);
  for (const auto& bundle : later.bundles) {
    for (const Vote& v : bundle) EXPECT_FALSE(v.voter == Key(0) && v.step == Step::kCert);
  }
  // A restart from the journal keeps the unsent cert vote as a decision, still unsent.
  std::vector<JournalRecord> journal = {JournalRecord{cert, Value::Bottom(), false, false}};
  Player q = Make(journal);
  Actions b = q.Tick(params_.next_ms);
  ASSERT_NE(Find(b, Step::kNext), nullptr);
  EXPECT_EQ(Find(b, Step::kNext)->value, V("b"));
  EXPECT_EQ(Find(b, Step::kCert), nullptr);
}

// Committees per step at a large population: most players are off the soft and cert
// committees and cannot validate (a citizen executes only as a member). Seeing a soft quorum
// in time must still bind them to its value, or a fresh next committee -- mostly such players
// -- next-votes bottom while the cert committee certifies the value: a fork
// (thresholds.h CrossStepForkProbability). A cert member still needs its own validation.
TEST_F(PlayerTest, OffTheCertCommitteeASoftQuorumBindsThePlayerWithoutValidation) {
  params_.member = [](uint32_t, Step step) { return step != Step::kCert; };
  Player p = Make();  // never validates anything
  Actions a;
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) a = p.OnVote(v, 50);
  const Vote* cert = Find(a, Step::kCert);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(cert->value, V("b"));
  EXPECT_FALSE(a.votes.back().sent);
  a = p.Tick(params_.next_ms);
  ASSERT_NE(Find(a, Step::kNext), nullptr);
  EXPECT_EQ(Find(a, Step::kNext)->value, V("b"));  // not bottom
  // On the cert committee, the same events without a validation cast no cert vote.
  params_.member = nullptr;
  Player member = Make();
  Actions m;
  for (const Vote& v : Votes(0, Step::kSoft, V("b"), 3)) m = member.OnVote(v, 50);
  EXPECT_EQ(Find(m, Step::kCert), nullptr);
  m = member.Tick(params_.next_ms);
  ASSERT_NE(Find(m, Step::kNext), nullptr);
  EXPECT_TRUE(Find(m, Step::kNext)->value.bottom);
}

// Repeated next steps: a period whose first next committee is short ends on a later round.
TEST_F(PlayerTest, RepeatedNextRoundsEndAPeriodTheFirstNextStepCouldNot) {
  params_.next_repeat_ms = 100;
  Player p = Make();
  Actions a = p.Tick(params_.next_ms);
  ASSERT_NE(Find(a, Step::kNext), nullptr);
  EXPECT_EQ(Find(p.Tick(params_.next_ms + 99), NextRound(1)), nullptr);
  a = p.Tick(params_.next_ms + 250);  // round 2 is due (round 1 was missed): only round 2
  EXPECT_EQ(Find(a, NextRound(1)), nullptr);
  const Vote* r2 = Find(a, NextRound(2));
  ASSERT_NE(r2, nullptr);
  EXPECT_TRUE(r2->value.bottom);  // period 0, no soft quorum: st = bottom
  // Two other members of round 2's committee: a bottom quorum ends period 0.
  for (const Vote& v : Votes(0, NextRound(2), Value::Bottom(), 2))
    p.OnVote(v, params_.next_ms + 260);
  EXPECT_EQ(p.period(), 1u);
  // Without repetition the same player casts nothing after its next vote.
  params_.next_repeat_ms = 0;
  Player once = Make();
  once.Tick(params_.next_ms);
  Actions none = once.Tick(params_.next_ms + 10000);
  for (const JournalRecord& r : none.votes) EXPECT_LE(static_cast<int>(r.vote.step), 5);
}

TEST_F(PlayerTest, NextDeadlineNamesTheFilterThenTheNextStep) {
  Player p = Make();
  EXPECT_EQ(p.NextDeadline(), params_.filter_ms);
  p.OnProposal({0, V("a"), Priority(1), true}, 0);
  p.Tick(params_.filter_ms);
  EXPECT_EQ(p.NextDeadline(), std::min(params_.next_ms, params_.resend_ms));
  // With repeated next rounds: the round after the latest one cast.
  params_.next_repeat_ms = 100;
  Player r = Make();
  r.OnProposal({0, V("a"), Priority(1), true}, 0);
  r.Tick(params_.filter_ms);
  r.Tick(params_.next_ms);  // next vote; the re-send deadline moves to next_ms + resend_ms
  EXPECT_EQ(r.NextDeadline(), params_.next_ms + 100);
  r.Tick(params_.next_ms + 250);  // round 2 (round 1 skipped)
  EXPECT_EQ(r.NextDeadline(), params_.next_ms + 300);
}

}  // namespace
}  // namespace tessera::ledger::agreement
