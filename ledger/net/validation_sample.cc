#include "ledger/net/validation_sample.h"

#include <algorithm>
#include <random>

#include "ledger/agreement/thresholds.h"
#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger::net {

double SoundValidationSample(const Genesis& g) {
  agreement::CommitteeModel model{.expected = static_cast<double>(g.sortition.committee_size),
                                  .malicious_fraction = kDesignMaliciousCitizens,
                                  .population = g.sortition.population};
  if (g.sortition.committee_size >= g.sortition.population) {
    model.expected = static_cast<double>(g.sortition.population);
    model.fixed = true;
  }
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
