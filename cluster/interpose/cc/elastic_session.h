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
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "cluster/interpose/cc/meta_exchange.h"
#include "core/status.h"

namespace tessera::cluster::interpose {

// torchrun's and the agent's environment.
struct JobEnvironment {
  int rank = 0;
  int world_size = 1;
  int workers = 1;  // slots granted to the run (TESSERA_JOB_WORKERS)
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
  static Result<std::unique_ptr<ElasticSession>> Start(torch::nn::Module& model,
                                                       torch::optim::Optimizer& optimizer);
  ~ElasticSession();

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  c10d::ProcessGroup& group() { return *group_; }
  // The first step to run: 0, or the step the restored checkpoint was taken after.
  int64_t start_step() const { return start_step_; }

  void AverageGradients();
  void StepDone();

 private:
  ElasticSession(JobEnvironment env, torch::nn::Module& model, torch::optim::Optimizer& optimizer)
      : env_(std::move(env)), model_(model), optimizer_(optimizer) {}
  Status Restore();
  [[noreturn]] void CheckpointAndExit();
  void ReportProgress(bool force);
  void Log(const std::string& message) const;

  JobEnvironment env_;
  torch::nn::Module& model_;
  torch::optim::Optimizer& optimizer_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  int64_t start_step_ = 0;
  int64_t steps_done_ = 0;
  bool order_seen_ = false;
  int64_t order_seen_step_ = -1;
  std::optional<MetaExchange> meta_;  // under the scheduler, with more than one rank
  std::chrono::steady_clock::time_point last_progress_{};
};

}  // namespace tessera::cluster::interpose
