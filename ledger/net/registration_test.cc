// Registration on the chain and the live population (registration.h): the header fields'
// strict codec, the rules every node checks from the parent header alone, and what the live
// count buys -- registrations after genesis change the lottery and the threshold at later
// heights, so a committee drawn from a grown population cannot certify two blocks.
#include "ledger/net/registration.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ledger/crypto/hash.h"
#include "ledger/net/chain.h"
#include "ledger/net/validation_sample.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) { return KeyPair::FromSeed(Sha256("registration key " + std::to_string(i))); }

// A chain whose genesis registers `genesis_citizens` citizens, committee C = that count (so the
// genesis committee is everyone), delay 2, T from the genesis file.
struct TestChain {
  explicit TestChain(int genesis_citizens, int later) {
    // Signers use the height's committee ticket (the lottery the population changes).
    g.vote_committees = VoteCommittees::kPerHeight;
    g.registrar = registrar.public_key();
    g.sortition.population = genesis_citizens;
    g.sortition.committee_size = genesis_citizens;
    g.sortition.proposers = genesis_citizens;
    g.sortition.seed_lookback = 1;
    g.registration_delay = 2;
    g.cert_threshold = g.soft_threshold =
        static_cast<uint32_t>(DesignThreshold(genesis_citizens, genesis_citizens)->threshold);
    g.witness_threshold = 1;
    g.politicians.push_back({0, Key(1000).public_key(), "127.0.0.1:1"});
    g.accounts.push_back({Key(1001).public_key(), 1000});
    for (int i = 0; i < genesis_citizens + later; ++i) {
      keys.push_back(Key(i));
      registered_at.push_back(i < genesis_citizens ? 0 : kNotYet);
    }
    chain.push_back(*g.GenesisHeader());
  }
  static constexpr uint64_t kNotYet = ~uint64_t{0};

  Identity IdOf(size_t i) const {
    Identity id{.citizen = keys[i].public_key(), .registered_at = registered_at[i]};
    SignIdentity(id, registrar);
    return id;
  }
  Identity RegistrationFor(size_t i, uint64_t height) const {
    Identity id{.citizen = keys[i].public_key(), .registered_at = height};
    SignIdentity(id, registrar);
    return id;
  }
  const BlockHeader& Head() const { return chain.back(); }

  // Block Head().height + 1 with `registrations`, proposed by the first registered citizen
  // whose proposer ticket wins some period, certified by every citizen in `signers` (their
  // certificate entries sorted; tickets drawn with the LIVE parameters, selected or not).
  CertifiedBlockData Next(const std::vector<Identity>& registrations,
                          const std::vector<size_t>& signers, uint8_t salt = 0) const {
    const BlockHeader& prev = Head();
    const uint64_t h = prev.height + 1;
    const SortitionParams params = SortitionAt(g, prev);
    CertifiedBlockData b;
    b.header.height = h;
    b.header.prev_hash = BlockHash(prev);
    SetRegistrations(g, prev, registrations, &b.header);
    b.header.state_root = prev.state_root;
    b.header.state_root[0] ^= salt;  // two conflicting blocks differ here
    for (size_t i = 0; i < keys.size() && b.identities.empty(); ++i) {
      if (registered_at[i] == kNotYet || !EligibleAt(IdOf(i), h, g.registration_delay)) continue;
      for (uint32_t p = 0; p < kMaxProposerPeriods; ++p) {
        auto t = *Draw(keys[i], Role::kProposer, h, ProposerSeed(prev.seed, p),
                       ProposerParams(params, p));
        if (!t.selected) continue;
        b.header.proposer = keys[i].public_key();
        b.header.proposer_credential = t.proof;
        b.header.seed = NextSeed(prev.seed, t.output);
        b.identities.push_back(IdOf(i));
        break;
      }
    }
    b.certificate.height = h;
    b.certificate.block_hash = BlockHash(b.header);
    std::vector<size_t> sorted = signers;
    std::sort(sorted.begin(), sorted.end(),
              [&](size_t a, size_t c) { return keys[a].public_key() < keys[c].public_key(); });
    for (size_t i : sorted) {
      auto t = *Draw(keys[i], Role::kCommittee, h, prev.seed, params);
      b.certificate.signers.push_back(
          {keys[i].public_key(), t.proof, SignBlock(h, 0, b.certificate.block_hash, keys[i])});
      if (b.header.proposer != keys[i].public_key()) b.identities.push_back(IdOf(i));
    }
    return b;
  }
  // Verifies and appends; marks the block's registrations as registered.
  Status Append(const CertifiedBlockData& b) {
    TESSERA_RETURN_IF_ERROR(VerifyCertifiedBlock(g, Head(), b));
    for (const ledger::Registration& r : b.header.registrations) {
      for (size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].public_key() == r.citizen) registered_at[i] = b.header.height;
      }
    }
    chain.push_back(b.header);
    return Status::Ok();
  }
  std::vector<size_t> Range(size_t from, size_t to) const {
    std::vector<size_t> v;
    for (size_t i = from; i < to; ++i) v.push_back(i);
    return v;
  }

  Genesis g;
  KeyPair registrar = Key(999);
  std::vector<KeyPair> keys;
  std::vector<uint64_t> registered_at;
  std::vector<BlockHeader> chain;
};

TEST(RegistrationTest, HeaderFieldsRoundTripAndTheDecoderIsStrict) {
  TestChain c(4, 3);
  CertifiedBlockData b = c.Next(
      {c.RegistrationFor(4, 1), c.RegistrationFor(5, 1), c.RegistrationFor(6, 1)}, c.Range(0, 4));
  ASSERT_EQ(b.header.registrations.size(), 3u);
  EXPECT_EQ(b.header.registered_through, (std::vector<uint64_t>{4, 7}));
  const std::string wire = EncodeBlockHeader(b.header);
  auto back = DecodeBlockHeader(AsBytes(wire));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, b.header);
  // Registrations out of order, or one listed twice.
  BlockHeader bad = b.header;
  std::swap(bad.registrations[0], bad.registrations[1]);
  EXPECT_NE(DecodeBlockHeader(AsBytes(EncodeBlockHeader(bad))).status().message().find("strictly"),
            std::string::npos);
  bad = b.header;
  bad.registrations[1] = bad.registrations[0];
  EXPECT_FALSE(DecodeBlockHeader(AsBytes(EncodeBlockHeader(bad))).ok());
  // Counts that decrease; a count list longer than any delay; truncation; trailing bytes.
  bad = b.header;
  bad.registered_through = {7, 4};
  EXPECT_NE(DecodeBlockHeader(AsBytes(EncodeBlockHeader(bad))).status().message().find("decreases"),
            std::string::npos);
  bad = b.header;
  bad.registered_through.assign(kMaxRegistrationDelay + 1, 1);
  EXPECT_FALSE(DecodeBlockHeader(AsBytes(EncodeBlockHeader(bad))).ok());
  EXPECT_FALSE(DecodeBlockHeader(AsBytes(wire.substr(0, wire.size() - 1))).ok());
  EXPECT_FALSE(DecodeBlockHeader(AsBytes(wire + "x")).ok());
  // A forged registration count (2^32 - 1 entries) is refused before anything is allocated.
  std::string huge = wire.substr(0, wire.size() - 4 - 3 * 96);
  huge += std::string("\xff\xff\xff\xff", 4);
  EXPECT_NE(DecodeBlockHeader(AsBytes(huge)).status().message().find("exceeds the limit"),
            std::string::npos);
}

TEST(RegistrationTest, EveryNodeChecksRegistrationsFromTheParentHeaderAlone) {
  TestChain c(4, 3);
  const BlockHeader& genesis = c.Head();
  EXPECT_EQ(genesis.registered_through, (std::vector<uint64_t>{4, 4}));
  EXPECT_EQ(PopulationAfter(genesis), 4u);
  CertifiedBlockData ok = c.Next({c.RegistrationFor(4, 1)}, c.Range(0, 4));
  EXPECT_TRUE(CheckRegistrations(c.g, genesis, ok.header).ok());
  // Signed for another height: SetRegistrations drops it, CheckRegistrations refuses it.
  CertifiedBlockData b = c.Next({c.RegistrationFor(4, 2)}, c.Range(0, 4));
  EXPECT_TRUE(b.header.registrations.empty());
  b.header.registrations.push_back({c.keys[4].public_key(), c.RegistrationFor(4, 2).signature});
  b.header.registered_through = {4, 5};
  EXPECT_EQ(CheckRegistrations(c.g, genesis, b.header).code(), StatusCode::kPermissionDenied);
  // Not the registrar's signature.
  b = ok;
  Identity forged = c.RegistrationFor(4, 1);
  SignIdentity(forged, Key(12345));
  b.header.registrations[0].signature = forged.signature;
  EXPECT_EQ(CheckRegistrations(c.g, genesis, b.header).code(), StatusCode::kPermissionDenied);
  // A miscount: one registration, counted as two (or not at all).
  b = ok;
  b.header.registered_through = {4, 6};
  EXPECT_NE(CheckRegistrations(c.g, genesis, b.header).message().find("miscounts"),
            std::string::npos);
  b.header.registered_through = {4, 4};
  EXPECT_FALSE(CheckRegistrations(c.g, genesis, b.header).ok());
  // Every verifier of a certified block runs it (chain.h): a miscounted block is refused even
  // with a valid certificate over its hash.
  b = ok;
  b.header.registered_through = {4, 6};
  EXPECT_NE(VerifyCertifiedBlock(c.g, genesis, b).message().find("miscounts"), std::string::npos)
      << VerifyCertifiedBlock(c.g, genesis, b);
  // A parent whose count list does not match the chain's delay.
  BlockHeader odd = genesis;
  odd.registered_through = {4};
  EXPECT_FALSE(CheckRegistrations(c.g, odd, ok.header).ok());
}

// Registrations in block r join the population of block r + d (d = 2), exactly the blocks their
// identities are eligible for (identity.h EligibleAt), and the threshold follows the tool.
TEST(RegistrationTest, RegistrationsAfterGenesisChangeTheLotteryAndThresholdAtLaterHeights) {
  TestChain c(8, 24);
  ASSERT_EQ(c.g.cert_threshold, 6u);  // ledger-thresholds --committee 8 --fixed
  std::vector<Identity> regs;
  for (size_t i = 8; i < 32; ++i) regs.push_back(c.RegistrationFor(i, 1));
  {
    Status s = c.Append(c.Next(regs, c.Range(0, 8)));  // block 1 registers 24
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(c.Head().registered_through, (std::vector<uint64_t>{8, 32}));
  EXPECT_EQ(ParamsAt(c.g, c.chain[0]).validation_sample, EffectiveValidationSample(c.g));
  HeightParams at2 = ParamsAt(c.g, c.Head());
  EXPECT_EQ(at2.sortition.population, 8u);  // block 2: the new citizens are not eligible yet
  EXPECT_EQ(at2.cert_threshold, 6u);
  ASSERT_TRUE(c.Append(c.Next({}, c.Range(0, 8))).ok());
  HeightParams at3 = ParamsAt(c.g, c.Head());
  EXPECT_EQ(at3.sortition.population, 32u);  // block 3 = 1 + delay: all 32
  // T for the live population is ledger-thresholds' (the same code), not the genesis T: an
  // expected committee of 8 out of 32 is random, and no T meets 1e-9 there, so the 2/3 rule.
  auto designed = DesignThreshold(32, 8);
  EXPECT_EQ(at3.cert_threshold, designed.ok() ? designed->threshold : 2u * 8 / 3 + 1);
  // The validation sample follows too: sound for the random committee and its T.
  auto sound = agreement::SoundSampleFraction(DesignCommitteeModel(32, 8), at3.cert_threshold,
                                              kInvalidBlockBudget);
  EXPECT_EQ(at3.validation_sample, sound.ok() ? *sound : 1.0);
  // The lottery at block 3: about C = 8 members of 32, not everyone (as the genesis count 8
  // would make it: 8 / 8 = every citizen selected).
  size_t selected = 0;
  for (const KeyPair& k : c.keys) {
    selected += Draw(k, Role::kCommittee, 3, c.Head().seed, at3.sortition)->selected;
  }
  EXPECT_LT(selected, 16u);
  EXPECT_GT(selected, 0u);
  // A large population: the threshold is the tool's choice at that population.
  HeightParams big = ThresholdsFor(c.g, 1000000);
  Genesis blockene = c.g;
  blockene.sortition.committee_size = 5784;
  EXPECT_EQ(ThresholdsFor(blockene, 1000000).cert_threshold, 3934u);  // docs' tool figure
  EXPECT_EQ(big.sortition.population, 1000000u);
}

// The safety property the live count protects: after the population grows from 8 to 32, two
// halves of it sign two different blocks for height 3. With the genesis count every citizen
// is on the committee, so both 16-signer certificates would pass the genesis T = 6 -- a fork.
// With the live count only the citizens the lottery selects count, and the two certificates
// cannot both verify.
TEST(RegistrationTest, AGrownPopulationCannotCertifyTwoBlocksForOneHeight) {
  TestChain c(8, 24);
  std::vector<Identity> regs;
  for (size_t i = 8; i < 32; ++i) regs.push_back(c.RegistrationFor(i, 1));
  ASSERT_TRUE(c.Append(c.Next(regs, c.Range(0, 8))).ok());
  ASSERT_TRUE(c.Append(c.Next({}, c.Range(0, 8))).ok());
  CertifiedBlockData a = c.Next({}, c.Range(0, 16), 1);
  CertifiedBlockData b = c.Next({}, c.Range(16, 32), 2);
  ASSERT_NE(BlockHash(a.header), BlockHash(b.header));
  ASSERT_EQ(a.certificate.signers.size(), 16u);
  const bool a_ok = VerifyCertifiedBlock(c.g, c.Head(), a).ok();
  const bool b_ok = VerifyCertifiedBlock(c.g, c.Head(), b).ok();
  EXPECT_FALSE(a_ok && b_ok) << "two certified blocks for height 3";
  // And the chain still moves: the selected members of all 32 certify one block.
  CertifiedBlockData all = c.Next({}, c.Range(0, 32), 3);
  EXPECT_TRUE(VerifyCertifiedBlock(c.g, c.Head(), all).ok());
}

}  // namespace
}  // namespace tessera::ledger::net
