// The politicians' vote store: dedupe, equivocation evidence kept but bounded, far-future
// periods refused, and certificates that never mix periods.
#include "ledger/net/vote_relay.h"

#include <gtest/gtest.h>

#include "ledger/crypto/hash.h"

namespace tessera::ledger::net {
namespace {

Vote V(uint8_t voter, uint32_t period, VoteStep step, const Hash256& value, bool bottom = false) {
  Vote v{.height = 5, .period = period, .step = step, .bottom = bottom, .value = value};
  v.citizen[0] = voter;
  return v;
}

TEST(VoteRelayTest, DedupesAndKeepsOneEquivocationButNotMore) {
  VoteRelay relay;
  const Hash256 a = Sha256("a"), b = Sha256("b"), c = Sha256("c");
  EXPECT_TRUE(relay.Admit(V(1, 0, VoteStep::kSoft, a), 3).ok());
  EXPECT_EQ(relay.Admit(V(1, 0, VoteStep::kSoft, a), 3).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(relay.Admit(V(1, 0, VoteStep::kSoft, b), 3).ok());  // evidence: relayed
  Status third = relay.Admit(V(1, 0, VoteStep::kSoft, c), 3);
  EXPECT_EQ(third.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(third.message().find("two values"), std::string::npos);
  EXPECT_TRUE(relay.Admit(V(1, 0, VoteStep::kCert, c), 3).ok());  // another step
  EXPECT_EQ(relay.votes(), 3u);
}

TEST(VoteRelayTest, FarFuturePeriodsAreRefusedUntilANextQuorumMovesTheWindow) {
  VoteRelay relay;
  const Hash256 a = Sha256("a");
  const uint32_t far = VoteRelay::kMaxPeriodsAhead + 1;
  EXPECT_EQ(relay.Admit(V(1, far, VoteStep::kSoft, a), 3).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(relay.Admit(V(1, VoteRelay::kMaxPeriodsAhead, VoteStep::kSoft, a), 3).ok());
  // A bottom next quorum (3 voters) in period 1: the network is in period 2 at least.
  for (uint8_t voter : {1, 2}) {
    ASSERT_TRUE(relay.Admit(V(voter, 1, VoteStep::kNext, Hash256{}, true), 3).ok());
  }
  EXPECT_EQ(relay.floor_period(), 0u);
  ASSERT_TRUE(relay.Admit(V(3, 1, VoteStep::kNext, Hash256{}, true), 3).ok());
  EXPECT_EQ(relay.floor_period(), 2u);
  EXPECT_TRUE(relay.Admit(V(1, far, VoteStep::kSoft, a), 3).ok());
}

TEST(VoteRelayTest, ARepeatedNextRoundQuorumMovesTheWindowAsTheFirstNextStepDoes) {
  // Per-step committees: a next step whose committee was short is repeated as step 6, 7, ...
  // with fresh committees; a quorum there ends the period for the relay too.
  VoteRelay relay;
  const VoteStep round3 = static_cast<VoteStep>(static_cast<uint8_t>(VoteStep::kDownNext) + 3);
  for (uint8_t voter : {1, 2, 3}) {
    ASSERT_TRUE(relay.Admit(V(voter, 0, round3, Hash256{}, true), 3).ok());
  }
  EXPECT_EQ(relay.floor_period(), 1u);
  // One voter, two rounds: separate steps, each stored once.
  EXPECT_TRUE(relay.Admit(V(1, 0, static_cast<VoteStep>(kMaxVoteStep), Hash256{}, true), 3).ok());
  EXPECT_EQ(relay.votes(), 4u);
}

TEST(VoteRelayTest, CertificatesCountSignersOfOnePeriodOnly) {
  VoteRelay relay;
  const Hash256 a = Sha256("a");
  auto cert = [&](uint8_t voter, uint32_t period) {
    Vote v = V(voter, period, VoteStep::kCert, a);
    ASSERT_TRUE(relay.Admit(v, 3).ok());
    relay.AddCertSigner(v, CertificateSigner{.citizen = v.citizen}, Identity{.citizen = v.citizen});
  };
  cert(1, 0);
  cert(2, 0);
  cert(3, 1);  // three signers for `a`, but across two periods
  EXPECT_TRUE(relay.CertifiableValues(3).empty());
  cert(4, 1);
  cert(5, 1);
  auto c = relay.CertifiableValues(3);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].period, 1u);
  EXPECT_EQ(c[0].value, a);
  EXPECT_EQ(c[0].signers.size(), 3u);
}

}  // namespace
}  // namespace tessera::ledger::net
