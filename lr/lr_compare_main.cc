// lr-compare: runs the schedule comparison experiments of docs/lr.md and prints the tables.
#include <iostream>

#include "core/cli.h"
#include "lr/compare.h"

int main(int argc, char** argv) {
  tessera::cli::Program program(
      "lr-compare",
      "Runs every schedule and the online tuner at equal and shortened budgets over several "
      "seeds on Fashion-MNIST and the fortunes LM; prints mean ± std tables, writes gnuplot "
      "plots.");
  tessera::lr::CompareOptions o;
  auto& app = program.app();
  app.add_option("--out", o.out_dir, "output directory")->capture_default_str();
  app.add_option("--tasks", o.tasks, "fmnist and/or lm")->delimiter(',');
  app.add_option("--seeds", o.seeds, "seeds per configuration")->capture_default_str();
  app.add_option("--schedules", o.schedules, "full-budget schedules")->delimiter(',');
  app.add_option("--short-budgets", o.short_budgets, "shortened budgets (fractions)")
      ->delimiter(',');
  app.add_option("--short-schedules", o.short_schedules, "schedules run at shortened budgets")
      ->delimiter(',');
  app.add_option("--lm-short-budgets", o.lm_short_budgets, "the LM's shortened budgets")
      ->delimiter(',');
  app.add_option("--lm-short-schedules", o.lm_short_schedules,
                 "schedules run at the LM's shortened budgets")
      ->delimiter(',');
  bool no_tuner = false, no_plots = false;
  app.add_flag("--no-tuner", no_tuner, "skip the online tuner");
  app.add_flag("--no-plots", no_plots, "skip gnuplot");
  app.add_option("--fmnist-epochs", o.fmnist_epochs, "Fashion-MNIST full budget in epochs")
      ->capture_default_str();
  app.add_option("--fmnist-train-limit", o.fmnist_train_limit, "first N training images (0: all)")
      ->capture_default_str();
  app.add_option("--fmnist-lr", o.fmnist_lr, "Fashion-MNIST peak rate")->capture_default_str();
  app.add_option("--lm-steps", o.lm_steps, "LM full budget in steps")->capture_default_str();
  app.add_option("--lm-lr", o.lm_lr, "LM peak rate")->capture_default_str();
  return program.Run(argc, argv, [&]() -> tessera::Status {
    o.tuner = !no_tuner;
    o.plots = !no_plots;
    TESSERA_ASSIGN_OR_RETURN(std::string tables,
                             tessera::lr::RunComparison(o, [](const std::string& line) {
                               std::cerr << line << std::endl;
                             }));
    std::cout << tables;
    return tessera::Status::Ok();
  });
}
