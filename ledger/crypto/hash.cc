// OpenSSL 3 marks the SHA256_* functions deprecated in favour of EVP, whose per-call
// dispatch costs more than hashing a 65-byte tree node; they remain supported in 3.x and call
// the SHA-NI code directly.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "ledger/crypto/hash.h"

#include <sodium.h>

namespace tessera::ledger {

Hash256 Sha256(ByteSpan data) {
  // Not the one-shot SHA256(): in OpenSSL 3 it goes through EVP_Q_digest, which fetches the
  // algorithm (taking a global lock) on every call.
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  Hash256 out;
  SHA256_Final(out.data(), &ctx);
  return out;
}

Hash512 Sha512(ByteSpan data) {
  Hash512 out;
  crypto_hash_sha512(out.data(), data.data(), data.size());
  return out;
}

Sha256Hasher::Sha256Hasher() { SHA256_Init(&ctx_); }

Sha256Hasher& Sha256Hasher::Update(ByteSpan data) {
  SHA256_Update(&ctx_, data.data(), data.size());
  return *this;
}

Hash256 Sha256Hasher::Final() {
  Hash256 out;
  SHA256_Final(out.data(), &ctx_);
  return out;
}

}  // namespace tessera::ledger
