#include "cluster/job/job_type.h"

#include <fmt/format.h>

#include <array>

namespace tessera::cluster {

namespace {

constexpr std::array<JobType, 4> kJobTypes = {{
    {"mlp", "cluster-train-job", "data-parallel MLP with replica splicing"},
    {"lr", "lr-cluster-job", "lr-train (Fashion-MNIST or character LM) with an lr schedule"},
    {"pipeline", "cluster-pipeline-job",
     "Varuna pipeline training (pipeline-launch --elastic); a resize morphs it"},
    {kCommandJobType, "", "any program, one process per rank with torchrun's environment"},
}};

bool IsTypeFlag(std::string_view arg) {
  return arg == kJobTypeFlag || arg.starts_with(std::string(kJobTypeFlag) + "=");
}

std::string KnownTypes() {
  std::string out;
  for (const JobType& t : kJobTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

}  // namespace

std::span<const JobType> JobTypes() { return kJobTypes; }

const JobType* FindJobType(std::string_view name) {
  for (const JobType& t : kJobTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<std::string> JoinJobType(const JobCommand& command) {
  std::vector<std::string> out;
  if (command.type != kDefaultJobType) {
    out.push_back(fmt::format("{}={}", kJobTypeFlag, command.type));
  }
  if (command.logical_ranks) out.push_back(kLogicalRanksFlag);
  out.insert(out.end(), command.args.begin(), command.args.end());
  return out;
}

Result<JobCommand> SplitJobType(const std::vector<std::string>& args) {
  JobCommand command;
  size_t first = 0;
  if (!args.empty() && IsTypeFlag(args[0])) {
    if (args[0] == kJobTypeFlag) {
      return InvalidArgumentError(fmt::format("write {}=<type>", kJobTypeFlag));
    }
    command.type = args[0].substr(std::string_view(kJobTypeFlag).size() + 1);
    first = 1;
  }
  if (FindJobType(command.type) == nullptr) {
    return InvalidArgumentError(
        fmt::format("unknown job type '{}' ({})", command.type, KnownTypes()));
  }
  if (first < args.size() && args[first] == kLogicalRanksFlag) {
    if (command.type != kCommandJobType) {
      return InvalidArgumentError(fmt::format("{} is for command jobs only", kLogicalRanksFlag));
    }
    command.logical_ranks = true;
    ++first;
  }
  for (size_t i = first; i < args.size(); ++i) {
    // A command's own args are the user's: they may say anything.
    if (command.type != kCommandJobType && IsTypeFlag(args[i])) {
      return InvalidArgumentError(fmt::format("{} must be the job's first arg", kJobTypeFlag));
    }
    command.args.push_back(args[i]);
  }
  if (command.type == kCommandJobType && command.args.empty()) {
    return InvalidArgumentError("a command job needs a command to run");
  }
  return command;
}

bool IsCommandJob(const std::vector<std::string>& args) {
  return !args.empty() && args[0] == fmt::format("{}={}", kJobTypeFlag, kCommandJobType);
}

bool IsPipelineJob(const std::vector<std::string>& args) {
  return !args.empty() && args[0] == fmt::format("{}={}", kJobTypeFlag, kPipelineJobType);
}

}  // namespace tessera::cluster
