// A politician's flood limits on pools and pool commitments (issue #12's data-availability
// bounds): pools over max_pool_txs, for heights too far ahead, or a third pool of one
// politician for one height are refused, and so is a third commitment; a certified block's
// pools are still taken (they must stay appliable).
#include <gtest/gtest.h>
#include <unistd.h>

#include "ledger/crypto/ed25519.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/politician.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) { return KeyPair::FromSeed(Sha256("flood test key " + std::to_string(i))); }

class PoliticianFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Genesis g;
    g.registrar = Key(100).public_key();
    g.sortition.population = g.sortition.committee_size = g.sortition.proposers = 4;
    g.sortition.seed_lookback = 1;
    g.cert_threshold = g.soft_threshold = 3;
    g.max_pool_txs = 3;
    for (uint32_t i = 0; i < 2; ++i) {
      g.politicians.push_back({i, Key(200 + i).public_key(), "127.0.0.1:" + std::to_string(1 + i)});
    }
    g.accounts.push_back({Key(300).public_key(), 1000});
    PoliticianOptions o;
    o.id = 0;
    o.genesis = g;
    o.keys = Key(200);
    o.dir = std::filesystem::temp_directory_path() / ("flood_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(o.dir);
    dir_ = o.dir;
    auto node = PoliticianNode::Open(o);
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
  }
  void TearDown() override {
    node_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A pool of politician 1 for `height`: `count` transfers to a receiver named by `variant`.
  static Pool MakePool(uint64_t height, int variant, int count, int claimed = -1) {
    std::vector<LedgerTx> txs;
    for (int i = 0; i < count; ++i) {
      Transaction tx{
          .to = Key(400 + variant).public_key(), .amount = 1, .nonce = static_cast<uint64_t>(i)};
      SignTransaction(tx, Key(300));
      txs.push_back(tx);
    }
    TxPoolCommitment c{.politician_id = 1,
                       .height = height,
                       .tx_count = static_cast<uint32_t>(claimed >= 0 ? claimed : count),
                       .pool_hash = PoolHash(txs)};
    SignTxPoolCommitment(c, Key(201));
    Pool pool;
    pool.set_commitment(EncodeTxPoolCommitment(c));
    for (const LedgerTx& tx : txs) pool.add_txs(EncodeLedgerTx(tx));
    return pool;
  }
  std::string PostPool(const Pool& pool) {
    PostReply rep;
    node_->PostPool(pool, &rep);
    return rep.accepted() ? "" : rep.error();
  }
  std::string PostCommitment(const Pool& pool) {
    PostRequest req;
    req.set_height(1);
    req.mutable_item()->set_payload(pool.commitment());
    PostReply rep;
    node_->Post(req, &rep);
    return rep.accepted() ? "" : rep.error();
  }
  std::filesystem::path dir_;
  std::unique_ptr<PoliticianNode> node_;
};

TEST_F(PoliticianFloodTest, RefusesOversizedFarAheadAndThirdPools) {
  EXPECT_NE(PostPool(MakePool(1, 0, 4)).find("over max_pool_txs 3"), std::string::npos);
  EXPECT_NE(PostPool(MakePool(5, 0, 1)).find("too far ahead"), std::string::npos);
  EXPECT_NE(PostPool(MakePool(1, 0, 1, /*claimed=*/2)).find("commitment says 2"),
            std::string::npos);
  EXPECT_EQ(PostPool(MakePool(1, 0, 1)), "");
  EXPECT_EQ(PostPool(MakePool(1, 0, 1)), "");  // the same pool again is fine
  EXPECT_EQ(PostPool(MakePool(1, 1, 1)), "");  // a second: equivocation evidence, kept
  EXPECT_NE(PostPool(MakePool(1, 2, 1)).find("already signed two pools"), std::string::npos);
  EXPECT_EQ(PostPool(MakePool(2, 2, 1)), "");  // another height has its own limit
}

// How far ahead a commitment may be: only the next two heights are being agreed, and a
// commitment is taken only in the round of its own height.
TEST_F(PoliticianFloodTest, RefusesCommitmentsFarAheadOrForAnotherRound) {
  auto post = [&](uint64_t round, const Pool& pool) {
    PostRequest req;
    req.set_height(round);
    req.mutable_item()->set_payload(pool.commitment());
    PostReply rep;
    node_->Post(req, &rep);
    return rep.accepted() ? "" : rep.error();
  };
  EXPECT_EQ(post(2, MakePool(2, 0, 1)), "");  // latest is 0: heights 1 and 2 are open
  EXPECT_NE(post(3, MakePool(3, 0, 1)).find("not being agreed"), std::string::npos);
  EXPECT_NE(post(1000000, MakePool(1000000, 0, 1)).find("not being agreed"), std::string::npos);
  EXPECT_NE(post(1, MakePool(2, 1, 1)).find("invalid pool commitment"), std::string::npos);
}

TEST_F(PoliticianFloodTest, RefusesAThirdCommitmentForOneHeight) {
  EXPECT_EQ(PostCommitment(MakePool(1, 0, 1)), "");
  EXPECT_EQ(PostCommitment(MakePool(1, 1, 1)), "");
  EXPECT_NE(PostCommitment(MakePool(1, 2, 1)).find("already has two commitments"),
            std::string::npos);
}

// What a flood costs an honest politician: N validly signed commitments of one politician for
// one height (the flood adversary signs 2,000) are refused by the per-politician cap before
// their signatures are checked, so the signature checks stay at the two it keeps, whatever N.
TEST_F(PoliticianFloodTest, AFloodOfCommitmentsCostsTwoSignatureChecks) {
  constexpr int kFlood = 300;
  std::vector<std::string> flood;
  for (int i = 0; i < kFlood; ++i) {
    TxPoolCommitment c{.politician_id = 1,
                       .height = 1,
                       .tx_count = 0,
                       .pool_hash = Sha256("flood test " + std::to_string(i))};
    SignTxPoolCommitment(c, Key(201));
    flood.push_back(EncodeTxPoolCommitment(c));
  }
  const uint64_t before = VerificationsComputed();
  int accepted = 0;
  for (const std::string& commitment : flood) {
    PostRequest req;
    req.set_height(1);
    req.mutable_item()->set_payload(commitment);
    PostReply rep;
    node_->Post(req, &rep);
    accepted += rep.accepted();
  }
  EXPECT_EQ(accepted, 2);
  EXPECT_EQ(VerificationsComputed() - before, 2u);
}

}  // namespace
}  // namespace tessera::ledger::net
