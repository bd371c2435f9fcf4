#include "ledger/crypto/ed25519.h"

#include <sodium.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "ledger/crypto/signature_cache.h"

namespace tessera::ledger {
namespace {
std::atomic<uint64_t> verifications_computed{0};
}  // namespace

uint64_t VerificationsComputed() { return verifications_computed.load(); }

void EnsureSodium() {
  static const bool ready = [] {
    // sodium_init fails only when no entropy source exists; nothing here can work then.
    if (sodium_init() < 0) std::abort();
    return true;
  }();
  (void)ready;
}

KeyPair KeyPair::Generate() {
  EnsureSodium();
  Seed seed;
  randombytes_buf(seed.data(), seed.size());
  return FromSeed(seed);
}

KeyPair KeyPair::FromSeed(const Seed& seed) {
  EnsureSodium();
  KeyPair keys;
  keys.seed_ = seed;
  crypto_sign_ed25519_seed_keypair(keys.public_key_.data(), keys.expanded_.data(), seed.data());
  return keys;
}

namespace {
std::string DomainSeparated(std::string_view domain, ByteSpan message) {
  std::string bytes = "tessera/";
  bytes.append(domain);
  bytes.push_back('\0');
  bytes.append(AsChars(message));
  return bytes;
}
}  // namespace

Signature Sign(const KeyPair& keys, std::string_view domain, ByteSpan message) {
  return SignRaw(keys, AsBytes(DomainSeparated(domain, message)));
}

bool Verify(const PublicKey& key, std::string_view domain, ByteSpan message,
            const Signature& signature) {
  return VerifyRaw(key, AsBytes(DomainSeparated(domain, message)), signature);
}

Signature SignRaw(const KeyPair& keys, ByteSpan message) {
  EnsureSodium();
  Signature sig;
  crypto_sign_ed25519_detached(sig.data(), nullptr, message.data(), message.size(),
                               keys.expanded().data());
  return sig;
}

bool VerifyRaw(const PublicKey& key, ByteSpan message, const Signature& signature) {
  EnsureSodium();
  SignatureCache* cache = SignatureCache::Active();  // signature_cache.h: the caller's choice
  Hash256 entry{};
  if (cache != nullptr) {
    entry = SignatureCache::EntryOf(key, message, signature);
    if (cache->Lookup(entry)) return true;
  }
  verifications_computed.fetch_add(1, std::memory_order_relaxed);
  bool ok = crypto_sign_ed25519_verify_detached(signature.data(), message.data(), message.size(),
                                                key.data()) == 0;
  if (ok && cache != nullptr) cache->Insert(entry);
  return ok;
}

}  // namespace tessera::ledger
