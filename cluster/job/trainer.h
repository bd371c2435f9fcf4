// A real, small data-parallel training job that obeys the control interface (control.h).
//
// The model is a two-layer MLP (tanh) trained by SGD with momentum on a deterministic synthetic
// regression task (a fixed random "teacher" function of Gaussian inputs). The job has a fixed
// logical world size W: at every step each of the W data-parallel replicas computes the
// gradient of its own shard of the global batch, the W gradients are summed in rank order (the
// allreduce) and one optimizer step is taken.
//
// Replica splicing: an incarnation granted P < W physical workers runs P threads, each
// time-slicing W/P replicas, so the arithmetic - and thus every parameter bit - is the same for
// any P. Resizing is "checkpoint, exit, restart with another P", as in Singularity.
//
// Everything that makes a run reproducible is derived from the seed, the step and the rank, so
// a job preempted, migrated and resized N times ends bit-identical to an uninterrupted run.
//
// This header stays torch-free; only trainer.cc includes libtorch.
#pragma once

#include <cstdint>
#include <string>

#include "cluster/job/control.h"
#include "core/status.h"

namespace tessera::cluster {

struct TrainConfig {
  int64_t total_steps = 200;
  int32_t world_size = 4;  // logical data-parallel replicas, fixed for the job's life
  int32_t batch_per_replica = 32;
  int32_t input_dim = 16;
  int32_t hidden = 64;
  double learning_rate = 0.05;
  double momentum = 0.9;
  uint64_t seed = 1;
  // A checkpoint every this many steps bounds the work lost when a node dies (kill -9 gives no
  // chance to checkpoint on order). 0 = only on order and at the end.
  int64_t checkpoint_every = 20;
  // Minimum wall time of one replica's forward/backward, in milliseconds: stands in for a model
  // that takes that long on an accelerator slot, without burning the shared CPU. A worker that
  // time-slices k replicas needs k times as long per step, which is what the scheduler's
  // fraction-of-ideal-speed accounting sees. 0 = as fast as the CPU allows.
  int64_t replica_ms = 0;
};

// INVALID_ARGUMENT naming the first bad field.
Status ValidateTrainConfig(const TrainConfig& config);

struct TrainOutcome {
  ExitReport::Kind kind = ExitReport::Kind::kFinished;
  int64_t step = 0;                // steps completed when the incarnation exited
  int64_t resumed_from = 0;        // step this incarnation started at
  uint64_t state_fingerprint = 0;  // Fingerprint() of the checkpointed state
  double loss = 0;
};

// Runs one incarnation: resumes from the latest checkpoint in `control` (if any), trains until
// the job finishes or the agent orders checkpoint-and-exit, checkpoints, and writes the exit
// report. A checkpoint from a different configuration (seed, world size, shapes) is
// FAILED_PRECONDITION rather than silently mixed in.
Result<TrainOutcome> RunTrainingJob(const TrainConfig& config, JobControl& control);

}  // namespace tessera::cluster
