#include "cluster/job/rank_dealing.h"

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

TEST(RankDealingTest, EverySlotStartsItsBlockAndOnlySlotStartsAreFound) {
  for (int world = 1; world <= 12; ++world) {
    for (int slots = 1; slots <= world; ++slots) {
      int covered = 0;
      for (int slot = 0; slot < slots; ++slot) {
        const int first = FirstRankOfSlot(slot, slots, world);
        const int next = FirstRankOfSlot(slot + 1, slots, world);
        EXPECT_EQ(first, covered);
        EXPECT_GE(next - first, world / slots);  // balanced: floor or ceil of W/P
        EXPECT_LE(next - first, (world + slots - 1) / slots);
        EXPECT_EQ(SlotStartingAt(first, slots, world), slot);
        for (int r = first + 1; r < next; ++r) EXPECT_EQ(SlotStartingAt(r, slots, world), -1);
        covered = next;
      }
      EXPECT_EQ(covered, world);
      EXPECT_EQ(SlotStartingAt(world, slots, world), slots);
    }
  }
}

}  // namespace
}  // namespace tessera::cluster
