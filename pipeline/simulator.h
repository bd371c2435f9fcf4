// Discrete-event model of pipeline-parallel + data-parallel training steps.
//
// Every stage walks its task list from pipeline/schedule.h through the same TaskCursor the
// runtime uses (including Varuna's opportunistic forward), so the simulator and the runtime
// cannot disagree on order. A worker (one per stage and replica) runs one task at a time. A
// forward's activation and a backward's gradient leave through the sending worker's egress: one
// link per worker, shared by everything it sends (activations to the next stage, gradients to
// the previous one, the ACKs of what it receives, its all-reduce traffic), as on a machine whose
// NIC is rate-limited. An egress carries one message at a time (FIFO: a TCP sender hands a whole
// message to the interface queue at once) at its bandwidth after a token-bucket burst, and the
// message arrives a latency later; stages keep computing meanwhile (sends are asynchronous, as
// in the runtime). After its last backward, each stage all-reduces its gradients with the same
// stage of the other replicas and runs the optimizer; then its next step starts. On a
// rate-limited link the all-reduce is the ring's chunks sent through the same egress links
// (behind whatever the worker still has queued there); otherwise a measured time or the ring
// formula. Several steps are simulated back to back, so link state (a queue still
// draining, a token bucket not yet refilled) carries over from one step to the next as in a
// real run, and the step time is the steady-state period. Optional jitter multiplies each
// compute time by max(0, 1 + jitter * N(0, 1)) from a seeded generator.
//
// This header is torch-free. Varuna's own simulator (tools/simulator) is the model for this one;
// ours fixes its missing returns, seeds its jitter and has a real 1F1B mode (research note §7);
// shared egress links, wire framing and multi-step token-bucket state are ours (docs/pipeline.md).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "pipeline/schedule.h"

namespace tessera::pipeline {

struct StageCost {
  double forward_s = 0;    // forward of one micro-batch
  double recompute_s = 0;  // the forward again with autograd (runs only where the schedule says)
  double backward_s = 0;
  double gradient_bytes = 0;  // this stage's parameter gradients, all-reduced across replicas
  // Measured costs (Varuna's auto-config also feeds profiled all-reduce times to its
  // simulator). The all-reduce's replaces the ring model when > 0, except on a rate-limited
  // pipeline_link, where the ring's messages are simulated on the links instead (a measured
  // time there contains the waits the simulation reproduces). The optimizer step follows it.
  double allreduce_s = 0;
  double optimizer_s = 0;
  // Buckets the all-reduce is cut into when each starts as soon as the last backward has
  // produced its gradients (gloo with gradient_buckets.h; 1 = all after the backward, as our
  // ring and a measured wait). The last backward produces the gradient evenly, so bucket k of
  // n is ready (n - k) / n of a backward before its end and the buckets run one after another:
  // the step waits max(T / n, T - backward x (n - 1) / n) after the backward for an all-reduce
  // of T seconds. Applies where the all-reduce is not simulated on the links.
  int allreduce_buckets = 1;
  // CPU seconds per step that the worker's communication threads spend besides its computing
  // thread: the transport's senders and readers moving its activations and gradients, gloo's
  // thread summing its gradient buckets, the kernel's TCP work they cause. Measured on this
  // machine by pipeline/link_probe.h's MeasureLoopback, times the bytes the stage moves. Costs
  // compute time only where the workers share processors (SimConfig::cores).
  double comm_cpu_s = 0;
};

struct LinkModel {
  double bandwidth_bytes_per_s = 0;  // 0 = unlimited
  double latency_s = 0;
  // Bytes that may pass at once after the link was idle (a token bucket refilling at the
  // bandwidth, like tc's tbf burst); 0 = every byte at the bandwidth.
  double burst_bytes = 0;
  // Wire framing. A rate limiter on a network device (tc tbf, htb) meters frames, not payload:
  // a message of n payload bytes becomes n + message_overhead_bytes bytes of stream, cut into
  // ceil(that / mss_bytes) segments that each carry header_bytes of headers, and the receiver
  // answers with acks_per_segment ACK frames of header_bytes per segment, sent through its own
  // egress. mss_bytes = 0: the link carries the payload bytes only.
  double message_overhead_bytes = 0;
  double mss_bytes = 0;
  double header_bytes = 0;
  double acks_per_segment = 0;

  // Bytes the sender's egress meters for a message of `payload` bytes.
  double WireBytes(double payload) const;
  // Bytes of ACKs the receiver's egress meters for that message.
  double AckBytes(double payload) const;
  // Seconds to move a `payload`-byte message over an idle link without burst.
  double TransferSeconds(double payload) const;
};

// What communication costs the processors of this machine, besides the wire: CPU seconds of
// all threads involved (the caller's copies, the transport's senders and readers, gloo's
// thread, the kernel's TCP and loopback work), measured by pipeline/link_probe.h.
struct CommCpuCost {
  double allreduce_call_s = 0;  // per all-reduce call (one gradient bucket) and member
  double allreduce_byte_s = 0;  // per byte of the summed buffer and member
  double p2p_byte_s = 0;        // per payload byte from one worker to another, both ends
};

// `link` with the framing of our transport over TCP/IPv4 on Ethernet as Linux sends it: 16-byte
// message frames (tag, length), MSS 1448 (MTU 1500 less 20 IP, 20 TCP and 12 timestamp-option
// bytes), 66 header bytes per frame (those 52 plus 14 Ethernet) and about one ACK per 2.5
// segments (delayed ACKs with GRO; 2.3 to 3.1 counted on the bench's veth links).
LinkModel WithTcpFraming(LinkModel link);

// Links between hosts, where workers run on several (pipeline-launch --hosts): worker w (its
// rank, replica x P + stage) runs on host host_of_slot[w % host_of_slot.size()], round-robin
// over the hosts file's lines as the launcher places them, and links[a][b] is the link from host
// a to host b, each measured on its own (pipeline/link_rate.h). Workers on one host talk through
// loopback: no link, no egress time. Empty: SimConfig::pipeline_link between every pair.
struct HostLinks {
  std::vector<int> host_of_slot;              // hosts file line -> host index
  std::vector<std::vector<LinkModel>> links;  // [from host][to host]; the diagonal is unused

  bool empty() const { return host_of_slot.empty(); }
  int HostOf(int worker) const {
    return host_of_slot[static_cast<size_t>(worker) % host_of_slot.size()];
  }
};

struct SimConfig {
  ScheduleKind schedule = ScheduleKind::kVaruna;
  int micro_batches = 1;
  bool opportunistic = true;  // Varuna's run-time forward pull-ahead (Varuna schedule only)
  std::vector<StageCost> stages;
  // Bytes of one micro-batch's activation crossing boundary b (stage b -> b+1); the gradient
  // sent back has the same size. Size stages.size() - 1.
  std::vector<double> boundary_bytes;
  // Every worker's egress (pipeline messages, ACKs, and the all-reduce's bytes).
  LinkModel pipeline_link;
  // Seconds from the end of the task that sends an activation or a gradient to the moment its
  // receiver can start the task that needs it, besides the link: the transport's sender
  // thread waking and writing, the receiver's reader thread waking and filing the message, the
  // receiver's computing thread waking from its wait. Added to every pipeline message (not to
  // the all-reduce's). The launcher measures it on loopback before running (half a round trip
  // through our transport, pipeline/link_probe.h) and sets it for workers on this host; the
  // runtime measures it in the run (WorkerReport::message_delay_s). 0: messages arrive when
  // the link delivers them.
  double message_delay_s = 0;
  // Per host pair instead (non-empty): a message takes the link from its sender's host to its
  // receiver's, through the sender's egress (one FIFO per worker, metered at that link's rate
  // and burst).
  HostLinks host_links;
  int replicas = 1;
  // The ring formula's link, for an all-reduce neither measured nor simulated on the links.
  LinkModel allreduce_link;
  double jitter = 0;
  uint64_t seed = 1;
  // Steps simulated back to back. With more than one, results describe the last step and
  // step_s is the steady-state period (mean of every step after the first, as measured).
  int steps = 1;
  // Processors that all workers share (0: every worker has its own, as Varuna's GPUs do). The
  // stages' compute times are what each computing thread takes beside the others (a contention
  // profile); the communication threads' CPU (StageCost::comm_cpu_s) needs the same processors,
  // and what spare processors cannot absorb slows every compute task (CommCpuStretch).
  int cores = 0;
  // The share of a core each computing thread got while the stages' compute times were measured
  // (a contention profile's ContendedTimes::cpu_share: below 1 when the workers or other
  // processes crowd the cores). The communication threads get the same share, so a CPU-second
  // of theirs costs 1 / share seconds of the computing threads' time. 0: not measured, taken as
  // min(1, cores / workers), what W always-runnable threads get from C idle cores.
  double compute_cpu_share = 0;
};

struct TimedTask {
  Task task;
  double start_s, end_s;
};

// Times of the last simulated step; a worker's times count from the start of its own step
// (each worker starts its next step when its previous one ends, as in the runtime).
struct SimResult {
  double pipeline_s = 0;  // the longest step start to last backward, over all workers
  // steps = 1: pipeline plus the all-reduce and optimizer of the slowest stage; more: the
  // mean period between consecutive step ends.
  double step_s = 0;
  std::vector<double> busy_s;       // per stage, replica 0: compute time
  std::vector<double> finish_s;     // per stage, slowest replica: last backward end
  std::vector<double> allreduce_s;  // per stage
  // Idle share of the step start to last backward (replica 0), as the runtime measures it:
  // of stage 0, and averaged over stages.
  double bubble_stage0 = 0;
  double bubble_mean = 0;
  std::vector<std::vector<TimedTask>> trace;  // per stage, replica 0
};

// INVALID_ARGUMENT for inconsistent sizes, negative times or bandwidths, replicas or steps < 1.
Result<SimResult> Simulate(const SimConfig& config);

// The factor every compute task of `config` takes longer because the workers' communication
// threads use the processors the computing threads share. With W workers on C = config.cores
// processors, T the compute seconds of all workers' tasks in a step and K their communication
// CPU (the sums over workers of the stages' task times and comm_cpu_s): spare processors
// (C - W, when W < C) absorb up to (C - W) x the longest stage's compute time of K; the rest
// is shared fairly with the computing threads, which got a share s of a processor each while
// their times were measured (compute_cpu_share, else min(1, C / W)): their tasks needed s x T
// CPU-seconds and now need K more from the same share, so they take
// 1 + max(0, K - spare) / (s x T) times as long. 1 with cores = 0, no communication CPU or no
// compute.
double CommCpuStretch(const SimConfig& config);

// Ring all-reduce of `bytes` among `replicas`: 2 (D-1) steps of bytes / D each.
double RingAllreduceSeconds(double bytes, int replicas, const LinkModel& link);

}  // namespace tessera::pipeline
