// VRF verifications shared by the threads of one process, so that a (key, alpha, proof) is
// verified once however many of them check it: a citizen daemon runs many citizens, and each of
// them checks every committee member's ticket on its witness list, its votes and the
// certificate (TicketCache, ledger/net/chain.h, dedups within one citizen only). At 50 citizens
// with a committee of all 50 that is 2,500 verifications of the same 50 tickets per block, at
// ~0.7 ms each, on the one or two cores the daemon shares with the rest of a bench.
//
// Entries are SHA-256("tessera/vrfcache" || key || proof || alpha) -> beta; only successful
// verifications are kept (a hit answers exactly what verifying again would give, as far as
// SHA-256 is collision resistant), and a verification in flight in one thread is joined by
// the others (core/once_cache.h). Bounded by `capacity` entries, oldest forgotten first.
//
// Like SignatureCache (signature_cache.h) it is used through a Scope: while one lives,
// VrfVerify (vrf.h) on that thread goes through the cache. A process of one citizen gains
// nothing from it and opens none; separate processes (separate phones) never share one.
//
//   VrfCache shared(1 << 14);
//   std::thread t([&] { VrfCache::Scope scope(&shared); citizen.Run(stop); });
#pragma once

#include <cstddef>
#include <functional>

#include "core/once_cache.h"
#include "core/thread_scope.h"
#include "ledger/crypto/vrf.h"

namespace tessera::ledger {

class VrfCache {
 public:
  explicit VrfCache(size_t capacity) : verified_(capacity) {}

  // beta for (key, alpha, proof): kept, joined from another thread, or `verify()`'s.
  Result<VrfOutput> Verify(const PublicKey& key, ByteSpan alpha, const VrfProof& proof,
                           const std::function<Result<VrfOutput>()>& verify);
  OnceCacheStats stats() const { return verified_.stats(); }

  // Routes VrfVerify on the calling thread through `cache` while it lives (nested scopes
  // restore the outer one; nullptr: verify without a cache).
  using Scope = ThreadScope<VrfCache>;
  // The cache of the innermost live Scope on this thread, or nullptr.
  static VrfCache* Active() { return Scope::Current(); }

 private:
  OnceCache<Hash256, VrfOutput> verified_;
};

}  // namespace tessera::ledger
