#include "reviews/metric/hijack.h"

#include <gtest/gtest.h>

namespace tessera::reviews::metric {
namespace {

// The worked example of shared/research/reviews.md §3: μ = 4.0 on 1-5, n_h = 100, δ = 0.5
// toward 1 needs t = 20 reviews; with k = 50, N = 10,000 (q = 0.005) the smallest A with
// Pr[Bin(A, q) >= 20] >= 1/2 is 3,934 (recomputed independently when writing this test).
TEST(Hijack, WorkedExampleOfTheResearchNote) {
  HijackInput in;
  in.identities = 10000;
  in.ring_size = 50;
  in.honest_reviews = 100;
  in.honest_mean = 4.0;
  in.delta = 0.5;
  in.cost_per_identity = 2.5;
  auto hr = ComputeHijackResistance(in);
  ASSERT_TRUE(hr.ok()) << hr.status();
  EXPECT_TRUE(hr->feasible);
  EXPECT_EQ(hr->target_extreme, 1.0);
  EXPECT_EQ(hr->reviews_needed, 20u);
  EXPECT_EQ(hr->identities_without_drac, 20u);
  EXPECT_EQ(hr->identities_with_drac, 3934u);
  EXPECT_DOUBLE_EQ(hr->predicted_factor, 200.0);
  EXPECT_DOUBLE_EQ(hr->cost, 2.5 * 3934);
}

TEST(Hijack, ReviewsNeeded) {
  EXPECT_EQ(*ReviewsNeeded(100, 4.0, 1.0, 0.5), 20u);
  EXPECT_EQ(*ReviewsNeeded(100, 4.0, 5.0, 0.5), 100u);  // toward the near extreme: costly
  EXPECT_FALSE(ReviewsNeeded(100, 4.0, 5.0, 1.0).has_value());
  EXPECT_EQ(*ReviewsNeeded(0, 4.0, 1.0, 0.5), 1u);
  // Check by substitution: after t reviews at e the mean moved by at least δ, after t-1 not.
  for (uint64_t n : {7u, 50u, 333u}) {
    uint64_t t = *ReviewsNeeded(n, 3.7, 1.0, 0.3);
    auto mean = [&](uint64_t k) { return (n * 3.7 + k * 1.0) / (n + k); };
    EXPECT_GE(3.7 - mean(t), 0.3 - 1e-9);
    if (t > 1) {
      EXPECT_LT(3.7 - mean(t - 1), 0.3);
    }
  }
}

TEST(Hijack, BinomialTail) {
  EXPECT_DOUBLE_EQ(BinomialTailAtLeast(10, 0.5, 0), 1.0);
  EXPECT_DOUBLE_EQ(BinomialTailAtLeast(3, 0.5, 4), 0.0);
  EXPECT_NEAR(BinomialTailAtLeast(2, 0.5, 1), 0.75, 1e-12);
  EXPECT_NEAR(BinomialTailAtLeast(4, 0.5, 2), 11.0 / 16, 1e-12);
  EXPECT_EQ(*MinIdentities(5, 1.0, 0.5, 100), 5u);
  EXPECT_FALSE(MinIdentities(50, 0.01, 0.5, 100).has_value());
}

// Without DRAC the adversary needs exactly t identities; DRAC multiplies that by about N/k.
TEST(Hijack, DracFactorTracksNOverK) {
  HijackInput in;
  in.identities = 100000;
  in.honest_reviews = 200;
  in.honest_mean = 4.2;
  in.delta = 0.4;
  in.ring_size = in.identities;  // no DRAC
  auto none = *ComputeHijackResistance(in);
  EXPECT_EQ(none.identities_with_drac, none.reviews_needed);
  for (uint64_t k : {100u, 1000u, 10000u}) {
    in.ring_size = k;
    auto hr = *ComputeHijackResistance(in);
    ASSERT_TRUE(hr.feasible);
    double ratio = static_cast<double>(hr.identities_with_drac) / none.identities_with_drac;
    double factor = static_cast<double>(in.identities) / k;
    // The median of the t-th success of a Bernoulli(q) process is within a few percent of t/q
    // for t in the tens.
    EXPECT_NEAR(ratio / factor, 1.0, 0.05) << "k=" << k;
  }
}

TEST(Hijack, InfeasibleAndInvalid) {
  HijackInput in;
  in.identities = 1000;
  in.ring_size = 5;  // q = 0.005, so 20 reviews need ~4000 identities > N
  in.honest_reviews = 100;
  in.honest_mean = 4.0;
  auto hr = ComputeHijackResistance(in);
  ASSERT_TRUE(hr.ok());
  EXPECT_FALSE(hr->feasible);
  EXPECT_EQ(hr->reviews_needed, 20u);
  in.delta = 3.5;  // more than the room on both sides
  hr = ComputeHijackResistance(in);
  ASSERT_TRUE(hr.ok());
  EXPECT_FALSE(hr->feasible);
  EXPECT_EQ(hr->reviews_needed, 0u);
  in.delta = 0.5;
  in.identities = 0;
  EXPECT_FALSE(ComputeHijackResistance(in).ok());
  in.identities = 10;
  in.honest_mean = 7;
  EXPECT_FALSE(ComputeHijackResistance(in).ok());
  in.honest_mean = 4;
  in.delta = 0;
  EXPECT_FALSE(ComputeHijackResistance(in).ok());
}

}  // namespace
}  // namespace tessera::reviews::metric
