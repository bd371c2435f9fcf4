#include "reviews/sim/attack_sim.h"

#include <gtest/gtest.h>

namespace tessera::reviews::sim {
namespace {

TEST(AttackSim, WithoutDracNeedsExactlyT) {
  AttackConfig c;
  c.identities = 500;
  c.ring_size = 500;  // k = N: everyone eligible
  c.honest_reviews = 60;
  c.trials = 5;
  auto r = RunAttack(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->without_drac, r->reviews_needed);
  EXPECT_EQ(r->median, r->reviews_needed);
  EXPECT_EQ(r->predicted, r->reviews_needed);
}

// The simulated median tracks the metric's A_min, and DRAC multiplies the cost by about N/k.
TEST(AttackSim, DracMedianTracksMetric) {
  AttackConfig c;
  c.identities = 4000;
  c.ring_size = 200;  // N/k = 20
  c.honest_reviews = 60;
  c.honest_mean = 4.0;
  c.delta = 0.5;
  c.trials = 120;
  auto r = RunAttack(c);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->feasible);
  ASSERT_TRUE(r->predicted_feasible);
  EXPECT_EQ(r->failed_trials, 0);
  // The sample median of 120 trials of a negative-binomial count with t ~ 12 has a relative
  // standard error of about 4%; 20% is five of them.
  EXPECT_NEAR(static_cast<double>(r->median) / r->predicted, 1.0, 0.2);
  double ratio = static_cast<double>(r->median) / r->without_drac;
  EXPECT_NEAR(ratio / r->factor, 1.0, 0.25);
  EXPECT_LE(r->p10, r->median);
  EXPECT_LE(r->median, r->p90);
  // Deterministic for a seed.
  auto again = RunAttack(c);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->median, r->median);
  EXPECT_EQ(again->p90, r->p90);
}

TEST(AttackSim, TinyRingsMakeTheAttackInfeasible) {
  AttackConfig c;
  c.identities = 1000;
  c.ring_size = 2;  // needs ~t * 500 identities, far more than exist
  c.honest_reviews = 40;
  c.trials = 20;
  auto r = RunAttack(c);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->feasible);
  EXPECT_FALSE(r->predicted_feasible);
  EXPECT_GT(r->failed_trials, 10);
  std::string table = FormatTable({*r});
  EXPECT_NE(table.find(">N"), std::string::npos);
  std::string csv = FormatCsv({*r});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 2);
}

TEST(AttackSim, RejectsBadConfigs) {
  AttackConfig c;
  c.identities = 0;
  EXPECT_FALSE(RunAttack(c).ok());
  c.identities = 10;
  c.trials = 0;
  EXPECT_FALSE(RunAttack(c).ok());
  c.trials = 1;
  c.honest_mean = 9;
  EXPECT_FALSE(RunAttack(c).ok());
}

}  // namespace
}  // namespace tessera::reviews::sim
