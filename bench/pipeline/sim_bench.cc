// How fast the schedule generator and the simulator are: an auto-configurator calls them once
// per candidate (P, m), so they must stay far below a training step.
#include <benchmark/benchmark.h>

#include "pipeline/schedule.h"
#include "pipeline/simulator.h"

namespace {

using tessera::pipeline::ScheduleKind;

void BM_VarunaTimeline(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  for (auto _ : state) {
    auto t = tessera::pipeline::VarunaUnitTimeline(p, 4 * p);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_VarunaTimeline)->Arg(4)->Arg(16)->Arg(32);

void BM_SimulateStep(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  tessera::pipeline::SimConfig c;
  c.schedule = ScheduleKind::kVaruna;
  c.micro_batches = 4 * p;
  c.stages.assign(p, {0.01, 0.01, 0.02, 1e6});
  c.boundary_bytes.assign(p - 1, 1e5);
  c.pipeline_link = {1e8, 1e-4};
  c.replicas = 4;
  c.jitter = 0.1;
  for (auto _ : state) {
    auto r = tessera::pipeline::Simulate(c);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_SimulateStep)->Arg(4)->Arg(16);

}  // namespace

BENCHMARK_MAIN();
