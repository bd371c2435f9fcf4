#include "cluster/policy/placement.h"

#include <algorithm>
#include <numeric>

namespace tessera::cluster {

std::vector<int> FreeSlots(const ClusterView& view) {
  std::vector<int> free(view.nodes.size());
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    free[i] = view.nodes[i].alive ? view.nodes[i].slots - view.nodes[i].draining : 0;
  }
  for (const JobView& job : view.jobs) {
    if (job.state != JobState::kRunning && job.state != JobState::kCheckpointing) continue;
    for (const Slice& s : job.placement) {
      if (s.node >= 0 && static_cast<size_t>(s.node) < free.size()) free[s.node] -= s.slots;
    }
  }
  return free;
}

std::vector<int> ReleasingSlots(const ClusterView& view) {
  std::vector<int> held(view.nodes.size(), 0);
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    if (view.nodes[i].alive) held[i] = view.nodes[i].draining;
  }
  for (const JobView& job : view.jobs) {
    if (job.state != JobState::kCheckpointing) continue;
    for (const Slice& s : job.placement) {
      if (s.node >= 0 && static_cast<size_t>(s.node) < held.size() && view.nodes[s.node].alive) {
        held[s.node] += s.slots;
      }
    }
  }
  return held;
}

int MaxNodeSlots(const ClusterView& view) {
  int max_slots = 0;
  for (const NodeView& n : view.nodes) max_slots = std::max(max_slots, n.slots);
  return max_slots;
}

int NodesNeeded(int workers, int max_node_slots) {
  if (max_node_slots <= 0) return 0;
  if (workers <= max_node_slots) return 1;
  return (workers + max_node_slots - 1) / max_node_slots;
}

std::optional<Placement> FindCompactPlacement(const std::vector<int>& free, int workers,
                                              int max_node_slots) {
  if (workers <= 0 || max_node_slots <= 0) return std::nullopt;
  const int n = static_cast<int>(free.size());
  if (workers <= max_node_slots) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (free[i] >= workers && (best < 0 || free[i] < free[best])) best = i;
    }
    if (best < 0) return std::nullopt;
    return Placement{{best, workers}};
  }
  const int needed = NodesNeeded(workers, max_node_slots);
  if (needed > n) return std::nullopt;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + needed, order.end(),
                    [&](int a, int b) { return free[a] != free[b] ? free[a] > free[b] : a < b; });
  int sum = 0;
  for (int i = 0; i < needed; ++i) sum += std::max(0, free[order[i]]);
  if (sum < workers) return std::nullopt;
  Placement placement;
  int left = workers;
  for (int i = 0; i < needed && left > 0; ++i) {
    const int take = std::min(left, free[order[i]]);
    if (take <= 0) break;
    placement.push_back({order[i], take});
    left -= take;
  }
  std::sort(placement.begin(), placement.end(),
            [](const Slice& a, const Slice& b) { return a.node < b.node; });
  return placement;
}

void Take(std::vector<int>& free, const Placement& placement, int sign) {
  for (const Slice& s : placement) free[s.node] += sign * s.slots;
}

std::vector<int> FifoOrder(const ClusterView& view) {
  std::vector<int> order(view.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  bool sorted = true;
  for (size_t i = 1; i < view.jobs.size() && sorted; ++i) {
    sorted = view.jobs[i - 1].spec.submit_time <= view.jobs[i].spec.submit_time;
  }
  if (!sorted) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return view.jobs[a].spec.submit_time < view.jobs[b].spec.submit_time;
    });
  }
  return order;
}

}  // namespace tessera::cluster
