// How many of a block's signatures a committee member verifies itself (Blockene's sampled
// validation), and which ones.
//
// Soundness: an invalid block -- one forged signature claimed valid, or a valid one claimed
// forged, which would make the certified root unappliable by honest politicians -- must
// gather T_cert cert votes with probability below 1e-9 when a quarter of the citizens are
// malicious. The members that did not sample the bad transaction, plus every malicious member,
// must stay below T_cert; SoundValidationSample computes the smallest per-signature sampling
// probability for which that holds, exactly (ledger/agreement/thresholds.h, the same code as
// `ledger-thresholds`): a fixed committee when the committee is the whole population (the
// localnets), the binomial committee of sortition otherwise. The citizen verifies at least that
// fraction whatever the genesis file's `validation_sample` says.
//
// Unpredictability: the sample is drawn from a seed only the member can compute (its Ed25519
// signature over the height and the pools), so the executing politician cannot place a forged
// signature where few members look.
#pragma once

#include <span>
#include <vector>

#include "ledger/agreement/thresholds.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net {

// The malicious citizen fraction the chain is sized for (Blockene's 80/25 configuration).
inline constexpr double kDesignMaliciousCitizens = 0.25;
inline constexpr double kInvalidBlockBudget = 1e-9;

// The committee model of a chain with `population` citizens and expected committee
// `committee`, a quarter of the citizens malicious: a fixed committee when it is the whole
// population (the localnets), sortition's binomial committee otherwise.
agreement::CommitteeModel DesignCommitteeModel(uint64_t population, uint64_t committee);

// The BA* threshold T `ledger-thresholds` chooses for that model (the same code): the smallest
// T with fork and stall both below kInvalidBlockBudget per block. NOT_FOUND when no T meets the
// budget (small random committees).
Result<agreement::CommitteeChoice> DesignThreshold(uint64_t population, uint64_t committee);

// Fork and stall risk per step and per block of `g`'s own cert_threshold (the T every BA*
// step uses), for the daemons to report at start.
agreement::CommitteeChoice ThresholdRisk(const Genesis& g);

// The smallest sound sampling probability for `g`'s committee and cert threshold; 1 when no
// fraction is sound (malicious members alone could reach the threshold).
double SoundValidationSample(const Genesis& g);

// max(g.validation_sample, SoundValidationSample(g)).
double EffectiveValidationSample(const Genesis& g);

// Which of `count` transactions this member verifies for the block at `height` made of
// `pools`: each independently with probability `fraction`, from a seed derived from `keys`'
// signature over (height, pools).
std::vector<bool> ValidationSampleFor(const KeyPair& keys, uint64_t height,
                                      std::span<const Hash256> pools, size_t count,
                                      double fraction);

}  // namespace tessera::ledger::net
