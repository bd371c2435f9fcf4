#include "reviews/metric/window_attack.h"

#include <gtest/gtest.h>

namespace tessera::reviews::metric {
namespace {

// Without DRAC (k >= N) and with everyone reviewing, X = A and H = N - A exactly. μ = 4,
// e = 1, δ = 0.5: c = 0.5 / 2.5 = 0.2, so A wins iff A >= 0.2 (120 - A), i.e. A >= 20
// (by hand: 20 >= 0.2 * 100; 19 < 0.2 * 101).
TEST(WindowAttack, NoDracClosedFormByHand) {
  WindowAttack m{120, 120, 1.0, 4.0, 1.0, 0.5};
  EXPECT_DOUBLE_EQ(ReviewsPerHonestReview(m), 0.2);
  EXPECT_DOUBLE_EQ(AttackSuccessProbability(m, 19).value(), 0.0);
  EXPECT_DOUBLE_EQ(AttackSuccessProbability(m, 20).value(), 1.0);
  EXPECT_EQ(MinAdversary(m, 0.5).value(), std::optional<uint64_t>(20));
}

// N = 4, k = 2 (q = 1/2), ρ = 1, μ = 5, e = 1, δ = 2: c = 2 / (4 - 2) = 1, the adversary wins
// iff X >= max(1, H). By hand:
//   A = 1: X ~ B(1, 1/2), H ~ B(3, 1/2): Pr[X = 1] Pr[H <= 1] = 1/2 * 4/8 = 1/4;
//   A = 2: X ~ B(2, 1/2), H ~ B(2, 1/2): Pr[X = 1] Pr[H <= 1] + Pr[X = 2] = 1/2 * 3/4 + 1/4 = 5/8.
TEST(WindowAttack, TinyRingClosedFormByHand) {
  WindowAttack m{4, 2, 1.0, 5.0, 1.0, 2.0};
  EXPECT_NEAR(AttackSuccessProbability(m, 1).value(), 0.25, 1e-12);
  EXPECT_NEAR(AttackSuccessProbability(m, 2).value(), 0.625, 1e-12);
  EXPECT_EQ(MinAdversary(m, 0.5).value(), std::optional<uint64_t>(2));
}

// The point of the redone model: with honest reviews drawn from the same ring, the share of N
// needed for a 50% attack is about cρ / (1 + cρ) whatever k is (here 0.1 / 1.1 = 0.0909), not
// a cost that grows with N/k.
TEST(WindowAttack, CostAsShareOfNBarelyDependsOnK) {
  for (uint64_t k : {50, 200, 1000}) {
    WindowAttack m{10000, k, 0.5, 4.0, 1.0, 0.5};
    auto a = MinAdversary(m, 0.5);
    ASSERT_TRUE(a.ok() && a->has_value()) << k;
    EXPECT_NEAR(static_cast<double>(**a) / 10000, 0.1 / 1.1, 0.02) << "k = " << k;
  }
}

// Small rings add variance: 1% of the identities wins a noticeable share of items at k = 10,
// and almost none at k = 1000.
TEST(WindowAttack, SmallRingsLetASmallAdversaryWinSomeItems) {
  const double at10 = AttackSuccessProbability({10000, 10, 0.5, 4.0, 1.0, 0.5}, 100).value();
  const double at1000 = AttackSuccessProbability({10000, 1000, 0.5, 4.0, 1.0, 0.5}, 100).value();
  EXPECT_GT(at10, 0.05);
  EXPECT_LT(at1000, 1e-6);
}

TEST(WindowAttack, RejectsBadModels) {
  EXPECT_FALSE(AttackSuccessProbability({0, 1, 0.5, 4, 1, 0.5}, 0).ok());
  EXPECT_FALSE(AttackSuccessProbability({10, 0, 0.5, 4, 1, 0.5}, 0).ok());
  EXPECT_FALSE(AttackSuccessProbability({10, 5, 0.0, 4, 1, 0.5}, 0).ok());
  EXPECT_FALSE(AttackSuccessProbability({10, 5, 0.5, 4, 1, 3.0}, 0).ok());  // δ >= |μ - e|
  EXPECT_FALSE(AttackSuccessProbability({10, 5, 0.5, 4, 1, 0.5}, 11).ok());
}

}  // namespace
}  // namespace tessera::reviews::metric
