// Ed25519 keys, signing and verification (RFC 8032, libsodium).
//
// A secret key is the RFC 8032 32-byte seed; the same key type drives the ECVRF (vrf.h), so a
// citizen has one identity. Signatures made through Sign() are always domain-separated:
// the signed bytes are "tessera/" || domain || 0x00 || message. That keeps a signature for
// one message type from being replayed as another. Every message the ledger signs makes that
// string longer than 32 bytes, so it never equals a 32-byte point encoding and Ed25519 nonces
// stay disjoint from ECVRF nonces derived from the same key; new message types must keep it so.
//
//   KeyPair keys = KeyPair::Generate();
//   Signature sig = Sign(keys, "vote", bytes);
//   bool ok = Verify(keys.public_key(), "vote", bytes, sig);
#pragma once

#include <string_view>

#include "ledger/crypto/bytes.h"

namespace tessera::ledger {

using PublicKey = std::array<uint8_t, 32>;
using Signature = std::array<uint8_t, 64>;
using Seed = std::array<uint8_t, 32>;

class KeyPair {
 public:
  // A fresh key from the operating system's random source.
  static KeyPair Generate();
  // The deterministic key of a 32-byte RFC 8032 secret key (seed).
  static KeyPair FromSeed(const Seed& seed);

  const Seed& seed() const { return seed_; }
  const PublicKey& public_key() const { return public_key_; }
  // libsodium's 64-byte secret key layout (seed || public key).
  const std::array<uint8_t, 64>& expanded() const { return expanded_; }

 private:
  KeyPair() = default;
  Seed seed_{};
  PublicKey public_key_{};
  std::array<uint8_t, 64> expanded_{};
};

// Signs "tessera/" || domain || 0x00 || message. `domain` names the message type.
Signature Sign(const KeyPair& keys, std::string_view domain, ByteSpan message);
// True iff `signature` is a valid signature of the same domain-separated bytes. Verify and
// VerifyRaw answer from (and fill) the thread's SignatureCache while a SignatureCache::Scope
// is open on this thread (signature_cache.h); otherwise they always verify.
bool Verify(const PublicKey& key, std::string_view domain, ByteSpan message,
            const Signature& signature);

// Plain RFC 8032 signing of exactly `message`, for interoperability tests and the benchmark
// baseline. Protocol code uses the domain-separated functions above.
Signature SignRaw(const KeyPair& keys, ByteSpan message);
bool VerifyRaw(const PublicKey& key, ByteSpan message, const Signature& signature);

// Ed25519 verifications this process has actually computed (cache hits not counted): what
// tests and benchmarks use to see how often a signature is checked.
uint64_t VerificationsComputed();

// Initialises libsodium once; every function here calls it, so callers need not.
void EnsureSodium();

}  // namespace tessera::ledger
