// Choosing the pipeline depth P, the data-parallel width D and the micro-batch size m for a
// number of workers by simulating one candidate after another (Varuna's AutoConfig, research
// note §7).
//
//   AutoConfigRequest request{.workers = 4, .global_batch = 32, .profiles = measured};
//   TESSERA_ASSIGN_OR_RETURN(AutoConfigResult result, AutoConfigure(request));
//   TESSERA_ASSIGN_OR_RETURN(Candidate best, Best(result, request.memory_limit_bytes));
//
// Candidates are every (P, D, m) with P * D <= workers, P <= the model's cut units, D dividing
// the global batch and m dividing the per-replica batch, m among the profiled micro-batch sizes.
// Each P is partitioned with BalancedPartition over the profile of its m (forward + recompute
// + backward per unit), and P x D workers run `steps` steps back to back in the simulator
// (pipeline/simulator.h) with per-stage times summed from the profile, the cut's activation size
// from the profile, the stage's parameter bytes as its all-reduce, and every worker's egress
// given by `link`.
//
// What differs from Varuna: Varuna searches P over divisors of its cut count with the largest
// micro-batch that fits and D = G / P; we search (P, D, m) jointly, allow non-uniform cuts and
// workers left idle (P * D < G). Varuna's GPUs are one per worker; on a CPU machine workers share
// cores, which `cores` models crudely (compute times scaled by workers / cores when there are
// more workers than cores). Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "nlohmann/json.hpp"
#include "pipeline/profile.h"
#include "pipeline/schedule.h"
#include "pipeline/simulator.h"

namespace tessera::pipeline {

// What a worker holds besides its activation stash, for StageMemoryBytes.
struct MemoryModel {
  // A worker process before its model: libtorch, the data, buffers (pipeline-launch measures
  // its own resident set after loading libtorch).
  double base_bytes = 0;
  // Optimizer state per parameter byte: 1 for SGD with momentum, 2 for Adam and AdamW.
  int state_copies = 1;
};

struct AutoConfigRequest {
  int workers = 1;       // G: workers available now
  int global_batch = 1;  // B: samples per step, kept fixed whatever (P, D, m) is chosen
  ScheduleKind schedule = ScheduleKind::kVaruna;
  bool opportunistic = true;
  std::vector<ProfiledMicroBatch> profiles;  // the candidate micro-batch sizes
  LinkModel link;                            // every worker's egress, and the all-reduce's
  // Workers on several hosts with a link measured per host pair (pipeline-launch --hosts
  // --auto): candidates place rank r as the launcher does and send over those links; `link`
  // is then unused between workers.
  HostLinks host_links;
  // The ring formula's link where `link` is unlimited (the all-reduce is then not simulated on
  // the links), e.g. MeasureLoopbackRing's (pipeline/link_probe.h); unset: `link`, free.
  std::optional<LinkModel> allreduce_link;
  // Estimated bytes a worker may hold (StageMemoryBytes); 0 = no limit.
  double memory_limit_bytes = 0;
  MemoryModel memory;
  // Processors the workers share; 0 = one per worker (Varuna: one GPU each).
  int cores = 0;
  int steps = 3;  // simulated back to back; the step time is the steady-state period
  // Bytes per all-reduce bucket started during the backward (gloo: --bucket-kb); 0 = the whole
  // gradient after the backward (our ring).
  double bucket_bytes = 0;
  // The communication threads' CPU (MeasureLoopback, pipeline/link_probe.h): with `cores`, a
  // candidate's stages get StageCost::comm_cpu_s from it (the all-reduce of their gradient in
  // buckets, at D > 1; their activations and gradients sent and received, at P > 1), which
  // the simulator takes from the computing threads' processors. Zero: not measured.
  CommCpuCost comm_cpu;
  // Delivery delay of every activation and gradient between stages, besides the link
  // (SimConfig::message_delay_s; MeasureLoopback's message_delay_s for workers on this host).
  // 0: not measured.
  double message_delay_s = 0;
};

struct Candidate {
  int stages = 1, replicas = 1, micro_batch = 1;
  int micro_batches = 1;        // per replica and step
  std::vector<int> boundaries;  // BalancedPartition of the profiled unit costs
  double step_s = 0;            // simulated
  double samples_per_s = 0;     // global_batch / step_s
  double memory_bytes = 0;      // the largest StageMemoryBytes over the stages
  bool fits = true;             // memory_bytes within the limit
  // The share of a core the profiled tasks this prediction rests on got while they were
  // measured (ContendedTimes::cpu_share of the entry for this many workers, else of the lone
  // run; 0 when the profile did not measure it). step_s * cpu_share is the prediction with the
  // profile's foreign load taken out.
  double cpu_share = 0;
};

struct AutoConfigResult {
  // Candidates within the memory limit, best first: the shortest simulated step; a tie (equal
  // within 1e-9 relative) goes to fewer workers, then fewer stages, then a larger micro-batch
  // (fewer idle machines, fewer messages).
  std::vector<Candidate> ranked;
  std::vector<Candidate> rejected;  // over the memory limit, smallest memory first
};

// INVALID_ARGUMENT for bad counts, an empty or inconsistent profile, or a negative limit.
Result<AutoConfigResult> AutoConfigure(const AutoConfigRequest& request);

// ranked[0]; RESOURCE_EXHAUSTED naming the smallest estimate when no candidate fits.
Result<Candidate> Best(const AutoConfigResult& result, double memory_limit_bytes);

// Estimated bytes held by one worker of `stage` (it builds only its own units): the base,
// parameters, gradients and optimizer state ((2 + state_copies) x the parameter bytes of its
// units), plus the activation stash. A stage that recomputes keeps only its input per
// micro-batch in flight plus one micro-batch's saved activations (the one recomputed for its
// backward); a stage that does not keeps its input and saved activations per micro-batch in
// flight. "In flight" is the most forwards not yet matched by a backward along the stage's task
// list. Saved activations are the profile's activation_bytes (measured), or its unit outputs
// for profiles without them (an underestimate). docs/pipeline.md compares the estimate with
// measured peak RSS.
Result<double> StageMemoryBytes(const UnitProfile& profile, const std::vector<int>& boundaries,
                                ScheduleKind schedule, int micro_batches, int stage,
                                const MemoryModel& memory = {});

// The ranked and rejected candidates as a table, `limit` rows of each (0 = all).
std::string FormatCandidates(const AutoConfigResult& result, int limit);

// Profiles as JSON ({"micro_batch": m, "forward_s": [...], ...} per size) and back, so that a
// profile measured by pipeline-launch can be simulated by the torch-free pipeline-sim.
nlohmann::json ProfilesToJson(const std::vector<ProfiledMicroBatch>& profiles);
Result<std::vector<ProfiledMicroBatch>> ProfilesFromJson(const nlohmann::json& json);

}  // namespace tessera::pipeline
