// Measuring this machine's all-reduce, for the auto-configuration's model of it.
//
// Varuna's profiler measures all-reduce times per ring size before its auto-config simulates
// (research note §7). On loopback our links have no rate limit, and the simulator's ring
// formula with an unlimited link makes data parallelism free; MeasureLoopbackRing times our own
// ring all-reduce (pipeline/allreduce.h over pipeline/transport.h) among threads of this process
// and fits the formula's link to it. Torch-free.
#pragma once

#include <functional>

#include "core/status.h"
#include "pipeline/simulator.h"

namespace tessera::pipeline {

// Runs a ring all-reduce among `replicas` (>= 2) threads over 127.0.0.1, of 16 bytes and of
// `bytes`, one warm-up and `runs` timed rounds each (medians), and returns the link for which
// RingAllreduceSeconds reproduces both: latency from the small one, bandwidth from the large.
// `timer` (median seconds of `runs` all-reduces of n floats among `replicas`) measures another
// engine instead (pipeline/gloo_collective.h's TimeGlooAllreduce); default: our ring.
using AllreduceTimer = std::function<Result<double>(size_t floats, int replicas, int runs)>;
Result<LinkModel> MeasureLoopbackRing(double bytes, int replicas, int runs,
                                      const AllreduceTimer& timer = nullptr);

}  // namespace tessera::pipeline
