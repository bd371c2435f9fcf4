// Tiresias-style discretized least-attained-service (Gu et al., NSDI'19), as a baseline: jobs are
// ranked by the GPU time they already received, in a few queues split by thresholds, FIFO within
// a queue; the top of the ranking that fits the cluster runs, the rest waits or is preempted.
// Tier-blind, gang, never resizes. Tiresias' placement ("relaxed consolidation") is replaced by
// the shared compact placement so that all policies face the same placement rule.
#include <algorithm>
#include <memory>
#include <vector>

#include "cluster/policy/placement.h"
#include "cluster/policy/policy.h"

namespace tessera::cluster {
namespace {

class TiresiasPolicy final : public Policy {
 public:
  explicit TiresiasPolicy(TiresiasOptions options) : options_(std::move(options)) {
    std::sort(options_.queue_thresholds.begin(), options_.queue_thresholds.end());
  }

  std::vector<Action> Decide(const ClusterView& view) override {
    std::vector<Action> actions;
    int capacity = 0;
    for (const NodeView& n : view.nodes) capacity += n.alive ? n.slots : 0;
    // Attained service in slot-seconds: progress is in ideal seconds of the full gang.
    auto queue_of = [&](const JobView& job) {
      const double service = job.progress * job.spec.requested_workers;
      return static_cast<int>(std::upper_bound(options_.queue_thresholds.begin(),
                                               options_.queue_thresholds.end(), service) -
                              options_.queue_thresholds.begin());
    };
    const int queues = static_cast<int>(options_.queue_thresholds.size()) + 1;
    const std::vector<int> fifo = FifoOrder(view);
    std::vector<int> queue(view.jobs.size());
    for (size_t i = 0; i < view.jobs.size(); ++i) queue[i] = queue_of(view.jobs[i]);

    // The jobs that should run: the ranking's prefix that fits by slot count. Running jobs inside
    // their minimum run are kept whatever their rank, and counted first.
    std::vector<bool> keep(view.jobs.size(), false);
    int left = capacity;
    for (size_t i = 0; i < view.jobs.size(); ++i) {
      const JobView& job = view.jobs[i];
      if (job.state == JobState::kCheckpointing ||
          (job.state == JobState::kRunning && view.now - job.last_change < options_.min_run_s)) {
        keep[i] = true;
        left -= job.workers();
      }
    }
    for (int q = 0; q < queues && left > 0; ++q) {
      for (int i : fifo) {
        const JobView& job = view.jobs[i];
        if (keep[i] || queue[i] != q || job.state == JobState::kFinished) continue;
        if (job.spec.requested_workers <= left) {
          keep[i] = true;
          left -= job.spec.requested_workers;
        }
      }
    }

    std::vector<int> free = FreeSlots(view);
    for (int& f : free) f = std::max(0, f);
    for (size_t i = 0; i < view.jobs.size(); ++i) {
      const JobView& job = view.jobs[i];
      if (job.state == JobState::kRunning && !keep[i]) {
        actions.push_back({Action::Kind::kPreempt, static_cast<int>(i), job.spec.id, {}});
      }
    }
    const int max_node = MaxNodeSlots(view);
    for (int q = 0; q < queues; ++q) {
      for (int i : fifo) {
        const JobView& job = view.jobs[i];
        if (!keep[i] || queue[i] != q) continue;
        if (job.state != JobState::kPending && job.state != JobState::kSuspended) continue;
        // A selected job that does not fit yet waits for the checkpoints in flight.
        if (std::optional<Placement> p =
                FindCompactPlacement(free, job.spec.requested_workers, max_node)) {
          Take(free, *p);
          actions.push_back({Action::Kind::kStart, i, job.spec.id, std::move(*p)});
        }
      }
    }
    return actions;
  }

  std::string_view name() const override { return "tiresias"; }

 private:
  TiresiasOptions options_;
};

}  // namespace

std::unique_ptr<Policy> NewTiresiasPolicy(TiresiasOptions options) {
  return std::make_unique<TiresiasPolicy>(std::move(options));
}

}  // namespace tessera::cluster
