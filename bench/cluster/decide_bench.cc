// Cost of one Policy::Decide call on a full 64 x 8 cluster with a backlog of waiting jobs: what
// the live service pays per event and the replay pays per decision.
#include <benchmark/benchmark.h>

#include <random>

#include "cluster/policy/policy.h"

namespace tessera::cluster {
namespace {

// 64 nodes of 8 slots filled with running jobs, plus `waiting` pending jobs in submit order.
ClusterView MakeBusyView(int waiting) {
  std::mt19937 rng(1);
  ClusterView view;
  view.now = 1e6;
  for (int n = 0; n < 64; ++n) view.nodes.push_back({"n" + std::to_string(n), 8, true, 0});
  int id = 0;
  auto add = [&](int workers, double submit) -> JobView& {
    JobView job;
    job.spec.id = "j" + std::to_string(id++);
    job.spec.tier = static_cast<Tier>(std::uniform_int_distribution<int>(0, 2)(rng));
    job.spec.requested_workers = workers;
    job.spec.min_workers = std::max(1, workers / 4);
    job.spec.submit_time = submit;
    view.jobs.push_back(std::move(job));
    return view.jobs.back();
  };
  for (int n = 0; n < 64; ++n) {
    for (int s = 0; s < 8; ++s) {
      JobView& job = add(1, 1000.0 * n + s);
      job.state = JobState::kRunning;
      job.placement = {{n, 1}};
      job.progress = 5e5;
      job.first_start = job.last_change = 5e5;
    }
  }
  const int sizes[] = {1, 1, 1, 1, 2, 4, 8, 16};
  for (int i = 0; i < waiting; ++i) add(sizes[i % 8], 9e5 + i);
  return view;
}

void BM_Decide(benchmark::State& state, const char* policy) {
  ClusterView view = MakeBusyView(static_cast<int>(state.range(0)));
  std::unique_ptr<Policy> p = std::move(*NewPolicyByName(policy));
  for (auto _ : state) benchmark::DoNotOptimize(p->Decide(view));
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_Decide, fifo, "fifo")->Arg(0)->Arg(1000)->Arg(10000);
BENCHMARK_CAPTURE(BM_Decide, tiresias, "tiresias")->Arg(0)->Arg(1000)->Arg(10000);
BENCHMARK_CAPTURE(BM_Decide, singularity, "singularity")->Arg(0)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace tessera::cluster

BENCHMARK_MAIN();
