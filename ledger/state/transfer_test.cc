#include "ledger/state/transfer.h"

#include <gtest/gtest.h>

#include <random>

namespace tessera::ledger {
namespace {

struct World {
  std::vector<KeyPair> keys;
  SparseMerkleTree tree;
};

World MakeWorld(int n, uint64_t balance) {
  World w;
  std::vector<LeafUpdate> genesis;
  for (int i = 0; i < n; ++i) {
    Seed s{};
    s[0] = static_cast<uint8_t>(i);
    s[1] = static_cast<uint8_t>(i >> 8);
    w.keys.push_back(KeyPair::FromSeed(s));
    genesis.push_back({AccountKey(w.keys.back().public_key()), EncodeAccount({balance, 0})});
  }
  w.tree = *SparseMerkleTree().Update(genesis);
  return w;
}

Transaction Tx(const KeyPair& from, const PublicKey& to, uint64_t amount, uint64_t nonce) {
  Transaction tx{.to = to, .amount = amount, .nonce = nonce};
  SignTransaction(tx, from);
  return tx;
}

TEST(TransferTest, AppliesValidTransfersAndSkipsInvalidOnes) {
  World w = MakeWorld(3, 100);
  const auto& a = w.keys[0];
  const auto& b = w.keys[1];
  PublicKey newcomer = KeyPair::FromSeed(Seed{99}).public_key();
  std::vector<Transaction> txs = {
      Tx(a, b.public_key(), 30, 0),  // ok
      Tx(a, b.public_key(), 30, 0),  // replayed nonce
      Tx(a, newcomer, 50, 1),        // ok, creates an account
      Tx(a, b.public_key(), 21, 2),  // insufficient (20 left)
      Tx(b, b.public_key(), 1, 0),   // self
      Tx(b, a.public_key(), 0, 0),   // zero
  };
  Transaction forged = Tx(b, a.public_key(), 5, 0);
  forged.amount = 6;
  txs.push_back(forged);
  auto out = ApplyTransfers(TreeLookup(w.tree), txs, true);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->applied, 2u);
  ASSERT_EQ(out->rejected.size(), 5u);
  EXPECT_EQ(out->rejected[0].first, 1u);
  EXPECT_NE(out->rejected[0].second.find("nonce"), std::string::npos);
  EXPECT_EQ(out->rejected[4].second, "bad signature");
  SparseMerkleTree after = *w.tree.Update(out->updates);
  EXPECT_EQ(*DecodeAccount(*after.Get(AccountKey(a.public_key()))), (Account{20, 2}));
  EXPECT_EQ(*DecodeAccount(*after.Get(AccountKey(b.public_key()))), (Account{130, 0}));
  EXPECT_EQ(*DecodeAccount(*after.Get(AccountKey(newcomer))), (Account{50, 0}));
  EXPECT_EQ(after.size(), 4u);
}

// Property: a light client holding only the old root and a multi-proof of the touched accounts
// computes the same new root as the full state, and detects a politician's wrong root.
TEST(TransferProperty, LightClientReachesTheSameRoot) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    World w = MakeWorld(60, 1000);
    std::vector<uint64_t> nonces(w.keys.size(), 0);
    std::vector<Transaction> txs;
    for (int i = 0; i < 80; ++i) {
      size_t from = rng() % w.keys.size();
      PublicKey to = rng() % 5 == 0
                         ? KeyPair::FromSeed(Seed{static_cast<uint8_t>(rng()), 1}).public_key()
                         : w.keys[rng() % w.keys.size()].public_key();
      txs.push_back(Tx(w.keys[from], to, 1 + rng() % 400, nonces[from]));
      if (rng() % 4) nonces[from]++;  // sometimes reuse a nonce: must be rejected
    }
    auto full = *ApplyTransfers(TreeLookup(w.tree), txs, true);
    SparseMerkleTree after = *w.tree.Update(full.updates);

    StateProof proof = *StateProof::Decode(AsBytes(w.tree.Prove(TouchedKeys(txs)).Encode()));
    auto light = ApplyTransfers(ProofLookup(proof, w.tree.root_hash()), txs, true);
    ASSERT_TRUE(light.ok()) << light.status();
    EXPECT_EQ(light->applied, full.applied);
    auto root = proof.RootAfter(w.tree.root_hash(), light->updates);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(*root, after.root_hash()) << "seed " << seed;

    // A proof of one account does not cover the rest of the block.
    std::vector<Hash256> partial = TouchedKeys(txs);
    partial.resize(1);
    StateProof short_proof = w.tree.Prove(partial);
    EXPECT_FALSE(ApplyTransfers(ProofLookup(short_proof, w.tree.root_hash()), txs, true).ok());
  }
}

}  // namespace
}  // namespace tessera::ledger
