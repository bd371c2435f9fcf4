#include "lr/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "core/file.h"
#include "lr/trainer.h"

namespace tessera::lr {
namespace {

struct RunKey {
  std::string schedule;
  double budget;
  bool operator<(const RunKey& o) const {
    return std::tie(schedule, budget) < std::tie(o.schedule, o.budget);
  }
};

struct Stats {
  std::vector<double> metric, seconds, steps, extra;
  double tuner_lr_sum = 0;
};

std::string MeanStd(const std::vector<double>& v, int digits) {
  double mean = 0, var = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  const double sd = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0;
  return fmt::format("{:.{}f} ± {:.{}f}", mean, digits, sd, digits);
}

std::string RunName(const std::string& schedule, double budget, int seed) {
  return fmt::format("{}-b{:g}-s{}", schedule, budget, seed);
}

// Averages a step log into windows of `window` steps: step,lr,loss.
Status WriteSmoothed(const std::string& in_csv, const std::string& out_csv, int window) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(in_csv));
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // header
  std::string out = "step,lr,loss\n";
  double lr = 0, loss = 0;
  int n = 0;
  long step = 0;
  while (std::getline(in, line)) {
    long s = 0;
    double r = 0, l = 0;
    if (std::sscanf(line.c_str(), "%ld,%lf,%lf", &s, &r, &l) != 3) continue;
    step = s;
    lr += r;
    loss += l;
    if (++n == window) {
      out += fmt::format("{},{:.6g},{:.6g}\n", step, lr / n, loss / n);
      lr = loss = 0;
      n = 0;
    }
  }
  return WriteFileAtomically(out_csv, out);
}

Status Plot(const std::string& dir, const std::string& task,
            const std::vector<std::string>& short_schedules,
            const std::vector<std::string>& full_names) {
  const std::string metric_col = task == "fmnist" ? "4" : "3";
  const std::string metric_name = task == "fmnist" ? "test accuracy" : "held-out loss (nats/byte)";
  std::string gp =
      "set terminal pngcairo size 1000,600 noenhanced\nset datafile separator ','\nset key outside "
      "right\nset grid\n"
      // gnuplot's default palette has 8 colours; series 9 and 10 get their own, dashed.
      "set linetype 9 lc rgb '#d62728' lw 2 dt 2\nset linetype 10 lc rgb '#2ca02c' lw 2 dt 4\n"
      "set linetype cycle 10\n";
  auto series = [&](const std::string& suffix, const std::string& cols) {
    std::string s;
    for (size_t i = 0; i < full_names.size(); ++i) {
      s += fmt::format("{}'{}/runs/{}-b1-s1{}' using {} with lines lw 2 title '{}'",
                       i == 0 ? "plot " : ", ", dir, full_names[i], suffix, cols, full_names[i]);
    }
    return s + "\n";
  };
  gp += fmt::format(
      "set output '{}/lr-{}-lr.png'\nset title '{}: learning rate per step (seed 1, full "
      "budget)'\nset xlabel 'step'\nset ylabel 'learning rate'\n",
      dir, task, task);
  gp += series(".smooth.csv", "1:2");
  gp += fmt::format(
      "set output '{}/lr-{}-loss.png'\nset title '{}: training loss (mean of 20-step windows, seed "
      "1)'\nset ylabel 'training loss'\nset logscale y\n",
      dir, task, task);
  gp += series(".smooth.csv", "1:3");
  gp += "unset logscale y\n";
  gp += fmt::format(
      "set output '{}/lr-{}-eval.png'\nset title '{}: {} during training (seed 1, full "
      "budget)'\nset ylabel '{}'\n",
      dir, task, task, metric_name, metric_name);
  gp += series(".eval.csv", "1:" + metric_col);
  gp += fmt::format(
      "set output '{}/lr-{}-budget.png'\nset title '{}: final {} vs budget (mean and std over "
      "seeds)'\nset xlabel 'budget (fraction of the full one)'\nset ylabel '{}'\nset xrange "
      "[0.4:1.1]\n",
      dir, task, task, metric_name, metric_name);
  std::string plot;
  for (size_t i = 0; i < short_schedules.size(); ++i) {
    plot += fmt::format("{}'{}/budget-{}.csv' using 1:2:3 with yerrorlines lw 2 title '{}'",
                        i == 0 ? "plot " : ", ", dir, short_schedules[i], short_schedules[i]);
  }
  gp += plot + "\n";
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(dir + "/plots.gp", gp));
  const std::string cmd = fmt::format("gnuplot '{}/plots.gp' 2>'{}/gnuplot.log'", dir, dir);
  if (std::system(cmd.c_str()) != 0) {
    return InternalError(fmt::format("gnuplot failed; see {}/gnuplot.log", dir));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> RunComparison(const CompareOptions& o,
                                  const std::function<void(const std::string&)>& progress) {
  if (o.seeds < 1) return InvalidArgumentError("seeds must be >= 1");
  std::string tables;
  for (const std::string& task : o.tasks) {
    if (task != "fmnist" && task != "lm") return InvalidArgumentError("tasks: fmnist, lm");
    const std::string dir = o.out_dir + "/" + task;
    std::error_code ec;
    std::filesystem::create_directories(dir + "/runs", ec);
    if (ec) return InternalError(fmt::format("cannot create {}: {}", dir, ec.message()));

    TrainConfig base;
    base.task = task;
    if (task == "fmnist") {
      base.optimizer = "sgd";
      base.lr = o.fmnist_lr;
      base.epochs = o.fmnist_epochs;
      base.train_limit = o.fmnist_train_limit;
      base.batch_size = 128;
    } else {
      base.optimizer = "adamw";
      base.weight_decay = 0.01;
      base.lr = o.lm_lr;
      base.steps = o.lm_steps;
      base.batch_size = 32;
      base.evals = 6;
      base.test_limit = 128;  // held-out windows of 64 bytes
    }
    // plateau reacts to the mean training loss of 1/20 of the budget; a patience of 10 such
    // windows (PyTorch's default) would never fire in 20 windows.
    const std::map<std::string, std::string> specs = {
        {"plateau", "plateau:patience=2,factor=0.3"},
        {"cosine", task == "lm" ? "cosine:warmup=0.05" : "cosine"},
        {"knee", task == "lm" ? "knee:warmup=0.05" : "knee"},
        {"linear", task == "lm" ? "linear:warmup=0.05" : "linear"},
        {"wsd", task == "lm" ? "wsd:warmup=0.05" : "wsd"}};
    struct Job {
      std::string name;
      double budget;
    };
    std::vector<Job> jobs;
    for (const auto& s : o.schedules) jobs.push_back({s, 1.0});
    if (o.tuner) jobs.push_back({"tuner", 1.0});
    const auto& short_budgets = task == "lm" ? o.lm_short_budgets : o.short_budgets;
    const auto& short_schedules = task == "lm" ? o.lm_short_schedules : o.short_schedules;
    for (double b : short_budgets) {
      for (const auto& s : short_schedules) jobs.push_back({s, b});
    }

    std::map<RunKey, Stats> stats;
    std::string results =
        "task,schedule,budget,seed,steps,test_loss,test_acc,seconds,trial_steps,tuner_lr\n";
    int done = 0;
    const int total_runs = static_cast<int>(jobs.size()) * o.seeds;
    for (const Job& job : jobs) {
      for (int seed = 1; seed <= o.seeds; ++seed) {
        TrainConfig c = base;
        c.seed = static_cast<uint64_t>(seed);
        c.budget_fraction = job.budget;
        if (job.name == "tuner") {
          c.tune = true;
        } else {
          auto it = specs.find(job.name);
          c.schedule = it == specs.end() ? job.name : it->second;
        }
        const std::string name = RunName(job.name, job.budget, seed);
        c.log_csv = dir + "/runs/" + name + ".csv";
        auto r = Train(c);
        if (!r.ok()) return r.status().WithContext(fmt::format("{} {}", task, name));
        TESSERA_RETURN_IF_ERROR(
            WriteSmoothed(c.log_csv, dir + "/runs/" + name + ".smooth.csv", 20));
        Stats& s = stats[{job.name, job.budget}];
        s.metric.push_back(task == "fmnist" ? 100 * r->test_accuracy : r->test_loss);
        s.seconds.push_back(r->seconds);
        s.steps.push_back(static_cast<double>(r->total_steps));
        s.extra.push_back(static_cast<double>(r->tuner_trial_steps) / r->total_steps);
        s.tuner_lr_sum += r->tuner_lr;
        results += fmt::format("{},{},{:g},{},{},{:.6f},{:.6f},{:.3f},{},{:.6g}\n", task, job.name,
                               job.budget, seed, r->total_steps, r->test_loss, r->test_accuracy,
                               r->seconds, r->tuner_trial_steps, r->tuner_lr);
        ++done;
        if (progress) {
          progress(fmt::format("[{}/{}] {} {}: {} {:.4f} in {:.1f}s", done, total_runs, task, name,
                               task == "fmnist" ? "test_acc" : "test_loss",
                               task == "fmnist" ? r->test_accuracy : r->test_loss, r->seconds));
        }
      }
    }
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(dir + "/results.csv", results));

    const int digits = 2;
    const std::string metric = task == "fmnist" ? "test accuracy % (higher is better)"
                                                : "held-out loss, nats/byte (lower is better)";
    std::string table = fmt::format(
        "### {} — {} over {} seeds\n\n| schedule | budget | steps | {} | s/run | extra steps "
        "|\n|---|---|---|---|---|---|\n",
        task == "fmnist" ? "Fashion-MNIST, MLP 784-256-128-10, SGD momentum 0.9"
                         : "fortunes char-LM, 2-layer transformer, AdamW",
        metric, o.seeds, task == "fmnist" ? "test acc %" : "test loss");
    for (const auto& [key, s] : stats) {
      std::string extra =
          key.schedule == "tuner"
              ? fmt::format("{:.0f}% (lr {:.3g})",
                            100 * std::accumulate(s.extra.begin(), s.extra.end(), 0.0) /
                                static_cast<double>(s.extra.size()),
                            s.tuner_lr_sum / static_cast<double>(s.metric.size()))
              : "0";
      table += fmt::format(
          "| {} | {:g} | {:.0f} | {} | {:.1f} | {} |\n", key.schedule, key.budget, s.steps[0],
          MeanStd(s.metric, task == "fmnist" ? digits : 3),
          [&] {
            double m = 0;
            for (double x : s.seconds) m += x;
            return m / s.seconds.size();
          }(),
          extra);
    }
    table += "\n";
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(dir + "/table.md", table));
    tables += table;

    // Budget curves: metric mean and std per (schedule, budget) for the short-budget schedules.
    for (const auto& s : short_schedules) {
      std::string csv;
      std::vector<double> budgets = short_budgets;
      budgets.push_back(1.0);
      std::sort(budgets.begin(), budgets.end());
      for (double b : budgets) {
        auto it = stats.find({s, b});
        if (it == stats.end()) continue;
        double mean = 0, var = 0;
        const auto& v = it->second.metric;
        for (double x : v) mean += x / v.size();
        for (double x : v) var += (x - mean) * (x - mean);
        csv += fmt::format("{:g},{:.6f},{:.6f}\n", b, mean,
                           v.size() > 1 ? std::sqrt(var / (v.size() - 1)) : 0.0);
      }
      TESSERA_RETURN_IF_ERROR(WriteFileAtomically(dir + "/budget-" + s + ".csv", csv));
    }
    if (o.plots) {
      std::vector<std::string> names = o.schedules;
      if (o.tuner) names.push_back("tuner");
      TESSERA_RETURN_IF_ERROR(Plot(dir, task, short_schedules, names));
    }
  }
  return tables;
}

}  // namespace tessera::lr
