#include "ledger/state/state_proof.h"

#include <algorithm>

namespace tessera::ledger {

using internal::AsInterior;
using internal::AsLeaf;
using internal::HashOf;
using internal::KeyBit;
using internal::Node;
using internal::NodePtr;

namespace {

enum Tag : uint8_t { kEmpty = 0x00, kLeaf = 0x01, kInterior = 0x02, kOpaque = 0x03 };

void EncodeNode(const NodePtr& node, std::string& out) {
  if (!node) {
    out.push_back(static_cast<char>(kEmpty));
    return;
  }
  switch (node->kind) {
    case Node::Kind::kLeaf: {
      out.push_back(static_cast<char>(kLeaf));
      out.append(AsChars(AsLeaf(*node).key));
      out.append(AsChars(AsLeaf(*node).value));
      return;
    }
    case Node::Kind::kInterior:
      out.push_back(static_cast<char>(kInterior));
      EncodeNode(AsInterior(*node).left, out);
      EncodeNode(AsInterior(*node).right, out);
      return;
    case Node::Kind::kOpaque:
      out.push_back(static_cast<char>(kOpaque));
      out.append(AsChars(node->hash));
      return;
  }
}

size_t NodeSize(const NodePtr& node) {
  if (!node) return 1;
  switch (node->kind) {
    case Node::Kind::kLeaf:
      return 65;
    case Node::Kind::kInterior:
      return 1 + NodeSize(AsInterior(*node).left) + NodeSize(AsInterior(*node).right);
    case Node::Kind::kOpaque:
      return 33;
  }
  return 0;
}

class Decoder {
 public:
  explicit Decoder(ByteSpan bytes) : bytes_(bytes) {}

  Result<NodePtr> ParseNode(int depth, const Hash256& path) {
    if (pos_ >= bytes_.size()) return Error("truncated: expected a node tag");
    size_t at = pos_;
    uint8_t tag = bytes_[pos_++];
    switch (tag) {
      case kEmpty:
        return NodePtr();
      case kLeaf: {
        Hash256 key;
        LeafValue value;
        TESSERA_RETURN_IF_ERROR(Take(key, "leaf key"));
        TESSERA_RETURN_IF_ERROR(Take(value, "leaf value"));
        if (!internal::SharePrefix(key, path, depth)) {
          return ErrorAt(
              at, "leaf key does not lie under its position at depth " + std::to_string(depth));
        }
        return internal::MakeLeaf(key, value);
      }
      case kInterior: {
        if (depth >= internal::kKeyBits) return ErrorAt(at, "interior node below depth 256");
        Hash256 child_path = path;
        TESSERA_ASSIGN_OR_RETURN(NodePtr left, ParseNode(depth + 1, child_path));
        child_path[depth >> 3] |= static_cast<uint8_t>(0x80 >> (depth & 7));
        TESSERA_ASSIGN_OR_RETURN(NodePtr right, ParseNode(depth + 1, child_path));
        auto is_leaf = [](const NodePtr& n) { return n && n->kind == Node::Kind::kLeaf; };
        if ((!left && !right) || (!left && is_leaf(right)) || (!right && is_leaf(left))) {
          return ErrorAt(at, "non-canonical interior node (fewer than two leaves below it)");
        }
        return internal::MakeInterior(std::move(left), std::move(right));
      }
      case kOpaque: {
        Hash256 hash;
        TESSERA_RETURN_IF_ERROR(Take(hash, "opaque hash"));
        if (hash == Hash256{}) {
          return ErrorAt(at, "non-canonical: empty subtree sent as an opaque zero hash");
        }
        return internal::MakeOpaque(hash);
      }
      default:
        return ErrorAt(at, "unknown node tag " + std::to_string(tag));
    }
  }

  bool done() const { return pos_ == bytes_.size(); }
  size_t pos() const { return pos_; }

 private:
  template <size_t N>
  Status Take(std::array<uint8_t, N>& out, const char* what) {
    if (bytes_.size() - pos_ < N) {
      return InvalidArgumentError("state proof truncated at offset " + std::to_string(pos_) +
                                  ": need " + std::to_string(N) + " bytes for " + what + ", have " +
                                  std::to_string(bytes_.size() - pos_));
    }
    std::copy_n(bytes_.begin() + pos_, N, out.begin());
    pos_ += N;
    return Status::Ok();
  }
  Status Error(const std::string& what) const { return ErrorAt(pos_, what); }
  static Status ErrorAt(size_t at, const std::string& what) {
    return InvalidArgumentError("state proof at offset " + std::to_string(at) + ": " + what);
  }

  ByteSpan bytes_;
  size_t pos_ = 0;
};

Status CheckRoot(const Hash256& have, const Hash256& want) {
  if (have == want) return Status::Ok();
  return InvalidArgumentError("state proof hashes to root " + ToHex(have).substr(0, 16) +
                              "..., not the expected " + ToHex(want).substr(0, 16) + "...");
}

Status Uncovered(const Hash256& key) {
  return InvalidArgumentError("key " + ToHex(key) + " is not covered by the state proof");
}

}  // namespace

Status SortAndCheckDistinct(std::vector<LeafUpdate>& updates) {
  std::sort(updates.begin(), updates.end(),
            [](const LeafUpdate& a, const LeafUpdate& b) { return a.key < b.key; });
  for (size_t i = 1; i < updates.size(); ++i) {
    if (updates[i].key == updates[i - 1].key) {
      return InvalidArgumentError("two updates for key " + ToHex(updates[i].key));
    }
  }
  return Status::Ok();
}

Result<StateProof> StateProof::Decode(ByteSpan bytes) {
  Decoder decoder(bytes);
  TESSERA_ASSIGN_OR_RETURN(NodePtr root, decoder.ParseNode(0, Hash256{}));
  if (!decoder.done()) {
    return InvalidArgumentError("state proof has " + std::to_string(bytes.size() - decoder.pos()) +
                                " trailing bytes after the root");
  }
  return StateProof(std::move(root));
}

std::string StateProof::Encode() const {
  std::string out;
  out.reserve(EncodedSize());
  EncodeNode(root_, out);
  return out;
}

size_t StateProof::EncodedSize() const { return NodeSize(root_); }

Result<std::vector<std::optional<LeafValue>>> StateProof::Verify(
    const Hash256& root, std::span<const Hash256> keys) const {
  TESSERA_RETURN_IF_ERROR(CheckRoot(root_hash(), root));
  std::vector<std::optional<LeafValue>> values;
  values.reserve(keys.size());
  for (const Hash256& key : keys) {
    const internal::Node* node = root_.get();
    std::optional<LeafValue> value;
    for (int depth = 0; node != nullptr; ++depth) {
      if (node->kind == Node::Kind::kOpaque) return Uncovered(key);
      if (node->kind == Node::Kind::kLeaf) {
        if (AsLeaf(*node).key == key) value = AsLeaf(*node).value;
        break;
      }
      const auto& interior = AsInterior(*node);
      node = (KeyBit(key, depth) ? interior.right : interior.left).get();
    }
    values.push_back(value);
  }
  return values;
}

Result<Hash256> StateProof::RootAfter(const Hash256& root,
                                      std::span<const LeafUpdate> updates) const {
  TESSERA_RETURN_IF_ERROR(CheckRoot(root_hash(), root));
  std::vector<LeafUpdate> sorted(updates.begin(), updates.end());
  TESSERA_RETURN_IF_ERROR(SortAndCheckDistinct(sorted));
  uint64_t new_leaves = 0;
  const Hash256* uncovered = nullptr;
  NodePtr after = internal::ApplyUpdates(root_, 0, sorted, &new_leaves, &uncovered);
  if (uncovered) return Uncovered(*uncovered);
  return HashOf(after);
}

}  // namespace tessera::ledger
