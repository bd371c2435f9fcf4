// Evidence and blacklisting (evidence.h, blacklist.h): genuine pool equivocation is proved to
// anyone holding the genesis, forged evidence against an honest politician is refused by the
// decoder, by VerifyEvidence, by the blacklist and by a politician (which never relays it),
// and a restarted honest politician never signs a second pool for a height.
#include "ledger/net/evidence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "ledger/crypto/hash.h"
#include "ledger/net/blacklist.h"
#include "ledger/net/politician.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) { return KeyPair::FromSeed(Sha256("evidence test key " + std::to_string(i))); }

Genesis SmallGenesis() {
  Genesis g;
  g.registrar = Key(100).public_key();
  g.sortition.population = g.sortition.committee_size = g.sortition.proposers = 4;
  g.sortition.seed_lookback = 1;
  g.cert_threshold = g.soft_threshold = 3;
  for (uint32_t i = 0; i < 3; ++i) {
    g.politicians.push_back({i, Key(200 + i).public_key(), "127.0.0.1:" + std::to_string(1 + i)});
  }
  g.accounts.push_back({Key(300).public_key(), 1000});
  return g;
}

// A commitment of politician `id` for `height` to the pool named by `variant`, signed by
// `signer` (the politician's own key unless framing).
TxPoolCommitment Commitment(uint32_t id, uint64_t height, int variant, const KeyPair& signer) {
  TxPoolCommitment c{.politician_id = id,
                     .height = height,
                     .tx_count = 1,
                     .pool_hash = Sha256("pool " + std::to_string(variant))};
  SignTxPoolCommitment(c, signer);
  return c;
}

Evidence Genuine(uint32_t id, uint64_t height) {
  return *PoolEquivocation(Commitment(id, height, 1, Key(200 + id)),
                           Commitment(id, height, 2, Key(200 + id)));
}

TEST(EvidenceTest, EncodingIsCanonicalAndStrict) {
  const Evidence e = Genuine(1, 7);
  const std::string wire = EncodeEvidence(e);
  EXPECT_EQ(wire.size(), 228u);
  auto back = DecodeEvidence(AsBytes(wire));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);
  EXPECT_EQ(back->politician_id(), 1u);
  EXPECT_EQ(back->height(), 7u);
  // Either order of the commitments gives the same evidence (one lie, one encoding).
  EXPECT_EQ(EncodeEvidence(*PoolEquivocation(e.second, e.first)), wire);

  auto refused = [](const std::string& bytes, const std::string& why) {
    auto d = DecodeEvidence(AsBytes(bytes));
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << why;
    EXPECT_NE(d.status().ToString().find("evidence"), std::string::npos) << d.status();
  };
  refused("", "empty");
  refused(wire.substr(0, 227), "truncated");
  refused(wire + "x", "trailing byte");
  refused(wire + std::string(1 << 20, 'x'), "oversized");
  std::string kind = wire;
  kind[1] = 2;
  refused(kind, "unknown kind");
  std::string type = wire;
  type[0] = 2;
  refused(type, "wrong type");
  const std::string a = EncodeTxPoolCommitment(e.first), b = EncodeTxPoolCommitment(e.second);
  refused(wire.substr(0, 2) + b + a, "out of order");
  refused(wire.substr(0, 2) + a + a, "the same commitment twice");
  refused(wire.substr(0, 2) + a + EncodeTxPoolCommitment(Commitment(2, 7, 2, Key(202))),
          "two politicians");
  refused(wire.substr(0, 2) + a + EncodeTxPoolCommitment(Commitment(1, 8, 2, Key(201))),
          "two heights");
  // Same body, another signature bit: not two statements.
  TxPoolCommitment resigned = e.first;
  resigned.signature[0] ^= 1;
  EXPECT_FALSE(PoolEquivocation(e.first, resigned).ok());
}

TEST(EvidenceTest, ForgedEvidenceAgainstAnHonestPoliticianIsRefused) {
  const Genesis g = SmallGenesis();
  EXPECT_TRUE(VerifyEvidence(Genuine(1, 3), g).ok());
  // Politician 2 (or anyone) signs two pools in politician 0's name.
  auto framed = PoolEquivocation(Commitment(0, 3, 1, Key(202)), Commitment(0, 3, 2, Key(202)));
  ASSERT_TRUE(framed.ok());
  EXPECT_EQ(VerifyEvidence(*framed, g).code(), StatusCode::kPermissionDenied);
  // One genuine commitment of politician 0 and one forged.
  auto half = PoolEquivocation(Commitment(0, 3, 1, Key(200)), Commitment(0, 3, 2, Key(202)));
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(VerifyEvidence(*half, g).code(), StatusCode::kPermissionDenied);
  // A politician the genesis does not know.
  EXPECT_EQ(VerifyEvidence(Genuine(9, 3), g).code(), StatusCode::kPermissionDenied);

  Blacklist blacklist(g, 10);
  EXPECT_FALSE(blacklist.Add(*framed, 3).ok());
  EXPECT_FALSE(blacklist.Add(*half, 3).ok());
  EXPECT_FALSE(blacklist.AddEncoded(AsBytes(std::string(228, '\x08')), 3).ok());
  EXPECT_FALSE(blacklist.Blocked(0, 3));
  EXPECT_TRUE(blacklist.Active(3).empty());
}

TEST(EvidenceTest, BlacklistLastsItsTimeAndNeverEmptiesTheSample) {
  const Genesis g = SmallGenesis();
  Blacklist blacklist(g, 10);
  auto added = blacklist.Add(Genuine(1, 5), 6);
  ASSERT_TRUE(added.ok());
  EXPECT_TRUE(*added);                             // news: relay it
  EXPECT_FALSE(*blacklist.Add(Genuine(1, 5), 6));  // known: nothing to relay
  EXPECT_FALSE(*blacklist.Add(Genuine(1, 4), 6));  // older evidence: the newest is kept
  EXPECT_TRUE(blacklist.Blocked(1, 6));
  EXPECT_TRUE(blacklist.Blocked(1, 15));
  EXPECT_FALSE(blacklist.Blocked(1, 16));  // 10 blocks after the evidence's height
  EXPECT_FALSE(blacklist.Blocked(0, 6));
  EXPECT_EQ(blacklist.BlockedAt(6), std::vector<uint32_t>{1});
  ASSERT_EQ(blacklist.Active(6).size(), 1u);
  EXPECT_EQ(blacklist.Active(6)[0], EncodeEvidence(Genuine(1, 5)));
  EXPECT_TRUE(blacklist.Active(16).empty());
  EXPECT_TRUE(*blacklist.Add(Genuine(1, 20), 16));  // caught again later: blacklisted again

  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    auto sample = blacklist.Sample({0, 1, 2}, 3, 16, rng);
    EXPECT_EQ(sample.size(), 2u);
    EXPECT_EQ(std::count(sample.begin(), sample.end(), 1u), 0);
  }
  ASSERT_TRUE(blacklist.Add(Genuine(0, 20), 16).ok());
  ASSERT_TRUE(blacklist.Add(Genuine(2, 20), 16).ok());
  // Every politician blacklisted (impossible with one honest one): sample them all again.
  EXPECT_EQ(blacklist.Sample({0, 1, 2}, 3, 16, rng).size(), 3u);
}

class PoliticianEvidenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.id = 0;
    options_.genesis = SmallGenesis();
    options_.keys = Key(200);
    options_.dir =
        std::filesystem::temp_directory_path() / ("evidence_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(options_.dir);
    Reopen();
  }
  void TearDown() override {
    node_.reset();
    std::filesystem::remove_all(options_.dir);
  }
  void Reopen() {
    node_.reset();
    auto node = PoliticianNode::Open(options_);
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
  }
  std::string Post(uint64_t height, const std::string& payload) {
    PostRequest req;
    req.set_height(height);
    req.mutable_item()->set_payload(payload);
    PostReply rep;
    node_->Post(req, &rep);
    return rep.accepted() ? "" : rep.error();
  }
  std::vector<std::string> Round(uint64_t height) {
    RoundRequest req;
    req.set_height(height);
    RoundReply rep;
    node_->GetRound(req, &rep);
    std::vector<std::string> out;
    for (const RoundItem& item : rep.items()) out.push_back(item.payload());
    return out;
  }
  PoliticianOptions options_;
  std::unique_ptr<PoliticianNode> node_;
};

TEST_F(PoliticianEvidenceTest, RelaysGenuineEvidenceAndRefusesForgedEvidence) {
  auto framed = PoolEquivocation(Commitment(1, 1, 1, Key(202)), Commitment(1, 1, 2, Key(202)));
  EXPECT_NE(Post(1, EncodeEvidence(*framed)).find("not its own"), std::string::npos);
  EXPECT_NE(Post(1, std::string(5, '\x08')).find("evidence"), std::string::npos);
  const std::string genuine = EncodeEvidence(Genuine(2, 1));
  EXPECT_EQ(Post(1, genuine), "");
  auto round = Round(1);
  EXPECT_EQ(std::count(round.begin(), round.end(), genuine), 1);
  EXPECT_EQ(std::count(round.begin(), round.end(), EncodeEvidence(*framed)), 0);
}

TEST_F(PoliticianEvidenceTest, ARestartedPoliticianNeverSignsASecondPoolForAHeight) {
  auto own = [&](const std::vector<std::string>& items) {
    std::vector<TxPoolCommitment> mine;
    for (const std::string& p : items) {
      auto c = DecodeTxPoolCommitment(AsBytes(p));
      if (c.ok() && c->politician_id == 0) mine.push_back(*c);
    }
    return mine;
  };
  Transaction tx{.from = Key(300).public_key(), .to = Key(400).public_key(), .amount = 1};
  SignTransaction(tx, Key(300));
  TxRequest submit;
  submit.set_tx(EncodeLedgerTx(tx));
  TxReply submitted;
  node_->SubmitTransaction(submit, &submitted);
  ASSERT_TRUE(submitted.accepted()) << submitted.error();
  auto before = own(Round(1));
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].tx_count, 1u);
  // A crash loses the mempool: frozen again, height 1's pool would be empty -- a second,
  // different commitment. The restarted politician signs none for height 1.
  Reopen();
  EXPECT_TRUE(own(Round(1)).empty());
}

}  // namespace
}  // namespace tessera::ledger::net
