// Internal: the nodes of the compressed sparse Merkle tree and the one batch-update algorithm
// that both the full tree (sparse_merkle_tree.h) and a verifier's partial tree
// (state_proof.h) run. Not part of the public API.
//
// The tree over 256-bit keys is defined by its leaf set S, recursively from the root (depth 0;
// bit d of a key is bit 7 - d%8 of byte d/8, most significant first):
//   hash(S, d) = 0^32                                  if S is empty
//              = SHA-256(0x00 || key || value)         if S = {(key, value)}   (a "shortcut":
//                                                       a lone leaf sits at the shallowest depth)
//              = SHA-256(0x01 || hash(S0, d+1) || hash(S1, d+1))  otherwise, S0/S1 split by bit d
// so the root commits to exactly one leaf set, while a path is only as long as needed to
// separate a key from its neighbours (about log2(n) + 1 levels, not 256). Leaf and interior
// hashes are domain-separated by their first byte, and 0^32 is not the SHA-256 of anything
// known, so a proof cannot pass off one kind of node as another.
//
// Nodes are immutable and shared between versions: an update allocates only the nodes on the
// paths it changes, so keeping an older root keeps that whole version alive for free.
#pragma once

#include <memory>
#include <span>

#include "ledger/state/account.h"

namespace tessera::ledger::internal {

struct Node {
  enum class Kind : uint8_t { kLeaf, kInterior, kOpaque };
  Kind kind;
  Hash256 hash;
};
using NodePtr = std::shared_ptr<const Node>;  // nullptr is the empty subtree

struct LeafNode : Node {
  Hash256 key;
  LeafValue value;
};

struct InteriorNode : Node {
  NodePtr left, right;
};

inline constexpr int kKeyBits = 256;

inline int KeyBit(const Hash256& key, int depth) {
  return (key[depth >> 3] >> (7 - (depth & 7))) & 1;
}
// True iff a and b agree on their first `depth` bits.
bool SharePrefix(const Hash256& a, const Hash256& b, int depth);

inline const Hash256& HashOf(const NodePtr& node) {
  static const Hash256 kEmpty{};
  return node ? node->hash : kEmpty;
}

Hash256 LeafHash(const Hash256& key, const LeafValue& value);
Hash256 InteriorHash(const Hash256& left, const Hash256& right);

NodePtr MakeLeaf(const Hash256& key, const LeafValue& value);
NodePtr MakeInterior(NodePtr left, NodePtr right);
NodePtr MakeOpaque(const Hash256& hash);

inline const LeafNode& AsLeaf(const Node& n) { return static_cast<const LeafNode&>(n); }
inline const InteriorNode& AsInterior(const Node& n) { return static_cast<const InteriorNode&>(n); }

// Returns the subtree rooted at `node` (at `depth`) with `updates` applied: each update sets
// the value of its key, inserting the leaf if absent. `updates` must be sorted by key, free of
// duplicates and all share `node`'s path prefix. `*new_leaves` is incremented per inserted key.
// Reaching an opaque node with updates left (a key the partial tree does not cover) sets
// `*uncovered` to one such key and returns nullptr.
NodePtr ApplyUpdates(const NodePtr& node, int depth, std::span<const LeafUpdate> updates,
                     uint64_t* new_leaves, const Hash256** uncovered);

}  // namespace tessera::ledger::internal
