#include "ledger/crypto/signature_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace tessera::ledger {
namespace {

struct Signed {
  KeyPair keys = KeyPair::Generate();
  std::string message;
  Signature sig;
};

Signed Make(const std::string& message) {
  Signed s;
  s.message = message;
  s.sig = Sign(s.keys, "test", AsBytes(s.message));
  return s;
}

TEST(SignatureCacheTest, VerifiesOnceThenAnswersFromTheCache) {
  SignatureCache cache(64);
  Signed s = Make("pay 7 to bob");
  SignatureCache::Scope scope(&cache);
  const uint64_t computed = VerificationsComputed();
  EXPECT_TRUE(Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig));
  EXPECT_TRUE(Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig));
  EXPECT_TRUE(Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig));
  EXPECT_EQ(VerificationsComputed() - computed, 1u);  // the curve arithmetic ran once
  SignatureCache::Stats st = cache.stats();
  EXPECT_EQ(st.misses, 1u);
  EXPECT_EQ(st.hits, 2u);
  EXPECT_EQ(st.size, 1u);
}

TEST(SignatureCacheTest, AHitNeedsTheExactTriple) {
  SignatureCache cache(64);
  Signed s = Make("pay 7 to bob");
  SignatureCache::Scope scope(&cache);
  ASSERT_TRUE(Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig));
  // Same key and signature, other message / domain / key: all verified afresh, all invalid.
  EXPECT_FALSE(Verify(s.keys.public_key(), "test", AsBytes(std::string("pay 8 to bob")), s.sig));
  EXPECT_FALSE(Verify(s.keys.public_key(), "vote", AsBytes(s.message), s.sig));
  EXPECT_FALSE(Verify(KeyPair::Generate().public_key(), "test", AsBytes(s.message), s.sig));
  Signature flipped = s.sig;
  flipped[5] ^= 1;
  EXPECT_FALSE(Verify(s.keys.public_key(), "test", AsBytes(s.message), flipped));
  EXPECT_EQ(cache.stats().hits, 0u);
}

TEST(SignatureCacheTest, FailuresAreNeverCached) {
  SignatureCache cache(64);
  Signed s = Make("m");
  Signature forged = s.sig;
  forged[0] ^= 0x40;
  SignatureCache::Scope scope(&cache);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(Verify(s.keys.public_key(), "test", AsBytes(s.message), forged));
  }
  EXPECT_EQ(cache.stats().size, 0u);
  EXPECT_EQ(cache.stats().misses, 3u);
}

TEST(SignatureCacheTest, WithoutAScopeEveryCallVerifies) {
  SignatureCache cache(64);
  Signed s = Make("m");
  {
    SignatureCache::Scope scope(&cache);
    EXPECT_EQ(SignatureCache::Active(), &cache);
    {
      SignatureCache::Scope none(nullptr);  // a nested scope without a cache
      EXPECT_EQ(SignatureCache::Active(), nullptr);
      EXPECT_TRUE(Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig));
    }
    EXPECT_EQ(SignatureCache::Active(), &cache);
  }
  EXPECT_EQ(SignatureCache::Active(), nullptr);
  EXPECT_TRUE(Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig));
  EXPECT_EQ(cache.stats().hits + cache.stats().misses, 0u);
  // Another thread does not see this thread's scope.
  SignatureCache::Scope scope(&cache);
  SignatureCache* seen = &cache;
  std::thread([&] { seen = SignatureCache::Active(); }).join();
  EXPECT_EQ(seen, nullptr);
}

TEST(SignatureCacheTest, StaysWithinCapacityAndKeepsWhatIsInUse) {
  constexpr size_t kCapacity = 100;
  SignatureCache cache(kCapacity);
  Hash256 hot = SignatureCache::EntryOf(PublicKey{1}, AsBytes(std::string("hot")), Signature{});
  cache.Insert(hot);
  for (int i = 0; i < 10000; ++i) {
    cache.Insert(SignatureCache::EntryOf(PublicKey{2}, AsBytes(std::to_string(i)), Signature{}));
    ASSERT_LE(cache.stats().size, kCapacity);
    if (i % 20 == 0) {
      ASSERT_TRUE(cache.Lookup(hot)) << i;  // used often: never evicted
    }
  }
  EXPECT_GT(cache.stats().evictions, 9000u);
  // Cold entries age out.
  EXPECT_FALSE(
      cache.Lookup(SignatureCache::EntryOf(PublicKey{2}, AsBytes(std::string("0")), Signature{})));
}

TEST(SignatureCacheTest, ConcurrentUseIsConsistent) {
  SignatureCache cache(1 << 12);
  std::vector<Signed> msgs;
  for (int i = 0; i < 32; ++i) msgs.push_back(Make("m" + std::to_string(i)));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      SignatureCache::Scope scope(&cache);
      for (int round = 0; round < 4; ++round) {
        for (const Signed& s : msgs) {
          if (!Verify(s.keys.public_key(), "test", AsBytes(s.message), s.sig)) ++wrong;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache.stats().size, msgs.size());
  EXPECT_EQ(cache.stats().hits + cache.stats().misses, 4u * 4 * msgs.size());
}

}  // namespace
}  // namespace tessera::ledger
