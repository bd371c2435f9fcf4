// The interposition layer for libtorch C++ jobs: a gloo process group that carries the
// barrier, and state capture with exact resume. The C++ counterpart of
// cluster/interpose/python (docs/cluster.md, "The interposition layer"); C++ has no framework
// entry points to wrap, so the job links this and calls it at three places:
//
//   torch::manual_seed(...);  build model and optimizer as usual
//   TESSERA_ASSIGN_OR_RETURN(auto session, ElasticSession::Start(*model, optimizer));
//   for (int64_t step = session->start_step(); step < steps; ++step) {
//     batch = Batch(step, session->rank());          // the data of step s: a function of s
//     optimizer.zero_grad(); loss(model(batch)).backward();
//     session->AverageGradients();                   // the gradient allreduce (+ the barrier)
//     optimizer.step();
//     session->StepDone();                           // may checkpoint and exit(0) here
//   }
//
// Start() connects a c10d ProcessGroupGloo from torchrun's environment (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT; rank 0 serves the TCPStore) and, under the scheduler
// (TESSERA_RUN_DIR set), restores the newest checkpoint of TESSERA_CHECKPOINT_DIR: the model's
// parameters and buffers, the optimizer's state, this rank's CPU RNG, and the step.
//
// The barrier. AverageGradients() flattens every gradient into one tensor, allreduces it
// (SUM) and divides by the world size. StepDone() checks the order file (one stat) and runs
// the meta-allreduce (meta_exchange.h): this rank's need out to every other rank, every
// rank's need of the previous step in; a positive sum means every rank stops after this
// step, so a rank that sees the order after step k stops all of them at step k + 1. Then rank
// 0 writes the model and optimizer, every rank its RNG, a group barrier, rank 0 points LATEST
// at it, another barrier, and each rank writes <run dir>/rank-<R>.exit ("checkpointed
// step=N") and exits with code 0.
//
// What the job must do: draw the data of step s as a function of s (and its rank), keep its
// training state in the model, the optimizer and the default CPU generator, and call
// StepDone() last in the iteration. Outside the scheduler the session is a plain gloo group.
//
// Logical ranks (replica splicing in one process, world size kept). A job started with
// StartWithLogicalRanks runs its forward and backward once per logical rank it holds:
//
//   auto session = ElasticSession::StartWithLogicalRanks(*model, optimizer,
//                                                        [](int r) { return 100 + r; });
//   for (int64_t step = session->start_step(); step < steps; ++step) {
//     session->ForEachLogicalRank([&](int rank) {       // each of this process's ranks
//       batch = Batch(step, rank);                     // rank of logical_world_size()
//       loss(model(batch)).backward();
//     });
//     session->AverageGradients();                     // ordered sum of every rank's / W
//     optimizer.step();
//     session->StepDone();
//   }
//
// Submitted with `cluster-ctl submit --logical-ranks`, the agent starts one process per slot
// and tells each its block of the W ranks (TESSERA_LOGICAL_WORLD_SIZE, TESSERA_LOGICAL_RANKS,
// cluster/agent/gang_run.h); started as torchrun starts it (no such variables), every process
// holds one logical rank, its RANK. Each logical rank has a CPU generator of its own (seeded by
// the callback, swapped in as the default generator around its part of the step, captured in
// rank-<r>.pt) and a gradient of its own: ForEachLogicalRank clears the gradients before each
// rank and keeps a copy of each rank's. AverageGradients allgathers every process's
// per-logical-rank gradients and sums them in rank order 0, 1, ..., W - 1, then divides by W:
// the same operations on the same operands whatever the number of processes, so a run spliced
// onto fewer processes is bit-identical to one process per rank. (gloo's ring allreduce sums
// in an order that depends on the number of processes, and a process that pre-summed its ranks
// would change the order too.) The cost: every process receives every rank's gradient, (P - 1)
// x ceil(W / P) gradients per step instead of a ring allreduce's 2 (P - 1) / P; the job's
// randomness must be drawn inside ForEachLogicalRank.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "cluster/interpose/cc/meta_exchange.h"
#include "core/status.h"

namespace tessera::cluster::interpose {

// torchrun's and the agent's environment.
struct JobEnvironment {
  int rank = 0;
  int world_size = 1;
  int workers = 1;  // slots granted to the run (TESSERA_JOB_WORKERS)
  // Logical ranks: the job's world size and this process's block [first, first + count).
  // Without TESSERA_LOGICAL_* these are world_size and {rank}; `logical` says they were set.
  bool logical = false;
  int logical_world_size = 1;
  int first_logical_rank = 0;
  int logical_rank_count = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::filesystem::path run_dir;         // empty: not under the scheduler
  std::filesystem::path checkpoint_dir;  // TESSERA_CHECKPOINT_DIR
  std::string run = "?";

  // INVALID_ARGUMENT naming a malformed variable.
  static Result<JobEnvironment> FromEnvironment();
};

class ElasticSession {
 public:
  // One rank per process, gradients averaged with gloo's allreduce. FAILED_PRECONDITION when
  // the agent started the process with logical ranks.
  static Result<std::unique_ptr<ElasticSession>> Start(torch::nn::Module& model,
                                                       torch::optim::Optimizer& optimizer);
  // Logical ranks (above); `seed_of_rank(r)` seeds logical rank r's CPU generator.
  static Result<std::unique_ptr<ElasticSession>> StartWithLogicalRanks(
      torch::nn::Module& model, torch::optim::Optimizer& optimizer,
      const std::function<uint64_t(int logical_rank)>& seed_of_rank);
  ~ElasticSession();

  // The process's rank and the number of processes (c10d's group).
  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  // The job's world size: world_size() without logical ranks.
  int logical_world_size() const { return env_.logical_world_size; }
  // Runs `fn(r)` for each logical rank r this process holds, in order (with Start: once, with
  // rank()). With logical ranks, each r gets cleared gradients and its own CPU generator as the
  // default generator, and its gradients are kept for AverageGradients.
  void ForEachLogicalRank(const std::function<void(int logical_rank)>& fn);
  c10d::ProcessGroup& group() { return *group_; }
  // The first step to run: 0, or the step the restored checkpoint was taken after.
  int64_t start_step() const { return start_step_; }

  void AverageGradients();
  void StepDone();

 private:
  ElasticSession(JobEnvironment env, torch::nn::Module& model, torch::optim::Optimizer& optimizer)
      : env_(std::move(env)), model_(model), optimizer_(optimizer) {}
  // The group, the barrier's connections and, under the scheduler, the restore; `configure`
  // runs on the new session first.
  static Result<std::unique_ptr<ElasticSession>> Connect(
      JobEnvironment env, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
      const std::function<void(ElasticSession&)>& configure = {});
  Status Restore();
  void AverageLogicalRankGradients();
  std::string LogicalRanksText() const;
  [[noreturn]] void CheckpointAndExit();
  void ReportProgress(bool force);
  void Log(const std::string& message) const;

  JobEnvironment env_;
  torch::nn::Module& model_;
  torch::optim::Optimizer& optimizer_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  int64_t start_step_ = 0;
  int64_t steps_done_ = 0;
  bool logical_mode_ = false;
  std::vector<torch::Tensor> rank_rng_;  // per logical rank held, its CPU generator state
  torch::Tensor rank_grads_;             // [ceil(W / P), parameters' numel]: row i = rank first+i
  bool order_seen_ = false;
  int64_t order_seen_step_ = -1;
  std::optional<MetaExchange> meta_;  // under the scheduler, with more than one rank
  std::chrono::steady_clock::time_point last_progress_{};
};

}  // namespace tessera::cluster::interpose
