// Profiling a model's cut units, for partitioning by measured rather than estimated cost.
//
// Varuna's profiler (research note §8) times every cut point's forward and backward and records
// its activation size on the target hardware, and its auto-configuration partitions and
// simulates from those figures. ProfileUnits is the same measurement for our cut units: a short
// in-process run of a few micro-batches through each unit in turn, one intra-op thread as in a
// worker. It replaces EstimateUnitFlops (pipeline/job.h), whose FLOP counts miss memory-bound
// work (layer norms, softmax, the embedding gather), and the constant factors between kinds
// of unit.
//
// This header is torch-free; the implementation lives with the models (pipeline/model.cc,
// ProfileMicroBatches in pipeline/profile.cc).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "pipeline/job.h"

namespace tessera::pipeline {

// Per unit, mean seconds per micro-batch of forward and backward while `workers` copies of the
// model's unit loop run at once on their own threads (ProfileContention): what a worker's
// tasks cost when that many workers share this machine's cores, its memory bandwidth and
// whatever else runs on it at profiling time. Means, not medians: a step is a sum of tasks, so
// stalls behind other processes count.
struct ContendedTimes {
  int workers = 1;
  std::vector<double> forward_s, backward_s;
  // CPU time of the timing threads over the wall time of their timed tasks (thread CPU clocks,
  // pipeline/task_clock.h): the share of a core a task got while this was measured (below 1
  // when other processes or the other copies took the cores). 0: not measured (older
  // profiles). The launcher compares it with the run's own share to tell load that changed
  // between profile and run from a wrong prediction (RunSummary::busy_cpu_share).
  double cpu_share = 0;
  // The same threads' CPU time over the whole timed stretch, the untimed work between tasks
  // included: what they really got. cpu_share is not above it when the task timing is sound
  // (the waits for a core land in the tasks); 0 in older profiles.
  double window_cpu_share = 0;
};

struct UnitProfile {
  // Per unit, seconds per micro-batch: the forward with autograd, and the backward from the
  // unit's output gradient to its input gradient and parameter gradients (for the last unit,
  // from the loss). Medians over the timed micro-batches.
  std::vector<double> forward_s, backward_s;
  // Per unit, bytes of its output for one micro-batch: what crosses a cut after the unit.
  std::vector<double> output_bytes;
  // Per unit, bytes of its parameters (what its gradient all-reduce moves; auto-configuration
  // also counts them, with gradients and momentum, in a worker's memory).
  std::vector<double> param_bytes;
  // Bytes of the model's input for one micro-batch (what stage 0 holds per micro-batch).
  double input_bytes = 0;
  // Per unit, seconds of one optimizer update of its parameters (median), charged once per
  // step after the all-reduce.
  std::vector<double> optimizer_s;
  // Per unit, bytes the forward with autograd keeps for the backward, for one micro-batch
  // (growth of the heap in use while the output is held, glibc's mallinfo2): the attention
  // scores and MLP hidden layers that output_bytes does not see. Empty in older profiles.
  std::vector<double> activation_bytes;
  // Task times under contention, by number of concurrent workers (1 = the timed runs above,
  // as means). The auto-config simulates a candidate of W workers with the entry for W when
  // there is one. Empty in older profiles.
  std::vector<ContendedTimes> contended;
};

// A profile measured at one micro-batch size (times scale with it, so each size is measured).
struct ProfiledMicroBatch {
  int micro_batch = 1;
  UnitProfile profile;
};

// Timed seconds per profile by default, at least (ProfileMicroBatches' min_timed_s).
inline constexpr double kDefaultProfileSeconds = 1.0;

// Profiles `spec` at each micro-batch size (ProfileUnits: 2 warm-up and at least 5 timed
// micro-batches and `min_timed_s` seconds each, but at most 500 micro-batches, in this
// process), and with contended_workers > 1 also under
// contention for 2 .. contended_workers concurrent workers (ProfileContention; for workers
// sharing this machine). What the auto-configuration ranks (pipeline/autoconfig.h). With
// `pin_cpus`, every timed copy runs on the processor the worker of its index will be pinned to
// (pipeline/cpu_pin.h); empty: wherever the scheduler puts it.
Result<std::vector<ProfiledMicroBatch>> ProfileMicroBatches(
    const ModelSpec& spec, const std::vector<int>& sizes, uint64_t seed,
    const std::string& optimizer = "sgd", int contended_workers = 1,
    const std::vector<int>& pin_cpus = {}, double min_timed_s = kDefaultProfileSeconds);

// Times every unit of `spec` on micro-batches of `micro_batch` samples: `warmup` untimed
// micro-batches, then `timed` ones, or more (at most 500) until the timed ones took
// `min_timed_s` seconds, and `timed` updates of `optimizer` (pipeline/job.h) per unit.
// With `pin_cpus`, on processor CpuForWorker(0, pin_cpus) (worker 0's when pinned).
// INVALID_ARGUMENT for a bad spec or counts; INTERNAL if the processor cannot be pinned.
Result<UnitProfile> ProfileUnits(const ModelSpec& spec, int micro_batch, int warmup, int timed,
                                 uint64_t seed, const std::string& optimizer = "sgd",
                                 double min_timed_s = 0, const std::vector<int>& pin_cpus = {});

// Replaces profile.contended's entries for 2..max_workers workers: `max_workers` - 1 runs,
// each with that many threads (one intra-op thread each, sharing one copy of the parameters)
// running micro-batches through every unit as ProfileUnits does (the same counts), timed
// concurrently: the copies start timing together after their warm-ups, and each keeps only
// micro-batches that ended before the last copy had its minimum, so every sample was taken
// while all of them ran. Run it right before the job, since it measures the machine's load
// as it is. With `pin_cpus`, copy w runs on CpuForWorker(w, pin_cpus), as worker w would.
Status ProfileContention(const ModelSpec& spec, int micro_batch, int max_workers, int warmup,
                         int timed, double min_timed_s, uint64_t seed, UnitProfile& profile,
                         const std::vector<int>& pin_cpus = {});

// Fills spec.units for a torchscript or registered model (pipeline/model_registry.h; gpt and cnn
// count their own). NOT_FOUND for an unknown model, INVALID_ARGUMENT for one that cannot load.
Status ResolveModel(ModelSpec& spec);

// A unit's cost for partitioning: forward, the recompute when the schedule recomputes (Varuna,
// GPipe), and backward.
std::vector<double> ProfiledUnitCosts(const UnitProfile& profile, bool recompute);

}  // namespace tessera::pipeline
