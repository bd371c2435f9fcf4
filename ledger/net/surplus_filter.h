// A politician's per-peer limit on pulled pool commitments (issue #12, "flood"), applied
// before anything in an item is verified and before the politician's main lock is taken.
//
// A flooding politician signs thousands of pool commitments per height and lists them
// (politician_flood.cc, `flood`); an honest politician pulled every one and handed each to
// Post, which took mu_ to refuse it on AdmitCommitment's cap of two per politician and height:
// about 8,000 lock acquisitions and decodes per height under a four-flooder run. Citizens
// already stop at a politician's surplus (citizen.cc, kMaxSurplusCommitments).
//
// The rule, per serving peer and height: of the pool commitments a peer serves for one
// politician (itself or another), the first two distinct pool hashes pass and every later one
// is dropped here. It loses nothing an honest peer serves: an honest peer lists at most two
// commitments per politician and height (AdmitCommitment keeps two, the second as
// equivocation evidence), so only a peer that signs a surplus itself, or relays forged
// commitments in another's name, reaches the limit -- and it uses up only its own slots: a
// forged commitment served by a liar never fills the slots of the honest peers that serve the
// real one. Items that are not commitments pass untouched; a commitment that does not decode,
// is for another height than the round it was listed in, or names a politician not in the
// genesis file is dropped too (AcceptItem would refuse it under the lock).
//
// Memory: at most two hashes per genesis politician and height, heights forgotten as they
// commit. One filter per peer, used by that peer's fetch thread only: not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "ledger/crypto/bytes.h"
#include "ledger/net/blockene.pb.h"

namespace tessera::ledger::net {

class SurplusFilter {
 public:
  // `politicians`: the genesis politicians' ids.
  explicit SurplusFilter(std::set<uint32_t> politicians) : politicians_(std::move(politicians)) {}

  // Whether `item`, listed for round `height` by this filter's peer, goes on to Post.
  bool Admit(uint64_t height, const RoundItem& item);
  // Forgets heights <= `height` (committed).
  void Forget(uint64_t height);

  uint64_t dropped() const { return dropped_; }

  // Commitments kept per politician and height (AdmitCommitment's cap).
  static constexpr size_t kPerPolitician = 2;

 private:
  const std::set<uint32_t> politicians_;
  std::map<uint64_t, std::map<uint32_t, std::set<Hash256>>> served_;  // height -> id -> hashes
  uint64_t dropped_ = 0;
};

}  // namespace tessera::ledger::net
