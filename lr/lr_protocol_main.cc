// lr-protocol: the experiment protocol of docs/lr.md (lr/protocol.h): per-schedule peaks tuned
// on a validation split, paired seeds, 95 % intervals, budgets 100/50/25 %, resumable.
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "core/cli.h"
#include "lr/protocol.h"
#include "lr/trainer.h"

namespace {

// Seconds per step and per run (the fixed cost: set-up and evaluations) of a task, from two
// short timed runs of 10 and 40 steps.
tessera::Status Estimate(const tessera::lr::ProtocolOptions& o) {
  using tessera::lr::TrainConfig;
  double total_hours = 0;
  for (const auto& task : o.tasks) {
    TESSERA_ASSIGN_OR_RETURN(int64_t full_steps, tessera::lr::BudgetSteps(task.base));
    double seconds[2];
    const int64_t lengths[2] = {10, 40};
    for (int i = 0; i < 2; ++i) {
      TrainConfig c = task.base;
      c.steps = lengths[i];
      c.epochs = 0;
      c.schedule = "knee";
      const auto start = std::chrono::steady_clock::now();
      auto r = tessera::lr::Train(c);
      if (!r.ok()) return r.status();
      seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double per_step = std::max(0.0, (seconds[1] - seconds[0]) / 30);
    const double per_run = std::max(0.0, seconds[0] - 10 * per_step);
    const auto g = tessera::lr::CountGrid(o, task, full_steps);
    // The tuner's trials: about 30 % extra on its runs (docs/lr.md); counted as 30 %.
    const double hours = (g.runs * per_run + g.steps * per_step * 1.05) / 3600;
    total_hours += hours;
    std::cout << fmt::format(
        "{}: full budget {} steps; {:.2f} ms/step, {:.2f} s/run fixed; grid {} runs, {} steps: "
        "{:.1f} h on one core\n",
        task.name, full_steps, 1000 * per_step, per_run, g.runs, g.steps, hours);
  }
  std::cout << fmt::format("total: {:.1f} h on one core ({:.1f} h on two, if nothing else runs)\n",
                           total_hours, total_hours / 2);
  return tessera::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  tessera::cli::Program program(
      "lr-protocol",
      "Compares learning-rate schedules the way docs/lr.md's protocol says: peaks tuned on a "
      "validation split, paired seeds, 95% intervals, budgets 100/50/25%. Resumable: rerun the "
      "same command after an interruption.");
  tessera::lr::ProtocolOptions o;
  std::vector<std::string> tasks = {"mlp", "cnn", "lm"};
  std::vector<double> peaks;
  bool quick = false, estimate = false, no_plots = false;
  int64_t epochs = 0, train_limit = -1;
  auto& app = program.app();
  app.add_option("--out", o.out_dir, "output directory (results.csv, report.md, plots)")
      ->capture_default_str();
  app.add_option("--tasks", tasks, "mlp, cnn and/or lm")->delimiter(',')->capture_default_str();
  app.add_option("--schedules", o.schedules, "schedules (tuner = the online tuner)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--budgets", o.budgets, "budgets, fractions of the full one")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--seeds", o.seeds, "paired evaluation seeds")->capture_default_str();
  app.add_option("--tune-seeds", o.tune_seeds, "seeds per grid point of the peak search")
      ->capture_default_str();
  app.add_option("--peaks", peaks, "override every task's peak grid")->delimiter(',');
  app.add_option("--epochs", epochs, "override the full budget in epochs (0: the task's)");
  app.add_option("--train-limit", train_limit, "override the training-set size (images / bytes)");
  app.add_flag("--quick", quick,
               "small data and budgets, the MLP and 3 seeds unless --tasks/--seeds say otherwise: "
               "the whole grid in a few minutes");
  app.add_flag("--estimate", estimate, "time short runs and print the grid's cost; train nothing");
  app.add_flag("--no-plots", no_plots, "skip gnuplot");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    o.plots = !no_plots;
    // --quick: the demo's grid, the MLP only and 3 seeds unless asked otherwise.
    if (quick && app.count("--tasks") == 0) tasks = {"mlp"};
    if (quick && app.count("--seeds") == 0) o.seeds = 3;
    for (const auto& name : tasks) {
      TESSERA_ASSIGN_OR_RETURN(auto task, tessera::lr::StandardTask(name, quick));
      if (!peaks.empty()) task.peaks = peaks;
      if (epochs > 0) task.base.epochs = epochs;
      if (train_limit >= 0) task.base.train_limit = train_limit;
      o.tasks.push_back(task);
    }
    if (estimate) return Estimate(o);
    TESSERA_ASSIGN_OR_RETURN(
        auto report, tessera::lr::RunProtocol(
                         o, [](const tessera::lr::TrainConfig& c) { return tessera::lr::Train(c); },
                         [](const std::string& line) { std::cerr << line << std::endl; }));
    std::cout << report.markdown;
    std::cerr << fmt::format("{} runs trained, {} reused from {}/results.csv\n",
                             report.runs_trained, report.runs_reused, o.out_dir);
    return tessera::Status::Ok();
  });
}
