// Builders for policy tests: small clusters and jobs in a few lines.
#pragma once

#include <string>

#include "cluster/policy/policy.h"

namespace tessera::cluster::testing {

// A view with `nodes` nodes of `slots` slots, named n0, n1, ...
inline ClusterView MakeCluster(int nodes, int slots, double now = 0) {
  ClusterView view;
  view.now = now;
  for (int i = 0; i < nodes; ++i) view.nodes.push_back({"n" + std::to_string(i), slots, true});
  return view;
}

// Appends a pending job and returns its index.
inline int AddJob(ClusterView& view, std::string id, Tier tier, int workers, int min_workers = 0,
                  double submit = 0) {
  JobView job;
  job.spec.id = std::move(id);
  job.spec.tenant = "t";
  job.spec.tier = tier;
  job.spec.requested_workers = workers;
  job.spec.min_workers = min_workers > 0 ? min_workers : workers;
  job.spec.submit_time = submit;
  view.jobs.push_back(std::move(job));
  return static_cast<int>(view.jobs.size()) - 1;
}

// Marks job `index` running on `placement` since `since`, with full-speed progress so far.
inline void StartRunning(ClusterView& view, int index, Placement placement, double since = 0) {
  JobView& job = view.jobs[index];
  job.state = JobState::kRunning;
  job.placement = std::move(placement);
  job.first_start = since;
  job.last_change = since;
  job.progress = (view.now - since) * TotalSlots(job.placement) / job.spec.requested_workers;
}

}  // namespace tessera::cluster::testing
