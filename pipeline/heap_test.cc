#include "pipeline/heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace tessera::pipeline {
namespace {

constexpr size_t kBlock = 100 * 1024;  // between malloc's default and dynamic mmap thresholds
constexpr int kBlocks = 1000;          // 100 MB: above glibc's largest dynamic trim threshold
constexpr long kPages = kBlock * kBlocks / 4096;

// Allocates kBlocks blocks, writes every page of each (as a tensor's kernel would), frees them
// all (as the end of a backward does), and returns the minor page faults this took.
long FaultsOfOneRound() {
  const long before = MinorPageFaults();
  std::vector<char*> blocks;
  for (int i = 0; i < kBlocks; ++i) {
    char* p = static_cast<char*>(std::malloc(kBlock));
    std::memset(p, i & 0xff, kBlock);
    blocks.push_back(p);
  }
  for (char* p : blocks) std::free(p);
  return MinorPageFaults() - before;
}

// The property the workers and the profile rely on: memory a micro-batch freed is reused by the
// next without faulting it in again. Without KeepFreedHeap the freed top of the heap is trimmed
// and every round faults all of its pages again (seen: ~25000 of 25000 pages per round).
TEST(Heap, FreedMemoryIsReusedWithoutPageFaults) {
  ASSERT_TRUE(KeepFreedHeap().ok());
  FaultsOfOneRound();  // the first round maps the pages
  const long second = FaultsOfOneRound(), third = FaultsOfOneRound();
  ReleaseFreedHeap();
  EXPECT_LT(second, kPages / 100) << "pages of one round: " << kPages;
  EXPECT_LT(third, kPages / 100) << "pages of one round: " << kPages;
}

// After ReleaseFreedHeap what was kept is given back (the first round faults its pages in
// again) and the process trims again (so does the second: the first's frees were returned),
// the launcher's state after profiling.
TEST(Heap, ReleaseGivesBackAndRestoresTrimming) {
  ASSERT_TRUE(KeepFreedHeap().ok());
  FaultsOfOneRound();
  ReleaseFreedHeap();
  EXPECT_GT(FaultsOfOneRound(), kPages / 2) << "kept memory not given back";
  EXPECT_GT(FaultsOfOneRound(), kPages / 2) << "trimming not restored";
}

}  // namespace
}  // namespace tessera::pipeline
