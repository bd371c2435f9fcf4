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

// The CPU the communication costs is measured, not assumed: moving bytes through the kernel
// and summing them takes CPU, so every figure is positive (an all-reduce of 4 MB takes more
// than its 16-byte call), and none is absurd (above 1 s per MB).
TEST(LinkProbe, MeasuresTheCommunicationCpu) {
  auto m = MeasureLoopback(4 << 20, 256 << 10, 2, 3);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT(m->cpu.allreduce_call_s, 0);
  EXPECT_GT(m->cpu.allreduce_byte_s, 0);
  EXPECT_LT(m->cpu.allreduce_byte_s, 1e-6);
  EXPECT_GT(m->cpu.p2p_byte_s, 0);
  EXPECT_LT(m->cpu.p2p_byte_s, 1e-6);
  // The far end's turnaround lies inside the round trip, so the one-way delay is positive.
  EXPECT_GT(m->message_delay_s, 0);
  auto no_messages = MeasureLoopback(4 << 20, 0, 2, 3);
  ASSERT_TRUE(no_messages.ok()) << no_messages.status();
  EXPECT_EQ(no_messages->cpu.p2p_byte_s, 0);
  EXPECT_EQ(no_messages->message_delay_s, 0);
  EXPECT_FALSE(MeasureLoopback(4 << 20, -1, 2, 3).ok());
}

TEST(LinkProbe, RefusesBadArguments) {
  EXPECT_FALSE(MeasureLoopbackRing(1e6, 1, 3).ok());
  EXPECT_FALSE(MeasureLoopbackRing(1e6, 2, 0).ok());
  EXPECT_FALSE(MeasureLoopbackRing(8, 2, 3).ok());
}

}  // namespace
}  // namespace tessera::pipeline
