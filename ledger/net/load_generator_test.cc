#include "ledger/net/load_generator.h"

#include <gtest/gtest.h>

namespace tessera::ledger::net {
namespace {

using Clock = BlockIntervalEstimate::Clock;
using std::chrono::milliseconds;

TEST(BlockIntervalEstimateTest, UnknownUntilTwoBlocksThenStartsFromTheFirstInterval) {
  BlockIntervalEstimate estimate;
  const Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(estimate.seconds().has_value());
  estimate.Observe(t0);
  EXPECT_FALSE(estimate.seconds().has_value());
  estimate.Observe(t0 + milliseconds(5000));
  ASSERT_TRUE(estimate.seconds().has_value());
  EXPECT_DOUBLE_EQ(*estimate.seconds(), 5.0);  // not 0.3 x 5 (an EWMA started at zero)
  estimate.Observe(t0 + milliseconds(15000));
  EXPECT_DOUBLE_EQ(*estimate.seconds(), 0.7 * 5.0 + 0.3 * 10.0);
}

TEST(ResendAfterTest, NeverBeforeTheIntervalIsKnownThenFourIntervalsOrResendSeconds) {
  EXPECT_FALSE(ResendAfter(6, std::nullopt).has_value());
  EXPECT_DOUBLE_EQ(*ResendAfter(6, 1.0), 6.0);
  EXPECT_DOUBLE_EQ(*ResendAfter(6, 5.0), 20.0);
}

// The load's own backlog on a slow chain is not sent again: with blocks 8 s apart from the
// start, transfers wait two or three intervals (16-24 s); a resend rule that saw the chain
// as fast in its first blocks sent every one of them again (issue #13: more resends than
// committed transfers in a 40 s run at load average 60-80).
TEST(ResendAfterTest, ASlowChainsBacklogIsNotResentWhileItStarts) {
  BlockIntervalEstimate estimate;
  const Clock::time_point t0 = Clock::now();
  for (int block = 0; block < 4; ++block) {
    estimate.Observe(t0 + milliseconds(8000 * block));
    const std::optional<double> after = ResendAfter(6, estimate.seconds());
    // A transfer that has waited three intervals is never resent.
    if (after) EXPECT_GT(*after, 3 * 8.0) << "after block " << block;
  }
}

}  // namespace
}  // namespace tessera::ledger::net
