// cluster-pipeline-job: the pipeline trainer (pipeline-launch --elastic) under the cluster
// control interface, the job type "pipeline" (pipeline_job.h). Takes pipeline-launch's flags,
// except those the cluster sets; the agent appends --world-size.
#include <cstdio>
#include <string>
#include <vector>

#include "cluster/job/pipeline_job.h"
#include "core/cli.h"
#include "fmt/format.h"

namespace {

// pipeline-launch beside this binary, as the agent finds job programs beside itself.
std::filesystem::path DefaultLauncher() {
  std::error_code ec;
  auto self = std::filesystem::canonical("/proc/self/exe", ec);
  return ec ? std::filesystem::path("pipeline-launch") : self.parent_path() / "pipeline-launch";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::cluster;
  cli::Program program(
      "cluster-pipeline-job",
      "Runs pipeline-launch --elastic as a cluster job: one launcher for the slots granted, "
      "resuming from the job directory's newest checkpoint with a new auto-configuration; a "
      "stop order checkpoints every worker at the next step boundary. Every flag not listed "
      "here goes to pipeline-launch (docs/cluster.md, Varuna jobs).");
  PipelineJobOptions options;
  options.launcher = DefaultLauncher();
  auto& app = program.app();
  app.allow_extras();
  app.prefix_command(false);
  std::string launcher = options.launcher.string();
  app.add_option("--launcher", launcher, "pipeline-launch binary")->capture_default_str();
  app.add_option("--world-size", options.world_size,
                 "Logical world size (set by the agent; reported)")
      ->capture_default_str();
  return program.Run(argc, argv, [&]() -> Status {
    options.launcher = launcher;
    options.launch_flags = app.remaining();
    if (Status s = CheckPipelineFlags(options.launch_flags); !s.ok()) {
      return cli::UsageError(s.message());
    }
    if (Status s = CheckFlagsKnownTo(options.launcher, options.launch_flags); !s.ok()) {
      if (s.code() == StatusCode::kInvalidArgument) return cli::UsageError(s.message());
      return s;
    }
    TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControl::FromEnvironment());
    TESSERA_ASSIGN_OR_RETURN(PipelineJobOutcome outcome, RunPipelineJob(options, control));
    fmt::print("{} step={}/{} ({})\n",
               outcome.kind == ExitReport::Kind::kFinished ? "finished" : "checkpointed",
               outcome.step, outcome.total_steps, outcome.incarnation_dir.string());
    return Status::Ok();
  });
}
