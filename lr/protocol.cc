#include "lr/protocol.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>

#include "core/file.h"
#include "lr/paired_stats.h"
#include "lr/results_store.h"

namespace tessera::lr {
namespace {

const std::vector<std::string> kHeader = {
    "key",         "task",     "stage",   "schedule",  "budget",   "peak",    "seed",    "steps",
    "trial_steps", "val_loss", "val_acc", "test_loss", "test_acc", "seconds", "tuner_lr"};

enum Column {
  kKey = 0,
  kSteps = 7,
  kTrialSteps,
  kValLoss,
  kValAcc,
  kTestLoss,
  kTestAcc,
  kSeconds,
  kTunerLr
};

bool HigherIsBetter(const ProtocolTask& t) { return t.base.task == "fmnist"; }

// The schedules that pick their own rate (no tuning stage): the online tuner, Knee with its peak
// set by a range test, and Knee with its peak set by annealed trials inside its budget.
bool TunesItself(const std::string& schedule) {
  return schedule == "tuner" || schedule == "rangetest" || schedule == "trials";
}

// The trainer's tune_method of a self-tuning protocol schedule.
std::string TuneMethod(const std::string& schedule) {
  if (schedule == "rangetest") return "range";
  if (schedule == "trials") return "trials";
  return "online";
}

// The metric of a recorded run: accuracy in % for Fashion-MNIST, loss (nats/byte) for the LM.
double Metric(const ProtocolTask& t, const std::vector<std::string>& row, bool validation) {
  if (HigherIsBetter(t))
    return 100 * std::strtod(row[validation ? kValAcc : kTestAcc].c_str(), nullptr);
  const double loss = std::strtod(row[validation ? kValLoss : kTestLoss].c_str(), nullptr);
  return std::isfinite(loss) ? loss : std::numeric_limits<double>::infinity();
}

double GridCentre(const std::vector<double>& peaks) {
  return std::sqrt(peaks.front() * peaks.back());
}

std::string Signed(double x, int digits) { return fmt::format("{:+.{}f}", x, digits); }

class Grid {
 public:
  Grid(const TrainFn& train, const ProtocolProgress& progress, ResultsStore& store)
      : train_(train), progress_(progress), store_(store) {}

  // The recorded row of one run, training it first if it is not in the store.
  Result<std::vector<std::string>> Run(const ProtocolTask& task, const std::string& stage,
                                       const std::string& schedule, double budget, double peak,
                                       int seed) {
    const std::string key =
        fmt::format("{}/{}/{}/b{:g}/p{:.6g}/s{}", task.name, stage, schedule, budget, peak, seed);
    if (const auto* row = store_.Find(key)) {
      ++report_.runs_reused;
      return *row;
    }
    TrainConfig c = task.base;
    c.lr = peak;
    c.seed = static_cast<uint64_t>(seed);
    c.budget_fraction = budget;
    c.tune = TunesItself(schedule);
    c.tune_method = TuneMethod(schedule);
    c.schedule = ProtocolSpec(c.tune && c.tune_method != "online" ? "knee" : schedule, task);
    auto r = train_(c);
    if (!r.ok()) return r.status().WithContext(key);
    std::vector<std::string> row = {key,
                                    task.name,
                                    stage,
                                    schedule,
                                    fmt::format("{:g}", budget),
                                    fmt::format("{:.6g}", peak),
                                    fmt::format("{}", seed),
                                    fmt::format("{}", r->total_steps),
                                    fmt::format("{}", r->tuner_trial_steps),
                                    fmt::format("{:.9g}", r->val_loss),
                                    fmt::format("{:.9g}", r->val_accuracy),
                                    fmt::format("{:.9g}", r->test_loss),
                                    fmt::format("{:.9g}", r->test_accuracy),
                                    fmt::format("{:.3f}", r->seconds),
                                    fmt::format("{:.6g}", r->tuner_lr)};
    TESSERA_RETURN_IF_ERROR(store_.Append(row));
    ++report_.runs_trained;
    if (progress_) {
      progress_(fmt::format("[{} trained, {} reused] {}: val {:.4f} test {:.4f} in {:.1f}s",
                            report_.runs_trained, report_.runs_reused, key, Metric(task, row, true),
                            Metric(task, row, false), r->seconds));
    }
    return row;
  }

  ProtocolReport& report() { return report_; }

 private:
  const TrainFn& train_;
  const ProtocolProgress& progress_;
  ResultsStore& store_;
  ProtocolReport report_;
};

struct ScheduleResult {
  double peak = 0;
  bool peak_at_edge = false;
  std::vector<double> test;  // per evaluation seed
  int64_t steps = 0;         // committed steps per run
  double trial_steps = 0;    // mean extra steps per run (tuner)
  double tuner_lr = 0;       // mean explore rate chosen (tuner)
  std::string not_run;       // why a self-tuning schedule cannot run at this budget
};

Status Plot(const ProtocolOptions& o, const ProtocolTask& task,
            const std::vector<std::string>& schedules) {
  const std::string metric = HigherIsBetter(task) ? "test accuracy (%)" : "test loss (nats/byte)";
  std::string gp = fmt::format(
      "set terminal pngcairo size 1000,600 noenhanced\nset datafile separator ','\n"
      "set key outside right\nset grid\nset logscale x 2\nset xrange [0.2:1.2]\n"
      // gnuplot's default palette has 8 colours; the 9th gets its own, dashed.
      "set linetype 9 lc rgb '#8c564b' lw 2 dt 2\nset linetype cycle 9\n"
      "set xtics ('25%%' 0.25, '50%%' 0.5, '100%%' 1)\nset xlabel 'budget (fraction of the full "
      "one)'\n"
      "set output '{0}/{1}-budget.png'\nset ylabel '{2}'\n"
      "set title '{1}: {2} at the tuned peak, mean and 95% interval over seeds'\n",
      o.out_dir, task.name, metric);
  std::string plot;
  for (size_t i = 0; i < schedules.size(); ++i) {
    plot += fmt::format(
        "{}'{}/{}-budget-{}.csv' using ($1*(1+0.02*{})):2:3:4 with yerrorlines lw 2 "
        "title '{}'",
        i == 0 ? "plot " : ", ", o.out_dir, task.name, schedules[i],
        static_cast<int>(i) - static_cast<int>(schedules.size() / 2), schedules[i]);
  }
  gp += plot + "\n";
  gp += fmt::format(
      "set output '{0}/{1}-diff.png'\nset ylabel 'schedule - {2}, paired'\n"
      "set title '{1}: paired difference to {2} (95% interval); 0 = no difference'\n"
      "set arrow from 0.2,0 to 1.2,0 nohead dt 2\n",
      o.out_dir, task.name, o.reference);
  plot.clear();
  int n = 0;
  for (const auto& s : schedules) {
    if (s == o.reference) continue;
    plot += fmt::format(
        "{}'{}/{}-diff-{}.csv' using ($1*(1+0.02*{})):2:3:4 with yerrorlines lw 2 "
        "title '{}'",
        n == 0 ? "plot " : ", ", o.out_dir, task.name, s,
        n - static_cast<int>(schedules.size() / 2), s);
    ++n;
  }
  gp += plot + "\n";
  const std::string script = fmt::format("{}/{}-plots.gp", o.out_dir, task.name);
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(script, gp));
  const std::string cmd = fmt::format("gnuplot '{}' 2>'{}.log'", script, script);
  if (std::system(cmd.c_str()) != 0) {
    return InternalError(fmt::format("gnuplot failed; see {}.log", script));
  }
  return Status::Ok();
}

}  // namespace

Result<ProtocolTask> StandardTask(std::string_view name, bool quick) {
  ProtocolTask t;
  t.name = std::string(name);
  TrainConfig& c = t.base;
  c.evals = 1;  // test metric once, at the end
  c.threads = 1;
  if (name == "mlp" || name == "cnn") {
    c.task = "fmnist";
    c.model = name;
    c.optimizer = "sgd";
    c.momentum = 0.9;
    c.batch_size = 128;
    c.train_limit = quick ? 4000 : 20000;
    c.validation = quick ? 2000 : 5000;
    c.test_limit = quick ? 2000 : 0;
    c.epochs = quick ? 2 : 8;
    t.peaks = {0.025, 0.05, 0.1, 0.2, 0.4};
    if (quick || name == "cnn") t.peaks = {0.025, 0.05, 0.1, 0.2};
    if (name == "cnn" && !quick) {
      // Sized for a fraction of one shared core (docs/lr.md): 6,400 training images (50 steps
      // an epoch), 3 epochs, 2,000 validation and the first 5,000 test images.
      c.train_limit = 6400;
      c.validation = 2000;
      c.test_limit = 5000;
      c.epochs = 3;
    }
    // The trials tuner searches the same grid: candidates x2 apart around its centre.
    c.trials.candidates = static_cast<int>(t.peaks.size());
    c.trials.spacing = 2;
  } else if (name == "lm") {
    c.task = "lm";
    c.model = "transformer";
    c.optimizer = "adamw";
    c.weight_decay = 0.01;
    c.batch_size = 32;
    c.lm_context = 64;
    // One epoch of a 256 KiB (quick: 64 KiB) slice of the fortunes text; validation 32 KiB.
    c.train_limit = quick ? 65536 : 262144;
    c.validation = 32768;
    c.test_limit = 128;  // held-out windows of 64 bytes
    c.epochs = 1;
    t.peaks = {1e-3, 3e-3, 1e-2, 3e-2};
    // The trials tuner searches about the same grid: 4 candidates x3 apart around its centre.
    c.trials.candidates = 4;
    c.trials.spacing = 3;
  } else {
    return InvalidArgumentError(fmt::format("unknown protocol task '{}' (mlp, cnn, lm)", name));
  }
  return t;
}

std::string ProtocolSpec(const std::string& schedule, const ProtocolTask& task) {
  // AdamW on the transformer gets a 5 % warmup on every schedule that starts at its peak.
  const bool warm = task.base.task == "lm";
  if (schedule == "knee") return warm ? "knee:warmup=0.05" : "knee";
  if (schedule == "cosine") return warm ? "cosine:warmup=0.05" : "cosine";
  if (schedule == "linear") return warm ? "linear:warmup=0.05" : "linear";
  if (schedule == "wsd") return warm ? "wsd:warmup=0.05" : "wsd";
  return schedule;
}

GridSize CountGrid(const ProtocolOptions& o, const ProtocolTask& task, int64_t full_steps) {
  GridSize g;
  for (double b : o.budgets) {
    const auto steps = std::max<int64_t>(std::llround(b * static_cast<double>(full_steps)), 2);
    for (const auto& s : o.schedules) {
      const int64_t runs =
          (TunesItself(s) ? 0 : static_cast<int64_t>(task.peaks.size()) * o.tune_seeds) + o.seeds;
      g.runs += runs;
      g.steps += runs * steps;
    }
  }
  return g;
}

Result<ProtocolReport> RunProtocol(const ProtocolOptions& o, const TrainFn& train,
                                   const ProtocolProgress& progress) {
  if (o.seeds < 2 || o.tune_seeds < 1) {
    return InvalidArgumentError("need seeds >= 2 (for intervals) and tune_seeds >= 1");
  }
  if (o.tasks.empty() || o.budgets.empty() || o.schedules.empty()) {
    return InvalidArgumentError("need tasks, budgets and schedules");
  }
  if (std::find(o.schedules.begin(), o.schedules.end(), o.reference) == o.schedules.end()) {
    return InvalidArgumentError(
        fmt::format("reference '{}' is not among the schedules", o.reference));
  }
  for (const auto& t : o.tasks) {
    if (t.peaks.size() < 2) return InvalidArgumentError("a task's peak grid needs >= 2 points");
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return InternalError(fmt::format("cannot create {}: {}", o.out_dir, ec.message()));
  // The keys name task, stage, schedule, budget, peak and seed, not the task's data and budget:
  // a results file is only reused by the same task configurations.
  std::string config_text;
  for (const auto& t : o.tasks) {
    const TrainConfig& c = t.base;
    config_text += fmt::format(
        "{}: task={} model={} opt={} mom={} wd={} batch={} epochs={} steps={} train={} val={} "
        "test={} lm={}x{}x{}x{}\n",
        t.name, c.task, c.model, c.optimizer, c.momentum, c.weight_decay, c.batch_size, c.epochs,
        c.steps, c.train_limit, c.validation, c.test_limit, c.lm_context, c.lm_d_model, c.lm_layers,
        c.lm_heads);
  }
  const std::string config_path = o.out_dir + "/tasks.txt";
  if (std::filesystem::exists(config_path)) {
    TESSERA_ASSIGN_OR_RETURN(std::string previous, ReadFile(config_path));
    // A grid may add tasks later; those it had must be unchanged.
    std::string missing;
    size_t start = 0;
    while (start < previous.size()) {
      const size_t end = previous.find('\n', start);
      const std::string line = previous.substr(start, end - start);
      const std::string name = line.substr(0, line.find(':'));
      for (const auto& t : o.tasks) {
        if (t.name == name && config_text.find(line + "\n") == std::string::npos) {
          return FailedPreconditionError(fmt::format(
              "{} holds results of task '{}' under another configuration ({}); use another --out",
              o.out_dir, name, line));
        }
      }
      if (config_text.find(name + ":") == std::string::npos) missing += line + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
    config_text = missing + config_text;
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(config_path, config_text));
  TESSERA_ASSIGN_OR_RETURN(ResultsStore store,
                           ResultsStore::Open(o.out_dir + "/results.csv", kHeader));
  Grid grid(train, progress, store);
  std::string md;
  for (const ProtocolTask& task : o.tasks) {
    const bool higher = HigherIsBetter(task);
    const int digits = higher ? 2 : 3;
    const std::string metric = higher ? "test accuracy %" : "test loss (nats/byte)";
    md += fmt::format(
        "### {} — {}; peaks tuned on validation over {{{}}}, {} tuning seed(s), {} "
        "paired seeds\n\n",
        task.name, metric, fmt::join(task.peaks, ", "), o.tune_seeds, o.seeds);
    // budget -> schedule -> result
    std::map<double, std::map<std::string, ScheduleResult>> results;
    for (double budget : o.budgets) {
      auto& at = results[budget];
      for (const std::string& s : o.schedules) {
        ScheduleResult& r = at[s];
        if (TunesItself(s)) {
          r.peak = GridCentre(task.peaks);
        } else {
          double best = 0;
          bool have = false;
          for (size_t i = 0; i < task.peaks.size(); ++i) {
            double sum = 0;
            for (int ts = 1; ts <= o.tune_seeds; ++ts) {
              TESSERA_ASSIGN_OR_RETURN(auto row,
                                       grid.Run(task, "tune", s, budget, task.peaks[i], 1000 + ts));
              sum += Metric(task, row, true);
            }
            const double mean = sum / o.tune_seeds;
            const bool better = !have || (higher ? mean > best : mean < best);
            if (better) {
              best = mean;
              have = true;
              r.peak = task.peaks[i];
              r.peak_at_edge = i == 0 || i + 1 == task.peaks.size();
            }
          }
        }
        for (int seed = 1; seed <= o.seeds; ++seed) {
          auto run = grid.Run(task, "eval", s, budget, r.peak, seed);
          // Trials need a minimum budget (TrialTuneOptions::min_trial_steps); below it the row
          // says so instead of failing the grid.
          if (s == "trials" && !run.ok() && run.status().code() == StatusCode::kInvalidArgument) {
            r.not_run = run.status().message();
            break;
          }
          TESSERA_ASSIGN_OR_RETURN(auto row, std::move(run));
          r.test.push_back(Metric(task, row, false));
          r.steps = std::strtoll(row[kSteps].c_str(), nullptr, 10);
          r.trial_steps += std::strtod(row[kTrialSteps].c_str(), nullptr) / o.seeds;
          r.tuner_lr += std::strtod(row[kTunerLr].c_str(), nullptr) / o.seeds;
        }
      }
      // The table of this budget.
      const ScheduleResult& ref = at[o.reference];
      md += fmt::format("**{} at {:g} % of the budget ({} steps)**\n\n", task.name, 100 * budget,
                        ref.steps);
      md += fmt::format(
          "| schedule | peak | {} mean [95% CI] | − {} (paired) [95% CI] | result | "
          "steps per run (+ tuning) |\n|---|---|---|---|---|---|\n",
          metric, o.reference);
      for (const std::string& s : o.schedules) {
        const ScheduleResult& r = at[s];
        if (!r.not_run.empty()) {
          md += fmt::format("| {} | — | not run: {} | — | — | — |\n", s, r.not_run);
          continue;
        }
        auto mean = MeanInterval(r.test);
        std::string mean_text = "diverged", diff_text = "—",
                    verdict = s == o.reference ? "reference" : "—";
        if (mean.ok()) {
          mean_text = fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", mean->mean, digits, mean->lo,
                                  digits, mean->hi, digits);
        }
        if (s != o.reference) {
          auto diff = PairedDifference(r.test, ref.test);
          if (diff.ok()) {
            diff_text = fmt::format("{} [{}, {}]", Signed(diff->mean, digits),
                                    Signed(diff->lo, digits), Signed(diff->hi, digits));
            if (!diff->Excludes(0)) {
              verdict = "no difference";
            } else {
              const bool schedule_better = higher ? diff->mean > 0 : diff->mean < 0;
              verdict = schedule_better ? fmt::format("**{} better**", s)
                                        : fmt::format("**{} better**", o.reference);
            }
          }
        }
        const std::string peak_text =
            s == "tuner"
                ? fmt::format("starts {:.3g}, explores at {:.3g} (mean)", r.peak, r.tuner_lr)
            : s == "rangetest"
                ? fmt::format("sweeps around {:.3g}, peak {:.3g} (mean)", r.peak, r.tuner_lr)
            : s == "trials"
                ? fmt::format("trials around {:.3g}, peak {:.3g} (mean)", r.peak, r.tuner_lr)
                : fmt::format("{:g}{}", r.peak, r.peak_at_edge ? " (grid edge)" : "");
        const std::string cost =
            s == "trials"    ? fmt::format("{} + {:.0f} trial = {:.0f} (equal compute)", r.steps,
                                           r.trial_steps, static_cast<double>(r.steps) + r.trial_steps)
            : TunesItself(s) ? fmt::format("{} + {:.0f} trial ({:.0f} %)", r.steps, r.trial_steps,
                                           100 * r.trial_steps / static_cast<double>(r.steps))
                             : fmt::format("{} (+ {} × {} tuning)", r.steps,
                                           task.peaks.size() * o.tune_seeds, r.steps);
        md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", s, peak_text, mean_text, diff_text,
                          verdict, cost);
      }
      md += "\n";
    }
    // Plot data: per schedule, metric and interval against budget; and the paired differences.
    for (const std::string& s : o.schedules) {
      std::string csv, diff_csv;
      for (const auto& [budget, at] : results) {
        auto mean = MeanInterval(at.at(s).test);
        if (mean.ok())
          csv += fmt::format("{:g},{:.6f},{:.6f},{:.6f}\n", budget, mean->mean, mean->lo, mean->hi);
        auto diff = PairedDifference(at.at(s).test, at.at(o.reference).test);
        if (diff.ok()) {
          diff_csv +=
              fmt::format("{:g},{:.6f},{:.6f},{:.6f}\n", budget, diff->mean, diff->lo, diff->hi);
        }
      }
      TESSERA_RETURN_IF_ERROR(
          WriteFileAtomically(fmt::format("{}/{}-budget-{}.csv", o.out_dir, task.name, s), csv));
      TESSERA_RETURN_IF_ERROR(
          WriteFileAtomically(fmt::format("{}/{}-diff-{}.csv", o.out_dir, task.name, s), diff_csv));
    }
    if (o.plots) TESSERA_RETURN_IF_ERROR(Plot(o, task, o.schedules));
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(o.out_dir + "/report.md", md));
  ProtocolReport report = grid.report();
  report.markdown = md;
  return report;
}

}  // namespace tessera::lr
