#include "ledger/vote_sortition.h"

#include <gtest/gtest.h>

namespace tessera::ledger {
namespace {

KeyPair Citizen(uint32_t i) {
  Seed s{};
  for (int b = 0; b < 4; ++b) s[b] = static_cast<uint8_t>(i >> (8 * b));
  s[31] = 0x5a;
  return KeyPair::FromSeed(s);
}

// Vote committees are drawn per (height, period, step): a ticket verifies only for its own
// step, and the committees of different steps are different draws of about C members each.
TEST(VoteSortitionTest, TicketsAreBoundToPeriodAndStepAndRedrawn) {
  SortitionParams params{.population = 200, .committee_size = 50, .proposers = 10};
  Hash256 seed = NextSeed(Hash256{}, VrfOutput{});
  KeyPair k = Citizen(7);
  auto t = DrawVote(k, 5, 1, 2, seed, params);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(VerifyVoteTicket(k.public_key(), 5, 1, 2, seed, t->proof, params).ok());
  EXPECT_FALSE(VerifyVoteTicket(k.public_key(), 5, 1, 3, seed, t->proof, params).ok());
  EXPECT_FALSE(VerifyVoteTicket(k.public_key(), 5, 2, 2, seed, t->proof, params).ok());
  EXPECT_FALSE(VerifyTicket(k.public_key(), Role::kCommittee, 5, seed, t->proof, params).ok());
  int both = 0, n_soft = 0, n_cert = 0;
  for (uint32_t i = 0; i < params.population; ++i) {
    KeyPair c = Citizen(i);
    bool s = DrawVote(c, 5, 0, 1, seed, params)->selected;
    bool r = DrawVote(c, 5, 0, 2, seed, params)->selected;
    n_soft += s;
    n_cert += r;
    both += s && r;
  }
  // Each about 50 (sd ~6); independent draws share about 50 * 50 / 200 = 12.5 members, where
  // one committee per height would share all of them.
  EXPECT_NEAR(n_soft, 50, 25);
  EXPECT_NEAR(n_cert, 50, 25);
  EXPECT_LT(both, 30);
}

}  // namespace
}  // namespace tessera::ledger
