// FIFO gang scheduling without preemption: the baseline every cluster scheduler is compared to.
#include <algorithm>
#include <memory>

#include "cluster/policy/placement.h"
#include "cluster/policy/policy.h"

namespace tessera::cluster {
namespace {

class FifoPolicy final : public Policy {
 public:
  // One pass over the view for the free slots (the replay calls this ~10^5 times on views of
  // ~10^4 jobs), then a scan of the queue only when something can start.
  std::vector<Action> Decide(const ClusterView& view) override {
    std::vector<Action> actions;
    std::vector<int> free(view.nodes.size());
    int capacity = 0;
    for (size_t n = 0; n < view.nodes.size(); ++n) {
      free[n] = view.nodes[n].alive ? view.nodes[n].slots - view.nodes[n].draining : 0;
      capacity += view.nodes[n].alive ? view.nodes[n].slots : 0;
    }
    bool sorted = true;
    for (size_t i = 0; i < view.jobs.size(); ++i) {
      const JobView& job = view.jobs[i];
      if (i > 0 && view.jobs[i - 1].spec.submit_time > job.spec.submit_time) sorted = false;
      if (job.state != JobState::kRunning && job.state != JobState::kCheckpointing) continue;
      for (const Slice& s : job.placement) {
        if (s.node >= 0 && static_cast<size_t>(s.node) < free.size()) free[s.node] -= s.slots;
      }
    }
    int total_free = 0;
    for (int f : free) total_free += std::max(0, f);
    if (total_free == 0) return actions;  // nothing can start: skip the queue scan
    const std::vector<int> order = sorted ? std::vector<int>() : FifoOrder(view);
    const int max_node = MaxNodeSlots(view);
    for (size_t r = 0; r < view.jobs.size(); ++r) {
      const int i = sorted ? static_cast<int>(r) : order[r];
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
