// The state transition of one block, shared by the full node (politician), the light client
// (citizen) and the audit: the ledger's transfers (transfer.h) and every application's
// transactions (application.h), applied in block order over one overlay of the state, so a
// transaction sees the effects of the ones before it.
//
// A politician executes over its tree and checks every signature; a citizen executes over a
// multi-proof of BlockKeys() against the previous root and checks only a random sample of
// signatures (Blockene's sampled validation), taking the politician's word for the rest:
//
//   auto keys = BlockKeys(txs, ctx, apps);
//   StateProof proof = tree.Prove(*keys);                                         // politician
//   auto full = ApplyBlock(TreeLookup(tree), txs, ctx, apps);                     // politician
//   // ... sends txs, proof, full->crypto_rejected and the new root to the citizen ...
//   CryptoPolicy sampled{.claimed_failures = &claimed, .verify = coin_flip};
//   auto mine = ApplyBlock(ProofLookup(proof, old_root), txs, ctx, apps, sampled); // citizen
//   auto root = proof.RootAfter(old_root, mine->updates);   // must equal the politician's root
//
// Outcomes. A transaction either applies, or is skipped for a state reason (stale nonce, used
// review tag, ...), or is skipped because a signature check failed ("crypto"). Skipping never
// invalidates the block. A transaction whose app id is unknown or whose payload does not
// decode is skipped as a state reason. BeginBlock updates of every application come first.
//
// Sampled validation is sound per transaction: for a transaction the citizen samples it
// checks the signatures itself, and if the politician's claim (in crypto_rejected or not)
// disagrees, ApplyBlock fails with PERMISSION_DENIED naming the transaction -- the politician
// lied, and the citizen must not vote for the root. For an unsampled transaction the claim is
// taken, so a lie there goes unnoticed by this citizen; with a sample fraction f and H honest
// committee members, a lie escapes all of them with probability (1-f)^H (docs/ledger.md).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/state/application.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger {

// Which signatures the executor verifies itself.
struct CryptoPolicy {
  // nullptr: verify every transaction (politicians, audits). Otherwise the executing
  // politician's claim: the indices (ascending) of the transactions whose signature check
  // fails.
  const std::vector<uint32_t>* claimed_failures = nullptr;
  // With a claim: verify transaction i iff verify(i). Empty: verify all.
  std::function<bool(size_t index)> verify;
};

struct BlockOutcome {
  std::vector<LeafUpdate> updates;  // the final value of every written leaf, ascending key
  size_t applied = 0;
  std::vector<std::pair<size_t, std::string>> rejected;  // (index in block, reason)
  std::vector<uint32_t> crypto_rejected;  // indices skipped because a signature failed
  size_t crypto_checked = 0;              // transactions whose signatures were verified here
};

// Every leaf the block may read or write, ascending and deduplicated: what a politician
// proves to a citizen.
std::vector<Hash256> BlockKeys(std::span<const LedgerTx> txs, const BlockContext& ctx,
                               const AppRegistry& apps);

// Errors (not skips): a leaf cannot be read (a proof does not cover it), an application wrote
// a leaf outside its read set, or a sampled claim was false (PERMISSION_DENIED).
Result<BlockOutcome> ApplyBlock(const LeafLookup& lookup, std::span<const LedgerTx> txs,
                                const BlockContext& ctx, const AppRegistry& apps,
                                const CryptoPolicy& policy = {});

}  // namespace tessera::ledger
