// pipeline-plain-loop: the baseline of bench/pipeline/gpt2.sh. The same gpt model and global
// batches as a pipeline job, trained by a plain libtorch loop in one process: one forward and
// backward over the global batch (or gradient accumulation over --micro-batch), then
// torch::optim::SGD, with --threads intra-op threads. Prints samples/s (mean step time after
// the first step) and the process's peak RSS.
#include <sys/resource.h>
#include <torch/torch.h>

#include <chrono>

#include "core/cli.h"
#include "core/file.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "pipeline/model.h"
#include "pipeline/task_clock.h"

int main(int argc, char** argv) {
  tessera::cli::Program program("pipeline-plain-loop",
                                "Trains a gpt with a plain libtorch loop (the pipeline bench's "
                                "baseline).");
  auto& app = program.app();
  tessera::pipeline::ModelSpec spec;
  int global_batch = 8, micro_batch = 0, steps = 3, threads = 2;
  std::string json_out;
  app.add_option("--layers", spec.layers)->capture_default_str();
  app.add_option("--width", spec.width)->capture_default_str();
  app.add_option("--heads", spec.heads)->capture_default_str();
  app.add_option("--vocab", spec.vocab)->capture_default_str();
  app.add_option("--seq-len", spec.seq_len)->capture_default_str();
  app.add_option("--global-batch", global_batch)->capture_default_str();
  app.add_option("--micro-batch", micro_batch,
                 "Accumulate over micro-batches of this size (0: "
                 "one forward over the global batch)")
      ->capture_default_str();
  app.add_option("--steps", steps)->capture_default_str();
  app.add_option("--threads", threads, "Intra-op threads")->capture_default_str();
  app.add_option("--json", json_out, "Write the figures here");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    namespace pl = tessera::pipeline;
    if (steps < 2 || threads < 1 || global_batch < 1) {
      return tessera::cli::UsageError("--steps must be >= 2, --threads and --global-batch >= 1");
    }
    const int m = micro_batch == 0 ? global_batch : micro_batch;
    if (global_batch % m != 0) return tessera::cli::UsageError("--micro-batch must divide");
    torch::set_num_threads(threads);
    TESSERA_ASSIGN_OR_RETURN(auto model, pl::CutModel::Build(spec, 1));
    model->BindDenseGradients();  // the token embedding's sparse rows add into a dense .grad
    TESSERA_ASSIGN_OR_RETURN(auto data, pl::Dataset::Create(spec, 1));
    std::vector<torch::Tensor> params;
    for (int u = 0; u < model->num_units(); ++u) {
      for (auto& p : model->UnitParameters(u)) params.push_back(p);
    }
    torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.01).momentum(0.9));
    double timed = 0, timed_cpu = 0;
    for (int step = 0; step < steps; ++step) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = pl::ProcessCpuSeconds();
      sgd.zero_grad();
      double loss_sum = 0;
      for (int g = 0; g < global_batch / m; ++g) {
        pl::Batch b = data->Rows(step, global_batch, g * m, m);
        auto loss = model->Loss(model->ForwardRange(0, model->num_units(), b.input, {1, step, g}),
                                b.target) *
                    (static_cast<double>(m) / global_batch);
        loss_sum += loss.item<double>();
        loss.backward();
      }
      sgd.step();
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (step > 0) {
        timed += s;
        timed_cpu += pl::ProcessCpuSeconds() - cpu_start;
      }
      fmt::print("step {}/{} loss {:.4f} ({:.3f} s)\n", step + 1, steps, loss_sum, s);
      std::fflush(stdout);
    }
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    const double step_s = timed / (steps - 1);
    const double cpu_step_s = timed_cpu / (steps - 1);
    const double rss_mb = usage.ru_maxrss / 1024.0;
    fmt::print(
        "result: {:.3f} samples/s, step {:.3f} s, CPU {:.3f} s per step, peak RSS {:.0f} MB, {} "
        "threads\n",
        global_batch / step_s, step_s, cpu_step_s, rss_mb, threads);
    if (!json_out.empty()) {
      nlohmann::json j = {{"samples_per_s", global_batch / step_s},
                          {"step_s", step_s},
                          {"cpu_step_s", cpu_step_s},
                          {"peak_rss_mb", rss_mb},
                          {"threads", threads}};
      TESSERA_RETURN_IF_ERROR(tessera::WriteFileAtomically(json_out, j.dump(2) + "\n"));
    }
    return tessera::Status::Ok();
  });
}
