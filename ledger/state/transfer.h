// The state transition of a block of transfers, shared by the full node (politician) and the
// light client (citizen).
//
// A politician runs ApplyTransfers over its tree; a citizen runs the very same function over
// a multi-proof of the touched accounts against the previous state root, then checks the
// politician's new root with StateProof::RootAfter:
//
//   StateProof proof = tree.Prove(TouchedKeys(txs));                       // politician
//   auto outcome = ApplyTransfers(ProofLookup(proof, old_root), txs, true);  // citizen
//   auto root = proof.RootAfter(old_root, outcome->updates);
//   if (*root != claimed_root) { /* the politician lied */ }
//
// Rules, in block order: a transfer applies iff its signature is valid (when checked),
// amount > 0, from != to, the sender exists with nonce == tx.nonce and balance >= amount, and
// the receiver's balance does not overflow. An applied transfer debits the sender, bumps its
// nonce and credits the receiver (creating the account if new). Others are skipped with a
// reason; they do not fail the block.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/state/application.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger {

// Reads a leaf of the pre-block state; an error aborts the block (e.g. key not in the proof).
using LeafLookup = std::function<Result<std::optional<LeafValue>>(const Hash256& key)>;

LeafLookup TreeLookup(const SparseMerkleTree& tree);  // the tree must outlive the lookup
LeafLookup ProofLookup(const StateProof& proof, const Hash256& root);  // proof must outlive it

struct TransferOutcome {
  std::vector<LeafUpdate> updates;  // one per touched account, final values
  size_t applied = 0;
  std::vector<std::pair<size_t, std::string>> rejected;  // (index in block, reason)
};

// A block of transfers only (block_transition.h ApplyBlock with no applications).
Result<TransferOutcome> ApplyTransfers(const LeafLookup& lookup, std::span<const Transaction> txs,
                                       bool check_signatures);

// One transfer against `state` (the rules above): the sender's and receiver's new leaves, or
// the reason it is skipped. With check_signature == false the signature is assumed valid.
Result<AppVerdict> ApplyTransfer(const Transaction& tx, const LeafReader& state,
                                 bool check_signature);

// The account keys of every sender and receiver, deduplicated.
std::vector<Hash256> TouchedKeys(std::span<const Transaction> txs);

}  // namespace tessera::ledger
