// Job types: which program a node agent runs for a job.
//
// The wire protocol carries a job's command line as opaque args, which the scheduler stores and
// hands to the agent unchanged. A job of a type other than the default names it in a leading
// "--job-type=<type>" arg (cluster-ctl submit --type lr adds it); the agent strips it and runs
// that type's program with the remaining args. Programs are found beside cluster-agent:
//
//   mlp  cluster-train-job  the data-parallel MLP with replica splicing (cluster/job/trainer.h)
//   lr   lr-cluster-job     lr-train's harness under the control interface (cluster/job/lr_job.h)
//   pipeline  cluster-pipeline-job  pipeline-launch --elastic (Varuna): a resize is a morph
//                           (cluster/job/pipeline_job.h)
//   command  (the args)     any program, one process per rank (a gang), torchrun's environment;
//                           the args are the command line (cluster/agent/gang_run.h). With
//                           "--logical-ranks" right after the type flag, one process per slot,
//                           each running its slot's ranks as logical ranks (rank_dealing.h)
//
//   TESSERA_ASSIGN_OR_RETURN(JobCommand command, SplitJobType(assignment_args));
//   program = programs.at(command.type);  argv = {program, command.args..., --world-size, W}
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::cluster {

inline constexpr char kJobTypeFlag[] = "--job-type";
inline constexpr char kDefaultJobType[] = "mlp";
inline constexpr char kCommandJobType[] = "command";
inline constexpr char kPipelineJobType[] = "pipeline";
// A command job whose program runs several logical ranks per process (the C++ interposition
// library's logical-rank mode, cluster/interpose/cc/elastic_session.h).
inline constexpr char kLogicalRanksFlag[] = "--logical-ranks";

struct JobType {
  std::string_view name;
  std::string_view program;  // file name of the program beside cluster-agent; "" = the args
  std::string_view description;
};

// Every known type, the default first.
std::span<const JobType> JobTypes();
// nullptr when `name` is not a known type.
const JobType* FindJobType(std::string_view name);

struct JobCommand {
  std::string type = kDefaultJobType;
  std::vector<std::string> args;  // the program's own flags
  // Command jobs: one process per slot, each holding its slot's block of ranks (else one
  // process per rank).
  bool logical_ranks = false;

  friend bool operator==(const JobCommand&, const JobCommand&) = default;
};

// The job's args as submitted: a leading "--job-type=<type>" if the type is not the default,
// then "--logical-ranks" for a command job that asks for them.
std::vector<std::string> JoinJobType(const JobCommand& command);
// The inverse. INVALID_ARGUMENT for an unknown type, a --job-type that is not the first arg, or
// --logical-ranks on a job that is not a command.
Result<JobCommand> SplitJobType(const std::vector<std::string>& args);
// Whether stored args are a command job's (one process per rank, see above).
bool IsCommandJob(const std::vector<std::string>& args);
// Whether stored args are a pipeline job's (pipeline_job.h: a part on every node of its placement).
bool IsPipelineJob(const std::vector<std::string>& args);

}  // namespace tessera::cluster
