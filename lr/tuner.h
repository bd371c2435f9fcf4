// An online learning-rate tuner in the spirit of LRTuner (Iyer et al., AutoML@ICML 2021).
//
// THIS IS NOT LRTuner: that paper's algorithm section is not available to us (see docs/lr.md).
// It is our own design built from documented pieces:
//   * from AutoLRS (Jin et al., ICLR 2021): from a snapshot, train each candidate rate for a
//     short trial, fit a*exp(b*t)+c to its loss series and forecast the loss a whole round
//     ahead (lr/forecast.h);
//   * from Knee (Iyer et al., 2020/2023): prefer the LARGEST rate whose forecast is within a
//     tolerance of the best one (wide minima are found at high rates), explore at that rate
//     for a large part of the budget, then decay linearly to exactly 0;
//   * ours: a coarse first round (factors 4^-3..4^3 around the initial guess), fine rounds
//     after it (factors 2^-1..2^1 in half-octaves), search stops once the choice has not
//     moved for `stable_rounds` rounds, and exploration ends at a loss plateau (after
//     min_explore_fraction) or at max_explore_fraction of the budget, whichever is first;
//   * ours: the progress floor. Near the noise floor short trials always favour a smaller
//     rate (its floor is lower), so the choice drifts down round after round. Progress under
//     SGD scales with the cumulative rate (sum of rate x steps): the rounds that lowered the
//     loss needed a cumulative rate S, and a constant explore rate r delivers
//     r * (explore + decay / 2) over the whole schedule, so a search never lowers the rate
//     below S / (explore + decay / 2): a lower rate could not have made the progress the run
//     has already needed.
//
// Torch-free: the tuner drives a Trainable, an interface with an in-memory snapshot. The
// libtorch implementation lives in the trainer; tests use synthetic quadratics.
//
// Extra compute: every search round costs (#candidates x trial_steps) optimizer steps that do
// not count towards the budget; TunerReport::trial_steps reports them exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::lr {

enum class TunerPhase { kExplore, kExploit };
const char* TunerPhaseName(TunerPhase phase);

// What the tuner needs from a training run.
class Trainable {
 public:
  virtual ~Trainable() = default;
  // Keeps the complete training state (parameters, optimizer state, data position) in one
  // in-memory slot, overwriting the previous snapshot.
  virtual Status Snapshot() = 0;
  // Returns to the last snapshot exactly.
  virtual Status Restore() = 0;
  // One optimizer update at rate `lr` on the next minibatch; returns that minibatch's loss.
  virtual Result<double> Step(double lr) = 0;
  // Called after every step that counts towards the budget (never for trial steps).
  virtual void Committed(int64_t step, double lr, double loss, TunerPhase phase) {
    (void)step, (void)lr, (void)loss, (void)phase;
  }
  // Called after every committed step, just before Committed(), with the tuner's complete state
  // (TunerState::Save()): a checkpoint taken in Committed() stores it, and RunTuner resumed from
  // it continues exactly like an uninterrupted run.
  virtual void TunerStateChanged(const std::string& state) { (void)state; }
  // Asked after every committed step before the last: true ends RunTuner there (a preemption);
  // the report says stopped.
  virtual bool ShouldStop() { return false; }
};

struct TunerOptions {
  double initial_lr = 0;
  int64_t total_steps = 0;  // the budget of committed steps
  int64_t round_steps = 0;  // steps between decisions; 0: total_steps / 16
  int64_t trial_steps = 0;  // steps per candidate trial; 0: max(round_steps / 8, 8)
  std::vector<double> coarse_factors = {1.0 / 64, 1.0 / 16, 1.0 / 4, 1, 4, 16, 64};
  std::vector<double> fine_factors = {0.5, 0.7071067811865476, 1, 1.4142135623730951, 2};
  double tolerance = 0.05;  // a candidate is "good" if forecast <= best * (1 + tolerance)
  // The progress floor against the short-horizon drift: a search never lowers the rate below
  // (cumulative rate of the rounds that lowered the loss) / (effective length of the whole
  // schedule), unless the incumbent's trial diverged. See RunTuner in tuner.cc and docs/lr.md.
  bool progress_floor = true;
  int stable_rounds = 2;  // stop searching after this many rounds without a change
  double min_explore_fraction = 0.25;
  double max_explore_fraction = 0.5;
  double plateau_threshold = 0.01;  // relative drop of the round-mean loss that counts as progress
  double divergence_factor = 2.0;   // a trial whose loss exceeds this x its first loss diverged
  double max_lr = std::numeric_limits<double>::infinity();
};

struct TunerRound {
  int64_t step = 0;                // committed steps before the round
  std::vector<double> candidates;  // empty when the search had already stopped
  std::vector<double> forecasts;   // +inf for a diverged candidate
  double chosen_lr = 0;
  double floor_lr = 0;         // the progress floor in force at this round's search (0: none)
  double round_mean_loss = 0;  // mean committed loss over the round
};

// Everything RunTuner needs to continue a run after a committed step, as text.
struct TunerState {
  int64_t step = 0;  // committed steps done
  double lr = 0;     // the current explore rate
  int stable = 0;
  bool searching = true;
  bool first_round = true;
  double previous_mean = std::numeric_limits<double>::quiet_NaN();
  double progress_sum = 0;
  int64_t pending_steps = 0;
  int64_t trial_steps = 0;
  bool exploring = true;
  bool in_round = false;  // inside a round's committed steps (its search is done)
  int64_t round_len = 0;
  int64_t round_done = 0;
  double round_sum = 0;
  double chosen_lr = 0;  // the explore rate, once exploring ended
  int64_t explore_steps = 0;
  std::string end_reason = "budget";

  std::string Save() const;
  static Result<TunerState> Parse(std::string_view text);
};

struct TunerReport {
  double chosen_lr = 0;            // the explore rate when exploration ended
  int64_t explore_steps = 0;       // committed steps spent exploring
  int64_t committed_steps = 0;     // == total_steps
  int64_t trial_steps = 0;         // extra optimizer steps spent on trials
  std::string explore_end_reason;  // "plateau", "max_explore_fraction" or "budget"
  std::vector<TunerRound> rounds;  // of this call (a resumed run lacks the earlier ones)
  bool stopped = false;            // Trainable::ShouldStop ended the call before the budget

  double ExtraComputeFraction() const {
    return committed_steps == 0 ? 0 : static_cast<double>(trial_steps) / committed_steps;
  }
};

// Checks the options and fills the defaults (round_steps, trial_steps).
Result<TunerOptions> ResolveTunerOptions(TunerOptions options);

// Runs the whole budget: explore with periodic searches, then a linear decay to 0. With
// `resume` (a state the trainable received through TunerStateChanged, with the trainable back at
// that committed step) it continues from there exactly like an uninterrupted run.
Result<TunerReport> RunTuner(const TunerOptions& options, Trainable& trainable,
                             const TunerState* resume = nullptr);

}  // namespace tessera::lr
