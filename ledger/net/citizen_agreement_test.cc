// The citizen's BA* driver: proposals bound to their ticket's period, votes journaled before
// they are handed out (a restarted citizen never contradicts them), cert votes that carry a
// block signature for their period, and the colluding adversary's votes.
#include "ledger/net/citizen_agreement.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "ledger/crypto/hash.h"
#include "ledger/vote_sortition.h"

namespace tessera::ledger::net {
namespace {

class CitizenAgreementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("citizen-agreement-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  CitizenAgreementConfig Config(size_t threshold, agreement::VoteJournal* journal,
                                CitizenFault fault = CitizenFault::kNone) {
    return {.params = {.threshold = threshold, .filter_ms = 10, .next_ms = 1000},
            .height = 7,
            .keys = &keys_,
            .credential = {},
            .vote_ticket = {},
            .identity = "id",
            .journal = journal,
            .fault = fault};
  }
  // The announced-ticket tests' timing: a 400 ms burst grace, announced proposals waited for
  // up to 2 s after the first proposal.
  CitizenAgreementConfig AnnouncingConfig() {
    CitizenAgreementConfig config = Config(3, nullptr);
    config.params.next_ms = 8000;
    config.proposal_grace_ms = 400;
    config.announced_proposal_wait_ms = 2000;
    return config;
  }
  static VrfOutput Beta(uint8_t first) {
    VrfOutput b{};
    b[0] = first;
    return b;
  }
  static std::vector<Vote> Votes(const std::vector<RoundItem>& items) {
    std::vector<Vote> out;
    for (const RoundItem& item : items) {
      auto v = DecodeVote(AsBytes(item.payload()));
      EXPECT_TRUE(v.ok()) << v.status();
      if (v.ok()) out.push_back(*v);
    }
    return out;
  }
  // Steps `ba` every 50 ms over [from, to) and expects no vote at all in that time.
  static void ExpectNoVoteBetween(CitizenAgreement& ba, uint64_t from, uint64_t to) {
    for (uint64_t t = from; t < to; t += 50) {
      auto items = ba.Step(t);
      ASSERT_TRUE(items.ok());
      EXPECT_TRUE(Votes(*items).empty()) << "soft vote cast at " << t << " ms";
    }
  }
  // Steps `ba` once at `t` and expects at least one soft vote, each for `value`.
  static void ExpectSoftVoteFor(CitizenAgreement& ba, uint64_t t, const Hash256& value) {
    auto items = ba.Step(t);
    ASSERT_TRUE(items.ok());
    size_t soft = 0;
    for (const Vote& v : Votes(*items)) {
      if (v.step != VoteStep::kSoft) continue;
      ++soft;
      EXPECT_EQ(v.value, value);
    }
    EXPECT_GE(soft, 1u);
  }

  std::filesystem::path dir_;
  KeyPair keys_ = KeyPair::FromSeed(Sha256("citizen"));
  const Hash256 a_ = Sha256("block a"), b_ = Sha256("block b"), c_ = Sha256("block c");
};

TEST_F(CitizenAgreementTest, AProposalWithAnotherPeriodsTicketIsNeverACandidate) {
  CitizenAgreement ba(Config(2, nullptr), 0);
  ba.OnProposal(b_, /*ticket_period=*/3, Beta(0), 0);  // replayed ticket, the lowest output
  ba.OnProposal(a_, /*ticket_period=*/0, Beta(200), 0);
  std::vector<Hash256> want = ba.WantValidation();
  ASSERT_EQ(want, std::vector<Hash256>{a_});
  ba.SetVerdict(a_, true, 0);
  auto items = ba.Step(20);
  ASSERT_TRUE(items.ok());
  std::vector<Vote> votes = Votes(*items);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes[0].step, VoteStep::kSoft);
  EXPECT_EQ(votes[0].period, 0u);
  EXPECT_EQ(votes[0].value, a_);
  EXPECT_TRUE(VerifyVote(votes[0]));
}

// A proposal that arrives after this player's soft vote of the period cannot change that vote:
// validating it would only hold the citizen in an execution (up to the round timeout with
// slow politicians) while the other members move on.
TEST_F(CitizenAgreementTest, AProposalArrivingAfterTheSoftVoteIsNotValidated) {
  CitizenAgreement ba(Config(2, nullptr), 0);
  ba.OnProposal(a_, /*ticket_period=*/0, Beta(200), 0);
  ASSERT_EQ(ba.WantValidation(), std::vector<Hash256>{a_});
  ba.SetVerdict(a_, true, 0);
  ExpectSoftVoteFor(ba, 20, a_);
  ba.OnProposal(b_, /*ticket_period=*/0, Beta(0), 30);  // a better ticket, released late
  EXPECT_TRUE(ba.WantValidation().empty());
}

TEST_F(CitizenAgreementTest, VotesAreJournaledBeforeTheyAreHandedOutAndARestartKeepsThem) {
  const auto path = dir_ / "votes.journal";
  {
    auto journal = agreement::VoteJournal::Open(path);
    ASSERT_TRUE(journal.ok()) << journal.status();
    CitizenAgreement ba(Config(2, &*journal), 0);
    ba.OnProposal(a_, 0, Beta(100), 0);
    ba.SetVerdict(a_, true, 0);
    auto items = ba.Step(20);
    ASSERT_TRUE(items.ok());
    ASSERT_EQ(items->size(), 1u);
    // Already durable when handed out: a fresh reader of the file sees it.
    auto reread = agreement::VoteJournal::Open(path);
    ASSERT_TRUE(reread.ok());
    ASSERT_EQ(reread->RecordsFor(7).size(), 1u);
    EXPECT_EQ(reread->RecordsFor(7)[0].vote.value, agreement::Value::Of(a_));
  }
  // "Crash" and restart: a better valid proposal turns up, but period 0's soft vote is cast.
  auto journal = agreement::VoteJournal::Open(path);
  ASSERT_TRUE(journal.ok());
  CitizenAgreement restarted(Config(2, &*journal), 5000);
  restarted.OnProposal(c_, 0, Beta(1), 5000);
  restarted.SetVerdict(c_, true, 5000);
  for (uint64_t t = 5000; t < 5500; t += 50) {
    auto items = restarted.Step(t);
    ASSERT_TRUE(items.ok());
    for (const Vote& v : Votes(*items)) {
      if (v.step == VoteStep::kSoft && v.period == 0) {
        EXPECT_EQ(v.value, a_);
      }
    }
  }
}

TEST_F(CitizenAgreementTest, ACertVoteCarriesABlockSignatureForItsPeriod) {
  CitizenAgreement ba(Config(1, nullptr), 0);  // T = 1: its own soft vote is a quorum
  ba.OnProposal(a_, 0, Beta(9), 0);
  ba.SetVerdict(a_, true, 0);
  auto items = ba.Step(20);
  ASSERT_TRUE(items.ok());
  bool cert = false;
  for (const RoundItem& item : *items) {
    auto v = DecodeVote(AsBytes(item.payload()));
    ASSERT_TRUE(v.ok());
    if (v->step != VoteStep::kCert) continue;
    cert = true;
    Signature sig{};
    ASSERT_EQ(item.block_signature().size(), sig.size());
    std::copy(item.block_signature().begin(), item.block_signature().end(), sig.begin());
    EXPECT_TRUE(VerifyBlockSignature(7, 0, a_, keys_.public_key(), sig));
    EXPECT_FALSE(VerifyBlockSignature(7, 1, a_, keys_.public_key(), sig));
  }
  EXPECT_TRUE(cert);
  EXPECT_TRUE(ba.decided());
}

TEST_F(CitizenAgreementTest, CollidingCitizensVoteOnlyTheAdversarysValueAndJournalNothing) {
  const auto path = dir_ / "votes.journal";
  auto journal = agreement::VoteJournal::Open(path);
  ASSERT_TRUE(journal.ok());
  CitizenAgreement ba(Config(2, &*journal, CitizenFault::kCollude), 0);
  ba.OnProposal(a_, 0, Beta(9), 0);
  ba.SetVerdict(a_, true, 0);
  auto items = ba.Step(20);
  ASSERT_TRUE(items.ok());
  std::vector<Vote> votes = Votes(*items);
  EXPECT_EQ(votes.size(), 5u);  // one per step of period 0
  for (const Vote& v : votes) EXPECT_EQ(v.value, AdversaryValue(7));
  EXPECT_TRUE(journal->RecordsFor(7).empty());
}

// Issue #13's committee-64 finding: a full proposal ranked first whose pools are not yet
// eligible for this member (its verdict pending) must not lose the soft vote to an empty
// proposal that validated at once. Without the hold the member soft-votes b (the empty one)
// at the filter deadline.
TEST_F(CitizenAgreementTest, ABetterProposalAwaitingItsVerdictIsNotSkippedForAWorseValidOne) {
  CitizenAgreementConfig config = Config(3, nullptr);
  config.params.next_ms = 4000;
  config.better_proposal_wait_ms = 2000;
  CitizenAgreement ba(config, 0);
  ba.OnProposal(a_, 0, Beta(1), 0);    // full body, ranked first: pools not eligible yet
  ba.OnProposal(b_, 0, Beta(200), 0);  // the empty block, ranked second
  ba.SetVerdict(b_, true, 0);          // validated at once
  ExpectNoVoteBetween(ba, 10, 1500);
  ba.SetVerdict(a_, true, 1500);  // its pools became eligible
  ExpectSoftVoteFor(ba, 1510, a_);
}

// ... but only for a while: a better proposal that never gets a verdict (its pools withheld)
// does not stop the member from soft-voting the best valid one.
TEST_F(CitizenAgreementTest, ABetterProposalWithoutAVerdictDelaysTheSoftVoteOnlySoLong) {
  CitizenAgreementConfig config = Config(3, nullptr);
  config.params.next_ms = 4000;
  config.better_proposal_wait_ms = 2000;
  CitizenAgreement ba(config, 0);
  ba.OnProposal(a_, 0, Beta(1), 0);
  ba.OnProposal(b_, 0, Beta(200), 0);
  ba.SetVerdict(b_, true, 0);
  std::optional<Vote> soft;
  for (uint64_t t = 10; t < 3000 && !soft; t += 50) {
    auto items = ba.Step(t);
    ASSERT_TRUE(items.ok());
    for (const Vote& v : Votes(*items)) {
      soft = v;
      EXPECT_GE(t, 2000u);
    }
  }
  ASSERT_TRUE(soft.has_value());
  EXPECT_EQ(soft->value, b_);
}

// The proposals of a period arrive in a burst (each built after T_soft witness lists): the
// soft vote waits proposal_grace_ms after the first one, so a better proposal arriving just
// after a worse one still gets the vote (members seeing the burst in different orders voted
// differently, and with H = T a split costs the period).
TEST_F(CitizenAgreementTest, TheSoftVoteWaitsForTheRestOfTheProposalBurst) {
  CitizenAgreementConfig config = Config(3, nullptr);
  config.params.next_ms = 4000;
  config.proposal_grace_ms = 400;
  CitizenAgreement ba(config, 0);
  ba.OnProposal(b_, 0, Beta(200), 1000);  // the first of the burst, valid
  ba.SetVerdict(b_, true, 1000);
  ExpectNoVoteBetween(ba, 1000, 1300);
  ba.OnProposal(a_, 0, Beta(1), 1300);  // better, 300 ms later
  ba.SetVerdict(a_, true, 1300);
  ExpectSoftVoteFor(ba, 1450, a_);
}

// A proposer announces its ticket before it builds (ProposerTicket): past the short burst
// grace, a member waits for an announced better proposal that has not arrived...
TEST_F(CitizenAgreementTest, AnAnnouncedBetterProposalIsAwaitedPastTheBurstGrace) {
  const CitizenAgreementConfig config = AnnouncingConfig();
  CitizenAgreement ba(config, 0);
  ba.OnProposerTicket(0, Beta(1), 100);    // the best ticket, its block still being built
  ba.OnProposerTicket(0, Beta(200), 100);  // the worse one's block arrives first
  ba.OnProposal(b_, 0, Beta(200), 1000);
  ba.SetVerdict(b_, true, 1000);
  ExpectNoVoteBetween(ba, 1000, 1900);
  ba.OnProposal(a_, 0, Beta(1), 1900);
  ba.SetVerdict(a_, true, 1900);
  ExpectSoftVoteFor(ba, 1950, a_);
}

// ... and for nothing else: with the best announced proposal in hand the vote follows the
// burst grace (it waited a quarter of the next-vote deadline before the announcements), and a
// proposer that announces and never proposes delays it by announced_proposal_wait_ms only.
TEST_F(CitizenAgreementTest, WithTheBestAnnouncedProposalInHandTheVoteFollowsTheBurstGrace) {
  const CitizenAgreementConfig config = AnnouncingConfig();
  {
    CitizenAgreement ba(config, 0);
    ba.OnProposerTicket(0, Beta(1), 100);
    ba.OnProposerTicket(0, Beta(200), 100);  // a worse ticket: not waited for
    ba.OnProposal(a_, 0, Beta(1), 1000);
    ba.SetVerdict(a_, true, 1000);
    ExpectNoVoteBetween(ba, 1000, 1400);
    ExpectSoftVoteFor(ba, 1400, a_);
  }
  CitizenAgreement ba(config, 0);
  ba.OnProposerTicket(0, Beta(1), 100);  // announced, never proposed
  ba.OnProposal(b_, 0, Beta(200), 1000);
  ba.SetVerdict(b_, true, 1000);
  ExpectNoVoteBetween(ba, 1000, 3000);
  ExpectSoftVoteFor(ba, 3000, b_);
}

// An announcement of another period's ticket holds nothing in this one.
TEST_F(CitizenAgreementTest, AnotherPeriodsAnnouncedTicketDoesNotDelayTheVote) {
  const CitizenAgreementConfig config = AnnouncingConfig();
  CitizenAgreement ba(config, 0);
  ba.OnProposerTicket(1, Beta(1), 100);
  ba.OnProposal(b_, 0, Beta(200), 1000);
  ba.SetVerdict(b_, true, 1000);
  ExpectSoftVoteFor(ba, 1400, b_);
}

// Period 0 in which, silent_period_ms after it started, no proposer announced a ticket and no
// proposal arrived is given up at once: the next vote (bottom) goes out then, not at the
// next-vote deadline. A single announced ticket, of this period, keeps the wait; so does
// every later period.
TEST_F(CitizenAgreementTest, APeriodWithoutAnnouncedProposersIsGivenUpEarly) {
  CitizenAgreementConfig config = AnnouncingConfig();  // next-vote deadline 8 s
  config.silent_period_ms = 2000;
  auto next_votes = [](CitizenAgreement& ba, uint64_t t) {
    auto items = ba.Step(t);
    EXPECT_TRUE(items.ok());
    std::vector<Vote> next;
    for (const Vote& v : Votes(*items)) {
      if (v.step == VoteStep::kNext) next.push_back(v);
    }
    return next;
  };
  {
    CitizenAgreement silent(config, 0);
    silent.OnProposerTicket(2, Beta(1), 100);  // another period's: says nothing of period 0
    EXPECT_TRUE(next_votes(silent, 1950).empty());
    const std::vector<Vote> next = next_votes(silent, 2000);
    ASSERT_EQ(next.size(), 1u) << "given up at silent_period_ms, not at 8 s";
    EXPECT_TRUE(next[0].bottom);
    EXPECT_EQ(next[0].period, 0u);
    // Period 1 (after a bottom quorum) waits its whole deadline: a proposer may still be
    // building for period 0 and announce late.
    for (int i = 1; i <= 3; ++i) {
      Vote v{.height = 7, .period = 0, .step = VoteStep::kNext, .bottom = true};
      v.citizen = KeyPair::FromSeed(Sha256("other " + std::to_string(i))).public_key();
      silent.OnVote(v, 2100);
    }
    ASSERT_EQ(silent.period(), 1u);
    auto period1 = [&](uint64_t t) {  // its period-0 vote is re-sent meanwhile
      size_t n = 0;
      for (const Vote& v : next_votes(silent, t)) n += v.period == 1;
      return n;
    };
    for (uint64_t t = 2200; t < 2100 + 8000; t += 500) EXPECT_EQ(period1(t), 0u) << t;
    EXPECT_GE(period1(2100 + 8000), 1u);
  }
  {
    CitizenAgreement announced(config, 0);
    announced.OnProposerTicket(0, Beta(9), 1500);  // its block is on the way
    for (uint64_t t = 2000; t < 8000; t += 500) {
      EXPECT_TRUE(next_votes(announced, t).empty()) << t;
    }
    EXPECT_FALSE(next_votes(announced, 8000).empty());  // the deadline (and a re-send)
  }
  {
    config.silent_period_ms = 0;  // off: the deadline, as before
    CitizenAgreement off(config, 0);
    EXPECT_TRUE(next_votes(off, 7950).empty());
    EXPECT_FALSE(next_votes(off, 8000).empty());
  }
}

TEST_F(CitizenAgreementTest, WireAndPlayerVotesConvertBothWays) {
  Vote wire{.height = 3, .period = 4, .step = VoteStep::kDownNext, .bottom = true};
  wire.citizen = keys_.public_key();
  agreement::Vote v = ToAgreementVote(wire);
  EXPECT_TRUE(v.value.bottom);
  EXPECT_EQ(v.step, agreement::Step::kDownNext);
  EXPECT_EQ(ToWireVote(v), wire);
}

// Per-step committees (genesis.h VoteCommittees::kPerStep): a fake ticket per (period, step)
// that this citizen "won", so the test chooses the draws.
VrfProof FakeTicket(uint32_t period, agreement::Step step) {
  VrfProof p{};
  p[0] = static_cast<uint8_t>(step);
  p[1] = static_cast<uint8_t>(period);
  p[2] = 0xAB;
  return p;
}

TEST_F(CitizenAgreementTest, PerStepVotesAreSentOnlyInWonStepsWithThatStepsTicket) {
  const auto path = dir_ / "votes.journal";
  const std::set<std::pair<uint32_t, agreement::Step>> won = {{0, agreement::Step::kSoft}};
  auto tickets = [won](uint32_t period, agreement::Step step) -> std::optional<VrfProof> {
    if (!won.count({period, step})) return std::nullopt;
    return FakeTicket(period, step);
  };
  {
    auto journal = agreement::VoteJournal::Open(path);
    ASSERT_TRUE(journal.ok()) << journal.status();
    CitizenAgreementConfig c = Config(1, &*journal);  // T = 1: its own soft vote is a quorum
    c.vote_ticket = tickets;
    CitizenAgreement ba(c, 0);
    EXPECT_EQ(ba.VoteTicket(0, agreement::Step::kSoft), FakeTicket(0, agreement::Step::kSoft));
    EXPECT_EQ(ba.VoteTicket(0, agreement::Step::kCert), std::nullopt);
    ba.OnProposal(a_, 0, Beta(9), 0);
    ba.SetVerdict(a_, true, 0);
    auto items = ba.Step(20);
    ASSERT_TRUE(items.ok());
    // The soft vote, with the soft ticket; the cert vote it would cast on the soft quorum is
    // off its committee: journaled, never sent, and no certificate of its own.
    std::vector<Vote> votes = Votes(*items);
    ASSERT_EQ(votes.size(), 1u);
    EXPECT_EQ(votes[0].step, VoteStep::kSoft);
    EXPECT_EQ(votes[0].credential, FakeTicket(0, agreement::Step::kSoft));
    EXPECT_TRUE(VerifyVote(votes[0]));
    EXPECT_FALSE(ba.decided());
    auto reread = agreement::VoteJournal::Open(path);
    ASSERT_TRUE(reread.ok());
    std::vector<agreement::JournalRecord> records = reread->RecordsFor(7);
    ASSERT_EQ(records.size(), 2u);
    size_t unsent_cert = 0;
    for (const auto& r : records) {
      unsent_cert += r.vote.step == agreement::Step::kCert && !r.sent;
    }
    EXPECT_EQ(unsent_cert, 1u);
  }
  // Restarted: re-sends are of the sent vote only.
  auto journal = agreement::VoteJournal::Open(path);
  ASSERT_TRUE(journal.ok());
  CitizenAgreementConfig c = Config(1, &*journal);
  c.vote_ticket = tickets;
  CitizenAgreement ba(c, 1000);
  auto items = ba.Step(1000 + c.params.resend_ms);
  ASSERT_TRUE(items.ok());
  std::vector<Vote> votes = Votes(*items);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes[0].step, VoteStep::kSoft);
}

TEST_F(CitizenAgreementTest, PerStepAdversariesVoteOnlyInTheStepsTheyWon) {
  CitizenAgreementConfig c = Config(2, nullptr, CitizenFault::kCollude);
  c.vote_ticket = [](uint32_t period, agreement::Step step) -> std::optional<VrfProof> {
    if (step != agreement::Step::kCert) return std::nullopt;
    return FakeTicket(period, step);
  };
  CitizenAgreement ba(c, 0);
  auto items = ba.Step(20);
  ASSERT_TRUE(items.ok());
  std::vector<Vote> votes = Votes(*items);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes[0].step, VoteStep::kCert);
  EXPECT_EQ(votes[0].credential, FakeTicket(0, agreement::Step::kCert));
}

TEST_F(CitizenAgreementTest, MakeVoteTicketsDrawsEachStepOnceAsDrawVoteDoes) {
  SortitionParams params{.population = 10, .committee_size = 4};
  const Hash256 seed = Sha256("seed");
  VoteTicketFn tickets = MakeVoteTickets(&keys_, 7, seed, params);
  size_t won = 0;
  for (uint32_t period = 0; period < 4; ++period) {
    for (uint8_t s = 1; s <= 8; ++s) {
      const auto step = static_cast<agreement::Step>(s);
      auto t = DrawVote(keys_, 7, period, s, seed, params);
      ASSERT_TRUE(t.ok());
      std::optional<VrfProof> mine = tickets(period, step);
      EXPECT_EQ(mine.has_value(), t->selected);
      if (mine) {
        ++won;
        EXPECT_EQ(*mine, t->proof);
        EXPECT_TRUE(
            VerifyVoteTicket(keys_.public_key(), 7, period, s, seed, *mine, params)->selected);
      }
      EXPECT_EQ(tickets(period, step), mine);  // remembered
    }
  }
  EXPECT_GT(won, 0u);
  EXPECT_LT(won, 32u);
}

}  // namespace
}  // namespace tessera::ledger::net
