// cluster-train-job: the real training job that node agents run (see trainer.h).
#include <cstdio>
#include <cstdlib>

#include "cluster/job/job_flags.h"
#include "cluster/job/trainer.h"
#include "core/cli.h"

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::cluster;
  cli::Program program("cluster-train-job",
                       "Trains a small data-parallel MLP under the cluster control interface: "
                       "resumes from the latest checkpoint, obeys checkpoint-and-exit orders.");
  TrainConfig config;
  JobFlags job_flags;
  auto& app = program.app();
  app.add_option("--steps", config.total_steps, "Training steps of the whole job")
      ->capture_default_str();
  app.add_option("--world-size", config.world_size, "Logical data-parallel replicas")
      ->capture_default_str();
  app.add_option("--batch", config.batch_per_replica, "Batch per replica")->capture_default_str();
  app.add_option("--hidden", config.hidden, "Hidden units")->capture_default_str();
  app.add_option("--lr", config.learning_rate, "Learning rate")->capture_default_str();
  app.add_option("--seed", config.seed, "Seed of data and initialization")->capture_default_str();
  app.add_option("--checkpoint-every", config.checkpoint_every,
                 "Periodic checkpoint interval in steps (0 = only on order and at the end)")
      ->capture_default_str();
  app.add_option("--replica-ms", config.replica_ms,
                 "Minimum wall time of one replica's step (emulates a bigger model)")
      ->capture_default_str();
  AddJobFlags(app, job_flags);
  int code = program.Run(argc, argv, [&]() -> Status {
    if (Status s = ValidateTrainConfig(config); !s.ok()) return cli::UsageError(s.message());
    TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControlFromFlags(job_flags));
    TESSERA_ASSIGN_OR_RETURN(TrainOutcome outcome, RunTrainingJob(config, control));
    std::printf("%s step=%lld resumed_from=%lld fingerprint=%016llx loss=%.9g\n",
                outcome.kind == ExitReport::Kind::kFinished ? "finished" : "checkpointed",
                static_cast<long long>(outcome.step), static_cast<long long>(outcome.resumed_from),
                static_cast<unsigned long long>(outcome.state_fingerprint), outcome.loss);
    return Status::Ok();
  });
  // Skip static destructors: libtorch's take ~0.25 s (measured from the exit report to the
  // process's end), and a preempted job's slots are only handed on once the process is gone.
  // Everything this process wrote is already durable (atomic, fsynced files); stdio is flushed.
  std::fflush(nullptr);
  std::_Exit(code);
}
