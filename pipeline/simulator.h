// Discrete-event model of one pipeline-parallel + data-parallel training step.
//
// Every stage walks its task list from pipeline/schedule.h through the same TaskCursor the
// runtime uses (including Varuna's opportunistic forward), so the simulator and the runtime
// cannot disagree on order. A stage runs one task at a time; a forward's activation and a
// backward's gradient cross the link to the neighbouring stage, each directed link carrying one
// message at a time (latency + bytes / bandwidth) while the stages keep computing (sends are
// asynchronous, as in the runtime). After its last backward each stage all-reduces its gradients
// with the same stage of the other replicas (ring model); the step ends when the slowest stage's
// all-reduce ends. Optional jitter multiplies each compute time by max(0, 1 + jitter * N(0, 1))
// from a seeded generator, independently per replica.
//
// This header is torch-free. Varuna's own simulator (tools/simulator) is the model for this one;
// ours fixes its missing returns, seeds its jitter and has a real 1F1B mode (research note §7).
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
  // Measured costs that replace the models when > 0 (Varuna's auto-config also feeds profiled
  // all-reduce times to its simulator): the all-reduce, and the optimizer step after it.
  double allreduce_s = 0;
  double optimizer_s = 0;
};

struct LinkModel {
  double bandwidth_bytes_per_s = 0;  // 0 = unlimited
  double latency_s = 0;
  // Bytes that may pass at once after the link was idle (a token bucket refilling at the
  // bandwidth, like tc's tbf burst); 0 = every byte at the bandwidth. Pipeline links only.
  double burst_bytes = 0;
  // Seconds to move `bytes` over an idle link without burst.
  double TransferSeconds(double bytes) const;
};

struct SimConfig {
  ScheduleKind schedule = ScheduleKind::kVaruna;
  int micro_batches = 1;
  bool opportunistic = true;  // Varuna's run-time forward pull-ahead (Varuna schedule only)
  std::vector<StageCost> stages;
  // Bytes of one micro-batch's activation crossing boundary b (stage b -> b+1); the gradient
  // sent back has the same size. Size stages.size() - 1.
  std::vector<double> boundary_bytes;
  LinkModel pipeline_link;
  int replicas = 1;
  LinkModel allreduce_link;
  double jitter = 0;
  uint64_t seed = 1;
};

struct TimedTask {
  Task task;
  double start_s, end_s;
};

struct SimResult {
  double pipeline_s = 0;            // until the last backward of the slowest replica
  double step_s = 0;                // pipeline plus the all-reduce of the slowest stage
  std::vector<double> busy_s;       // per stage, replica 0: compute time
  std::vector<double> finish_s;     // per stage, slowest replica: last backward end
  std::vector<double> allreduce_s;  // per stage
  // Idle share of the pipeline makespan (replica 0): of stage 0, and averaged over stages.
  double bubble_stage0 = 0;
  double bubble_mean = 0;
  std::vector<std::vector<TimedTask>> trace;  // per stage, replica 0
};

// INVALID_ARGUMENT for inconsistent sizes, negative times or bandwidths, replicas < 1.
Result<SimResult> Simulate(const SimConfig& config);

// Ring all-reduce of `bytes` among `replicas`: 2 (D-1) steps of bytes / D each.
double RingAllreduceSeconds(double bytes, int replicas, const LinkModel& link);

}  // namespace tessera::pipeline
