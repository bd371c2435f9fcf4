#include "ledger/state/state_proof.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger {
namespace {

Hash256 RandomKey(std::mt19937_64& rng) {
  Hash256 k;
  for (auto& b : k) b = static_cast<uint8_t>(rng());
  return k;
}

struct State {
  SparseMerkleTree tree;
  std::vector<Hash256> keys;
  std::map<Hash256, LeafValue> model;
};

State RandomState(std::mt19937_64& rng, int n) {
  State s;
  std::vector<LeafUpdate> updates;
  for (int i = 0; i < n; ++i) {
    Hash256 k = RandomKey(rng);
    LeafValue v = EncodeAccount({rng() % 1000, rng() % 10});
    updates.push_back({k, v});
    s.keys.push_back(k);
    s.model[k] = v;
  }
  s.tree = *SparseMerkleTree().Update(updates);
  return s;
}

StateProof RoundTrip(const StateProof& proof) {
  auto decoded = StateProof::Decode(AsBytes(proof.Encode()));
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->Encode(), proof.Encode());  // canonical: decode then encode is identity
  return *decoded;
}

// Property: proofs for random key sets (present and absent) verify against the right root and
// read the right values, and fail against any other root.
TEST(StateProofProperty, ProofsVerifyOnlyAgainstTheirRoot) {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    std::mt19937_64 rng(seed);
    State s = RandomState(rng, static_cast<int>(rng() % 300));
    SparseMerkleTree other = *s.tree.Update({{RandomKey(rng), LeafValue{9}}});
    std::vector<Hash256> query;
    int q = 1 + static_cast<int>(rng() % 20);
    for (int i = 0; i < q; ++i) {
      query.push_back(!s.keys.empty() && rng() % 2 ? s.keys[rng() % s.keys.size()]
                                                   : RandomKey(rng));
    }
    StateProof proof = RoundTrip(s.tree.Prove(query));
    auto values = proof.Verify(s.tree.root_hash(), query);
    ASSERT_TRUE(values.ok()) << values.status();
    for (size_t i = 0; i < query.size(); ++i) {
      auto it = s.model.find(query[i]);
      if (it == s.model.end()) {
        EXPECT_FALSE((*values)[i].has_value());
      } else {
        EXPECT_EQ((*values)[i], it->second);
      }
    }
    EXPECT_FALSE(proof.Verify(other.root_hash(), query).ok());
    Hash256 random_root = RandomKey(rng);
    EXPECT_FALSE(proof.Verify(random_root, query).ok());
  }
}

// Property: a multi-proof verifies and is smaller than the single proofs of its keys together.
TEST(StateProofProperty, MultiProofIsSmallerThanSingleProofs) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(100 + seed);
    State s = RandomState(rng, 2000);
    std::vector<Hash256> query;
    for (int i = 0; i < 50; ++i) query.push_back(s.keys[rng() % s.keys.size()]);
    for (int i = 0; i < 10; ++i) query.push_back(RandomKey(rng));
    std::sort(query.begin(), query.end());
    query.erase(std::unique(query.begin(), query.end()), query.end());
    StateProof multi = RoundTrip(s.tree.Prove(query));
    ASSERT_TRUE(multi.Verify(s.tree.root_hash(), query).ok());
    size_t singles = 0;
    for (const Hash256& k : query) {
      StateProof single = RoundTrip(s.tree.Prove(std::span(&k, 1)));
      ASSERT_TRUE(single.Verify(s.tree.root_hash(), std::span(&k, 1)).ok());
      singles += single.EncodedSize();
    }
    EXPECT_LT(multi.EncodedSize(), singles) << "seed " << seed;
    EXPECT_EQ(multi.EncodedSize(), multi.Encode().size());
  }
}

TEST(StateProofTest, KeyOutsideTheProofIsReported) {
  std::mt19937_64 rng(3);
  State s = RandomState(rng, 100);
  StateProof proof = s.tree.Prove(std::span(&s.keys[0], 1));
  auto result = proof.Verify(s.tree.root_hash(), std::span(&s.keys[1], 1));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("not covered"), std::string::npos);
}

// Property: the root a light client computes from old proofs plus new values equals the root
// the full tree reaches, for updates of present keys and insertions of absent ones.
TEST(StateProofProperty, RootTransitionMatchesTheFullTree) {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    std::mt19937_64 rng(200 + seed);
    State s = RandomState(rng, static_cast<int>(rng() % 500));
    std::map<Hash256, LeafValue> batch;
    int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      Hash256 k = !s.keys.empty() && rng() % 2 ? s.keys[rng() % s.keys.size()] : RandomKey(rng);
      batch[k] = EncodeAccount({rng() % 1000, rng() % 10});
    }
    std::vector<LeafUpdate> updates;
    std::vector<Hash256> touched;
    for (auto& [k, v] : batch) {
      updates.push_back({k, v});
      touched.push_back(k);
    }
    SparseMerkleTree after = *s.tree.Update(updates);
    StateProof proof = RoundTrip(s.tree.Prove(touched));
    auto root = proof.RootAfter(s.tree.root_hash(), updates);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(*root, after.root_hash()) << "seed " << seed;
    // A forged new value gives a different root.
    updates[0].value[0] ^= 1;
    EXPECT_NE(*proof.RootAfter(s.tree.root_hash(), updates), after.root_hash());
    // A proof against the wrong old root is refused.
    EXPECT_FALSE(proof.RootAfter(after.root_hash(), updates).ok());
  }
}

TEST(StateProofTest, RootTransitionNeedsEveryUpdatedKeyCovered) {
  std::mt19937_64 rng(5);
  State s = RandomState(rng, 200);
  StateProof proof = s.tree.Prove(std::span(&s.keys[0], 1));
  std::vector<LeafUpdate> updates = {{s.keys[0], LeafValue{1}}, {s.keys[1], LeafValue{2}}};
  auto result = proof.RootAfter(s.tree.root_hash(), updates);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("not covered"), std::string::npos);
}

TEST(StateProofDecode, EveryTruncationIsRejected) {
  std::mt19937_64 rng(9);
  State s = RandomState(rng, 300);
  std::vector<Hash256> query(s.keys.begin(), s.keys.begin() + 5);
  std::string bytes = s.tree.Prove(query).Encode();
  for (size_t len = 0; len < bytes.size(); ++len) {
    auto r = StateProof::Decode(AsBytes(std::string_view(bytes).substr(0, len)));
    ASSERT_FALSE(r.ok()) << "length " << len;
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status();
  }
  auto trailing = StateProof::Decode(AsBytes(bytes + "x"));
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().message().find("trailing"), std::string::npos);
}

TEST(StateProofDecode, FlippedBitsNeverVerify) {
  std::mt19937_64 rng(11);
  State s = RandomState(rng, 300);
  std::vector<Hash256> query(s.keys.begin(), s.keys.begin() + 3);
  std::string bytes = s.tree.Prove(query).Encode();
  // Every single-bit flip either fails to decode or fails to verify against the root.
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string bad = bytes;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    auto decoded = StateProof::Decode(AsBytes(bad));
    if (!decoded.ok()) continue;
    EXPECT_FALSE(decoded->Verify(s.tree.root_hash(), query).ok()) << "bit " << bit;
  }
}

TEST(StateProofDecode, NonCanonicalFormsAreRejected) {
  auto reject = [](std::string bytes, const char* why) {
    auto r = StateProof::Decode(AsBytes(bytes));
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status();
  };
  reject(std::string("\x02\x00\x00", 3), "non-canonical interior");
  std::string leaf = std::string("\x01", 1) + std::string(64, '\0');
  reject(std::string("\x02\x00", 2) + std::string("\x01", 1) + std::string(1, '\x80') +
             std::string(63, '\0'),
         "non-canonical interior");
  reject(std::string("\x03", 1) + std::string(32, '\0'), "opaque zero hash");
  reject("\x07", "unknown node tag");
  // A leaf whose key starts with bit 1 cannot sit in the left subtree.
  std::string right_key_leaf = std::string("\x01", 1) + std::string(1, '\x80') + std::string(63, 0);
  reject(std::string("\x02", 1) + right_key_leaf + std::string("\x03", 1) + std::string(32, 1),
         "does not lie under");
  // 257 nested interiors.
  reject(std::string(257, '\x02'), "below depth 256");
  EXPECT_TRUE(StateProof::Decode(AsBytes(leaf)).ok());
  EXPECT_TRUE(StateProof::Decode(AsBytes(std::string("\x00", 1))).ok());
}

}  // namespace
}  // namespace tessera::ledger
