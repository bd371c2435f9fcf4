#include "ledger/state/sparse_merkle_tree.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "ledger/crypto/hash.h"

namespace tessera::ledger {
namespace {

using internal::InteriorHash;
using internal::KeyBit;
using internal::LeafHash;

Hash256 RandomKey(std::mt19937_64& rng) {
  Hash256 k;
  for (auto& b : k) b = static_cast<uint8_t>(rng());
  return k;
}
LeafValue RandomValue(std::mt19937_64& rng) { return EncodeAccount({rng() % 1000000, rng() % 50}); }

// The root straight from the definition in tree_node.h, written independently of the tree.
Hash256 ReferenceRoot(const std::vector<std::pair<Hash256, LeafValue>>& leaves, int depth) {
  if (leaves.empty()) return Hash256{};
  if (leaves.size() == 1) return LeafHash(leaves[0].first, leaves[0].second);
  std::vector<std::pair<Hash256, LeafValue>> zero, one;
  for (const auto& l : leaves) (KeyBit(l.first, depth) ? one : zero).push_back(l);
  return InteriorHash(ReferenceRoot(zero, depth + 1), ReferenceRoot(one, depth + 1));
}
Hash256 ReferenceRoot(const std::map<Hash256, LeafValue>& state) {
  return ReferenceRoot(std::vector<std::pair<Hash256, LeafValue>>(state.begin(), state.end()), 0);
}

TEST(SparseMerkleTreeTest, EmptyTreeHasZeroRoot) {
  SparseMerkleTree tree;
  EXPECT_EQ(tree.root_hash(), Hash256{});
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_FALSE(tree.Get(Hash256{}).has_value());
}

TEST(SparseMerkleTreeTest, SingleLeafRootIsItsLeafHash) {
  Hash256 key = Sha256("alice");
  LeafValue value = EncodeAccount({100, 0});
  SparseMerkleTree tree = *SparseMerkleTree().Update({{key, value}});
  EXPECT_EQ(tree.root_hash(), LeafHash(key, value));
  EXPECT_EQ(tree.Get(key), value);
}

TEST(SparseMerkleTreeTest, KeysSharingLongPrefixesAndNeighbouringKeys) {
  // Keys that differ only in their last bit force a 256-deep path.
  Hash256 a{}, b{};
  b[31] = 1;
  Hash256 c{};
  c[0] = 0x80;
  std::map<Hash256, LeafValue> state = {
      {a, EncodeAccount({1, 0})}, {b, EncodeAccount({2, 0})}, {c, EncodeAccount({3, 0})}};
  std::vector<LeafUpdate> updates;
  for (auto& [k, v] : state) updates.push_back({k, v});
  SparseMerkleTree tree = *SparseMerkleTree().Update(updates);
  EXPECT_EQ(tree.root_hash(), ReferenceRoot(state));
  std::vector<Hash256> keys = {a, b, c, Sha256("absent")};
  StateProof proof = tree.Prove(keys);
  auto decoded = StateProof::Decode(AsBytes(proof.Encode()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  auto values = decoded->Verify(tree.root_hash(), keys);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ((*values)[1], EncodeAccount({2, 0}));
  EXPECT_FALSE((*values)[3].has_value());
}

TEST(SparseMerkleTreeTest, DuplicateKeysInABatchAreRejected) {
  Hash256 k = Sha256("k");
  auto result = SparseMerkleTree().Update({{k, LeafValue{}}, {k, LeafValue{1}}});
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

// Property: for random states built in random batches, the root matches the definition, is
// independent of how updates were batched, and Get agrees with a std::map.
TEST(SparseMerkleTreeProperty, RootMatchesDefinitionUnderRandomBatches) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::map<Hash256, LeafValue> model;
    std::vector<Hash256> keys;
    SparseMerkleTree batched, one_by_one;
    int batches = 1 + static_cast<int>(rng() % 6);
    for (int b = 0; b < batches; ++b) {
      std::map<Hash256, LeafValue> batch;
      int n = static_cast<int>(rng() % 120);
      for (int i = 0; i < n; ++i) {
        Hash256 key =
            (!keys.empty() && rng() % 3 == 0) ? keys[rng() % keys.size()] : RandomKey(rng);
        batch[key] = RandomValue(rng);
      }
      std::vector<LeafUpdate> updates;
      for (auto& [k, v] : batch) {
        updates.push_back({k, v});
        if (!model.count(k)) keys.push_back(k);
        model[k] = v;
      }
      std::shuffle(updates.begin(), updates.end(), rng);
      batched = *batched.Update(updates);
      for (const auto& u : updates) one_by_one = *one_by_one.Update({u});
    }
    ASSERT_EQ(batched.root_hash(), ReferenceRoot(model)) << "seed " << seed;
    ASSERT_EQ(one_by_one.root_hash(), batched.root_hash()) << "seed " << seed;
    ASSERT_EQ(batched.size(), model.size());
    for (auto& [k, v] : model) ASSERT_EQ(batched.Get(k), v);
    ASSERT_FALSE(batched.Get(RandomKey(rng)).has_value());
    size_t visited = 0;
    Hash256 last{};
    batched.ForEach([&](const Hash256& k, const LeafValue& v) {
      if (visited++ > 0) {
        EXPECT_LT(last, k);
      }
      last = k;
      EXPECT_EQ(model.at(k), v);
    });
    EXPECT_EQ(visited, model.size());
  }
}

TEST(SparseMerkleTreeTest, OldVersionsStayIntact) {
  std::mt19937_64 rng(7);
  std::vector<LeafUpdate> updates;
  for (int i = 0; i < 50; ++i) updates.push_back({RandomKey(rng), RandomValue(rng)});
  SparseMerkleTree v1 = *SparseMerkleTree().Update(updates);
  Hash256 root1 = v1.root_hash();
  SparseMerkleTree v2 = *v1.Update({{updates[3].key, EncodeAccount({42, 42})}});
  EXPECT_NE(v2.root_hash(), root1);
  EXPECT_EQ(v1.root_hash(), root1);
  EXPECT_EQ(v1.Get(updates[3].key), updates[3].value);
  EXPECT_EQ(v2.Get(updates[3].key), EncodeAccount({42, 42}));
}

}  // namespace
}  // namespace tessera::ledger
