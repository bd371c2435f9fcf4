// The state tree: an authenticated map from 256-bit keys to 32-byte values.
//
// A compressed sparse Merkle tree (definition and hashing in tree_node.h): a lone leaf sits at
// the shallowest depth that separates it from its neighbours, so an update rehashes about
// log2(n) nodes instead of 256, and a batch rehashes the shared top of its paths once.
//
// A SparseMerkleTree is an immutable value: Update() returns a new tree and leaves this one
// intact, sharing every unchanged node with it, so a store can keep several versions alive
// at the cost of only the changed paths. Being immutable, a tree may be read from many threads
// at once.
//
//   SparseMerkleTree state;
//   TESSERA_ASSIGN_OR_RETURN(state, state.Update(block_updates));
//   StateProof proof = state.Prove(keys);        // sent to a light client
//   auto values = proof.Verify(state.root_hash(), keys);
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/status.h"
#include "ledger/state/state_proof.h"

namespace tessera::ledger {

class SparseMerkleTree {
 public:
  SparseMerkleTree() = default;  // the empty tree (root 0^32)

  const Hash256& root_hash() const { return internal::HashOf(root_); }
  uint64_t size() const { return size_; }  // number of leaves

  std::optional<LeafValue> Get(const Hash256& key) const;

  // The tree with every update applied (set the value of a key, inserting it if absent).
  // INVALID_ARGUMENT if two updates name the same key. Takes the vector by value because it
  // sorts it.
  Result<SparseMerkleTree> Update(std::vector<LeafUpdate> updates) const;

  // A multi-proof covering `keys` (present or absent, any order, duplicates allowed).
  StateProof Prove(std::span<const Hash256> keys) const;

  // Calls `fn` for every leaf in key order.
  void ForEach(const std::function<void(const Hash256& key, const LeafValue& value)>& fn) const;

 private:
  SparseMerkleTree(internal::NodePtr root, uint64_t size) : root_(std::move(root)), size_(size) {}
  internal::NodePtr root_;
  uint64_t size_ = 0;
};

}  // namespace tessera::ledger
