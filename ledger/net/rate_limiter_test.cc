#include "ledger/net/rate_limiter.h"

#include <gtest/gtest.h>

namespace tessera::ledger::net {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiterTest, AllowsABurstThenTheRatePerKey) {
  RateLimiter limiter(/*rate_per_s=*/10, /*burst=*/3);
  const auto t0 = RateLimiter::Clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", t0));
  EXPECT_FALSE(limiter.Allow("a", t0));
  EXPECT_EQ(limiter.RetryAfterMs("a", t0), 100u);
  EXPECT_TRUE(limiter.Allow("b", t0));  // another caller has its own bucket
  EXPECT_FALSE(limiter.Allow("a", t0 + milliseconds(50)));
  EXPECT_TRUE(limiter.Allow("a", t0 + milliseconds(100)));  // one token per 100 ms
  EXPECT_FALSE(limiter.Allow("a", t0 + milliseconds(100)));
  // Idle for long: back to the burst, never beyond it.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", t0 + milliseconds(60000)));
  EXPECT_FALSE(limiter.Allow("a", t0 + milliseconds(60000)));
}

TEST(RateLimiterTest, RemembersAtMostMaxKeysForgettingTheLeastRecent) {
  RateLimiter limiter(1, 1, /*max_keys=*/100);
  const auto t0 = RateLimiter::Clock::now();
  EXPECT_TRUE(limiter.Allow("hot", t0));
  for (int i = 0; i < 10000; ++i) {
    (void)limiter.Allow(std::to_string(i), t0);
    if (i % 50 == 0) EXPECT_FALSE(limiter.Allow("hot", t0));  // seen recently: still empty
  }
  EXPECT_EQ(limiter.keys(), 100u);
}

}  // namespace
}  // namespace tessera::ledger::net
