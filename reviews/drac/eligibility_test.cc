#include "reviews/drac/eligibility.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tessera::reviews::drac {
namespace {

std::vector<urs::Point> Keys(size_t n) {
  std::vector<urs::Point> keys;
  for (size_t i = 0; i < n; ++i) keys.push_back(urs::GenerateKeyPair().public_key);
  return keys;
}

Seed SeedOf(uint8_t b) {
  Seed s;
  s.fill(b);
  return s;
}

TEST(Drac, Threshold) {
  EXPECT_FALSE(Threshold({0, 10}).ok());
  EXPECT_FALSE(Threshold({5, 0}).ok());
  EXPECT_EQ(*Threshold({10, 10}), UINT64_MAX);
  EXPECT_EQ(*Threshold({20, 10}), UINT64_MAX);
  EXPECT_EQ(*Threshold({1, 2}), uint64_t{1} << 63);
  EXPECT_EQ(*Threshold({1, 4}), uint64_t{1} << 62);
}

TEST(Drac, RingIsDeterministicAndRecomputable) {
  auto keys = Keys(300);
  auto a = EligibleKeys(keys, "item-1", 3, SeedOf(1), 30);
  std::vector<urs::Point> shuffled(keys.rbegin(), keys.rend());
  auto b = EligibleKeys(shuffled, "item-1", 3, SeedOf(1), 30);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);  // anyone with the registered keys and the seed gets the same ring
  auto threshold = *Threshold({30, 300});
  for (const auto& k : keys) {
    bool in = std::binary_search(a->begin(), a->end(), k);
    EXPECT_EQ(in, IsEligible(k, "item-1", 3, SeedOf(1), threshold));
  }
  // The seed, the epoch and the item each redraw the ring.
  EXPECT_NE(*a, *EligibleKeys(keys, "item-1", 3, SeedOf(2), 30));
  EXPECT_NE(*a, *EligibleKeys(keys, "item-1", 4, SeedOf(1), 30));
  EXPECT_NE(*a, *EligibleKeys(keys, "item-2", 3, SeedOf(1), 30));
}

// The ring size is Binomial(N, k/N): mean k, variance k(1 - k/N).
TEST(Drac, ExpectedRingSizeIsK) {
  constexpr size_t kN = 2000;
  constexpr uint64_t kK = 50;
  constexpr int kItems = 200;
  auto keys = Keys(kN);
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < kItems; ++i) {
    auto ring = EligibleKeys(keys, "item-" + std::to_string(i), 1, SeedOf(9), kK);
    ASSERT_TRUE(ring.ok());
    sum += ring->size();
    sum_sq += static_cast<double>(ring->size()) * ring->size();
  }
  double mean = sum / kItems;
  double var = sum_sq / kItems - mean * mean;
  double expected_var = kK * (1.0 - static_cast<double>(kK) / kN);  // 48.75
  // Standard error of the mean: sqrt(48.75 / 200) = 0.49, so +-3 is six standard errors.
  EXPECT_NEAR(mean, 50.0, 3.0);
  // The sample variance over 200 draws has a standard error of about 4.9.
  EXPECT_NEAR(var, expected_var, 25.0);
}

TEST(Drac, EveryoneEligibleWhenKAtLeastN) {
  auto keys = Keys(12);
  auto ring = EligibleRing(keys, "x", 0, SeedOf(0), 12);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->size(), 12u);
}

TEST(Drac, EmptyRingIsAnError) {
  auto keys = Keys(3);
  // With k/N = 1/2^40 of the space, no key is realistically eligible.
  Lottery tiny{1, uint64_t{1} << 40};
  uint64_t threshold = *Threshold(tiny);
  for (const auto& k : keys) EXPECT_FALSE(IsEligible(k, "x", 0, SeedOf(0), threshold));
  auto ring = EligibleRing({}, "x", 0, SeedOf(0), 1);
  EXPECT_FALSE(ring.ok());
}

}  // namespace
}  // namespace tessera::reviews::drac
