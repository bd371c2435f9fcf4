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
#include "pipeline/allreduce.h"
#include "pipeline/simulator.h"

namespace tessera::pipeline {

// Runs a ring all-reduce among `replicas` (>= 2) threads over 127.0.0.1, of 16 bytes and of
// `bytes`, one warm-up and `runs` timed rounds each (medians), and returns the link for which
// RingAllreduceSeconds reproduces both: latency from the small one, bandwidth from the large.
// `timer` (median seconds of `runs` all-reduces of n floats among `replicas`, and their CPU)
// measures another engine instead (pipeline/gloo_collective.h's TimeGlooAllreduce); default:
// our ring.
using AllreduceTimer =
    std::function<Result<AllreduceTiming>(size_t floats, int replicas, int runs)>;
Result<LinkModel> MeasureLoopbackRing(double bytes, int replicas, int runs,
                                      const AllreduceTimer& timer = nullptr);

// What the workers' communication costs this machine's processors, for the auto-config's
// shared-core model (CommCpuCost in pipeline/simulator.h, CommCpuStretch): the process's CPU
// (all threads and the kernel's work for them, CLOCK_PROCESS_CPUTIME_ID) over the timed rounds
// of the all-reduce probe above, and over max(runs, 21) round trips of a `message_bytes` message
// between two threads through our transport, copied from a float buffer into the message and
// out again on arrival as the runtime's EncodeTensor and DecodeTensor do; and those round trips'
// one-way delay (LoopbackMeasurement::message_delay_s).
struct LoopbackMeasurement {
  LinkModel allreduce_link;  // as MeasureLoopbackRing
  CommCpuCost cpu;           // p2p_byte_s 0 when message_bytes is 0 (not measured)
  // One way, from a thread's Send of a `message_bytes` message to the other thread's Recv
  // returning it (the median over at least 21 round trips, less the far end's copies): what
  // SimConfig::message_delay_s models for workers on this host. 0 when message_bytes is 0.
  // Measured with the two threads alone on the machine's idle cores, not with the workers
  // computing beside them.
  double message_delay_s = 0;
};
// The all-reduce's fixed CPU per call from the 16-byte rounds, its CPU per byte from the
// `bytes` rounds less that. INVALID_ARGUMENT as MeasureLoopbackRing, or for message_bytes
// outside [0, 256 MiB].
Result<LoopbackMeasurement> MeasureLoopback(double bytes, double message_bytes, int replicas,
                                            int runs, const AllreduceTimer& timer = nullptr);

}  // namespace tessera::pipeline
