// Tier-aware strict-priority baseline: what a scheduler with priority classes and preemption
// (Kubernetes PriorityClass, Slurm partition priority) does without any of Singularity's
// mechanisms. Premium before standard before basic (within a tier, jobs on borrowed quota after
// the others: quota.h), FIFO within a tier; running jobs keep their
// rank within their tier (no preemption among equals); a waiting job preempts jobs of lower tiers
// when the ranking's prefix that fits the cluster by slot count includes it; full gangs only,
// no splicing, no migration, no headroom, no SLA slack. Placement is the shared compact one.
#include <algorithm>
#include <memory>
#include <vector>

#include "cluster/policy/placement.h"
#include "cluster/policy/policy.h"

namespace tessera::cluster {
namespace {

class StrictPriorityPolicy final : public Policy {
 public:
  std::vector<Action> Decide(const ClusterView& view) override {
    std::vector<Action> actions;
    std::vector<int> free(view.nodes.size());
    int capacity = 0;
    for (size_t k = 0; k < view.nodes.size(); ++k) {
      free[k] = view.nodes[k].alive ? view.nodes[k].slots - view.nodes[k].draining : 0;
      capacity += view.nodes[k].alive ? view.nodes[k].slots : 0;
    }
    // Per tier, in-quota jobs before borrowing ones (quota.h: owners take their quota back); in
    // each group running jobs first (in FIFO order), then waiting ones (FIFO). Checkpointing jobs
    // hold their slots whatever their rank.
    constexpr int kGroups = 2 * kNumTiers;
    std::vector<int> running[kGroups], waiting[kGroups];
    bool any_waiting = false;
    int left = capacity;
    for (int i : FifoOrder(view)) {
      const JobView& job = view.jobs[i];
      const int tier = 2 * static_cast<int>(job.spec.tier) + (job.spec.borrowed ? 1 : 0);
      switch (job.state) {
        case JobState::kFinished:
          break;
        case JobState::kCheckpointing:
          for (const Slice& s : job.placement) free[s.node] -= s.slots;
          left -= job.workers();
          break;
        case JobState::kRunning:
          for (const Slice& s : job.placement) free[s.node] -= s.slots;
          running[tier].push_back(i);
          break;
        case JobState::kPending:
        case JobState::kSuspended:
          waiting[tier].push_back(i);
          any_waiting = true;
          break;
      }
    }
    if (!any_waiting) return actions;  // preempting only ever serves a waiting job
    std::vector<char> keep(view.jobs.size(), 0);
    std::vector<int> selected;  // waiting jobs to start, in rank order
    for (int t = 0; t < kGroups; ++t) {
      for (const std::vector<int>* list : {&running[t], &waiting[t]}) {
        for (int i : *list) {
          const JobView& job = view.jobs[i];
          const int need =
              job.state == JobState::kRunning ? job.workers() : job.spec.requested_workers;
          if (need > left) continue;  // backfill: a smaller job further down may fit
          keep[i] = 1;
          left -= need;
          if (job.state != JobState::kRunning) selected.push_back(i);
        }
      }
    }
    for (int t = 0; t < kGroups; ++t) {
      for (int i : running[t]) {
        if (!keep[i]) actions.push_back({Action::Kind::kPreempt, i, view.jobs[i].spec.id, {}});
      }
    }
    const int max_node = MaxNodeSlots(view);
    for (int i : selected) {
      const JobView& job = view.jobs[i];
      // A selected job that does not fit yet waits for the checkpoints in flight.
      if (std::optional<Placement> p =
              FindCompactPlacement(free, job.spec.requested_workers, max_node)) {
        Take(free, *p);
        actions.push_back({Action::Kind::kStart, i, job.spec.id, std::move(*p)});
      }
    }
    return actions;
  }

  std::string_view name() const override { return "strict"; }
};

}  // namespace

std::unique_ptr<Policy> NewStrictPriorityPolicy() {
  return std::make_unique<StrictPriorityPolicy>();
}

}  // namespace tessera::cluster
