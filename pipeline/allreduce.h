// Ring all-reduce of a float buffer over pipeline/transport.h: how the replicas of one stage
// sum their gradients. Reduce-scatter then all-gather, 2 (n-1) steps of one n-th of the buffer
// each; every element's sum is formed by one rank in ring order and then copied, so all members
// end with bit-identical results. Torch-free.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "pipeline/transport.h"

namespace tessera::pipeline {

// Sums `data` element-wise over the ranks in `group` (every member passes the same group, in
// the same order, and the same size). Uses tags [tag_base, tag_base + 2 * group.size()).
// INVALID_ARGUMENT if the transport's rank is not in `group`; transport errors pass through.
Status RingAllreduce(Transport& transport, const std::vector<int>& group, uint64_t tag_base,
                     std::span<float> data, Transport::Duration timeout);

// What a probe of an all-reduce engine among threads of one process measures (pipeline/
// link_probe.h, pipeline/gloo_collective.h).
struct AllreduceTiming {
  double wall_s = 0;  // median seconds of one all-reduce (rank 0's view)
  // CPU seconds of the whole process (every thread: callers, transport, gloo; the kernel's
  // work on their behalf) per all-reduce and member, over the timed rounds.
  double cpu_s = 0;
};

}  // namespace tessera::pipeline
