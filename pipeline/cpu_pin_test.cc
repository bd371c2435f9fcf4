#include "pipeline/cpu_pin.h"

#include <gtest/gtest.h>
#include <pthread.h>

namespace tessera::pipeline {
namespace {

cpu_set_t ThreadMask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(set), &set), 0);
  return set;
}

// The placement the profile and the launcher must agree on, worked by hand: round-robin over
// the allowed list, so profile copy w and worker w land on the same processor. Broken on purpose
// (issue #14, session 14): with cpus[index % size] replaced by cpus[size - 1 - index % size]
// (profile and workers counted from opposite ends) the four expectations on {0, 1} failed.
TEST(CpuPin, WorkerIndexMapsRoundRobinOverTheAllowedProcessors) {
  const std::vector<int> two = {0, 1};
  EXPECT_EQ(*CpuForWorker(0, two), 0);
  EXPECT_EQ(*CpuForWorker(1, two), 1);
  EXPECT_EQ(*CpuForWorker(2, two), 0);  // a third worker shares worker 0's processor
  EXPECT_EQ(*CpuForWorker(3, two), 1);
  const std::vector<int> gaps = {2, 5, 7};  // a restricted mask: indices are list positions
  EXPECT_EQ(*CpuForWorker(1, gaps), 5);
  EXPECT_EQ(*CpuForWorker(4, gaps), 5);
  EXPECT_EQ(*CpuForWorker(5, gaps), 7);
  EXPECT_FALSE(CpuForWorker(0, {}).ok());
  EXPECT_FALSE(CpuForWorker(-1, two).ok());
}

// A pinned scope runs on exactly its processor and gives the thread its old mask back.
TEST(CpuPin, ScopedPinRestoresTheThreadsMask) {
  auto cpus = AllowedCpus();
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  ASSERT_FALSE(cpus->empty());
  const cpu_set_t before = ThreadMask();
  const int cpu = cpus->back();
  {
    const ScopedThreadPin pin(cpu);
    ASSERT_TRUE(pin.status().ok()) << pin.status();
    cpu_set_t inside = ThreadMask();
    EXPECT_EQ(CPU_COUNT(&inside), 1);
    EXPECT_TRUE(CPU_ISSET(cpu, &inside));
  }
  cpu_set_t after = ThreadMask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  const ScopedThreadPin none(-1);  // no pinning asked: nothing changes
  EXPECT_TRUE(none.status().ok());
  cpu_set_t unchanged = ThreadMask();
  EXPECT_TRUE(CPU_EQUAL(&before, &unchanged));
}

}  // namespace
}  // namespace tessera::pipeline
