// Policies named on a command line, including variants of the Singularity-style policy with one
// mechanism switched off, so that a replay can show what each mechanism contributes:
//
//   fifo | tiresias | singularity
//   singularity:no-elastic      no replica splicing (no shrinking, no shrunk starts, no growing)
//   singularity:no-defragment   no migrations
//   singularity:no-headroom     no premium headroom
//   singularity:best-fit        eviction on the best-fit node instead of the cheapest (issue 15)
//
// A variant reports its full spec as its name, so that the tables tell the runs apart.
#pragma once

#include <memory>
#include <string_view>

#include "cluster/policy/policy.h"
#include "core/status.h"

namespace tessera::cluster::sim {

// `base` holds the Singularity options the variants start from (e.g. from flags).
// INVALID_ARGUMENT naming the spec for anything unknown.
Result<std::unique_ptr<Policy>> MakePolicy(std::string_view spec, const SingularityOptions& base);

}  // namespace tessera::cluster::sim
