#include "lr/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

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

std::string TunerState::Save() const {
  // %a keeps doubles exact through text (NaN prints as "nan", which strtod reads back).
  return fmt::format("tuner-v1 {} {:a} {} {} {} {:a} {:a} {} {} {} {} {} {} {:a} {:a} {} {}", step,
                     lr, stable, searching ? 1 : 0, first_round ? 1 : 0, previous_mean,
                     progress_sum, pending_steps, trial_steps, exploring ? 1 : 0, in_round ? 1 : 0,
                     round_len, round_done, round_sum, chosen_lr, explore_steps, end_reason);
}

Result<TunerState> TunerState::Parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string version, lr, previous_mean, progress_sum, round_sum, chosen_lr;
  int searching = 0, first_round = 0, exploring = 0, in_round = 0;
  TunerState st;
  if (!(in >> version >> st.step >> lr >> st.stable >> searching >> first_round >> previous_mean >>
        progress_sum >> st.pending_steps >> st.trial_steps >> exploring >> in_round >>
        st.round_len >> st.round_done >> round_sum >> chosen_lr >> st.explore_steps >>
        st.end_reason) ||
      version != "tuner-v1") {
    return InvalidArgumentError(fmt::format("tuner state '{}' is malformed", text.substr(0, 80)));
  }
  auto number = [](const std::string& t, double* out) {
    char* end = nullptr;
    *out = std::strtod(t.c_str(), &end);
    return *end == '\0';
  };
  if (!number(lr, &st.lr) || !number(previous_mean, &st.previous_mean) ||
      !number(progress_sum, &st.progress_sum) || !number(round_sum, &st.round_sum) ||
      !number(chosen_lr, &st.chosen_lr) || !(st.lr > 0) || st.step < 0 || st.round_done < 0 ||
      st.round_done > st.round_len || st.trial_steps < 0) {
    return InvalidArgumentError(fmt::format("tuner state '{}' is malformed", text.substr(0, 80)));
  }
  st.searching = searching != 0;
  st.first_round = first_round != 0;
  st.exploring = exploring != 0;
  st.in_round = in_round != 0;
  return st;
}

Result<TunerReport> RunTuner(const TunerOptions& options, Trainable& trainable,
                             const TunerState* resume) {
  TESSERA_ASSIGN_OR_RETURN(const TunerOptions o, ResolveTunerOptions(options));
  TunerState s;
  if (resume != nullptr) {
    s = *resume;
    if (s.step > o.total_steps) return InvalidArgumentError("tuner state is past the budget");
  } else {
    s.lr = std::min(o.initial_lr, o.max_lr);
  }
  TunerReport report;
  const auto max_explore =
      static_cast<int64_t>(std::llround(o.max_explore_fraction * o.total_steps));
  const auto min_explore =
      static_cast<int64_t>(std::llround(o.min_explore_fraction * o.total_steps));
  // The progress floor (see tuner.h): progress_sum is the cumulative rate (rate x steps) of
  // the rounds that lowered the loss, each credited at the lower of its rate and the rate
  // chosen right after it (steps at a rate the search at once judged too high prove only that
  // the lower rate suffices); a constant explore rate r delivers r * effective_length over the
  // whole schedule (explore at r, then a linear decay that averages r / 2).
  const double effective_length =
      static_cast<double>(max_explore) + 0.5 * static_cast<double>(o.total_steps - max_explore);
  // Ends exploration; the exploit's length follows from the step it ends at.
  auto end_explore = [&](const char* reason) {
    if (reason != nullptr) s.end_reason = reason;
    s.exploring = false;
    s.chosen_lr = s.lr;
    s.explore_steps = s.step;
  };
  // After every committed step: the state is complete (a checkpoint taken now resumes here),
  // then the trainable hears of the step.
  auto committed = [&](double lr, double loss, TunerPhase phase) {
    trainable.TunerStateChanged(s.Save());
    trainable.Committed(s.step - 1, lr, loss, phase);
  };

  while (s.exploring) {
    if (!s.in_round) {
      if (!(s.step < o.total_steps && s.step < max_explore)) {
        end_explore(nullptr);
        break;
      }
      TunerRound round;
      round.step = s.step;
      if (s.searching) {
        TESSERA_RETURN_IF_ERROR(trainable.Snapshot());
        for (double f : s.first_round ? o.coarse_factors : o.fine_factors) {
          const double c = std::min(s.lr * f, o.max_lr);
          if (std::find(round.candidates.begin(), round.candidates.end(), c) !=
              round.candidates.end()) {
            continue;  // max_lr clipping can repeat a candidate
          }
          TESSERA_ASSIGN_OR_RETURN(double forecast, Trial(trainable, c, s.previous_mean, o));
          round.candidates.push_back(c);
          round.forecasts.push_back(forecast);
          s.trial_steps += o.trial_steps;
        }
        TESSERA_RETURN_IF_ERROR(trainable.Restore());
        double chosen = Choose(round.candidates, round.forecasts, o.tolerance);
        if (o.progress_floor && !s.first_round) {
          round.floor_lr = s.progress_sum / effective_length;
          // Never below the floor, and never up because of it; a diverged incumbent is clearly
          // worse and may fall below.
          bool incumbent_ok = false;
          for (size_t i = 0; i < round.candidates.size(); ++i) {
            if (round.candidates[i] == s.lr && std::isfinite(round.forecasts[i])) {
              incumbent_ok = true;
            }
          }
          if (incumbent_ok && chosen < round.floor_lr) chosen = std::min(s.lr, round.floor_lr);
        }
        s.progress_sum += static_cast<double>(s.pending_steps) * std::min(s.lr, chosen);
        s.pending_steps = 0;
        s.stable = chosen == s.lr ? s.stable + 1 : 0;
        s.lr = chosen;
        s.first_round = false;
        if (s.stable >= o.stable_rounds) s.searching = false;
      }
      round.chosen_lr = s.lr;
      report.rounds.push_back(round);
      s.in_round = true;
      s.round_len = std::min(o.round_steps, max_explore - s.step);
      s.round_done = 0;
      s.round_sum = 0;
    }
    while (s.round_done < s.round_len) {
      TESSERA_ASSIGN_OR_RETURN(double loss, trainable.Step(s.lr));
      s.round_sum += loss;
      ++s.round_done;
      ++s.step;
      committed(s.lr, loss, TunerPhase::kExplore);
      if (s.step < o.total_steps && trainable.ShouldStop()) {
        report.stopped = true;
        break;
      }
    }
    if (report.stopped) break;
    s.in_round = false;
    const double mean = s.round_sum / static_cast<double>(s.round_len);
    // A run resumed mid-round has no record of the round's search.
    if (!report.rounds.empty()) report.rounds.back().round_mean_loss = mean;
    // Progress: the round-mean loss fell by at least plateau_threshold (relative); the first
    // round always counts.
    if (!std::isfinite(s.previous_mean) || mean < (1 - o.plateau_threshold) * s.previous_mean) {
      s.pending_steps = s.round_len;
    }
    if (s.step >= max_explore) {
      end_explore("max_explore_fraction");
      break;
    }
    // Loss plateau: the round mean fell by less than plateau_threshold (relative) since the
    // previous round. On a plateau, short trials measure mostly the noise floor, which is
    // lower for smaller rates (the short-horizon bias), so the search stops there. The
    // exploration itself ends at a plateau only after min_explore_fraction: Knee's
    // observation is that the loss stagnates at a high rate long before exploring stops
    // helping.
    const bool plateau = std::isfinite(s.previous_mean) &&
                         s.previous_mean - mean < o.plateau_threshold * std::abs(s.previous_mean);
    if (plateau) s.searching = false;
    if (plateau && s.step >= min_explore) {
      end_explore("plateau");
      break;
    }
    s.previous_mean = mean;
  }

  if (!report.stopped) {
    // Exploit: Knee's decay, from the explore rate to exactly 0 at the last step.
    const int64_t decay = o.total_steps - s.explore_steps;
    for (int64_t j = s.step - s.explore_steps; j < decay; ++j) {
      const double rate =
          s.chosen_lr * (1.0 - static_cast<double>(j + 1) / static_cast<double>(decay));
      TESSERA_ASSIGN_OR_RETURN(double loss, trainable.Step(std::max(rate, 0.0)));
      ++s.step;
      committed(std::max(rate, 0.0), loss, TunerPhase::kExploit);
      if (s.step < o.total_steps && trainable.ShouldStop()) {
        report.stopped = true;
        break;
      }
    }
  }
  report.chosen_lr = s.exploring ? s.lr : s.chosen_lr;
  report.explore_steps = s.exploring ? s.step : s.explore_steps;
  report.explore_end_reason = s.end_reason;
  report.trial_steps = s.trial_steps;
  report.committed_steps = s.step;
  return report;
}

}  // namespace tessera::lr
