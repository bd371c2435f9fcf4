#define OPENSSL_SUPPRESS_DEPRECATED  // SHA256_*: see ledger/crypto/hash.cc
#include "ledger/state/tree_node.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace tessera::ledger::internal {

bool SharePrefix(const Hash256& a, const Hash256& b, int depth) {
  int full = depth >> 3;
  if (std::memcmp(a.data(), b.data(), full) != 0) return false;
  int rest = depth & 7;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff00 >> rest);
  return (a[full] & mask) == (b[full] & mask);
}

namespace {
Hash256 Hash65(uint8_t tag, const Hash256& a, const std::array<uint8_t, 32>& b) {
  uint8_t buf[65];
  buf[0] = tag;
  std::memcpy(buf + 1, a.data(), 32);
  std::memcpy(buf + 33, b.data(), 32);
  // SHA256_Init/Update/Final, not the one-shot SHA256(): in OpenSSL 3 the latter goes through
  // EVP_Q_digest, which fetches the algorithm (taking a lock) on every call.
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, buf, sizeof buf);
  Hash256 out;
  SHA256_Final(out.data(), &ctx);
  return out;
}
}  // namespace

Hash256 LeafHash(const Hash256& key, const LeafValue& value) { return Hash65(0x00, key, value); }
Hash256 InteriorHash(const Hash256& left, const Hash256& right) {
  return Hash65(0x01, left, right);
}

NodePtr MakeLeaf(const Hash256& key, const LeafValue& value) {
  auto leaf = std::make_shared<LeafNode>();
  leaf->kind = Node::Kind::kLeaf;
  leaf->key = key;
  leaf->value = value;
  leaf->hash = LeafHash(key, value);
  return leaf;
}

NodePtr MakeInterior(NodePtr left, NodePtr right) {
  auto node = std::make_shared<InteriorNode>();
  node->kind = Node::Kind::kInterior;
  node->hash = InteriorHash(HashOf(left), HashOf(right));
  node->left = std::move(left);
  node->right = std::move(right);
  return node;
}

NodePtr MakeOpaque(const Hash256& hash) {
  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::kOpaque;
  node->hash = hash;
  return node;
}

namespace {

// Index of the first update whose key has bit `depth` set (updates are sorted).
size_t SplitPoint(std::span<const LeafUpdate> updates, int depth) {
  // Most batches are small per subtree; a linear scan from either end beats a binary search
  // only for tiny spans, so use the binary search.
  return static_cast<size_t>(
      std::partition_point(updates.begin(), updates.end(),
                           [depth](const LeafUpdate& u) { return KeyBit(u.key, depth) == 0; }) -
      updates.begin());
}

// A subtree holding exactly the leaves `updates` (sorted, distinct, >= 1), at `depth`.
NodePtr BuildFresh(int depth, std::span<const LeafUpdate> updates) {
  if (updates.size() == 1) return MakeLeaf(updates[0].key, updates[0].value);
  size_t split = SplitPoint(updates, depth);
  NodePtr left = split > 0 ? BuildFresh(depth + 1, updates.first(split)) : nullptr;
  NodePtr right = split < updates.size() ? BuildFresh(depth + 1, updates.subspan(split)) : nullptr;
  return MakeInterior(std::move(left), std::move(right));
}

}  // namespace

NodePtr ApplyUpdates(const NodePtr& node, int depth, std::span<const LeafUpdate> updates,
                     uint64_t* new_leaves, const Hash256** uncovered) {
  if (updates.empty()) return node;
  if (!node) {
    *new_leaves += updates.size();
    return BuildFresh(depth, updates);
  }
  switch (node->kind) {
    case Node::Kind::kLeaf: {
      const LeafNode& leaf = AsLeaf(*node);
      if (updates.size() == 1 && updates[0].key == leaf.key) {
        if (updates[0].value == leaf.value) return node;
        return MakeLeaf(leaf.key, updates[0].value);
      }
      // The subtree now holds the old leaf (unless overwritten) plus the new keys.
      auto pos = std::lower_bound(updates.begin(), updates.end(), leaf.key,
                                  [](const LeafUpdate& u, const Hash256& k) { return u.key < k; });
      if (pos != updates.end() && pos->key == leaf.key) {
        *new_leaves += updates.size() - 1;
        return BuildFresh(depth, updates);
      }
      std::vector<LeafUpdate> merged;
      merged.reserve(updates.size() + 1);
      merged.insert(merged.end(), updates.begin(), pos);
      merged.push_back(LeafUpdate{leaf.key, leaf.value});
      merged.insert(merged.end(), pos, updates.end());
      *new_leaves += updates.size();
      return BuildFresh(depth, merged);
    }
    case Node::Kind::kInterior: {
      const InteriorNode& interior = AsInterior(*node);
      size_t split = SplitPoint(updates, depth);
      NodePtr left =
          ApplyUpdates(interior.left, depth + 1, updates.first(split), new_leaves, uncovered);
      if (*uncovered) return nullptr;
      NodePtr right =
          ApplyUpdates(interior.right, depth + 1, updates.subspan(split), new_leaves, uncovered);
      if (*uncovered) return nullptr;
      if (left == interior.left && right == interior.right) return node;
      return MakeInterior(std::move(left), std::move(right));
    }
    case Node::Kind::kOpaque:
      *uncovered = &updates[0].key;
      return nullptr;
  }
  return nullptr;
}

}  // namespace tessera::ledger::internal
