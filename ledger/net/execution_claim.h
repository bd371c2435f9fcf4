// A politician's signed statement of what executing a candidate body gave: the `Execute`
// reply's claim (docs/ledger-network.md, "Evidence and blacklisting").
//
// A citizen takes part of an execution on the politician's word: the signature checks it does
// not sample (validation_sample.h). Before, the reply was unsigned, so a politician caught
// claiming a wrong root or a wrong signature-failure list was only counted by the citizen that
// caught it. Signed, the claim is a statement about a deterministic function:
//
//   executing pool_hashes' transactions as block `height` (prev_seed) on the state whose root
//   is prev_root gives new_root, and exactly the transactions crypto_rejected fail their
//   signature checks.
//
// The statement is true or false whatever prev_root is (certified or not), so a false one
// signed by a politician proves its lie to anyone who re-executes it (evidence.h,
// kWrongExecution) -- and an honest politician, which signs only what it computed, can never
// be framed with one.
//
// The reply carries only the signature: the citizen rebuilds the claim from its request
// (height, body), its own latest certified header (prev_root, prev_seed) and the reply
// (new_root, crypto_rejected), so a politician that executed on another state (stale, or a
// fork) gives a signature that does not verify, and its reply is refused like a malformed one.
//
// Canonical encoding (inside evidence): politician_id u32 | height u64 | prev_root | prev_seed |
// pool_hashes (u32 count <= kMaxPoolHashes, hashes) | new_root | crypto_rejected (u32 count,
// u32 each, strictly ascending) | signature. Signed: the same bytes without the signature,
// under the domain "execute".
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/codec/canonical.h"
#include "ledger/codec/messages.h"
#include "ledger/net/blockene.pb.h"

namespace tessera::ledger::net {

// Signature failures a claim may list: one per transaction of the largest body (every pool
// at the codec's largest size is far beyond this; a politician's max_pool_txs is 2000-4000).
inline constexpr uint32_t kMaxClaimedFailures = 1u << 20;

struct ExecutionClaim {
  uint32_t politician_id = 0;
  uint64_t height = 0;  // the block executed
  Hash256 prev_root{};  // the state executed on (block height - 1's root)
  Hash256 prev_seed{};  // block height - 1's seed (BlockContext::prev_seed)
  std::vector<Hash256> pool_hashes;
  Hash256 new_root{};
  std::vector<uint32_t> crypto_rejected;  // ascending
  Signature signature{};
  friend bool operator==(const ExecutionClaim&, const ExecutionClaim&) = default;
};

void SignExecutionClaim(ExecutionClaim& c, const KeyPair& politician);
bool VerifyExecutionClaim(const ExecutionClaim& c, const PublicKey& politician);

// The claim of an Execute reply to a request for `pool_hashes` at `height`, executed on the
// state `prev_root` with `prev_seed` (the signature is the reply's, if it has the right size).
// What the politician signs, and what the citizen rebuilds to check the signature.
ExecutionClaim ClaimOfReply(uint32_t politician_id, uint64_t height, const Hash256& prev_root,
                            const Hash256& prev_seed, const std::vector<Hash256>& pool_hashes,
                            const ExecuteReply& reply);

// The canonical encoding above, written to / read from a message being built or decoded.
void WriteExecutionClaim(CanonicalWriter& w, const ExecutionClaim& c);
Status ReadExecutionClaim(CanonicalReader& r, ExecutionClaim* c);

}  // namespace tessera::ledger::net
