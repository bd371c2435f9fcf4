// Slot bookkeeping and gang placement shared by the policies (and usable by the simulator and
// the service): which slots of a view are free, and where a gang of k workers fits compactly.
#pragma once

#include <optional>
#include <vector>

#include "cluster/policy/policy.h"

namespace tessera::cluster {

// Free slots per node of `view`: slots minus draining slots and the slots held by kRunning and
// kCheckpointing jobs; 0 for dead nodes. A negative count means the view is over-allocated.
std::vector<int> FreeSlots(const ClusterView& view);

// Slots per node that will become free when checkpoints in flight are written: those held by
// kCheckpointing jobs plus draining ones (0 for dead nodes).
std::vector<int> ReleasingSlots(const ClusterView& view);

// Slot count of the largest node (alive or not): the unit of compact placement.
int MaxNodeSlots(const ClusterView& view);

// The fewest nodes a gang of `workers` can use: 1 if it fits in the largest node, else
// ceil(workers / max_node_slots).
int NodesNeeded(int workers, int max_node_slots);

// A compact placement of `workers` slots within `free` (free slots per node), or nullopt.
// A gang that fits one node goes to the fullest node that still has room (best fit, which keeps
// whole nodes free for large gangs); a larger gang takes the emptiest nodes. Ties: lower index.
std::optional<Placement> FindCompactPlacement(const std::vector<int>& free, int workers,
                                              int max_node_slots);

// free[s.node] -= s.slots for every slice (or += when `sign` is +1).
void Take(std::vector<int>& free, const Placement& placement, int sign = -1);

// Indices of view.jobs in FIFO order (submit_time, then position). O(n) when the view is already
// in submit order, as it should be.
std::vector<int> FifoOrder(const ClusterView& view);

}  // namespace tessera::cluster
