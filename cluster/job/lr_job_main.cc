// lr-cluster-job: lr-train under the cluster control interface, the job type "lr" (lr_job.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cluster/job/job_flags.h"
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
  JobFlags job_flags;
  auto& app = program.app();
  lr::AddTrainFlags(app, config);
  app.add_option("--world-size", options.world_size,
                 "Logical world size (set by the agent; reported)")
      ->capture_default_str();
  app.add_option("--min-step-ms", options.min_step_ms,
                 "Minimum wall time of one step (emulates a bigger model)")
      ->capture_default_str();
  AddJobFlags(app, job_flags);
  int code = program.Run(argc, argv, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControlFromFlags(job_flags));
    Result<LrJobOutcome> outcome = RunLrJob(config, options, control);
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
