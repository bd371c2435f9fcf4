#include "ledger/crypto/vrf_cache.h"

#include "ledger/crypto/hash.h"

namespace tessera::ledger {

Result<VrfOutput> VrfCache::Verify(const PublicKey& key, ByteSpan alpha, const VrfProof& proof,
                                   const std::function<Result<VrfOutput>()>& verify) {
  // Key and proof have fixed sizes, so the concatenation is unambiguous.
  const Hash256 entry = Sha256Hasher()
                            .Update("tessera/vrfcache")
                            .Update(ByteSpan(key.data(), key.size()))
                            .Update(ByteSpan(proof.data(), proof.size()))
                            .Update(alpha)
                            .Final();
  return verified_.GetOrCompute(entry, verify);
}

}  // namespace tessera::ledger
