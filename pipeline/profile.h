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
// This header is torch-free; the implementation lives with the models (pipeline/model.cc).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "pipeline/job.h"

namespace tessera::pipeline {

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
};

// Times every unit of `spec` on micro-batches of `micro_batch` samples: `warmup` untimed
// micro-batches, then `timed` ones, and `timed` updates of `optimizer` (pipeline/job.h) per
// unit. INVALID_ARGUMENT for a bad spec or counts.
Result<UnitProfile> ProfileUnits(const ModelSpec& spec, int micro_batch, int warmup, int timed,
                                 uint64_t seed, const std::string& optimizer = "sgd");

// Fills spec.units for a torchscript or registered model (pipeline/model_registry.h; gpt and cnn
// count their own). NOT_FOUND for an unknown model, INVALID_ARGUMENT for one that cannot load.
Status ResolveModel(ModelSpec& spec);

// A unit's cost for partitioning: forward, the recompute when the schedule recomputes (Varuna,
// GPipe), and backward.
std::vector<double> ProfiledUnitCosts(const UnitProfile& profile, bool recompute);

}  // namespace tessera::pipeline
