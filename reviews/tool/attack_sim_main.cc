// reviews-attack-sim: what share of the identities does an adversary need to shift one item's
// rating by delta in one review window, and how often does a given share win an item, for each
// ring size k? Prints a table beside the closed form, optionally writes CSV and a gnuplot PNG.
#include <iostream>
#include <sstream>

#include "core/cli.h"
#include "core/file.h"
#include "core/log.h"
#include "reviews/sim/attack_sim.h"

int main(int argc, char** argv) {
  using namespace tessera;
  cli::Program program("reviews-attack-sim",
                       "Simulates an adversary shifting one item's rating by delta in one "
                       "review window (honest reviews drawn from the same ring), beside the "
                       "closed form.");
  reviews::sim::AttackConfig base;
  std::vector<uint64_t> ring_sizes = {10, 20, 50, 100, 200, 500, 1000};
  std::string csv_path, png_path;
  auto& app = program.app();
  app.add_option("--identities", base.identities, "Registered identities N")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{10'000'000}));
  app.add_option("--ring-sizes", ring_sizes, "Expected DRAC ring sizes k to sweep")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--participation", base.participation,
                 "Share of honest ring members who review (rho)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0));
  app.add_option("--honest-mean", base.honest_mean, "Mean of the honest ratings (1-5)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 5.0));
  app.add_option("--honest-sd", base.honest_rating_sd,
                 "Standard deviation of the honest ratings (0: all equal the mean)")
      ->capture_default_str();
  app.add_option("--delta", base.delta, "Rating shift the adversary wants")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--shares", base.shares, "Adversary shares A/N to report success rates at")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--trials", base.trials, "Monte Carlo trials (epoch seeds) per ring size")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--seed", base.seed, "Simulation seed")->capture_default_str();
  app.add_flag("--exact-k", base.exact_k,
               "Draw exactly k reviewers (the ledger's draw) instead of each identity with "
               "probability k/N (the draw the closed form models)");
  app.add_option("--csv", csv_path, "Write the results as CSV here");
  app.add_option("--plot", png_path, "Write a gnuplot PNG here (needs --csv)");
  return program.Run(argc, argv, [&]() -> Status {
    if (!png_path.empty() && csv_path.empty()) return cli::UsageError("usage: --plot needs --csv");
    std::vector<reviews::sim::AttackResult> results;
    for (uint64_t k : ring_sizes) {
      reviews::sim::AttackConfig config = base;
      config.ring_size = k;
      std::cerr << "simulating k=" << k << " (" << config.trials << " trials)...\n";
      TESSERA_ASSIGN_OR_RETURN(auto result, reviews::sim::RunAttack(config));
      results.push_back(result);
    }
    std::cout << "one review window: participation " << base.participation << ", honest mean "
              << base.honest_mean << " (sd " << base.honest_rating_sd << "), attack toward "
              << base.extreme << " by delta " << base.delta << ", " << base.trials
              << " trials per row\n"
              << reviews::sim::FormatTable(results);
    if (!csv_path.empty()) {
      TESSERA_RETURN_IF_ERROR(WriteFileAtomically(csv_path, reviews::sim::FormatCsv(results)));
    }
    if (!png_path.empty()) {
      TESSERA_RETURN_IF_ERROR(reviews::sim::PlotWithGnuplot(csv_path, png_path, base.shares));
      std::cout << "plot: " << png_path << "\n";
    }
    return Status::Ok();
  });
}
