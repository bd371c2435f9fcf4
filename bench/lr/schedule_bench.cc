// Does applying a schedule cost anything measurable per training step?
//
// BM_TrainStep/{bare,scheduled}: the baseline and the candidate *interleaved* in one loop
// (bare step, scheduled step, bare step, ...), each timed separately, so load from other
// processes on the shared machine hits both equally. Reported as counters: mean microseconds
// per step of each and the relative overhead.
// BM_ApplyOnly/<schedule>: the adapter's own cost per step (compute the rate, set it on every
// parameter group), without training.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>

#include "lr/schedule_spec.h"
#include "lr/torch_adapter.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Setup {
  torch::nn::Sequential net{torch::nn::Linear(784, 256), torch::nn::ReLU(),
                            torch::nn::Linear(256, 128), torch::nn::ReLU(),
                            torch::nn::Linear(128, 10)};
  torch::Tensor x = torch::randn({128, 784});
  torch::Tensor y = torch::randint(0, 10, {128});
  std::unique_ptr<torch::optim::SGD> opt;
  Setup() {
    torch::manual_seed(1);
    opt = std::make_unique<torch::optim::SGD>(net->parameters(),
                                              torch::optim::SGDOptions(0.01).momentum(0.9));
  }
  void Step() {
    opt->zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    opt->step();
  }
};

void BM_TrainStepInterleaved(benchmark::State& state) {
  torch::set_num_threads(1);
  Setup s;
  auto schedule = tessera::lr::MakeSchedule("knee", 0.01, 1'000'000).value();
  auto adapter = tessera::lr::ScheduleAdapter::Create(*s.opt, *schedule).value();
  double bare = 0, scheduled = 0;
  int64_t step = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    s.Step();
    auto t1 = Clock::now();
    adapter.Apply(step++);
    s.Step();
    auto t2 = Clock::now();
    bare += std::chrono::duration<double, std::micro>(t1 - t0).count();
    scheduled += std::chrono::duration<double, std::micro>(t2 - t1).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["bare_us"] = bare / n;
  state.counters["scheduled_us"] = scheduled / n;
  state.counters["overhead_pct"] = 100.0 * (scheduled - bare) / bare;
}
BENCHMARK(BM_TrainStepInterleaved)->MinTime(3.0)->Unit(benchmark::kMicrosecond);

void BM_ApplyOnly(benchmark::State& state, const char* spec) {
  Setup s;
  auto schedule = tessera::lr::MakeSchedule(spec, 0.01, 1'000'000).value();
  auto adapter = tessera::lr::ScheduleAdapter::Create(*s.opt, *schedule).value();
  int64_t step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(adapter.Apply(step++));
}
BENCHMARK_CAPTURE(BM_ApplyOnly, knee, "knee");
BENCHMARK_CAPTURE(BM_ApplyOnly, cosine, "cosine");
BENCHMARK_CAPTURE(BM_ApplyOnly, onecycle, "onecycle");
BENCHMARK_CAPTURE(BM_ApplyOnly, multistep, "multistep");

}  // namespace

BENCHMARK_MAIN();
