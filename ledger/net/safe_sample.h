// The safe sample: the k politicians a citizen talks to in a round (Blockene's safe sample,
// docs/ledger-network.md), and how evidence (blacklist.h) orders it.
//
// Politicians not blacklisted come first, drawn at random; the sample is topped up to k with
// blacklisted ones, which come last (and which the citizen's hedged calls ask last). Evidence
// never shrinks the sample: at 80/25 with four equivocating politicians of five blacklisted,
// leaving them out sent every read, post and execution of a member to the one honest
// politician, and a post that found that politician's worker busy was lost (hedged_fetch.h) --
// measured: proposers waiting out their 2 s for witness lists in 24 of 64 rounds, 62% of the
// honest tx/s in one run. A blacklisted politician still relays the citizens' signed items,
// which it cannot forge.
//
//   std::vector<uint32_t> ids = DrawSafeSample(5, 5, blacklist, height, rng);
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ledger/net/blacklist.h"

namespace tessera::ledger::net {

// min(k, politicians) of the politicians 0..politicians-1 (all of them when k is 0): those not
// blacklisted at `height` first, in random order, then blacklisted ones, in random order.
std::vector<uint32_t> DrawSafeSample(uint32_t politicians, uint32_t k, const Blacklist& blacklist,
                                     uint64_t height, std::mt19937_64& rng);

}  // namespace tessera::ledger::net
