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

// A model with cut points. Every worker builds only the units it owns; unit u's initial weights
// are drawn from (seed, u), so they agree across workers and stage layouts.
struct ModelSpec {
  std::string kind = "gpt";  // "gpt": token+position embedding | blocks | LN + LM head
                             // "cnn": conv blocks (conv 3x3, ReLU, 2x2 pool) | linear head
                             // "torchscript": the top-level children of script_path
                             // anything else: a model registered in pipeline/model_registry.h
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
  std::string script_path;   // torchscript: a torch.jit.save'd module whose children are units
  // Training data from a file instead of synthetic data: "*.bin" is a token stream of
  // little-endian uint16 (nanoGPT's format), cut into seq_len + 1 windows; anything else is a
  // torch.save'd tuple (inputs, targets) with samples along dimension 0.
  std::string data_path;
  int eval_samples = 0;  // the last samples of the data, held out for evaluation (not trained)
  // Units of a torchscript or registered model (the launcher fills it in from the model).
  int units = 0;
};

// Number of units (pieces between cut points): gpt layers + 2, cnn layers + 1, else `units`.
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
  int steps = 1;                  // steps to train in this run
  int first_step = 0;             // global index of the first step (set when resuming)
  double lr = 0.05;               // peak learning rate of lr_schedule
  double momentum = 0.9;          // sgd
  std::string optimizer = "sgd";  // sgd (with momentum), adam or adamw (torch::optim)
  double weight_decay = 0;        // adam: L2 added to the gradient; adamw: decoupled
  double clip_norm = 0;           // clip the global gradient norm (all stages) to this; 0 = off
  // An lr/schedule_spec.h spec ("knee", "cosine:warmup=0.05", "constant", ...) over
  // schedule_steps updates (0: first_step + steps of this run).
  std::string lr_schedule = "knee";
  int schedule_steps = 0;
  int eval_every = 0;  // evaluate on the held-out samples every N steps and at the end; 0 = off
  uint64_t seed = 1;   // initialization, data order and dropout
  std::vector<int> boundaries;      // stage s owns units [boundaries[s], boundaries[s+1])
  std::vector<Endpoint> endpoints;  // one per rank
  std::string save_dir;  // write a cut-keyed checkpoint here after the last step (if set)
  // With save_dir: also after every global step whose count of completed steps is a multiple
  // of this (0 = only at the end). Global, so checkpoints of a job that morphs between runs
  // land on the same steps. Elastic runs (pipeline/morph.h) restart from the newest one.
  int checkpoint_every = 0;
  std::string resume_dir;   // start from the newest complete checkpoint here (if set)
  int timeout_ms = 120000;  // a step or a wait on a peer longer than this fails the worker
  // A worker's run directory (set by the launcher): it refreshes heartbeat-<rank> there twice a
  // second, and stops at the step boundary named by a "stop-at" file (a preemption notice).
  std::string run_dir;
  // The engine of the replicas' gradient all-reduce: "gloo" (c10d ProcessGroupGloo, buckets
  // started during the backward, pipeline/gloo_collective.h) or "tcp" (our ring over the
  // transport, after the backward, pipeline/allreduce.h). Point-to-point is always the transport.
  std::string collective = "gloo";
  // gloo: the c10d TCPStore of the rendezvous (MASTER_ADDR:MASTER_PORT; a worker's environment
  // overrides it). Needed when replicas > 1.
  Endpoint store;
  // Gradient bucket size: a bucket is all-reduced as soon as the backward has produced it.
  int bucket_kb = 16384;
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

nlohmann::json ModelSpecToJson(const ModelSpec& spec);
Result<ModelSpec> ModelSpecFromJson(const nlohmann::json& json);  // not validated
nlohmann::json JobToJson(const JobConfig& job);
Result<JobConfig> JobFromJson(const nlohmann::json& json);

}  // namespace tessera::pipeline
