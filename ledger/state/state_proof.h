// Proofs about the state tree: one compressed multi-proof for any set of keys.
//
// A StateProof is the part of the tree that the paths of the proven keys run through: the
// nodes on those paths, plus, for every subtree that no proven key enters, only its hash
// ("opaque") or a one-byte marker if it is empty. Siblings shared by several paths are
// therefore sent once, and a proof for one key is the same format with one path. From a
// proof a light client can:
//   * Verify(root, keys): check it against a state root and read each key's value (or learn
//     that the key is absent);
//   * RootAfter(root, updates): recompute the new state root after setting new values for
//     covered keys (including inserting absent ones) -- how a citizen checks a politician's
//     claimed root transition without holding the state.
//
// Canonical encoding (pre-order, every node one tag byte):
//   0x00 empty subtree | 0x01 leaf: key(32) value(32) | 0x02 interior: left, right |
//   0x03 opaque: hash(32)
// Decode rejects, with the offset: truncation, unknown tags, trailing bytes, nesting deeper
// than 256, a leaf whose key does not lie under its position, an all-zero opaque hash (the
// empty marker must be used), and interiors no canonical tree contains (both children empty,
// or one empty and the other a leaf: such a leaf would sit one level up). Proofs must not
// cover deletions: leaves are never removed from the tree.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/state/account.h"
#include "ledger/state/tree_node.h"

namespace tessera::ledger {

class StateProof {
 public:
  static Result<StateProof> Decode(ByteSpan bytes);
  std::string Encode() const;
  size_t EncodedSize() const;

  // The root hash this proof's nodes hash to.
  const Hash256& root_hash() const { return internal::HashOf(root_); }

  // For each key (in the given order): its value, or nullopt if the tree does not contain it.
  // INVALID_ARGUMENT if the proof does not hash to `root` or a key is not covered.
  Result<std::vector<std::optional<LeafValue>>> Verify(const Hash256& root,
                                                       std::span<const Hash256> keys) const;

  // The root after applying `updates` (distinct keys, any order) to the state `root`, which
  // this proof must hash to; INVALID_ARGUMENT if it does not, or if an update's key is not
  // covered by the proof.
  Result<Hash256> RootAfter(const Hash256& root, std::span<const LeafUpdate> updates) const;

 private:
  friend class SparseMerkleTree;
  explicit StateProof(internal::NodePtr root) : root_(std::move(root)) {}
  internal::NodePtr root_;  // a partial tree: subtrees off the proven paths are opaque
};

// Sorts `updates` by key; INVALID_ARGUMENT if two updates share a key.
Status SortAndCheckDistinct(std::vector<LeafUpdate>& updates);

}  // namespace tessera::ledger
