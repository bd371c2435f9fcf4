// FIFO gang scheduling without preemption: the baseline every cluster scheduler is compared to.
#include <memory>

#include "cluster/policy/placement.h"
#include "cluster/policy/policy.h"

namespace tessera::cluster {
namespace {

class FifoPolicy final : public Policy {
 public:
  std::vector<Action> Decide(const ClusterView& view) override {
    std::vector<Action> actions;
    std::vector<int> free = FreeSlots(view);
    int total_free = 0;
    int capacity = 0;
    for (size_t n = 0; n < view.nodes.size(); ++n) {
      if (!view.nodes[n].alive) continue;
      total_free += std::max(0, free[n]);
      capacity += view.nodes[n].slots;
    }
    if (total_free == 0) return actions;  // nothing can start: skip the queue scan
    const int max_node = MaxNodeSlots(view);
    for (int i : FifoOrder(view)) {
      const JobView& job = view.jobs[i];
      if (job.state != JobState::kPending && job.state != JobState::kSuspended) continue;
      // A gang larger than every live slot can never start; blocking on it would stop the queue
      // forever, so it is passed over (the caller is expected to reject such jobs up front).
      if (job.spec.requested_workers > capacity) continue;
      std::optional<Placement> placement =
          FindCompactPlacement(free, job.spec.requested_workers, max_node);
      if (!placement) break;  // head-of-line blocking: strict FIFO, no backfilling
      Take(free, *placement);
      actions.push_back({Action::Kind::kStart, i, job.spec.id, std::move(*placement)});
    }
    return actions;
  }
  std::string_view name() const override { return "fifo"; }
};

}  // namespace

std::unique_ptr<Policy> NewFifoPolicy() { return std::make_unique<FifoPolicy>(); }

}  // namespace tessera::cluster
