#include "reviews/client/registration_delay.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera::reviews::client {
namespace {

// Issue 16, part 2: by default the registration height is drawn over the whole remaining
// window, not "the next block" (which links the anonymous registration to the public issue).
TEST(RegistrationDelay, DefaultSpreadsUniformlyUpToTheClose) {
  std::mt19937_64 rng(7);
  std::set<uint64_t> seen;
  uint64_t at_once = 0;
  constexpr int kDraws = 4000;
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t h = DrawRegistrationHeight(100, 140, std::nullopt, rng);
    ASSERT_GE(h, 100u);
    ASSERT_LE(h, 136u);  // close - kRegistrationCommitMargin
    seen.insert(h);
    at_once += h == 100;
    sum += static_cast<double>(h);
  }
  EXPECT_EQ(seen.size(), 37u);  // every height of [100, 136] occurs
  // Uniform over 37 heights: mean 118, P(at once) = 1/37 (~108 of 4000, sd ~10).
  EXPECT_NEAR(sum / kDraws, 118.0, 0.6);
  EXPECT_LT(at_once, 160u);
}

TEST(RegistrationDelay, BoundedDelayOptOutAndNoRoomLeft) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    const uint64_t h = DrawRegistrationHeight(100, 140, 5, rng);
    EXPECT_GE(h, 100u);
    EXPECT_LE(h, 105u);
  }
  EXPECT_EQ(DrawRegistrationHeight(100, 140, 0, rng), 100u);             // opt-out: at once
  EXPECT_EQ(DrawRegistrationHeight(138, 140, std::nullopt, rng), 138u);  // past the margin
  EXPECT_EQ(DrawRegistrationHeight(0, 2, std::nullopt, rng), 0u);
}

}  // namespace
}  // namespace tessera::reviews::client
