// The durable, versioned state: a sparse Merkle tree whose leaves live in RocksDB.
//
// Version 0 is the empty state; each Commit() applies one block's updates as the next
// version. Layout (all integers big-endian, so RocksDB's byte order is version order):
//   "m"                          -> latest version (u64), oldest kept version (u64)
//   "r" version                  -> root hash (32) || leaf count (u64)
//   "l" key(32) version          -> leaf value (32) set by that version
// A commit writes its leaf records, its root record and the new "m" in ONE RocksDB write
// batch with sync, so a crash at any moment leaves the store at the previous committed
// version or the new one, never in between (checked by a kill -9 integration test).
//
// Interior nodes are not stored: Open() rebuilds the tree in memory from the newest leaf
// records and refuses to open (DATA_LOSS) unless the rebuilt root equals the stored root.
// The last `cached_versions` trees stay in memory (they share unchanged nodes, so each older
// version costs only the paths its block changed), so proofs against recent roots are
// immediate. TreeAt() rebuilds an older kept version from disk (O(leaves)): fine for tools;
// servers use CachedTreeAt(), which never rebuilds. Prune(v) deletes every record that no
// version >= v needs.
//
// Thread safety: readers (version, tree, root, RootAt, GetAt, TreeAt, CachedTreeAt, ProveAt)
// may run concurrently with each other and with one writer. Writers (Commit, CommitTree,
// Prune) must be serialised by the caller; their disk work (the synced write batch, the
// pruning scan) runs without blocking readers, which see the new version only once it is
// durable. Trees are immutable values and may be read from any thread while the store moves on.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <shared_mutex>
#include <span>

#include "core/status.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace rocksdb {
class DB;
}

namespace tessera::ledger {

struct StateStoreOptions {
  size_t cached_versions = 4;  // in-memory trees kept for the newest versions
  bool sync = true;            // fsync each commit (off only for benchmarks)
};

class StateStore {
 public:
  // Opens (creating if needed) the store in `dir`.
  static Result<std::unique_ptr<StateStore>> Open(const std::filesystem::path& dir,
                                                  StateStoreOptions options = {});
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  uint64_t version() const;         // latest committed version
  uint64_t oldest_version() const;  // oldest version not pruned
  SparseMerkleTree tree() const;    // the latest version (a cheap copy: nodes are shared)
  Hash256 root() const { return tree().root_hash(); }

  // Applies `updates` as version() + 1 in one atomic write batch; returns the new root.
  Result<Hash256> Commit(std::vector<LeafUpdate> updates);
  // The same, for a caller that already computed next == tree().Update(updates) (a politician
  // checks the root before committing): saves recomputing the tree. `next` must be that tree.
  Result<Hash256> CommitTree(const SparseMerkleTree& next, std::span<const LeafUpdate> updates);

  // NOT_FOUND for a version that is pruned or not yet committed.
  Result<Hash256> RootAt(uint64_t version) const;
  Result<std::optional<LeafValue>> GetAt(const Hash256& key, uint64_t version) const;
  // The whole tree as of `version` (from memory if cached, else rebuilt from disk).
  Result<SparseMerkleTree> TreeAt(uint64_t version) const;
  // The tree as of `version` only if it is one of the cached_versions in memory; NOT_FOUND
  // otherwise. Never touches the disk: O(1), for servers answering untrusted requests.
  Result<SparseMerkleTree> CachedTreeAt(uint64_t version) const;

  // A multi-proof for `keys` against RootAt(version): what a politician serves a citizen
  // (research note §3 step 6 reads accounts against the previous block's root).
  Result<StateProof> ProveAt(std::span<const Hash256> keys, uint64_t version) const;

  // Forgets every version below `keep_from` (which must be <= version()).
  Status Prune(uint64_t keep_from);

 private:
  StateStore(std::unique_ptr<rocksdb::DB> db, StateStoreOptions options);
  Status Load();
  Result<SparseMerkleTree> Rebuild(uint64_t version) const;
  Status CheckVersion(uint64_t version) const;

  std::unique_ptr<rocksdb::DB> db_;
  StateStoreOptions options_;
  mutable std::shared_mutex mu_;  // guards version_, oldest_, cache_ (not the disk)
  uint64_t version_ = 0;
  uint64_t oldest_ = 0;
  std::map<uint64_t, SparseMerkleTree> cache_;  // never empty after Open
};

}  // namespace tessera::ledger
