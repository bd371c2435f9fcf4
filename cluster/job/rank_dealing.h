// How a gang job's W ranks are dealt to its P <= W slots: slot s of P holds ranks
// [FirstRankOfSlot(s), FirstRankOfSlot(s + 1)), so every node (a run of consecutive slots) gets a
// contiguous block and rank 0 lives on slot 0. The scheduler deals ranks to nodes with it
// (cluster/service/gang.h), the agent ranks to processes of a logical-rank job
// (cluster/agent/gang_run.h), and the C++ interposition library finds every process's logical
// ranks with it (cluster/interpose/cc/elastic_session.h).
#pragma once

namespace tessera::cluster {

// floor(slot * W / P). Requires 0 <= slot <= slots and slots <= world_size.
inline int FirstRankOfSlot(int slot, int slots, int world_size) {
  return static_cast<int>(static_cast<long long>(slot) * world_size / slots);
}

// The slot whose first rank is `rank`, or -1 when no slot starts at it.
inline int SlotStartingAt(int rank, int slots, int world_size) {
  // FirstRankOfSlot is strictly increasing in the slot (W >= P): ceil(rank * P / W) is the
  // only candidate.
  const int slot =
      static_cast<int>((static_cast<long long>(rank) * slots + world_size - 1) / world_size);
  return slot <= slots && FirstRankOfSlot(slot, slots, world_size) == rank ? slot : -1;
}

}  // namespace tessera::cluster
