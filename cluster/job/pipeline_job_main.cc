// cluster-pipeline-job: the pipeline trainer (pipeline-launch --elastic) under the cluster
// control interface, the job type "pipeline" (pipeline_job.h). Takes pipeline-launch's flags,
// except those the cluster sets; the agent appends --world-size. On the other nodes of a
// multi-node placement (TESSERA_NODE_RANK >= 1) it serves the launcher's workers there, and
// `cluster-pipeline-job --node-exec HOST:PORT COMMAND...` is the hosts file's prefix that starts
// a worker on such a node (node_exec.h).
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/job/node_exec.h"
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
  if (argc >= 2 && std::string_view(argv[1]) == "--node-exec") {
    if (argc < 4) {
      std::fputs("usage: cluster-pipeline-job --node-exec HOST:PORT COMMAND [ARGS...]\n", stderr);
      return 2;
    }
    return RunNodeExec(argv[2], std::vector<std::string>(argv + 3, argv + argc),
                       ForwardedEnvironment());
  }
  cli::Program program(
      "cluster-pipeline-job",
      "Runs pipeline-launch --elastic as a cluster job: one launcher for the slots granted, "
      "resuming from the job directory's newest checkpoint with a new auto-configuration; a "
      "stop order checkpoints every worker at the next step boundary. Every flag not listed "
      "here goes to pipeline-launch (docs/cluster.md, Varuna jobs). On the other nodes of a "
      "multi-node placement it serves the launcher's workers there; `cluster-pipeline-job "
      "--node-exec HOST:PORT COMMAND...` (as the first argument) is the hosts file's prefix "
      "that runs COMMAND on such a node.");
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
    options.part = PipelinePartFromEnvironment();
    std::error_code ec;
    options.node_exec = std::filesystem::canonical("/proc/self/exe", ec);
    if (options.part.node_rank > 0) {
      // Another node's part: the launcher runs on the placement's first node.
      TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControl::FromEnvironment());
      TESSERA_ASSIGN_OR_RETURN(PipelineJobOutcome outcome, RunPipelineNode(options.part, control));
      fmt::print("node part {}: {} step={}\n", options.part.node_rank,
                 outcome.kind == ExitReport::Kind::kFinished ? "finished" : "checkpointed",
                 outcome.step);
      return Status::Ok();
    }
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
