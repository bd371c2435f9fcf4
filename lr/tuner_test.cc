#include "lr/tuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "lr/quadratic.h"

namespace tessera::lr {
namespace {

struct Case {
  const char* name;
  std::vector<double> h;
  double sigma;
  double initial_lr;
};

class TunerOnQuadratics : public ::testing::TestWithParam<Case> {};

TEST_P(TunerOnQuadratics, PicksWithinTwoOfTheKnownBestRate) {
  const Case& c = GetParam();
  const int64_t total = 400;
  const double x0 = 3.0;
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    NoisyQuadratic q(c.h, x0, c.sigma, seed);
    TunerOptions o{.initial_lr = c.initial_lr, .total_steps = total};
    auto report = RunTuner(o, q);
    ASSERT_TRUE(report.ok()) << report.status();
    // Ground truth: the best explore rate for the explore/decay split the tuner actually ran.
    const double best = q.BestRate(report->explore_steps, total);
    EXPECT_GE(report->chosen_lr, best / 2) << c.name << " seed " << seed << " best " << best;
    EXPECT_LE(report->chosen_lr, best * 2) << c.name << " seed " << seed << " best " << best;
    // Bookkeeping: the budget is respected, trials are counted exactly, the decay ends at 0.
    EXPECT_EQ(report->committed_steps, total);
    EXPECT_EQ(q.committed(), total);
    EXPECT_TRUE(q.committed_in_order());
    EXPECT_EQ(q.steps(), total + report->trial_steps);
    EXPECT_EQ(q.exploit_steps(), total - report->explore_steps);
    EXPECT_EQ(q.last_committed_lr(), 0.0);
    EXPECT_LE(report->explore_steps, total / 2);
    EXPECT_GE(report->explore_steps, total / 4);
  }
}

const std::vector<double> kWideSpectrum = {0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 0.05, 0.1,
                                           0.2,  0.4, 0.8, 1.6, 3.2, 6.4, 0.3, 0.6, 1.2,  2.4};

// The known best rates (400 steps, 200 explored): ill-conditioned 0.19, well-conditioned
// 0.015, noise-dominated 0.018, wide spectrum 0.30. Two runs of this grid's problems miss and
// are not here (docs/lr.md): the ill-conditioned problem started 30x low (seed 1: 0.40x) and
// the well-conditioned one started 20x high (seed 2: 2.05x).
INSTANTIATE_TEST_SUITE_P(
    Quadratics, TunerOnQuadratics,
    ::testing::Values(
        // Ill-conditioned (curvatures 0.1 .. 10), little noise: the best rate is set by the
        // curvatures (near 2 / (h_min + h_max)). Start 20x too high (diverging).
        Case{"ill-conditioned-high-start", {0.1, 0.3, 1, 3, 10}, 0.05, 4.0},
        // Well-conditioned, little noise, started 30x low: the loss reaches its noise floor
        // within a few rounds, after which short trials always favour a smaller rate. Without
        // the progress floor the tuner ended 0.37-0.53x the best rate here.
        Case{"well-conditioned-low-start", std::vector<double>(50, 2.0), 0.05, 0.0005},
        // Wider spectrum in 20 dimensions, started 10x low and 10x high (diverging).
        Case{"wide-spectrum", kWideSpectrum, 0.05, 0.03},
        Case{"wide-spectrum-high-start", kWideSpectrum, 0.05, 3.0},
        // Noise-dominated: the best rate is far below 1/h because of the noise floor. Started
        // 17x high and 9x low (0.45x for seed 2 without the progress floor).
        Case{"noisy", std::vector<double>(50, 1.0), 1.0, 0.3},
        Case{"noisy-low-start", std::vector<double>(50, 1.0), 1.0, 0.002}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) ch = ch == '-' ? '_' : ch;
      return n;
    });

TEST(Tuner, ProgressFloorStopsTheDownwardDrift) {
  // The well-conditioned problem, seed 2: without the floor the choice drifts to 0.37x the
  // known best rate; with it, the floor holds it within 2x and is reported per round.
  const int64_t total = 400;
  for (bool floor : {false, true}) {
    NoisyQuadratic q(std::vector<double>(50, 2.0), 3.0, 0.05, 2);
    TunerOptions o{.initial_lr = 0.0005, .total_steps = total, .progress_floor = floor};
    auto report = RunTuner(o, q).value();
    const double best = q.BestRate(report.explore_steps, total);
    if (floor) {
      EXPECT_GE(report.chosen_lr, best / 2);
      EXPECT_LE(report.chosen_lr, best * 2);
      EXPECT_GT(report.rounds.back().floor_lr, 0.0);
      // A search never lowers the rate below the floor (it never raises it because of it).
      for (size_t i = 1; i < report.rounds.size(); ++i) {
        const auto& r = report.rounds[i];
        if (r.candidates.empty()) continue;
        EXPECT_GE(r.chosen_lr, std::min(r.floor_lr, report.rounds[i - 1].chosen_lr)) << i;
      }
    } else {
      EXPECT_LT(report.chosen_lr, best / 2);
      for (const auto& r : report.rounds) EXPECT_EQ(r.floor_lr, 0.0);
    }
  }
}

TEST(Tuner, PrefersTheLargestGoodRate) {
  // Flat landscape (sigma = 0, h tiny): every candidate forecasts nearly the same loss, so the
  // wide-minima rule takes the largest candidate of the coarse round.
  NoisyQuadratic q({1e-9}, 1.0, 0.0, 1);
  TunerOptions o{.initial_lr = 0.01, .total_steps = 160, .stable_rounds = 1};
  auto report = RunTuner(o, q).value();
  ASSERT_FALSE(report.rounds.empty());
  EXPECT_DOUBLE_EQ(report.rounds[0].chosen_lr, 0.64);
}

TEST(Tuner, RejectsBadOptions) {
  NoisyQuadratic q({1.0}, 1.0, 0.0, 1);
  EXPECT_FALSE(RunTuner({.initial_lr = 0, .total_steps = 100}, q).ok());
  EXPECT_FALSE(RunTuner({.initial_lr = 0.1, .total_steps = 1}, q).ok());
  EXPECT_FALSE(RunTuner({.initial_lr = 0.1, .total_steps = 100, .trial_steps = 2}, q).ok());
  EXPECT_FALSE(RunTuner({.initial_lr = 0.1, .total_steps = 100, .fine_factors = {}}, q).ok());
  EXPECT_FALSE(
      RunTuner({.initial_lr = 0.1, .total_steps = 100, .min_explore_fraction = 0.6}, q).ok());
  EXPECT_EQ(q.steps(), 0);
}

class FailingTrainable : public Trainable {
 public:
  Status Snapshot() override { return Status::Ok(); }
  Status Restore() override { return Status::Ok(); }
  Result<double> Step(double) override {
    if (++steps_ > 5) return DataLossError("disk gone");
    return 1.0;
  }
  int steps_ = 0;
};

TEST(Tuner, PropagatesTrainingErrors) {
  FailingTrainable t;
  auto report = RunTuner({.initial_lr = 0.1, .total_steps = 100}, t);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kDataLoss);
}

// The tuner's state is checkpointable: a run stopped after any committed step (in the first
// round, mid-round, at a round's end, in the exploit phase) and resumed from the saved text state
// commits exactly the rates and losses of an uninterrupted run.
class StoppableQuadratic : public NoisyQuadratic {
 public:
  using NoisyQuadratic::NoisyQuadratic;
  void Committed(int64_t step, double lr, double loss, TunerPhase phase) override {
    NoisyQuadratic::Committed(step, lr, loss, phase);
    log.emplace_back(lr, loss);
  }
  void TunerStateChanged(const std::string& state) override { last_state = state; }
  bool ShouldStop() override { return stop_at > 0 && committed() == stop_at; }
  std::vector<std::pair<double, double>> log;
  std::string last_state;
  int64_t stop_at = 0;
};

TEST(Tuner, StoppedAndResumedFromItsStateEqualsUninterrupted) {
  const TunerOptions o{.initial_lr = 0.0005, .total_steps = 400};
  StoppableQuadratic whole(std::vector<double>(50, 2.0), 3.0, 0.05, 2);
  const TunerReport full = RunTuner(o, whole).value();
  ASSERT_EQ(whole.log.size(), 400u);
  for (int64_t stop : {1, 13, 25, 50, 137, 250, 399}) {
    StoppableQuadratic q(std::vector<double>(50, 2.0), 3.0, 0.05, 2);
    q.stop_at = stop;
    const TunerReport first = RunTuner(o, q).value();
    EXPECT_TRUE(first.stopped) << stop;
    EXPECT_EQ(first.committed_steps, stop);
    // Only the text crosses to the second call, as through a checkpoint file.
    const TunerState state = TunerState::Parse(q.last_state).value();
    EXPECT_EQ(state.Save(), q.last_state);
    q.stop_at = 0;
    const TunerReport rest = RunTuner(o, q, &state).value();
    EXPECT_FALSE(rest.stopped);
    EXPECT_EQ(q.log, whole.log) << "stopped at " << stop;
    EXPECT_EQ(rest.chosen_lr, full.chosen_lr) << stop;
    EXPECT_EQ(rest.trial_steps, full.trial_steps) << stop;
    EXPECT_EQ(rest.explore_steps, full.explore_steps) << stop;
    EXPECT_EQ(rest.explore_end_reason, full.explore_end_reason) << stop;
  }
  EXPECT_FALSE(TunerState::Parse("tuner-v1 garbage").ok());
  EXPECT_FALSE(TunerState::Parse("").ok());
}

}  // namespace
}  // namespace tessera::lr
