// Where the ranks of a gang job go: any program run as one process per rank (job type
// "command", cluster/job/job_type.h), placed across the nodes of its placement.
//
//   for (const GangPart& part : GangParts(job.run_placement, world_size)) {
//     assignment for node part.node: ranks [part.rank_offset, part.rank_offset + part.local_ranks)
//   }
//
// Ranks are dealt to slots in order, slot s of P holding ranks [s*W/P, (s+1)*W/P), so every
// node gets a contiguous block of ranks (torchrun's contract: RANK = node's first rank +
// LOCAL_RANK) and rank 0 lives on the placement's first node. With P < W slots a slot holds
// several ranks: replica splicing, the world size never changes.
#pragma once

#include <vector>

#include "cluster/policy/policy.h"

namespace tessera::cluster {

struct GangPart {
  int node = -1;        // node index
  int node_rank = 0;    // position of the node in the placement (torchrun's GROUP_RANK)
  int rank_offset = 0;  // first global rank on the node
  int local_ranks = 0;  // processes on the node
  int local_slots = 0;  // slots the node gives the job

  friend bool operator==(const GangPart&, const GangPart&) = default;
};

// One part per slice of `placement`, in placement order. `world_size` >= total slots.
std::vector<GangPart> GangParts(const Placement& placement, int world_size);

}  // namespace tessera::cluster
