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
#include "reviews/metric/window_attack.h"
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

// One trial's window: for each identity, whether it is in the ring, whether (if honest) it
// reviews, and its honest rating.
struct Window {
  std::vector<uint8_t> eligible, reviews;
  std::vector<double> rating;
};

Window DrawWindow(const AttackConfig& c, const std::vector<urs::Point>& pool, uint64_t threshold,
                  int trial) {
  Window w;
  w.eligible.resize(pool.size());
  w.reviews.resize(pool.size());
  w.rating.resize(pool.size());
  const drac::Seed epoch_seed = EpochSeed(c.seed, trial);
  std::mt19937_64 rng(c.seed * 1000003 + static_cast<uint64_t>(trial));
  std::bernoulli_distribution joins(c.participation);
  std::normal_distribution<double> normal(c.honest_mean,
                                          c.honest_rating_sd > 0 ? c.honest_rating_sd : 1);
  std::vector<urs::Point> exact;
  if (c.exact_k) exact = *drac::EligibleKeys(pool, "target-item", 1, epoch_seed, c.ring_size);
  for (size_t i = 0; i < pool.size(); ++i) {
    w.eligible[i] = c.exact_k ? std::binary_search(exact.begin(), exact.end(), pool[i])
                              : drac::IsEligible(pool[i], "target-item", 1, epoch_seed, threshold);
    w.reviews[i] = joins(rng);
    w.rating[i] =
        c.honest_rating_sd > 0 ? std::clamp(std::round(normal(rng)), 1.0, 5.0) : c.honest_mean;
  }
  return w;
}

// Walks A = 1..N (identity A-1 turns adversarial) and calls visit(A, won) for each.
template <typename Visit>
void WalkAdversary(const AttackConfig& c, const Window& w, Visit visit) {
  const size_t n = w.eligible.size();
  double honest_sum = 0;
  uint64_t honest = 0, adversary_reviews = 0;
  for (size_t i = 0; i < n; ++i) {
    if (w.eligible[i] && w.reviews[i]) {
      honest_sum += w.rating[i];
      ++honest;
    }
  }
  for (size_t a = 1; a <= n; ++a) {
    const size_t i = a - 1;
    if (w.eligible[i]) {
      if (w.reviews[i]) {
        honest_sum -= w.rating[i];
        --honest;
      }
      ++adversary_reviews;
    }
    bool won = false;
    if (adversary_reviews > 0) {
      if (honest == 0) {
        won = true;
      } else {
        const double mu = honest_sum / static_cast<double>(honest);
        const double all = (honest_sum + c.extreme * static_cast<double>(adversary_reviews)) /
                           static_cast<double>(honest + adversary_reviews);
        won = std::fabs(all - mu) >= c.delta - 1e-9;
      }
    }
    if (!visit(a, won)) return;
  }
}

}  // namespace

Result<AttackResult> RunAttack(const AttackConfig& config) {
  if (config.identities == 0 || config.ring_size == 0) {
    return InvalidArgumentError("identities and ring size must be positive");
  }
  if (config.trials < 1) return InvalidArgumentError("trials must be at least 1");
  if (!(config.delta > 0)) return InvalidArgumentError("delta must be positive");
  if (config.honest_mean < 1 || config.honest_mean > 5) {
    return InvalidArgumentError("honest mean must be within the 1..5 scale");
  }
  if (config.honest_rating_sd == 0 && config.honest_mean != std::round(config.honest_mean)) {
    return InvalidArgumentError("with honest_rating_sd 0 the honest mean must be an integer");
  }
  for (double s : config.shares) {
    if (!(s >= 0 && s <= 1)) return InvalidArgumentError("adversary shares must be in [0, 1]");
  }
  metric::WindowAttack model{config.identities,  config.ring_size, config.participation,
                             config.honest_mean, config.extreme,   config.delta};
  AttackResult result;
  result.config = config;
  result.factor = static_cast<double>(config.identities) / config.ring_size;
  TESSERA_ASSIGN_OR_RETURN(auto predicted, metric::MinAdversary(model, 0.5));
  result.predicted_feasible = predicted.has_value();
  result.predicted = predicted.value_or(0);
  for (double s : config.shares) {
    ShareResult sr;
    sr.share = s;
    sr.adversary = static_cast<uint64_t>(std::llround(s * static_cast<double>(config.identities)));
    TESSERA_ASSIGN_OR_RETURN(sr.predicted, metric::AttackSuccessProbability(model, sr.adversary));
    result.shares.push_back(sr);
  }

  std::vector<urs::Point> pool = IdentityPool(config.identities, config.seed);
  TESSERA_ASSIGN_OR_RETURN(uint64_t threshold,
                           drac::Threshold({config.ring_size, config.identities}));
  std::vector<uint64_t> needed;
  std::vector<uint64_t> wins(result.shares.size(), 0);
  for (int trial = 0; trial < config.trials; ++trial) {
    const Window w = DrawWindow(config, pool, threshold, trial);
    uint64_t first = 0;
    WalkAdversary(config, w, [&](uint64_t a, bool won) {
      if (won && first == 0) first = a;
      for (size_t j = 0; j < result.shares.size(); ++j) {
        if (result.shares[j].adversary == a && won) ++wins[j];
      }
      return true;
    });
    if (first == 0) ++result.failed_trials;
    needed.push_back(first == 0 ? UINT64_MAX : first);
  }
  for (size_t j = 0; j < result.shares.size(); ++j) {
    result.shares[j].simulated = static_cast<double>(wins[j]) / config.trials;
  }
  std::sort(needed.begin(), needed.end());
  auto quantile = [&](double p) {
    size_t idx = static_cast<size_t>(std::ceil(p * needed.size())) - 1;
    idx = std::min(idx, needed.size() - 1);
    return needed[idx] == UINT64_MAX ? uint64_t{0} : needed[idx];
  };
  result.median = quantile(0.5);
  result.p10 = quantile(0.1);
  result.p90 = quantile(0.9);
  return result;
}

namespace {
std::string Share(uint64_t a, uint64_t n) {
  if (a == 0) return ">N";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", static_cast<double>(a) / static_cast<double>(n));
  return buf;
}
}  // namespace

std::string FormatTable(const std::vector<AttackResult>& results) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof(line), "%8s %6s %7s %9s %9s %9s %9s %7s", "N", "k", "N/k", "A/N-p10",
                "A/N-med", "A/N-p90", "metric", "failed");
  out << line;
  if (!results.empty()) {
    for (const ShareResult& s : results.front().shares) {
      std::snprintf(line, sizeof(line), "  P(%.3gN) sim/metric", s.share);
      out << line;
    }
  }
  out << "\n";
  for (const AttackResult& r : results) {
    const uint64_t n = r.config.identities;
    std::snprintf(line, sizeof(line), "%8llu %6llu %7.1f %9s %9s %9s %9s %7d",
                  static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(r.config.ring_size), r.factor,
                  Share(r.p10, n).c_str(), Share(r.median, n).c_str(), Share(r.p90, n).c_str(),
                  Share(r.predicted_feasible ? r.predicted : 0, n).c_str(), r.failed_trials);
    out << line;
    for (const ShareResult& s : r.shares) {
      std::snprintf(line, sizeof(line), "  %8.3f / %-8.3f", s.simulated, s.predicted);
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

std::string FormatCsv(const std::vector<AttackResult>& results) {
  std::ostringstream out;
  out << "identities,ring_size,factor,p10,median,p90,predicted,failed_trials,trials";
  if (!results.empty()) {
    for (size_t j = 0; j < results.front().shares.size(); ++j) {
      out << ",share" << j << ",sim" << j << ",metric" << j;
    }
  }
  out << '\n';
  for (const AttackResult& r : results) {
    const double n = static_cast<double>(r.config.identities);
    out << r.config.identities << ',' << r.config.ring_size << ',' << r.factor << ',' << r.p10 / n
        << ',' << r.median / n << ',' << r.p90 / n << ','
        << (r.predicted_feasible ? r.predicted / n : 0) << ',' << r.failed_trials << ','
        << r.config.trials;
    for (const ShareResult& s : r.shares) {
      out << ',' << s.share << ',' << s.simulated << ',' << s.predicted;
    }
    out << '\n';
  }
  return out.str();
}

Status PlotWithGnuplot(const std::string& csv_path, const std::string& png_path,
                       const std::vector<double>& shares) {
  std::string script_path = png_path + ".gp";
  std::ostringstream gp;
  gp << "set terminal pngcairo size 900,560 font 'sans,11'\n"
     << "set output '" << png_path << "'\n"
     << "set termoption noenhanced\n"
     << "set datafile separator ','\n"
     << "set logscale x\n"
     << "set key top right\n"
     << "set grid\n"
     << "set yrange [0:1]\n"
     << "set xlabel 'k (expected ring size)'\n"
     << "set ylabel 'share of N / per-item success probability'\n"
     << "set title 'One review window: adversary share needed, and items won at fixed shares'\n"
     << "plot '" << csv_path << "' every ::1 using 2:5:4:6 with yerrorbars pt 7 lc rgb '#1f77b4' "
     << "title 'A/N to win half the trials (sim, p10-p90)', \\\n"
     << "     '' every ::1 using 2:7 with lines dt 2 lc rgb '#1f77b4' title 'A/N, closed form'";
  const char* colors[] = {"#d62728", "#2ca02c", "#ff7f0e", "#9467bd"};
  for (size_t j = 0; j < shares.size() && j < 4; ++j) {
    const size_t col = 10 + 3 * j;  // share j: columns share, sim, metric
    gp << ", \\\n     '' every ::1 using 2:" << col + 1 << " with points pt 5 lc rgb '" << colors[j]
       << "' title 'P(win) at A = " << shares[j] << " N, sim'"
       << ", \\\n     '' every ::1 using 2:" << col + 2 << " with lines lc rgb '" << colors[j]
       << "' title 'closed form'";
  }
  gp << "\n";
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
