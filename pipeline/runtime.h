// The worker: one process per (stage, replica) that trains its stage's units.
//
// Per step, the worker walks its stage's task list (pipeline/schedule.h) with a TaskCursor:
// forwards receive the previous stage's activation (stage 0 reads its rows of the batch), run
// the stage's units and send the output on; stages that recompute run the forward without
// autograd and keep only the input; recompute reruns it with autograd; backwards wait for the
// next stage's gradient (the last stage has the loss), backpropagate and send the input's
// gradient back. Messages go over pipeline/transport.h; while the next task waits, the worker
// sleeps on "a message arrived". The replicas of the stage sum their gradients (skipped at
// D = 1) through c10d/gloo, bucket by bucket as the last backward produces them
// (pipeline/gradient_buckets.h), or with our ring after the backward (collective "tcp"); the stages
// sum their squared gradient norms for clipping (if asked), and every replica applies the same
// torch::optim step (SGD, Adam or AdamW) at the learning rate of the job's lr/ schedule.
//
// A worker builds only its stage's units (pipeline/model.h). Every parameter's gradient is a
// view into one flat buffer of the stage, so the all-reduce reads and writes the gradients in
// place: no per-step copy.
//
// Losses are scaled by micro_batch / global_batch, so the summed gradients equal those of one
// forward over the global batch, and the sum of the replicas' losses is the global mean loss.
//
// This header is torch-free: workers are driven by pipeline/worker_main.cc.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/status.h"
#include "nlohmann/json.hpp"
#include "pipeline/checkpoint.h"
#include "pipeline/job.h"

namespace tessera::pipeline {

struct StepStats {
  int64_t step = 0;
  double loss = 0;         // last stage: this replica's share of the global mean loss; else 0
  double wall_s = 0;       // the whole step, including all-reduce and optimizer
  double cpu_s = 0;        // CPU time of this worker process (all its threads) in the step
  double pipeline_s = 0;   // step start to this stage's last backward
  double busy_s = 0;       // time in forward, recompute and backward tasks
  double busy_cpu_s = 0;   // CPU time of the computing thread in those tasks (TaskTimer)
  double allreduce_s = 0;  // gradient all-reduce with the other replicas
  double optimizer_s = 0;  // clipping (with its norm exchange) and the optimizer step
  double lr = 0;           // the learning rate of this step's update
  double eval_loss = std::nan("");  // last stage of replica 0, after an evaluation step
  int pulled_ahead = 0;             // opportunistic forwards
  int buckets_overlapped = 0;       // gradient buckets started during the backward (gloo)
};

struct WorkerReport {
  int rank = 0, stage = 0, replica = 0;
  std::vector<StepStats> steps;
  // Mean seconds per micro-batch task, over all steps but the first (warm-up) when possible.
  double forward_s = 0, recompute_s = 0, backward_s = 0;
  double activation_bytes = 0;  // one micro-batch's output sent to the next stage
  double gradient_bytes = 0;    // this stage's parameter gradients
  uint64_t bytes_sent = 0, bytes_received = 0;
  double peak_rss_bytes = 0;     // the process's peak resident set (getrusage)
  double parameter_bytes = 0;    // parameters of every unit this worker constructed
  int64_t stopped_at = -1;       // the step boundary a preemption notice stopped it at; -1: none
  std::string first_step_order;  // tasks as executed in the first step ("F0 F1 R0 B0 ...")
  // Delivery of activations and gradients from the neighbouring stages: the mean seconds from
  // the sender queuing a message (its stamp) to this worker starting the task that consumed
  // it, over the tasks that had waited for their message (the message arrived while no task
  // was ready), steps after the first; and how many there were. Measured only where the
  // neighbours run on this worker's host (their steady clock is ours); 0 and 0 otherwise.
  double message_delay_s = 0;
  int64_t message_delays = 0;
};

nlohmann::json ReportToJson(const WorkerReport& report);
Result<WorkerReport> ReportFromJson(const nlohmann::json& json);

// Runs worker `rank` of `job` to completion (connects to its peers, trains job.steps steps,
// saves a checkpoint if job.save_dir is set). Uses one intra-op thread.
Result<WorkerReport> RunWorker(const JobConfig& job, int rank);

struct ReferenceRun {
  std::vector<double> losses;    // global mean loss per step
  std::vector<UnitState> units;  // final parameters and optimizer state, per unit
};

// Trains job.model for job.steps steps in this process, a plain loop with torch::optim on the
// same global batches (same initialization, data, optimizer, schedule, clipping with
// torch::nn::utils::clip_grad_norm_). accumulate_micro_batch = 0 runs one forward over each
// global batch; otherwise micro-batches of that size, indexed as in the pipeline, which
// reproduces the pipeline's dropout masks. Honors job.resume_dir; writes nothing. Used for the
// bench baseline and for dropout runs; the equivalence tests' independent references are
// pipeline/reference_test_util (no pipeline classes) and PyTorch (pipeline/testdata).
Result<ReferenceRun> TrainReference(const JobConfig& job, int accumulate_micro_batch);

}  // namespace tessera::pipeline
