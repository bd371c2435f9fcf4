// The description of one pipeline training job, shared by the launcher and every worker
// (the launcher writes it as JSON; each worker reads it and picks its part by rank). Torch-free.
//
// Layout (Varuna's "clustered" map, research note §6): rank = replica * stages + stage, so the
// stages of one replica are consecutive ranks; the stage's replicas form its all-reduce group.
// Batches: every replica trains global_batch / replicas samples per step, as
// micro_batches = (global_batch / replicas) / micro_batch micro-batches of micro_batch samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "nlohmann/json.hpp"
#include "pipeline/schedule.h"
#include "pipeline/transport.h"

namespace tessera::pipeline {

// A model with cut points, built identically (same seed) by every worker.
struct ModelSpec {
  std::string kind = "gpt";  // "gpt": token+position embedding | blocks | LN + LM head
                             // "cnn": conv blocks (conv 3x3, ReLU, 2x2 pool) | linear head
  int layers = 2;            // transformer blocks, or conv blocks
  int width = 32;            // gpt: model width; cnn: channels
  int heads = 2;             // gpt
  int vocab = 64;            // gpt (character models use 96: printable ASCII)
  int seq_len = 16;          // gpt
  int image = 16;            // cnn: square image side
  int classes = 10;          // cnn
  double dropout = 0.0;      // gpt: after attention and MLP; cnn: before the head
  std::string text_path;     // gpt: train on this text (characters); empty = synthetic tokens
  int dataset_size = 512;    // synthetic samples (cycled through)
};

// Number of units (pieces between cut points): gpt layers + 2, cnn layers + 1.
int NumUnits(const ModelSpec& spec);
// Estimated forward FLOPs per sample of every unit (for the partitioner).
std::vector<double> EstimateUnitFlops(const ModelSpec& spec);
Status ValidateModelSpec(const ModelSpec& spec);

struct JobConfig {
  ModelSpec model;
  ScheduleKind schedule = ScheduleKind::kVaruna;
  bool opportunistic = true;  // Varuna's run-time forward pull-ahead
  int stages = 1;
  int replicas = 1;
  int micro_batch = 1;
  int global_batch = 1;
  int steps = 1;       // steps to train in this run
  int first_step = 0;  // global index of the first step (set when resuming)
  double lr = 0.05;
  double momentum = 0.9;
  uint64_t seed = 1;                // initialization, data order and dropout
  std::vector<int> boundaries;      // stage s owns units [boundaries[s], boundaries[s+1])
  std::vector<Endpoint> endpoints;  // one per rank
  std::string save_dir;  // write a cut-keyed checkpoint here after the last step (if set)
  // With save_dir: also after every global step whose count of completed steps is a multiple
  // of this (0 = only at the end). Global, so checkpoints of a job that morphs between runs
  // land on the same steps. Elastic runs (pipeline/morph.h) restart from the newest one.
  int checkpoint_every = 0;
  std::string resume_dir;   // start from the newest complete checkpoint here (if set)
  int timeout_ms = 120000;  // a step or a wait on a peer longer than this fails the worker
};

int WorldSize(const JobConfig& job);
int MicroBatches(const JobConfig& job);
inline int RankOf(const JobConfig& job, int stage, int replica) {
  return replica * job.stages + stage;
}
inline int StageOf(const JobConfig& job, int rank) { return rank % job.stages; }
inline int ReplicaOf(const JobConfig& job, int rank) { return rank / job.stages; }
// The ranks `rank` exchanges messages with: neighbouring stages of its replica, and the
// replicas of its stage.
std::vector<int> PeersOf(const JobConfig& job, int rank);
// The stage's all-reduce group, in replica order.
std::vector<int> ReplicaGroup(const JobConfig& job, int stage);

// Every field in range and consistent: divisible batches, a valid partition, one endpoint per
// rank. Messages name the offending flag.
Status ValidateJob(const JobConfig& job);

nlohmann::json JobToJson(const JobConfig& job);
Result<JobConfig> JobFromJson(const nlohmann::json& json);

}  // namespace tessera::pipeline
