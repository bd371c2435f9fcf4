#include "pipeline/link_probe.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

// The probe runs real rings over loopback; only the shape of the answer is checked (speed is
// the bench's business): a finite, non-negative latency and bandwidth, for 2 and 3 threads.
TEST(LinkProbe, FitsTheRingFormulaToLoopback) {
  for (int replicas : {2, 3}) {
    auto link = MeasureLoopbackRing(256 * 1024, replicas, 3);
    ASSERT_TRUE(link.ok()) << link.status();
    EXPECT_GE(link->latency_s, 0);
    EXPECT_LT(link->latency_s, 10);
    EXPECT_GE(link->bandwidth_bytes_per_s, 0);
    EXPECT_GE(RingAllreduceSeconds(256 * 1024, replicas, *link), 0);
  }
}

TEST(LinkProbe, RefusesBadArguments) {
  EXPECT_FALSE(MeasureLoopbackRing(1e6, 1, 3).ok());
  EXPECT_FALSE(MeasureLoopbackRing(1e6, 2, 0).ok());
  EXPECT_FALSE(MeasureLoopbackRing(8, 2, 3).ok());
}

}  // namespace
}  // namespace tessera::pipeline
