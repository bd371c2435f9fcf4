// Policies by name, for command lines and config files.
#include "cluster/policy/policy.h"

namespace tessera::cluster {

Result<std::unique_ptr<Policy>> NewPolicyByName(std::string_view name) {
  if (name == "fifo") return NewFifoPolicy();
  if (name == "tiresias") return NewTiresiasPolicy();
  if (name == "strict") return NewStrictPriorityPolicy();
  if (name == "singularity") return NewSingularityPolicy();
  return InvalidArgumentError("unknown policy '" + std::string(name) +
                              "' (want fifo, tiresias, strict or singularity)");
}

std::vector<std::string> PolicyNames() { return {"fifo", "tiresias", "strict", "singularity"}; }

}  // namespace tessera::cluster
