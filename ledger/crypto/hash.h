// SHA-256 and SHA-512.
//
// SHA-256 runs on OpenSSL, whose implementation uses the CPU's SHA extensions when present
// (the state tree hashes millions of 65-byte nodes; libsodium's portable SHA-256 is several
// times slower there). SHA-512 runs on libsodium, the same code its Ed25519 uses.
#pragma once

#include <openssl/sha.h>

#include <string_view>

#include "ledger/crypto/bytes.h"

namespace tessera::ledger {

Hash256 Sha256(ByteSpan data);
inline Hash256 Sha256(std::string_view data) { return Sha256(AsBytes(data)); }
Hash512 Sha512(ByteSpan data);
inline Hash512 Sha512(std::string_view data) { return Sha512(AsBytes(data)); }

// Incremental SHA-256 for data assembled from several pieces (no intermediate copy).
class Sha256Hasher {
 public:
  Sha256Hasher();
  Sha256Hasher& Update(ByteSpan data);
  Sha256Hasher& Update(std::string_view data) { return Update(AsBytes(data)); }
  Sha256Hasher& UpdateByte(uint8_t b) { return Update(ByteSpan(&b, 1)); }
  Hash256 Final();  // the hasher must not be used afterwards

 private:
  SHA256_CTX ctx_;
};

}  // namespace tessera::ledger
