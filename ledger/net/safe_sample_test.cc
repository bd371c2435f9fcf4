// The safe sample under evidence (safe_sample.h): blacklisted politicians are asked last, never
// dropped, so evidence against four politicians of five does not leave a citizen one.
#include "ledger/net/safe_sample.h"

#include <gtest/gtest.h>

#include <set>

#include "ledger/crypto/hash.h"
#include "ledger/net/evidence.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) { return KeyPair::FromSeed(Sha256("safe sample key " + std::to_string(i))); }

Genesis FivePoliticians() {
  Genesis g;
  g.registrar = Key(100).public_key();
  for (uint32_t i = 0; i < 5; ++i) {
    g.politicians.push_back({i, Key(200 + i).public_key(), "127.0.0.1:" + std::to_string(1 + i)});
  }
  return g;
}

// Politician `id`'s genuine equivocation at `height`.
Evidence Equivocation(uint32_t id, uint64_t height) {
  auto commitment = [&](int variant) {
    TxPoolCommitment c{.politician_id = id,
                       .height = height,
                       .tx_count = 1,
                       .pool_hash = Sha256("pool " + std::to_string(variant))};
    SignTxPoolCommitment(c, Key(200 + id));
    return c;
  };
  return *PoolEquivocation(commitment(1), commitment(2));
}

TEST(SafeSampleTest, BlacklistedPoliticiansComeLastAndTheSampleKeepsItsSize) {
  const Genesis g = FivePoliticians();
  Blacklist blacklist(g);
  for (uint32_t id : {0u, 1u, 3u, 4u}) ASSERT_TRUE(blacklist.Add(Equivocation(id, 10), 11).ok());
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    // k = all (0) and k = 5: the whole set, the honest politician first.
    for (uint32_t k : {0u, 5u}) {
      auto sample = DrawSafeSample(5, k, blacklist, 12, rng);
      ASSERT_EQ(sample.size(), 5u) << "evidence shrank the sample";
      EXPECT_EQ(sample[0], 2u);
      EXPECT_EQ(std::set<uint32_t>(sample.begin(), sample.end()).size(), 5u);
    }
    // k = 2: the politician not blacklisted is always in it, first.
    auto two = DrawSafeSample(5, 2, blacklist, 12, rng);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0], 2u);
    EXPECT_NE(two[1], 2u);
  }
  // Once the blacklisting has run out, every politician is drawn first sometimes.
  std::set<uint32_t> firsts;
  for (int trial = 0; trial < 200; ++trial) {
    firsts.insert(DrawSafeSample(5, 5, blacklist, 10 + kBlacklistBlocks + 1, rng)[0]);
  }
  EXPECT_EQ(firsts.size(), 5u);
}

}  // namespace
}  // namespace tessera::ledger::net
