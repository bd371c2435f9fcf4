#include "cluster/sim/policy_spec.h"

#include <string>

namespace tessera::cluster::sim {
namespace {

// Forwards to a policy under another name.
class Renamed final : public Policy {
 public:
  Renamed(std::unique_ptr<Policy> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}
  std::vector<Action> Decide(const ClusterView& view) override { return inner_->Decide(view); }
  std::string_view name() const override { return name_; }

 private:
  std::unique_ptr<Policy> inner_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Policy>> MakePolicy(std::string_view spec, const SingularityOptions& base) {
  if (spec == "singularity") return NewSingularityPolicy(base);
  if (spec.starts_with("singularity:")) {
    const std::string_view variant = spec.substr(std::string_view("singularity:").size());
    SingularityOptions options = base;
    if (variant == "no-elastic") {
      options.elastic = false;
    } else if (variant == "no-defragment") {
      options.defragment = false;
    } else if (variant == "no-headroom") {
      options.premium_headroom_slots = 0;
    } else if (variant == "best-fit") {
      options.evict_by_cost = false;
    } else {
      return InvalidArgumentError("unknown singularity variant '" + std::string(variant) +
                                  "' (want no-elastic, no-defragment, no-headroom or best-fit)");
    }
    return std::unique_ptr<Policy>(
        std::make_unique<Renamed>(NewSingularityPolicy(options), std::string(spec)));
  }
  return NewPolicyByName(spec);
}

}  // namespace tessera::cluster::sim
