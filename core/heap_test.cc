#include "core/heap.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace tessera {
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

// The launcher profiles (KeepFreedHeap) and then lives on beside its workers: after
// ReleaseFreedHeap a block between glibc's default mmap threshold (128 KB) and KeepFreedHeap's
// (32 MiB) gets its own mapping again. malloc consults the threshold only when no free chunk
// fits (earlier tests leave some), so the test asks for more 1 MiB blocks than the heap has free
// (mallinfo2's fordblks): those beyond must be mapped, or the threshold is still 32 MiB. Seen
// failing with the mmap threshold left out of ReleaseFreedHeap (session 12's leftover): no block
// was mapped.
TEST(Heap, ReleaseRestoresTheMmapThreshold) {
  constexpr size_t kMiB = 1024 * 1024;
  // The empty asm makes each block escape: otherwise the compiler may drop malloc/free pairs.
  auto allocate = [] {
    void* p = std::malloc(kMiB);
    asm volatile("" : : "g"(p) : "memory");
    return p;
  };
  ASSERT_TRUE(KeepFreedHeap().ok());
  const long kept_before = MmappedChunks();
  void* kept = allocate();
  EXPECT_EQ(MmappedChunks(), kept_before) << "1 MiB mapped on its own while the heap is kept";
  std::free(kept);
  ReleaseFreedHeap();
  const long before = MmappedChunks();
  std::vector<void*> blocks;
  const size_t count = mallinfo2().fordblks / kMiB + 2;
  for (size_t i = 0; i < count; ++i) blocks.push_back(allocate());
  EXPECT_GT(MmappedChunks(), before) << count << " blocks of 1 MiB, none mapped on its own";
  for (void* p : blocks) std::free(p);
}

// A server's setting (ledger-politician): after a large block with its own mapping is freed, a
// smaller one above the threshold still gets its own mapping (so it is returned when freed).
// ctest runs each test in a fresh process, where glibc's dynamic threshold is on: seen failing
// with MapLargeBlocksAlone doing nothing (freeing 16 MiB raised the threshold, the 4 MiB block
// came from the heap).
TEST(Heap, LargeBlocksKeepTheirOwnMappingAfterOneIsFreed) {
  constexpr size_t kMiB = 1024 * 1024;
  auto allocate = [](size_t bytes) {
    void* p = std::malloc(bytes);
    asm volatile("" : : "g"(p) : "memory");
    return p;
  };
  ASSERT_TRUE(MapLargeBlocksAlone(kMiB).ok());
  std::free(allocate(16 * kMiB));
  const long before = MmappedChunks();
  void* block = allocate(4 * kMiB);
  EXPECT_EQ(MmappedChunks(), before + 1) << "4 MiB served from the heap";
  std::free(block);
  EXPECT_EQ(MmappedChunks(), before);
  EXPECT_FALSE(MapLargeBlocksAlone(64 * kMiB).ok());  // above glibc's largest threshold
}

}  // namespace
}  // namespace tessera
