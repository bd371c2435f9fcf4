// Proposer tickets are ranked by period first: a ticket of a later period (where winners are
// plentiful) never outranks an earlier period's, and is not considered before the member's own
// period reaches it; VerifyProposal names the ticket's period.
#include <gtest/gtest.h>

#include "ledger/crypto/hash.h"
#include "ledger/net/chain.h"
#include "ledger/net/registration.h"

namespace tessera::ledger::net {
namespace {

VrfOutput Beta(uint8_t first) {
  VrfOutput b{};
  b[0] = first;
  return b;
}

TEST(ProposalOrderTest, EarliestPeriodFirstAndNothingFromLaterPeriods) {
  std::vector<ProposalRank> c = {{0, Beta(9)}, {1, Beta(1)}, {0, Beta(5)}, {3, Beta(0)}};
  EXPECT_EQ(ProposalOrder(c, 0), (std::vector<size_t>{2, 0}));
  EXPECT_EQ(ProposalOrder(c, 1), (std::vector<size_t>{2, 0, 1}));
  EXPECT_EQ(ProposalOrder(c, 7), (std::vector<size_t>{2, 0, 1, 3}));
  EXPECT_TRUE(ProposalOrder({}, 3).empty());
}

TEST(ProposalOrderTest, VerifyProposalNamesTheTicketsPeriod) {
  KeyPair registrar = KeyPair::FromSeed(Sha256("period test registrar"));
  Genesis g;
  g.registrar = registrar.public_key();
  g.sortition.population = 64;
  g.sortition.committee_size = 64;
  g.sortition.proposers = 1;  // period p expects 2^p winners of 64
  g.sortition.seed_lookback = 1;
  g.accounts.push_back({KeyPair::FromSeed(Sha256("acct")).public_key(), 1});
  BlockHeader prev = *g.GenesisHeader();
  int checked = 0;
  for (int i = 0; i < 400 && checked < 3; ++i) {
    KeyPair k = KeyPair::FromSeed(Sha256("period test citizen " + std::to_string(i)));
    // The first period this key's ticket wins.
    std::optional<uint32_t> first;
    std::optional<Ticket> ticket;
    for (uint32_t p = 0; p < kMaxProposerPeriods && !first; ++p) {
      auto t =
          Draw(k, Role::kProposer, 1, ProposerSeed(prev.seed, p), ProposerParams(g.sortition, p));
      ASSERT_TRUE(t.ok());
      if (t->selected) {
        first = p;
        ticket = *t;
      }
    }
    if (!first || *first < 2) continue;  // want tickets of later periods
    Identity id{.citizen = k.public_key(), .registered_at = 0};
    SignIdentity(id, registrar);
    BlockHeader h;
    h.height = 1;
    h.prev_hash = BlockHash(prev);
    SetRegistrations(g, prev, {}, &h);
    h.seed = NextSeed(prev.seed, ticket->output);
    h.proposer = k.public_key();
    h.proposer_credential = ticket->proof;
    uint32_t period = 99;
    auto beta = VerifyProposal(g, prev, h, id, &period);
    ASSERT_TRUE(beta.ok()) << beta.status();
    EXPECT_EQ(period, *first);
    EXPECT_EQ(*beta, ticket->output);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace tessera::ledger::net
