// lr-train as a cluster job: the learning-rate library's training harness (lr/trainer.h) run
// under the job control interface (control.h), as the job type "lr" (job_type.h).
//
// The adapter lives on the cluster side, so lr knows nothing of the cluster: it fills in lr's
// checkpointing (<job dir>/lr/checkpoint.pt, lr's own format) and its per-step stop hook. At
// every step boundary the hook polls the order file, reports progress (at the first boundary,
// which marks the restore as done, then every ~100 ms) and, on a checkpoint-and-exit order,
// stops the run, which lr checkpoints. A restarted incarnation resumes from that checkpoint;
// lr's runs are bit-for-bit repeatable, so the job ends exactly as an uninterrupted lr-train run
// (same per-step log, loss and parameters) however often it was preempted or moved.
//
//   lr::TrainConfig config = ...;   // lr-train's flags (lr::AddTrainFlags)
//   TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControl::FromEnvironment());
//   TESSERA_ASSIGN_OR_RETURN(LrJobOutcome outcome, RunLrJob(config, {.world_size = 2}, control));
//
// lr-train is a single-process job: the slots granted (TESSERA_JOB_WORKERS) are reported, not
// used, and its arithmetic does not depend on them, so resizes are harmless.
#pragma once

#include <cstdint>

#include "cluster/job/control.h"
#include "core/status.h"
#include "lr/trainer.h"

namespace tessera::cluster {

struct LrJobOptions {
  int32_t world_size = 1;  // the job's logical world size (from the agent), reported
  // Minimum wall time of one step, in milliseconds: stands in for a model that takes that long
  // on an accelerator, as cluster-train-job's --replica-ms. 0 = as fast as the CPU allows.
  int64_t min_step_ms = 0;
};

struct LrJobOutcome {
  ExitReport::Kind kind = ExitReport::Kind::kFinished;
  lr::TrainResult result;
};

// The per-step log goes to config.log_csv, by default <job dir>/train.csv. Tuner runs and
// stop_after are INVALID_ARGUMENT (lr::Train can checkpoint a tuner's state, but this job's
// checkpoint does not carry it yet; the agent decides when a job stops); so is a config with checkpoint_dir or resume set (the job directory owns them).
Result<LrJobOutcome> RunLrJob(lr::TrainConfig config, const LrJobOptions& options,
                              JobControl& control);

}  // namespace tessera::cluster
