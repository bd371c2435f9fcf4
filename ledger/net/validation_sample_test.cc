// The citizen's validation sample: never below the sound fraction for the committee (the same
// figures `ledger-thresholds` prints), and drawn from a seed only the citizen can compute.
#include "ledger/net/validation_sample.h"

#include <gtest/gtest.h>

#include "ledger/crypto/hash.h"

namespace tessera::ledger::net {
namespace {

Genesis WithCommittee(uint64_t population, uint64_t committee, uint32_t cert_threshold,
                      double configured) {
  Genesis g;
  g.sortition.population = population;
  g.sortition.committee_size = committee;
  g.cert_threshold = g.soft_threshold = cert_threshold;
  g.validation_sample = configured;
  return g;
}

TEST(ValidationSampleTest, RaisesAnUnsoundSampleToTheSoundOne) {
  // The bench's setting (committee = all 64 citizens, T = 43, sample 0.25) certified a forged
  // transfer (issue #12); `ledger-thresholds --committee 64 --threshold 43 --fixed` says 0.829.
  Genesis bench = WithCommittee(64, 64, 43, 0.25);
  EXPECT_NEAR(SoundValidationSample(bench), 0.8291, 1e-9);  // to the tool's 1e-4 grid
  EXPECT_NEAR(EffectiveValidationSample(bench), 0.8291, 1e-9);
  // A configured sample above the sound one is kept.
  EXPECT_EQ(EffectiveValidationSample(WithCommittee(64, 64, 43, 0.95)), 0.95);
  // Localnet tests: 8 citizens, T = 6: sampling is hardly possible.
  EXPECT_GT(SoundValidationSample(WithCommittee(8, 8, 6, 0.9)), 0.99);
  // A VRF committee of expected 2000 out of 10^6 (binomial) with the 2/3 rule: about 0.58.
  double big = SoundValidationSample(WithCommittee(1000000, 2000, 1334, 0.25));
  EXPECT_GT(big, 0.55);
  EXPECT_LT(big, 0.6);
  // A threshold the malicious quarter reaches alone: no sample is sound, verify everything.
  EXPECT_EQ(SoundValidationSample(WithCommittee(64, 64, 16, 0.25)), 1.0);
}

// The daemons' BA* threshold is the tool's (`ledger-thresholds`), for the committee model of
// the genesis file's population and committee size.
TEST(ValidationSampleTest, DesignThresholdsAreTheToolsFigures) {
  // Committee = all citizens, a quarter malicious: the tool's `--committee 64 --fixed`.
  EXPECT_EQ(DesignThreshold(64, 64)->threshold, 41u);
  EXPECT_EQ(DesignThreshold(16, 16)->threshold, 11u);  // H = 12, M = 4: 12 + 8 < 22
  EXPECT_EQ(DesignThreshold(8, 8)->threshold, 6u);
  // `ledger-thresholds --population 1000000` chooses C = 5784, T = 3934.
  auto big = DesignThreshold(1000000, 5784);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->threshold, 3934u);
  EXPECT_LT(big->fork_per_block, 1e-9);
  EXPECT_LT(big->stall_per_block, 1e-9);
  // A small random committee cannot meet 1e-9 with any T.
  EXPECT_EQ(DesignThreshold(24, 16).status().code(), StatusCode::kNotFound);
  // The 2/3 rule at Blockene's 2000 (issue #12's finding 5): fork ~2.5e-3 per step.
  agreement::CommitteeChoice risk = ThresholdRisk(WithCommittee(1000000, 2000, 1334, 1));
  EXPECT_GT(risk.fork_per_step, 2e-3);
  EXPECT_LT(risk.fork_per_step, 3e-3);
  EXPECT_EQ(ThresholdRisk(WithCommittee(16, 16, 11, 1)).fork_per_block, 0);
}

TEST(ValidationSampleTest, SampleIsPrivateDeterministicAndOfTheRightSize) {
  KeyPair a = KeyPair::FromSeed(Sha256("member a"));
  KeyPair b = KeyPair::FromSeed(Sha256("member b"));
  std::vector<Hash256> pools = {Sha256("pool 1"), Sha256("pool 2")};
  auto first = ValidationSampleFor(a, 7, pools, 20000, 0.6);
  EXPECT_EQ(first, ValidationSampleFor(a, 7, pools, 20000, 0.6));  // re-executions agree
  EXPECT_NE(first, ValidationSampleFor(b, 7, pools, 20000, 0.6));  // another member: another sample
  EXPECT_NE(first, ValidationSampleFor(a, 8, pools, 20000, 0.6));  // another height
  size_t checked = std::count(first.begin(), first.end(), true);
  EXPECT_NEAR(static_cast<double>(checked) / 20000, 0.6, 0.02);
  auto all = ValidationSampleFor(a, 7, pools, 100, 1.0);
  EXPECT_EQ(std::count(all.begin(), all.end(), true), 100);
}

}  // namespace
}  // namespace tessera::ledger::net
