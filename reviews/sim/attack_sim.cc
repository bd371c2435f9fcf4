#include "reviews/sim/attack_sim.h"

#include <sodium.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>

#include "core/file.h"
#include "reviews/drac/eligibility.h"
#include "reviews/metric/hijack.h"
#include "reviews/urs/ristretto.h"

extern char** environ;

namespace tessera::reviews::sim {
namespace {

// The adversary's identities: distinct, deterministic ristretto255 public keys (the lottery
// only looks at public keys, so their secrets are irrelevant here).
std::vector<urs::Point> IdentityPool(uint64_t count, uint64_t seed) {
  std::vector<urs::Point> pool(count);
  Bytes s, idx;
  AppendBigEndian(s, seed, 8);
  for (uint64_t i = 0; i < count; ++i) {
    idx.clear();
    AppendBigEndian(idx, i, 8);
    pool[i] = urs::HashToPoint("tessera/reviews/sim/identity", {s, idx});
  }
  return pool;
}

drac::Seed EpochSeed(uint64_t seed, int trial) {
  Bytes s, t;
  AppendBigEndian(s, seed, 8);
  AppendBigEndian(t, static_cast<uint64_t>(trial), 8);
  urs::Point p = urs::HashToPoint("tessera/reviews/sim/epoch-seed", {s, t});
  drac::Seed out;
  std::copy(p.begin(), p.end(), out.begin());
  return out;
}

// Identities walked (in order) until the shift is reached; 0 when the pool runs out.
uint64_t IdentitiesNeeded(const std::vector<urs::Point>& pool, const drac::Seed& epoch_seed,
                          uint64_t threshold, double honest_sum, uint64_t honest_count, double mean,
                          double extreme, double delta) {
  double sum = honest_sum;
  uint64_t count = honest_count;
  for (uint64_t i = 0; i < pool.size(); ++i) {
    if (!drac::IsEligible(pool[i], "target-item", 1, epoch_seed, threshold)) continue;
    sum += extreme;
    ++count;
    if (std::fabs(sum / static_cast<double>(count) - mean) >= delta - 1e-9) return i + 1;
  }
  return 0;
}

}  // namespace

Result<AttackResult> RunAttack(const AttackConfig& config) {
  if (config.identities == 0 || config.ring_size == 0) {
    return InvalidArgumentError("identities and ring size must be positive");
  }
  if (config.trials < 1) return InvalidArgumentError("trials must be at least 1");
  if (!(config.delta > 0)) return InvalidArgumentError("delta must be positive");
  if (config.honest_mean < metric::HijackInput{}.scale_min ||
      config.honest_mean > metric::HijackInput{}.scale_max) {
    return InvalidArgumentError("honest mean must be within the 1..5 scale");
  }
  AttackResult result;
  result.config = config;
  result.factor = std::max(1.0, static_cast<double>(config.identities) / config.ring_size);

  // Honest ratings: integers 1..5 around the target mean (normal, sd 0.8, rounded, clamped).
  std::mt19937_64 rng(config.seed);
  std::normal_distribution<double> normal(config.honest_mean, 0.8);
  double honest_sum = 0;
  for (uint64_t i = 0; i < config.honest_reviews; ++i) {
    honest_sum += std::clamp(std::round(normal(rng)), 1.0, 5.0);
  }
  result.realized_mean =
      config.honest_reviews == 0 ? 3.0 : honest_sum / static_cast<double>(config.honest_reviews);

  metric::HijackInput in;
  in.identities = config.identities;
  in.ring_size = config.ring_size;
  in.honest_reviews = config.honest_reviews;
  in.honest_mean = result.realized_mean;
  in.delta = config.delta;
  TESSERA_ASSIGN_OR_RETURN(metric::HijackResistance hr, metric::ComputeHijackResistance(in));
  if (hr.reviews_needed == 0) {
    return FailedPreconditionError("a shift of delta is impossible for this honest mean");
  }
  result.extreme = hr.target_extreme;
  result.reviews_needed = hr.reviews_needed;
  result.predicted_feasible = hr.feasible;
  result.predicted = hr.identities_with_drac;

  std::vector<urs::Point> pool = IdentityPool(config.identities, config.seed);
  // Without DRAC: every identity is admitted (threshold saturates).
  result.without_drac =
      IdentitiesNeeded(pool, EpochSeed(config.seed, -1), UINT64_MAX, honest_sum,
                       config.honest_reviews, result.realized_mean, result.extreme, config.delta);
  TESSERA_ASSIGN_OR_RETURN(uint64_t threshold,
                           drac::Threshold({config.ring_size, config.identities}));
  std::vector<uint64_t> needed;
  for (int trial = 0; trial < config.trials; ++trial) {
    uint64_t a =
        IdentitiesNeeded(pool, EpochSeed(config.seed, trial), threshold, honest_sum,
                         config.honest_reviews, result.realized_mean, result.extreme, config.delta);
    if (a == 0) ++result.failed_trials;
    needed.push_back(a == 0 ? UINT64_MAX : a);
  }
  std::sort(needed.begin(), needed.end());
  auto quantile = [&](double p) {
    size_t idx = static_cast<size_t>(std::ceil(p * needed.size())) - 1;
    idx = std::min(idx, needed.size() - 1);
    return needed[idx] == UINT64_MAX ? uint64_t{0} : needed[idx];
  };
  result.median = quantile(0.5);
  result.feasible = result.median != 0;
  result.p10 = quantile(0.1);
  result.p90 = quantile(0.9);
  return result;
}

namespace {
std::string Num(uint64_t v, bool ok) { return ok && v != 0 ? std::to_string(v) : ">N"; }
}  // namespace

std::string FormatTable(const std::vector<AttackResult>& results) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line), "%8s %6s %7s %4s %9s %9s %9s %9s %9s %10s %9s\n", "N", "k",
                "N/k", "t", "no-DRAC", "DRAC-p10", "DRAC-med", "DRAC-p90", "metric", "med/noDRAC",
                "failed");
  out << line;
  for (const AttackResult& r : results) {
    char ratio[32] = "-";
    if (r.feasible && r.without_drac > 0) {
      std::snprintf(ratio, sizeof(ratio), "%.1f", static_cast<double>(r.median) / r.without_drac);
    }
    std::snprintf(line, sizeof(line), "%8llu %6llu %7.1f %4llu %9llu %9s %9s %9s %9s %10s %9d\n",
                  static_cast<unsigned long long>(r.config.identities),
                  static_cast<unsigned long long>(r.config.ring_size), r.factor,
                  static_cast<unsigned long long>(r.reviews_needed),
                  static_cast<unsigned long long>(r.without_drac), Num(r.p10, true).c_str(),
                  Num(r.median, r.feasible).c_str(), Num(r.p90, true).c_str(),
                  Num(r.predicted, r.predicted_feasible).c_str(), ratio, r.failed_trials);
    out << line;
  }
  return out.str();
}

std::string FormatCsv(const std::vector<AttackResult>& results) {
  std::ostringstream out;
  out << "identities,ring_size,factor,reviews_needed,without_drac,p10,median,p90,predicted,"
         "feasible,failed_trials,trials\n";
  for (const AttackResult& r : results) {
    out << r.config.identities << ',' << r.config.ring_size << ',' << r.factor << ','
        << r.reviews_needed << ',' << r.without_drac << ',' << r.p10 << ',' << r.median << ','
        << r.p90 << ',' << (r.predicted_feasible ? r.predicted : 0) << ',' << (r.feasible ? 1 : 0)
        << ',' << r.failed_trials << ',' << r.config.trials << '\n';
  }
  return out.str();
}

Status PlotWithGnuplot(const std::string& csv_path, const std::string& png_path) {
  std::string script_path = png_path + ".gp";
  std::ostringstream gp;
  gp << "set terminal pngcairo size 900,560 font 'sans,11'\n"
     << "set output '" << png_path << "'\n"
     << "set termoption noenhanced\n"
     << "set datafile separator ','\n"
     << "set logscale xy\n"
     << "set key top left\n"
     << "set grid\n"
     << "set xlabel 'N/k (identities per ring slot)'\n"
     << "set ylabel 'identities the adversary needs'\n"
     << "set title 'Shifting one item by delta: identities needed with and without DRAC'\n"
     << "plot '" << csv_path
     << "' every ::1 using 3:($10==1?$7:1/0):6:($8>0?$8:$1) with yerrorbars "
     << "pt 7 lc rgb '#1f77b4' title 'DRAC, simulated (median, p10-p90)', \\\n"
     << "     '' every ::1 using 3:($9>0?$9:1/0) with linespoints dt 2 lc rgb '#ff7f0e' "
     << "title 'metric A_min (binomial)', \\\n"
     << "     '' every ::1 using 3:($4*$3) with lines lc rgb '#2ca02c' title 't * N/k', \\\n"
     << "     '' every ::1 using 3:5 with linespoints pt 5 lc rgb '#d62728' "
     << "title 'no DRAC, simulated', \\\n"
     << "     '' every ::1 using 3:1 with lines dt 3 lc rgb 'black' title 'N (every identity)'\n";
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(script_path, gp.str()));
  // Run gnuplot directly (no shell), so unusual file names cannot be interpreted as commands.
  std::string program = "gnuplot";
  char* argv[] = {program.data(), script_path.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ) != 0) {
    return UnavailableError("cannot run gnuplot (is gnuplot-nox installed?)");
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return InternalError("gnuplot failed on " + script_path);
  }
  std::error_code ec;
  std::filesystem::remove(script_path, ec);
  return Status::Ok();
}

}  // namespace tessera::reviews::sim
