// A bounded set of Ed25519 signatures that have already verified, so that a server that sees
// the same signed message many times (a politician: at admission, in gossiped pools, when
// executing a candidate block for each citizen, and when committing) pays for the curve
// arithmetic once.
//
// An entry is SHA-256("tessera/sigcache" || public key || signature || message): a hit means
// this exact (key, message, signature) triple verified before, so answering "valid" from the
// cache is as sound as SHA-256 is collision resistant. Only successful verifications are
// remembered: a forged signature is checked (and rejected) every time it is presented.
//
// Memory is bounded by `capacity` entries (about 80 bytes each). Eviction is by generation:
// entries go into a young set; when it holds capacity / 2 entries the old set is dropped and
// the young one becomes old. A hit in the old set moves the entry to the young one, so
// signatures still in use survive while stale ones age out without per-entry bookkeeping.
//
// The cache is used through a Scope: while one lives, Verify() and VerifyRaw() (ed25519.h)
// on that thread consult and fill the cache. Code that must verify independently (an auditor,
// a citizen alone in its process) simply opens no Scope; the citizens of one daemon share one
// (citizen_daemon.h, share_checks). A cache is thread-safe; a Scope is per thread.
//
//   SignatureCache cache(1 << 18);
//   ...
//   SignatureCache::Scope scope(&cache);  // in each request handler of the server
//   bool ok = VerifyTransaction(tx);      // verifies once, then answers from the cache
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "core/thread_scope.h"
#include "ledger/crypto/ed25519.h"

namespace tessera::ledger {

class SignatureCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;     // lookups that had to verify
    uint64_t evictions = 0;  // entries dropped with an old generation
    size_t size = 0;         // entries held now (<= capacity)
  };

  // `capacity` is at least 2.
  explicit SignatureCache(size_t capacity);
  SignatureCache(const SignatureCache&) = delete;
  SignatureCache& operator=(const SignatureCache&) = delete;

  static Hash256 EntryOf(const PublicKey& key, ByteSpan message, const Signature& signature);

  // True iff `entry` was inserted and not evicted since; counts a hit or a miss.
  bool Lookup(const Hash256& entry);
  void Insert(const Hash256& entry);

  size_t capacity() const { return capacity_; }
  Stats stats() const;

  // Routes Verify()/VerifyRaw() on the calling thread through `cache` while it lives (nested
  // scopes restore the outer one). `cache` may be nullptr: verify without a cache.
  using Scope = ThreadScope<SignatureCache>;
  // The cache of the innermost live Scope on this thread, or nullptr.
  static SignatureCache* Active() { return Scope::Current(); }

 private:
  struct EntryHash {
    size_t operator()(const Hash256& h) const;
  };
  using Set = std::unordered_set<Hash256, EntryHash>;

  const size_t capacity_;
  mutable std::mutex mu_;
  Set young_, old_;
  Stats stats_;
};

}  // namespace tessera::ledger
