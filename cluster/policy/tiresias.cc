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

  // Cost: one cheap pass over the view, then work proportional to the running jobs and to the
  // prefix of the ranking that fills the cluster (the replay calls this ~10^6 times).
  std::vector<Action> Decide(const ClusterView& view) override {
    std::vector<Action> actions;
    const int n = static_cast<int>(view.jobs.size());
    std::vector<int> free(view.nodes.size());
    int capacity = 0;
    for (size_t k = 0; k < view.nodes.size(); ++k) {
      free[k] = view.nodes[k].alive ? view.nodes[k].slots - view.nodes[k].draining : 0;
      capacity += view.nodes[k].alive ? view.nodes[k].slots : 0;
    }
    // Attained service in slot-seconds: progress is in ideal seconds of the full gang.
    auto queue_of = [&](const JobView& job) {
      const double service = job.progress * job.spec.requested_workers;
      return static_cast<int>(std::upper_bound(options_.queue_thresholds.begin(),
                                               options_.queue_thresholds.end(), service) -
                              options_.queue_thresholds.begin());
    };
    const int queues = static_cast<int>(options_.queue_thresholds.size()) + 1;
    // One pass over the (large) view; the rest works on these compact lists.
    std::vector<int> holding;                      // running and checkpointing jobs
    std::vector<std::vector<int>> ranked(queues);  // other candidates per queue, view order
    bool waiting = false;
    bool sorted = true;
    for (int i = 0; i < n; ++i) {
      const JobView& job = view.jobs[i];
      if (i > 0 && view.jobs[i - 1].spec.submit_time > job.spec.submit_time) sorted = false;
      if (job.state == JobState::kFinished) continue;
      if (job.state == JobState::kRunning || job.state == JobState::kCheckpointing) {
        holding.push_back(i);
        for (const Slice& s : job.placement) free[s.node] -= s.slots;
        if (job.state == JobState::kCheckpointing ||
            view.now - job.last_change < options_.min_run_s) {
          continue;  // kept whatever its rank
        }
      } else {
        waiting = true;
      }
      ranked[queue_of(job)].push_back(i);
    }
    if (!waiting) return actions;  // preempting only ever serves a waiting job
    if (!sorted) {
      const std::vector<int> fifo = FifoOrder(view);
      std::vector<int> position(n);
      for (int r = 0; r < n; ++r) position[fifo[r]] = r;
      for (std::vector<int>& q : ranked) {
        std::sort(q.begin(), q.end(), [&](int a, int b) { return position[a] < position[b]; });
      }
    }

    // The jobs that should run: the ranking's prefix that fits by slot count. Checkpointing jobs
    // and running jobs inside their minimum run are kept whatever their rank, and counted first.
    std::vector<char> keep(n, 0);
    int left = capacity;
    for (int i : holding) {
      const JobView& job = view.jobs[i];
      if (job.state == JobState::kCheckpointing ||
          view.now - job.last_change < options_.min_run_s) {
        keep[i] = 1;
        left -= job.workers();
      }
    }
    std::vector<int> selected;  // waiting jobs to start, in rank order
    for (int q = 0; q < queues && left > 0; ++q) {
      for (int i : ranked[q]) {
        if (left <= 0) break;
        const JobView& job = view.jobs[i];
        if (job.spec.requested_workers <= left) {
          keep[i] = 1;
          left -= job.spec.requested_workers;
          if (job.state != JobState::kRunning) selected.push_back(i);
        }
      }
    }
    for (int i : holding) {
      const JobView& job = view.jobs[i];
      if (job.state == JobState::kRunning && !keep[i]) {
        actions.push_back({Action::Kind::kPreempt, i, job.spec.id, {}});
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

  std::string_view name() const override { return "tiresias"; }

 private:
  TiresiasOptions options_;
};

}  // namespace

std::unique_ptr<Policy> NewTiresiasPolicy(TiresiasOptions options) {
  return std::make_unique<TiresiasPolicy>(std::move(options));
}

}  // namespace tessera::cluster
