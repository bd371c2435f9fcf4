// Thresholds: the tails against an independent reference (mpmath at 40 digits, pmf by
// recurrence rather than lgamma; script in the test's comments), and the chooser's promises.
#include "ledger/agreement/thresholds.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tessera::ledger::agreement {
namespace {

// Reference values, from /usr/bin/python3 with mpmath (mp.dps = 40):
//   Poisson pmf p_k = p_{k-1} * lambda / k; fork = sum_m P(M=m) P(H >= 2T - 2m);
//   binomial pmf by the ratio recurrence.
void ExpectRelative(double got, double want, double tolerance = 1e-6) {
  EXPECT_NEAR(got / want, 1.0, tolerance) << "got " << got << " want " << want;
}

TEST(Thresholds, PoissonTailsMatchAnIndependentReference) {
  CommitteeModel m{.expected = 2000, .malicious_fraction = 0.25};
  // The 2/3 rule at C = 2000: about 2.5e-3 of steps admit two quorums (issue #12 said 2.6e-3).
  ExpectRelative(ForkProbability(m, 1334), 0.0025461476);
  ExpectRelative(StallProbability(m, 1334), 5.9865424e-6);
  m.expected = 1000;
  ExpectRelative(ForkProbability(m, 700), 0.00022934858);
  ExpectRelative(StallProbability(m, 700), 0.031503721);
  m.expected = 3000;
  ExpectRelative(ForkProbability(m, 2070), 6.4880584e-8);
  ExpectRelative(StallProbability(m, 2070), 5.8014077e-5);
}

TEST(Thresholds, BinomialTailsMatchAnIndependentReference) {
  CommitteeModel m{.expected = 2000, .malicious_fraction = 0.25, .population = 10000};
  ExpectRelative(ForkProbability(m, 1334), 0.00084599441);
  ExpectRelative(StallProbability(m, 1334), 5.4702115e-7);
}

TEST(Thresholds, InvalidCertificateTailsMatchAnIndependentReference) {
  CommitteeModel m{.expected = 2000, .malicious_fraction = 0.25};
  ExpectRelative(InvalidCertificateProbability(m, 1400, 0.5), 1.6423201e-5);
  CommitteeModel fixed{.expected = 64, .malicious_fraction = 0.25, .fixed = true};
  // Committee 64 with 16 malicious, T = 43: the old default sample 0.25 certifies a forged
  // transfer almost surely (issue #12's first finding); 0.75 leaves 3.9e-6.
  ExpectRelative(InvalidCertificateProbability(fixed, 43, 0.25), 0.99862384);
  ExpectRelative(InvalidCertificateProbability(fixed, 43, 0.75), 3.8960728e-6);
}

// Committees per step, across a cert and a next committee: P(H + M_c + M_n >= 2T). Poisson:
// P(Pois(1.25 C) >= 2T); binomial: P(Bin(1.25 N, C/N) >= 2T) (mpmath, pmf by recurrence).
TEST(Thresholds, CrossStepTailsMatchAnIndependentReference) {
  CommitteeModel m{.expected = 2000, .malicious_fraction = 0.25};
  ExpectRelative(CrossStepForkProbability(m, 1334), 4.5511720e-4);
  m.expected = 5819;
  ExpectRelative(CrossStepForkProbability(m, 3958), 5.8642019e-14);
  CommitteeModel b{.expected = 2000, .malicious_fraction = 0.25, .population = 10000};
  ExpectRelative(CrossStepForkProbability(b, 1334), 1.0071685e-4);
  // One committee for every step: the per-step event, counted once per step.
  CommitteeModel fixed{.expected = 64, .malicious_fraction = 0.25, .fixed = true};
  for (uint64_t t : {40, 41}) {  // 48 + 2 * 16 >= 2T: certain at 40, impossible at 41
    EXPECT_EQ(CrossStepForkProbability(fixed, t), ForkProbability(fixed, t));
    EXPECT_EQ(ForkPerBlock(fixed, t), std::min(1.0, kStepsPerPeriod * ForkProbability(fixed, t)));
  }
  EXPECT_EQ(ForkPerBlock(m, 3958), kStepsPerPeriod * ForkProbability(m, 3958) +
                                       kNextStepsPerPeriod * CrossStepForkProbability(m, 3958));
}

TEST(Thresholds, ChosenCommitteeMeetsTheBudgetAndASmallerOneDoesNot) {
  CommitteeModel m{.malicious_fraction = 0.25};
  auto c = ChooseCommittee(m, 1e-9);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_LT(c->fork_per_block, 1e-9);
  EXPECT_LT(c->stall_per_block, 1e-9);
  // Recomputed, the cross-step event of committees per step included (without it the chooser
  // took C = 5,818, T = 3,957, whose fork per block is 1.003e-9).
  m.expected = static_cast<double>(c->expected);
  EXPECT_LT(ForkPerBlock(m, c->threshold), 1e-9);
  EXPECT_LT(kStepsPerPeriod * StallProbability(m, c->threshold), 1e-9);
  // Exhaustive over T for C - 1: no threshold meets both.
  m.expected = static_cast<double>(c->expected - 1);
  EXPECT_FALSE(ChooseThreshold(m, 1e-9).ok());
  for (uint64_t t = c->threshold - 50; t <= c->threshold + 50; ++t) {
    bool both = ForkPerBlock(m, t) < 1e-9 && kStepsPerPeriod * StallProbability(m, t) < 1e-9;
    EXPECT_FALSE(both) << "C-1 with T = " << t;
  }
}

TEST(Thresholds, SoundSampleIsTheSmallestMeetingTheBudget) {
  CommitteeModel m{.expected = 64, .malicious_fraction = 0.25, .fixed = true};
  auto q = SoundSampleFraction(m, 43, 1e-9);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_LT(InvalidCertificateProbability(m, 43, *q), 1e-9);
  EXPECT_GE(InvalidCertificateProbability(m, 43, *q - 1e-4), 1e-9);
  // A threshold the malicious members reach alone has no sound sample.
  EXPECT_FALSE(SoundSampleFraction(m, 16, 1e-9).ok());
}

}  // namespace
}  // namespace tessera::ledger::agreement
