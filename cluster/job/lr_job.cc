#include "cluster/job/lr_job.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

namespace tessera::cluster {

Result<LrJobOutcome> RunLrJob(lr::TrainConfig config, const LrJobOptions& options,
                              JobControl& control) {
  if (config.tune) {
    return InvalidArgumentError("tuner runs cannot be preempted (their search is not saved)");
  }
  if (config.stop_after > 0) {
    return InvalidArgumentError("--stop-after is for runs by hand; under the cluster use orders");
  }
  if (!config.checkpoint_dir.empty() || config.resume) {
    return InvalidArgumentError("checkpoints of a cluster job live in its job directory");
  }
  if (options.world_size < 1 || options.min_step_ms < 0) {
    return InvalidArgumentError("world size must be >= 1 and the minimum step time >= 0");
  }
  config.checkpoint_dir = (control.dir() / "lr").string();
  config.resume = true;
  if (config.log_csv.empty()) config.log_csv = (control.dir() / "train.csv").string();

  using Clock = std::chrono::steady_clock;
  Status hook_status;
  bool ordered = false;
  bool first = true;
  Clock::time_point last_boundary, last_report;
  auto report = [&](int64_t step, int64_t total, double loss) {
    return control.ReportProgress({.step = step,
                                   .total_steps = total,
                                   .world_size = options.world_size,
                                   .workers = control.workers(),
                                   .loss = loss});
  };
  config.should_stop = [&](const lr::StepInfo& at) {
    const Clock::time_point now = Clock::now();
    if (first) {
      spdlog::info("job {}: {} at step {}/{} (lr-train, log {})", control.job_id(),
                   at.resumed_from > 0 ? "resuming" : "starting", at.step, at.total_steps,
                   config.log_csv);
    } else if (options.min_step_ms > 0) {
      std::this_thread::sleep_until(last_boundary + std::chrono::milliseconds(options.min_step_ms));
    }
    last_boundary = Clock::now();
    if (first || now - last_report >= std::chrono::milliseconds(100)) {
      if (Status s = report(at.step, at.total_steps, at.loss); !s.ok()) {
        hook_status = s;  // stop (checkpointed) and fail: the agent restarts the job
        return true;
      }
      last_report = now;
      first = false;
    }
    if (control.PollOrder() == Order::kCheckpointAndExit) {
      ordered = true;
      return true;
    }
    return false;
  };

  TESSERA_ASSIGN_OR_RETURN(lr::TrainResult result, lr::Train(config));
  TESSERA_RETURN_IF_ERROR(hook_status);
  TESSERA_RETURN_IF_ERROR(report(result.steps_done, result.total_steps, result.last_loss));
  LrJobOutcome outcome{.result = result};
  if (result.finished) {
    outcome.kind = ExitReport::Kind::kFinished;
    spdlog::info("job {}: finished {} steps, loss {:.6f}", control.job_id(), result.steps_done,
                 result.last_loss);
  } else if (ordered) {
    outcome.kind = ExitReport::Kind::kCheckpointed;
    spdlog::info("job {}: checkpointed at step {} on order", control.job_id(), result.steps_done);
  } else {
    return InternalError(
        fmt::format("training stopped at step {} without an order", result.steps_done));
  }
  TESSERA_RETURN_IF_ERROR(control.ReportExit({.kind = outcome.kind, .step = result.steps_done}));
  return outcome;
}

}  // namespace tessera::cluster
