#include "ledger/state/sparse_merkle_tree.h"

#include <algorithm>

namespace tessera::ledger {

using internal::AsInterior;
using internal::AsLeaf;
using internal::KeyBit;
using internal::Node;
using internal::NodePtr;

std::optional<LeafValue> SparseMerkleTree::Get(const Hash256& key) const {
  const Node* node = root_.get();
  for (int depth = 0; node != nullptr; ++depth) {
    if (node->kind == Node::Kind::kLeaf) {
      const auto& leaf = AsLeaf(*node);
      if (leaf.key == key) return leaf.value;
      return std::nullopt;
    }
    const auto& interior = AsInterior(*node);
    node = (KeyBit(key, depth) ? interior.right : interior.left).get();
  }
  return std::nullopt;
}

Result<SparseMerkleTree> SparseMerkleTree::Update(std::vector<LeafUpdate> updates) const {
  TESSERA_RETURN_IF_ERROR(SortAndCheckDistinct(updates));
  uint64_t new_leaves = 0;
  const Hash256* uncovered = nullptr;
  NodePtr root = internal::ApplyUpdates(root_, 0, updates, &new_leaves, &uncovered);
  // A full tree has no opaque nodes, so every key is covered.
  return SparseMerkleTree(std::move(root), size_ + new_leaves);
}

namespace {

// The partial tree for the sorted, distinct `keys` under `node` at `depth`.
NodePtr Reveal(const NodePtr& node, int depth, std::span<const Hash256> keys) {
  if (!node) return nullptr;
  if (keys.empty()) return internal::MakeOpaque(node->hash);
  if (node->kind == Node::Kind::kLeaf) return node;  // leaves are immutable: share them
  const auto& interior = AsInterior(*node);
  auto split = std::partition_point(keys.begin(), keys.end(),
                                    [depth](const Hash256& k) { return KeyBit(k, depth) == 0; });
  size_t n = static_cast<size_t>(split - keys.begin());
  auto copy = std::make_shared<internal::InteriorNode>();
  copy->kind = Node::Kind::kInterior;
  copy->hash = interior.hash;
  copy->left = Reveal(interior.left, depth + 1, keys.first(n));
  copy->right = Reveal(interior.right, depth + 1, keys.subspan(n));
  return copy;
}

void Walk(const NodePtr& node, const std::function<void(const Hash256&, const LeafValue&)>& fn) {
  if (!node) return;
  if (node->kind == Node::Kind::kLeaf) {
    fn(AsLeaf(*node).key, AsLeaf(*node).value);
    return;
  }
  Walk(AsInterior(*node).left, fn);
  Walk(AsInterior(*node).right, fn);
}

}  // namespace

StateProof SparseMerkleTree::Prove(std::span<const Hash256> keys) const {
  std::vector<Hash256> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return StateProof(Reveal(root_, 0, sorted));
}

void SparseMerkleTree::ForEach(
    const std::function<void(const Hash256& key, const LeafValue& value)>& fn) const {
  Walk(root_, fn);
}

}  // namespace tessera::ledger
