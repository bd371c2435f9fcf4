#include "ledger/sortition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tessera::ledger {
namespace {

KeyPair Citizen(uint32_t i) {
  Seed s{};
  for (int b = 0; b < 4; ++b) s[b] = static_cast<uint8_t>(i >> (8 * b));
  s[31] = 0x5a;
  return KeyPair::FromSeed(s);
}

TEST(SortitionTest, ThresholdIsExactAtTheEdges) {
  VrfOutput zero{}, max;
  max.fill(0xff);
  EXPECT_TRUE(IsSelected(zero, 1, 1000));
  EXPECT_FALSE(IsSelected(max, 999, 1000));
  EXPECT_TRUE(IsSelected(max, 1000, 1000));  // expected >= population: everyone
  EXPECT_FALSE(IsSelected(zero, 0, 1000));
  EXPECT_FALSE(IsSelected(zero, 5, 0));
  // expected / population = 1/2: top64 < 2^63 exactly.
  VrfOutput half{};
  half[0] = 0x80;
  EXPECT_FALSE(IsSelected(half, 1, 2));
  half[0] = 0x7f;
  for (int i = 1; i < 8; ++i) half[i] = 0xff;
  EXPECT_TRUE(IsSelected(half, 1, 2));
}

TEST(SortitionTest, CommitteeSizeMatchesExpectationAndTicketsVerify) {
  SortitionParams params{.population = 400, .committee_size = 100, .proposers = 10};
  Hash256 seed = NextSeed(Hash256{}, VrfOutput{});
  int selected = 0;
  for (uint32_t i = 0; i < params.population; ++i) {
    KeyPair k = Citizen(i);
    Ticket t = *Draw(k, Role::kCommittee, 7, seed, params);
    auto seen = VerifyTicket(k.public_key(), Role::kCommittee, 7, seed, t.proof, params);
    ASSERT_TRUE(seen.ok()) << seen.status();
    EXPECT_EQ(seen->selected, t.selected);
    EXPECT_EQ(seen->output, t.output);
    selected += t.selected;
  }
  // Binomial(400, 1/4): mean 100, sd 8.7; 5 sd either side (deterministic keys and seed).
  EXPECT_GT(selected, 100 - 44);
  EXPECT_LT(selected, 100 + 44);
}

TEST(SortitionTest, TicketIsBoundToKeyRoleHeightAndSeed) {
  SortitionParams params{.population = 10, .committee_size = 10, .proposers = 10};
  Hash256 seed{1};
  KeyPair k = Citizen(1);
  Ticket t = *Draw(k, Role::kCommittee, 5, seed, params);
  EXPECT_TRUE(VerifyTicket(k.public_key(), Role::kCommittee, 5, seed, t.proof, params).ok());
  EXPECT_FALSE(
      VerifyTicket(Citizen(2).public_key(), Role::kCommittee, 5, seed, t.proof, params).ok());
  EXPECT_FALSE(VerifyTicket(k.public_key(), Role::kProposer, 5, seed, t.proof, params).ok());
  EXPECT_FALSE(VerifyTicket(k.public_key(), Role::kCommittee, 6, seed, t.proof, params).ok());
  EXPECT_FALSE(VerifyTicket(k.public_key(), Role::kCommittee, 5, Hash256{2}, t.proof, params).ok());
  EXPECT_FALSE(Draw(k, Role::kCommittee, 5, seed, SortitionParams{}).ok());
}

TEST(SortitionTest, SeedsChainAndDependOnTheProposerOutput) {
  Hash256 s0{};
  VrfOutput a{}, b{};
  b[0] = 1;
  EXPECT_NE(NextSeed(s0, a), NextSeed(s0, b));
  EXPECT_NE(NextSeed(NextSeed(s0, a), a), NextSeed(s0, a));
  EXPECT_EQ(NextSeed(s0, a), NextSeed(s0, a));
}

TEST(SortitionTest, LowestValidProposerWins) {
  SortitionParams params{.population = 30, .committee_size = 10, .proposers = 30};
  Hash256 seed{3};
  std::vector<ProposerClaim> claims;
  std::vector<VrfOutput> outputs;
  for (uint32_t i = 0; i < 6; ++i) {
    KeyPair k = Citizen(100 + i);
    Ticket t = *Draw(k, Role::kProposer, 9, seed, params);
    claims.push_back({k.public_key(), t.proof});
    outputs.push_back(t.output);
  }
  size_t lowest = std::min_element(outputs.begin(), outputs.end()) - outputs.begin();
  EXPECT_EQ(*SelectProposer(claims, 9, seed, params), lowest);
  // A forged claim for the winner's slot is ignored, and the next lowest wins.
  claims[lowest].proof[40] ^= 1;
  size_t winner = *SelectProposer(claims, 9, seed, params);
  EXPECT_NE(winner, lowest);
  claims.clear();
  EXPECT_EQ(SelectProposer(claims, 9, seed, params).status().code(), StatusCode::kNotFound);
}

TEST(SortitionTest, CommitteeCertificateCountsOnlyValidSelectedSigners) {
  SortitionParams params{.population = 40, .committee_size = 20, .proposers = 5};
  Hash256 seed{4};
  CommitteeCertificate cert{.height = 12, .block_hash = Hash256{9}, .signers = {}};
  size_t members = 0;
  for (uint32_t i = 0; i < params.population; ++i) {
    KeyPair k = Citizen(200 + i);
    Ticket t = *Draw(k, Role::kCommittee, cert.height, seed, params);
    // Unselected citizens sign too; they must not count.
    cert.signers.push_back(
        {k.public_key(), t.proof, SignBlock(cert.height, cert.period, cert.block_hash, k)});
    members += t.selected;
  }
  ASSERT_GT(members, 5u);
  EXPECT_EQ(*VerifyCommitteeCertificate(cert, seed, params, members), members);
  EXPECT_EQ(VerifyCommitteeCertificate(cert, seed, params, members + 1).status().code(),
            StatusCode::kFailedPrecondition);
  // A wrong seed invalidates every ticket.
  EXPECT_FALSE(VerifyCommitteeCertificate(cert, Hash256{5}, params, 1).ok());
  // Registration filter.
  EXPECT_FALSE(VerifyCommitteeCertificate(cert, seed, params, 1, [](const PublicKey&) {
                 return false;
               }).ok());
}

}  // namespace
}  // namespace tessera::ledger
