#include "ledger/state/state_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstring>

namespace tessera::ledger {

namespace {

void PutU64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t GetU64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<uint8_t>(in[i]);
  return v;
}

const std::string kMetaKey = "m";

std::string RootKey(uint64_t version) {
  std::string k = "r";
  PutU64(k, version);
  return k;
}
std::string LeafKey(const Hash256& key, uint64_t version) {
  std::string k = "l";
  k.append(AsChars(key));
  PutU64(k, version);
  return k;
}
std::string MetaValue(uint64_t latest, uint64_t oldest) {
  std::string v;
  PutU64(v, latest);
  PutU64(v, oldest);
  return v;
}
std::string RootValue(const SparseMerkleTree& tree) {
  std::string v(AsChars(tree.root_hash()));
  PutU64(v, tree.size());
  return v;
}

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  if (s.IsCorruption()) return DataLossError(std::string(what) + ": " + s.ToString());
  return InternalError(std::string(what) + ": " + s.ToString());
}

// Leaf record key layout: 'l' key(32) version(8).
constexpr size_t kLeafKeySize = 41;

}  // namespace

StateStore::StateStore(std::unique_ptr<rocksdb::DB> db, StateStoreOptions options)
    : db_(std::move(db)), options_(options) {}

StateStore::~StateStore() = default;

Result<std::unique_ptr<StateStore>> StateStore::Open(const std::filesystem::path& dir,
                                                     StateStoreOptions options) {
  if (options.cached_versions == 0) options.cached_versions = 1;
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.paranoid_checks = true;
  rocksdb::DB* raw = nullptr;
  TESSERA_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(db_options, dir.string(), &raw),
                                    "opening state store " + dir.string()));
  std::unique_ptr<StateStore> store(new StateStore(std::unique_ptr<rocksdb::DB>(raw), options));
  TESSERA_RETURN_IF_ERROR(store->Load());
  return store;
}

Status StateStore::Load() {
  std::string meta;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kMetaKey, &meta);
  if (s.IsNotFound()) {
    // A new store: version 0 is the empty state.
    rocksdb::WriteBatch batch;
    batch.Put(RootKey(0), RootValue(SparseMerkleTree()));
    batch.Put(kMetaKey, MetaValue(0, 0));
    rocksdb::WriteOptions wo;
    wo.sync = options_.sync;
    TESSERA_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "initialising state store"));
    version_ = oldest_ = 0;
    cache_.emplace(0, SparseMerkleTree());
    return Status::Ok();
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(s, "reading state store metadata"));
  if (meta.size() != 16) return DataLossError("state store metadata has the wrong size");
  version_ = GetU64(meta.data());
  oldest_ = GetU64(meta.data() + 8);
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree tree, Rebuild(version_));
  cache_.emplace(version_, std::move(tree));
  return Status::Ok();
}

uint64_t StateStore::version() const {
  std::shared_lock lock(mu_);
  return version_;
}

uint64_t StateStore::oldest_version() const {
  std::shared_lock lock(mu_);
  return oldest_;
}

SparseMerkleTree StateStore::tree() const {
  std::shared_lock lock(mu_);
  return cache_.rbegin()->second;
}

// Callers hold mu_ (shared) or are the single writer.
Status StateStore::CheckVersion(uint64_t version) const {
  if (version > version_) {
    return NotFoundError("version " + std::to_string(version) + " is not committed (latest " +
                         std::to_string(version_) + ")");
  }
  if (version < oldest_) {
    return NotFoundError("version " + std::to_string(version) + " was pruned (oldest kept " +
                         std::to_string(oldest_) + ")");
  }
  return Status::Ok();
}

Result<Hash256> StateStore::RootAt(uint64_t version) const {
  {
    std::shared_lock lock(mu_);
    TESSERA_RETURN_IF_ERROR(CheckVersion(version));
  }
  std::string value;
  TESSERA_RETURN_IF_ERROR(
      FromRocks(db_->Get(rocksdb::ReadOptions(), RootKey(version), &value), "reading root"));
  if (value.size() != 40) return DataLossError("root record has the wrong size");
  Hash256 root;
  std::memcpy(root.data(), value.data(), 32);
  return root;
}

Result<std::optional<LeafValue>> StateStore::GetAt(const Hash256& key, uint64_t version) const {
  {
    std::shared_lock lock(mu_);
    TESSERA_RETURN_IF_ERROR(CheckVersion(version));
    auto cached = cache_.find(version);
    if (cached != cache_.end()) return cached->second.Get(key);
  }
  // The newest record of `key` at or before `version`.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  std::string target = LeafKey(key, version);
  it->SeekForPrev(target);
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "reading leaf"));
  if (!it->Valid()) return std::optional<LeafValue>();
  rocksdb::Slice k = it->key();
  if (k.size() != kLeafKeySize || std::memcmp(k.data(), target.data(), 33) != 0) {
    return std::optional<LeafValue>();
  }
  if (it->value().size() != 32) return DataLossError("leaf record has the wrong size");
  LeafValue value;
  std::memcpy(value.data(), it->value().data(), 32);
  return std::optional<LeafValue>(value);
}

Result<SparseMerkleTree> StateStore::Rebuild(uint64_t version) const {
  std::vector<LeafUpdate> leaves;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("l"); it->Valid() && it->key().starts_with("l"); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != kLeafKeySize || it->value().size() != 32) {
      return DataLossError("malformed leaf record in state store");
    }
    if (GetU64(k.data() + 33) > version) continue;
    Hash256 key;
    std::memcpy(key.data(), k.data() + 1, 32);
    LeafValue value;
    std::memcpy(value.data(), it->value().data(), 32);
    // Records of one key are adjacent and in version order: the last one seen wins.
    if (!leaves.empty() && leaves.back().key == key) {
      leaves.back().value = value;
    } else {
      leaves.push_back({key, value});
    }
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "scanning leaves"));
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree tree, SparseMerkleTree().Update(std::move(leaves)));
  TESSERA_ASSIGN_OR_RETURN(Hash256 stored, RootAt(version));
  if (tree.root_hash() != stored) {
    return DataLossError("state store version " + std::to_string(version) + ": rebuilt root " +
                         ToHex(tree.root_hash()) + " does not match the stored root " +
                         ToHex(stored));
  }
  return tree;
}

Result<SparseMerkleTree> StateStore::TreeAt(uint64_t version) const {
  {
    std::shared_lock lock(mu_);
    TESSERA_RETURN_IF_ERROR(CheckVersion(version));
    auto cached = cache_.find(version);
    if (cached != cache_.end()) return cached->second;
  }
  return Rebuild(version);
}

Result<SparseMerkleTree> StateStore::CachedTreeAt(uint64_t version) const {
  std::shared_lock lock(mu_);
  TESSERA_RETURN_IF_ERROR(CheckVersion(version));
  auto cached = cache_.find(version);
  if (cached == cache_.end()) {
    return NotFoundError("version " + std::to_string(version) + " is not in memory (the newest " +
                         std::to_string(options_.cached_versions) + " versions are)");
  }
  return cached->second;
}

Result<StateProof> StateStore::ProveAt(std::span<const Hash256> keys, uint64_t version) const {
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree tree, TreeAt(version));
  return tree.Prove(keys);
}

Result<Hash256> StateStore::Commit(std::vector<LeafUpdate> updates) {
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree next, tree().Update(updates));
  return CommitTree(next, updates);
}

Result<Hash256> StateStore::CommitTree(const SparseMerkleTree& next,
                                       std::span<const LeafUpdate> updates) {
  const uint64_t v = version() + 1;  // only this (single) writer changes version_
  rocksdb::WriteBatch batch;
  for (const LeafUpdate& u : updates) batch.Put(LeafKey(u.key, v), AsChars(u.value));
  batch.Put(RootKey(v), RootValue(next));
  batch.Put(kMetaKey, MetaValue(v, oldest_version()));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  TESSERA_RETURN_IF_ERROR(
      FromRocks(db_->Write(wo, &batch), "committing version " + std::to_string(v)));
  std::unique_lock lock(mu_);  // publish only what is durable
  version_ = v;
  cache_.emplace(v, next);
  while (cache_.size() > options_.cached_versions) cache_.erase(cache_.begin());
  return next.root_hash();
}

Status StateStore::Prune(uint64_t keep_from) {
  const uint64_t latest = version(), oldest = oldest_version();
  if (keep_from > latest) {
    return InvalidArgumentError("cannot prune up to version " + std::to_string(keep_from) +
                                ": latest is " + std::to_string(latest));
  }
  if (keep_from <= oldest) return Status::Ok();
  {
    // Readers stop seeing the pruned versions before their records go.
    std::unique_lock lock(mu_);
    oldest_ = keep_from;
    while (cache_.size() > 1 && cache_.begin()->first < keep_from) cache_.erase(cache_.begin());
  }
  rocksdb::WriteBatch batch;
  // Per key, records older than keep_from are needed only if they are the newest such record
  // (it holds the value as of keep_from). Records of one key are adjacent, in version order.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  std::string previous;  // the last record older than keep_from, if of the current key
  for (it->Seek("l"); it->Valid() && it->key().starts_with("l"); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != kLeafKeySize) return DataLossError("malformed leaf record in state store");
    bool same_key = !previous.empty() && std::memcmp(previous.data(), k.data(), 33) == 0;
    if (GetU64(k.data() + 33) < keep_from) {
      if (same_key) batch.Delete(previous);  // superseded before keep_from
      previous = k.ToString();
    } else {
      if (same_key && GetU64(k.data() + 33) == keep_from) batch.Delete(previous);
      previous.clear();
    }
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "scanning leaves for pruning"));
  for (uint64_t v = oldest; v < keep_from; ++v) batch.Delete(RootKey(v));
  batch.Put(kMetaKey, MetaValue(latest, keep_from));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return FromRocks(db_->Write(wo, &batch), "pruning");
}

}  // namespace tessera::ledger
