#include "core/stop_signal.h"

#include <gtest/gtest.h>

#include <csignal>

namespace tessera {
namespace {

TEST(StopSignalTest, SigtermSetsTheFlag) {
  const std::atomic<bool>& stop = StopOnSignals();
  EXPECT_EQ(&stop, &StopOnSignals());
  EXPECT_FALSE(stop.load());
  ASSERT_EQ(std::raise(SIGTERM), 0);  // handled: the test process keeps running
  EXPECT_TRUE(stop.load());
}

}  // namespace
}  // namespace tessera
