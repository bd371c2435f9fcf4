// lr-cluster-job: lr-train under the cluster control interface, the job type "lr" (lr_job.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cluster/job/control.h"
#include "cluster/job/lr_job.h"
#include "core/cli.h"
#include "lr/trainer.h"

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::cluster;
  cli::Program program("lr-cluster-job",
                       "Runs lr-train as a cluster job: resumes from the job directory's latest "
                       "checkpoint, reports progress, obeys checkpoint-and-exit orders. Takes "
                       "lr-train's flags (see docs/cluster.md).");
  lr::TrainConfig config;
  LrJobOptions options;
  std::string job_id, job_dir;
  int workers = 0;
  auto& app = program.app();
  lr::AddTrainFlags(app, config);
  app.add_option("--world-size", options.world_size,
                 "Logical world size (set by the agent; reported)")
      ->capture_default_str();
  app.add_option("--min-step-ms", options.min_step_ms,
                 "Minimum wall time of one step (emulates a bigger model)")
      ->capture_default_str();
  app.add_option("--job-id", job_id, std::string("Job id (default: $") + kEnvJobId + ")");
  app.add_option("--job-dir", job_dir, std::string("Job directory (default: $") + kEnvJobDir + ")");
  app.add_option("--workers", workers,
                 std::string("Physical workers (default: $") + kEnvJobWorkers + ")");
  int code = program.Run(argc, argv, [&]() -> Status {
    // Flags override the environment, so the binary can also be run by hand.
    if (!job_id.empty()) ::setenv(kEnvJobId, job_id.c_str(), 1);
    if (!job_dir.empty()) ::setenv(kEnvJobDir, job_dir.c_str(), 1);
    if (workers != 0) ::setenv(kEnvJobWorkers, std::to_string(workers).c_str(), 1);
    Result<JobControl> control = JobControl::FromEnvironment();
    if (!control.ok()) return cli::UsageError(control.status().message());
    Result<LrJobOutcome> outcome = RunLrJob(config, options, *control);
    if (!outcome.ok() && outcome.status().code() == StatusCode::kInvalidArgument) {
      return cli::UsageError(outcome.status().message());
    }
    TESSERA_RETURN_IF_ERROR(outcome.status());
    const lr::TrainResult& r = outcome->result;
    std::printf("%s step=%lld/%lld resumed_from=%lld loss=%.9g params=%016llx\n",
                outcome->kind == ExitReport::Kind::kFinished ? "finished" : "checkpointed",
                static_cast<long long>(r.steps_done), static_cast<long long>(r.total_steps),
                static_cast<long long>(r.resumed_from), r.last_loss,
                static_cast<unsigned long long>(r.parameters_fingerprint));
    return Status::Ok();
  });
  // As cluster-train-job: skip libtorch's static destructors, so a preempted job's slots are
  // handed on as soon as its exit report is written. Every file is durable; stdio is flushed.
  std::fflush(nullptr);
  std::_Exit(code);
}
