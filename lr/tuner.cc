#include "lr/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lr/forecast.h"

namespace tessera::lr {

const char* TunerPhaseName(TunerPhase phase) {
  return phase == TunerPhase::kExplore ? "explore" : "exploit";
}

Result<TunerOptions> ResolveTunerOptions(TunerOptions o) {
  if (!(o.initial_lr > 0) || !std::isfinite(o.initial_lr)) {
    return InvalidArgumentError(fmt::format("tuner initial_lr must be > 0, got {}", o.initial_lr));
  }
  if (o.total_steps < 2) return InvalidArgumentError("tuner total_steps must be >= 2");
  if (o.round_steps == 0) o.round_steps = std::max<int64_t>(o.total_steps / 16, 1);
  if (o.trial_steps == 0) o.trial_steps = std::max<int64_t>(o.round_steps / 8, 8);
  if (o.round_steps < 1 || o.trial_steps < 3) {
    return InvalidArgumentError("tuner round_steps must be >= 1 and trial_steps >= 3");
  }
  for (const auto* factors : {&o.coarse_factors, &o.fine_factors}) {
    if (factors->empty()) return InvalidArgumentError("tuner candidate factors must not be empty");
    for (double f : *factors) {
      if (!(f > 0) || !std::isfinite(f)) return InvalidArgumentError("tuner factors must be > 0");
    }
  }
  if (!(o.tolerance >= 0) || o.stable_rounds < 1 || !(o.divergence_factor > 1) || !(o.max_lr > 0)) {
    return InvalidArgumentError(
        "tuner needs tolerance >= 0, stable_rounds >= 1, divergence_factor > 1, max_lr > 0");
  }
  if (!(o.min_explore_fraction >= 0 && o.min_explore_fraction <= o.max_explore_fraction &&
        o.max_explore_fraction <= 1)) {
    return InvalidArgumentError(
        "tuner needs 0 <= min_explore_fraction <= max_explore_fraction <= 1");
  }
  return o;
}

namespace {

// Trains one candidate from the snapshot and returns its forecast loss `horizon` steps ahead,
// or +inf if the trial diverged.
// `reference` is the loss level before the trial (the previous round's mean, or the trial's
// own first third on the first round): a trial diverged when the mean of its last third
// exceeds divergence_factor x that level. Means of thirds, not single losses, because a
// minibatch loss near the noise floor easily doubles from one step to the next.
Result<double> Trial(Trainable& t, double lr, double reference, const TunerOptions& o) {
  TESSERA_RETURN_IF_ERROR(t.Restore());
  std::vector<double> losses;
  losses.reserve(static_cast<size_t>(o.trial_steps));
  for (int64_t i = 0; i < o.trial_steps; ++i) {
    TESSERA_ASSIGN_OR_RETURN(double loss, t.Step(lr));
    if (!std::isfinite(loss)) return std::numeric_limits<double>::infinity();
    losses.push_back(loss);
  }
  const size_t third = std::max<size_t>(losses.size() / 3, 1);
  double head = 0, tail = 0;
  for (size_t i = 0; i < third; ++i) {
    head += losses[i] / static_cast<double>(third);
    tail += losses[losses.size() - 1 - i] / static_cast<double>(third);
  }
  const double level = std::max(head, std::isfinite(reference) ? reference : head);
  if (level > 0 && tail > o.divergence_factor * level) {
    return std::numeric_limits<double>::infinity();
  }
  return ForecastLoss(losses, static_cast<double>(o.round_steps));
}

// The wide-minima choice: the largest candidate whose forecast is within tolerance of the
// best forecast. Falls back to the smallest candidate when every trial diverged.
double Choose(const std::vector<double>& candidates, const std::vector<double>& forecasts,
              double tolerance) {
  double best = std::numeric_limits<double>::infinity();
  for (double f : forecasts) best = std::min(best, f);
  if (!std::isfinite(best)) return *std::min_element(candidates.begin(), candidates.end());
  const double limit = best + tolerance * std::abs(best);
  double chosen = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (forecasts[i] <= limit) chosen = std::max(chosen, candidates[i]);
  }
  return chosen;
}

}  // namespace

Result<TunerReport> RunTuner(const TunerOptions& options, Trainable& trainable) {
  TESSERA_ASSIGN_OR_RETURN(const TunerOptions o, ResolveTunerOptions(options));
  TunerReport report;
  report.explore_end_reason = "budget";
  double lr = std::min(o.initial_lr, o.max_lr);
  int64_t step = 0;
  int stable = 0;
  bool searching = true;
  bool first_round = true;
  double previous_mean = std::numeric_limits<double>::quiet_NaN();
  const auto max_explore =
      static_cast<int64_t>(std::llround(o.max_explore_fraction * o.total_steps));
  const auto min_explore =
      static_cast<int64_t>(std::llround(o.min_explore_fraction * o.total_steps));
  // The progress floor (see tuner.h): progress_sum is the cumulative rate (rate x steps) of
  // the rounds that lowered the loss, each credited at the lower of its rate and the rate
  // chosen right after it (steps at a rate the search at once judged too high prove only that
  // the lower rate suffices); a constant explore rate r delivers r * effective_length over the
  // whole schedule (explore at r, then a linear decay that averages r / 2).
  double progress_sum = 0;
  int64_t pending_steps = 0;  // the last round's steps if it lowered the loss, not yet credited
  const double effective_length =
      static_cast<double>(max_explore) + 0.5 * static_cast<double>(o.total_steps - max_explore);

  while (step < o.total_steps && step < max_explore) {
    TunerRound round;
    round.step = step;
    if (searching) {
      TESSERA_RETURN_IF_ERROR(trainable.Snapshot());
      for (double f : first_round ? o.coarse_factors : o.fine_factors) {
        const double c = std::min(lr * f, o.max_lr);
        if (std::find(round.candidates.begin(), round.candidates.end(), c) !=
            round.candidates.end()) {
          continue;  // max_lr clipping can repeat a candidate
        }
        TESSERA_ASSIGN_OR_RETURN(double forecast, Trial(trainable, c, previous_mean, o));
        round.candidates.push_back(c);
        round.forecasts.push_back(forecast);
        report.trial_steps += o.trial_steps;
      }
      TESSERA_RETURN_IF_ERROR(trainable.Restore());
      double chosen = Choose(round.candidates, round.forecasts, o.tolerance);
      if (o.progress_floor && !first_round) {
        round.floor_lr = progress_sum / effective_length;
        // Never below the floor, and never up because of it; a diverged incumbent is clearly
        // worse and may fall below.
        bool incumbent_ok = false;
        for (size_t i = 0; i < round.candidates.size(); ++i) {
          if (round.candidates[i] == lr && std::isfinite(round.forecasts[i])) incumbent_ok = true;
        }
        if (incumbent_ok && chosen < round.floor_lr) chosen = std::min(lr, round.floor_lr);
      }
      progress_sum += static_cast<double>(pending_steps) * std::min(lr, chosen);
      pending_steps = 0;
      stable = chosen == lr ? stable + 1 : 0;
      lr = chosen;
      first_round = false;
      if (stable >= o.stable_rounds) searching = false;
    }
    round.chosen_lr = lr;
    const int64_t len = std::min(o.round_steps, max_explore - step);
    double sum = 0;
    for (int64_t i = 0; i < len; ++i) {
      TESSERA_ASSIGN_OR_RETURN(double loss, trainable.Step(lr));
      trainable.Committed(step, lr, loss, TunerPhase::kExplore);
      sum += loss;
      ++step;
    }
    round.round_mean_loss = sum / static_cast<double>(len);
    // Progress: the round-mean loss fell by at least plateau_threshold (relative); the first
    // round always counts.
    if (!std::isfinite(previous_mean) ||
        round.round_mean_loss < (1 - o.plateau_threshold) * previous_mean) {
      pending_steps = len;
    }
    report.rounds.push_back(round);
    if (step >= max_explore) {
      report.explore_end_reason = "max_explore_fraction";
      break;
    }
    // Loss plateau: the round mean fell by less than plateau_threshold (relative) since the
    // previous round. On a plateau, short trials measure mostly the noise floor, which is
    // lower for smaller rates (the short-horizon bias), so the search stops there. The
    // exploration itself ends at a plateau only after min_explore_fraction: Knee's
    // observation is that the loss stagnates at a high rate long before exploring stops
    // helping.
    const bool plateau =
        std::isfinite(previous_mean) &&
        previous_mean - round.round_mean_loss < o.plateau_threshold * std::abs(previous_mean);
    if (plateau) searching = false;
    if (plateau && step >= min_explore) {
      report.explore_end_reason = "plateau";
      break;
    }
    previous_mean = round.round_mean_loss;
  }
  report.chosen_lr = lr;
  report.explore_steps = step;

  // Exploit: Knee's decay, from the explore rate to exactly 0 at the last step.
  const int64_t decay = o.total_steps - step;
  for (int64_t j = 0; j < decay; ++j) {
    const double rate = lr * (1.0 - static_cast<double>(j + 1) / static_cast<double>(decay));
    TESSERA_ASSIGN_OR_RETURN(double loss, trainable.Step(std::max(rate, 0.0)));
    trainable.Committed(step, std::max(rate, 0.0), loss, TunerPhase::kExploit);
    ++step;
  }
  report.committed_steps = step;
  return report;
}

}  // namespace tessera::lr
