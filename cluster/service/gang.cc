#include "cluster/service/gang.h"

#include "cluster/job/rank_dealing.h"

namespace tessera::cluster {

std::vector<GangPart> GangParts(const Placement& placement, int world_size) {
  const int slots = TotalSlots(placement);
  std::vector<GangPart> parts;
  if (slots <= 0 || world_size < slots) return parts;
  auto first_rank = [&](int slot) { return FirstRankOfSlot(slot, slots, world_size); };
  int slot = 0;
  for (size_t i = 0; i < placement.size(); ++i) {
    const Slice& slice = placement[i];
    GangPart part;
    part.node = slice.node;
    part.node_rank = static_cast<int>(i);
    part.rank_offset = first_rank(slot);
    part.local_ranks = first_rank(slot + slice.slots) - part.rank_offset;
    part.local_slots = slice.slots;
    slot += slice.slots;
    parts.push_back(part);
  }
  return parts;
}

}  // namespace tessera::cluster
