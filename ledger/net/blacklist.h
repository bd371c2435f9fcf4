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
//
// Kept across restarts (Persist): the held evidence is rewritten atomically to one file
// whenever it changes -- one hex line per politician, so at most genesis.politicians x 457
// bytes of pool equivocations, or x (2 kMaxEvidenceBytes + 1) with wrong executions -- and
// read back on start, each line verified again like relayed evidence (a damaged
// or edited file can lose evidence but never blacklist an honest politician).
#pragma once

#include <filesystem>
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
  // `apps`: the chain's applications, to re-execute wrong-execution evidence (evidence.h);
  // without them such evidence is refused. Both must outlive the blacklist.
  explicit Blacklist(const Genesis& genesis, uint64_t blocks = kBlacklistBlocks,
                     const AppRegistry* apps = nullptr);

  // Verifies `e` (VerifyEvidence) and keeps it if it is newer than what is held against that
  // politician. Returns true if the politician was not blacklisted at `now` before (so the
  // caller should relay the evidence), false if it already was; the verification's error
  // (PERMISSION_DENIED for forged evidence) otherwise, and nothing is kept.
  Result<bool> Add(const Evidence& e, uint64_t now);
  // DecodeEvidence, then Add.
  Result<bool> AddEncoded(ByteSpan bytes, uint64_t now);

  // From now on keeps the evidence in `path` too, after loading what is there (a missing file
  // is an empty one). Lines that do not decode or verify are skipped and counted
  // (load_refused); a file larger than the bound above is not read (INVALID_ARGUMENT) and is
  // replaced at the next write. A failed write keeps the evidence in memory and is counted.
  Status Persist(std::filesystem::path path);
  size_t load_refused() const { return load_refused_; }
  size_t write_failures() const { return write_failures_; }
  size_t size() const { return newest_.size(); }

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
  const AppRegistry* apps_;
  std::map<uint32_t, Evidence> newest_;  // politician id -> newest verified evidence
  std::filesystem::path file_;           // empty: memory only
  size_t load_refused_ = 0, write_failures_ = 0;
  void Save();
};

}  // namespace tessera::ledger::net
