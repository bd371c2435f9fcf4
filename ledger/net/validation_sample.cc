#include "ledger/net/validation_sample.h"

#include <algorithm>
#include <random>

#include "ledger/agreement/thresholds.h"
#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger::net {

agreement::CommitteeModel DesignCommitteeModel(uint64_t population, uint64_t committee) {
  agreement::CommitteeModel model{.expected = static_cast<double>(committee),
                                  .malicious_fraction = kDesignMaliciousCitizens,
                                  .population = population};
  if (committee >= population) {
    model.expected = static_cast<double>(population);
    model.fixed = true;
  }
  return model;
}

Result<agreement::CommitteeChoice> DesignThreshold(uint64_t population, uint64_t committee) {
  return agreement::ChooseThreshold(DesignCommitteeModel(population, committee),
                                    kInvalidBlockBudget);
}

agreement::CommitteeChoice ThresholdRisk(const Genesis& g) {
  const agreement::CommitteeModel model =
      DesignCommitteeModel(g.sortition.population, g.sortition.committee_size);
  agreement::CommitteeChoice c;
  c.expected = static_cast<uint64_t>(model.expected);
  c.threshold = g.cert_threshold;
  c.fork_per_step = agreement::ForkProbability(model, g.cert_threshold);
  c.stall_per_step = agreement::StallProbability(model, g.cert_threshold);
  // Committees drawn per step add the cross-step event (thresholds.h); for one committee per
  // height it is the per-step event again, so this over-counts only there.
  c.cross_per_step = model.fixed ? 0 : agreement::CrossStepForkProbability(model, g.cert_threshold);
  c.fork_per_block = agreement::ForkPerBlock(model, g.cert_threshold);
  c.stall_per_block = agreement::kStepsPerPeriod * c.stall_per_step;
  return c;
}

double SoundValidationSample(const Genesis& g) {
  const agreement::CommitteeModel model =
      DesignCommitteeModel(g.sortition.population, g.sortition.committee_size);
  auto q = agreement::SoundSampleFraction(model, g.cert_threshold, kInvalidBlockBudget);
  return q.ok() ? *q : 1.0;
}

double EffectiveValidationSample(const Genesis& g) {
  return std::max(g.validation_sample, SoundValidationSample(g));
}

std::vector<bool> ValidationSampleFor(const KeyPair& keys, uint64_t height,
                                      std::span<const Hash256> pools, size_t count,
                                      double fraction) {
  CanonicalWriter w;
  w.U64(height).U32(static_cast<uint32_t>(pools.size()));
  for (const Hash256& p : pools) w.Array(p);
  Signature sig = Sign(keys, "validation-sample", AsBytes(w.bytes()));
  Hash256 seed = Sha256(AsChars(ByteSpan(sig)));
  std::seed_seq seq(seed.begin(), seed.end());
  std::mt19937_64 rng(seq);
  std::bernoulli_distribution coin(std::clamp(fraction, 0.0, 1.0));
  std::vector<bool> sample(count);
  for (size_t i = 0; i < count; ++i) sample[i] = coin(rng);
  return sample;
}

}  // namespace tessera::ledger::net
