// The politicians a citizen no longer talks to, and the evidence that put them there
// (docs/ledger-network.md, "Evidence and blacklisting").
//
// A politician is blacklisted for kBlacklistBlocks heights after the height of the newest
// verified evidence against it (evidence.h): while blacklisted, a citizen leaves it out of its
// safe sample -- no reads, posts or executions go to it -- and every politician relays the
// evidence in each round it serves, so every committee member of a later height learns it.
// Nothing here is trusted: Add verifies every piece of evidence against the genesis keys
// itself, so a lying politician cannot get an honest one blacklisted.
//
// Liveness never depends on it: the safe sample is drawn from the politicians not
// blacklisted, which always include every honest politician (evidence against an honest one
// cannot be made), so the sample's honest member is kept; and if a citizen had blacklisted
// every politician it would sample all of them again (Sample below).
//
// Memory is bounded by the genesis: one piece of evidence (the newest) per politician.
// Politicians use the same class as their evidence store. Not thread-safe.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/net/evidence.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net {

// About 1000 blocks is 1000 x the block interval: ~1 hour at Blockene's ~3.5 s blocks, ~1 h at
// the localnet's 1-4 s. Long enough that a caught liar serves no committee for many rounds,
// short enough that a politician whose key was stolen and replaced is not excluded for ever.
inline constexpr uint64_t kBlacklistBlocks = 1000;

class Blacklist {
 public:
  explicit Blacklist(const Genesis& genesis, uint64_t blocks = kBlacklistBlocks);

  // Verifies `e` (VerifyEvidence) and keeps it if it is newer than what is held against that
  // politician. Returns true if the politician was not blacklisted at `now` before (so the
  // caller should relay the evidence), false if it already was; the verification's error
  // (PERMISSION_DENIED for forged evidence) otherwise, and nothing is kept.
  Result<bool> Add(const Evidence& e, uint64_t now);
  // DecodeEvidence, then Add.
  Result<bool> AddEncoded(ByteSpan bytes, uint64_t now);

  // True while `height` <= the newest evidence's height + blocks.
  bool Blocked(uint32_t politician_id, uint64_t height) const;
  std::vector<uint32_t> BlockedAt(uint64_t height) const;
  // The encoded evidence against every politician blacklisted at `height`: what is relayed.
  std::vector<std::string> Active(uint64_t height) const;

  // Up to `k` of `candidates` (indices of genesis politicians) in random order, taking only
  // politicians not blacklisted at `height` -- unless all of them are, then from all.
  std::vector<uint32_t> Sample(const std::vector<uint32_t>& candidates, size_t k, uint64_t height,
                               std::mt19937_64& rng) const;

 private:
  const Genesis* genesis_;
  uint64_t blocks_;
  std::map<uint32_t, Evidence> newest_;  // politician id -> newest verified evidence
};

}  // namespace tessera::ledger::net
