#include "ledger/crypto/vrf_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace tessera::ledger {
namespace {

// Eight threads of one process (a citizen daemon's citizens) check the same ticket, three
// times each: one verification runs, and every answer is the beta verifying without the cache
// gives. Seen failing with VrfVerify bypassing the active cache (24 verifications).
TEST(VrfCacheTest, ThreadsSharingACacheVerifyATicketOnce) {
  const KeyPair keys = KeyPair::Generate();
  const std::string alpha = "committee ticket, height 7";
  const Result<VrfProof> proof = VrfProve(keys, AsBytes(alpha));
  ASSERT_TRUE(proof.ok());
  const Result<VrfOutput> expected = VrfVerify(keys.public_key(), AsBytes(alpha), *proof);
  ASSERT_TRUE(expected.ok());
  VrfCache shared(64);
  const uint64_t before = VrfVerificationsComputed();
  std::vector<std::thread> threads;
  std::vector<int> matches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      VrfCache::Scope scope(&shared);
      for (int i = 0; i < 3; ++i) {
        Result<VrfOutput> beta = VrfVerify(keys.public_key(), AsBytes(alpha), *proof);
        matches[t] += beta.ok() && *beta == *expected;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int m : matches) EXPECT_EQ(m, 3);
  EXPECT_EQ(VrfVerificationsComputed() - before, 1u);
  const OnceCacheStats stats = shared.stats();
  EXPECT_EQ(stats.computed, 1u);
  EXPECT_EQ(stats.hits + stats.joined, 23u);
}

// A kept verification answers only for its own (key, alpha, proof): the proof under another
// input or another key is verified (and refused), and a refused proof is refused again each
// time it comes (failures are not kept). Outside a Scope nothing is cached.
TEST(VrfCacheTest, AKeptVerificationAnswersOnlyForItsOwnInput) {
  const KeyPair keys = KeyPair::Generate(), other = KeyPair::Generate();
  const Result<VrfProof> proof = VrfProve(keys, AsBytes(std::string("height 7")));
  ASSERT_TRUE(proof.ok());
  VrfCache shared(64);
  {
    VrfCache::Scope scope(&shared);
    EXPECT_TRUE(VrfVerify(keys.public_key(), AsBytes(std::string("height 7")), *proof).ok());
    const uint64_t before = VrfVerificationsComputed();
    for (int i = 0; i < 2; ++i) {
      EXPECT_FALSE(VrfVerify(keys.public_key(), AsBytes(std::string("height 8")), *proof).ok());
      EXPECT_FALSE(VrfVerify(other.public_key(), AsBytes(std::string("height 7")), *proof).ok());
    }
    EXPECT_EQ(VrfVerificationsComputed() - before, 4u);
  }
  const uint64_t before = VrfVerificationsComputed();
  EXPECT_TRUE(VrfVerify(keys.public_key(), AsBytes(std::string("height 7")), *proof).ok());
  EXPECT_EQ(VrfVerificationsComputed() - before, 1u);
}

}  // namespace
}  // namespace tessera::ledger
