// Notes on libsodium 1.0.18 (see shared/research/ledger.md §8.4 for the measurements):
//  * crypto_core_ed25519_is_valid_point also demands the prime-order subgroup, so it is not
//    the RFC 8032 decoding test that try-and-increment needs; using it picks a wrong counter.
//    A candidate decodes iff its y is canonical, it is not a negative zero x, and
//    crypto_core_ed25519_add accepts it (which only checks that it lies on the curve).
//  * crypto_scalarmult_ed25519_noclamp refuses points outside the subgroup, so the cofactor
//    of a candidate is cleared with three doublings through crypto_core_ed25519_add.
#include "ledger/crypto/vrf.h"

#include <sodium.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "ledger/crypto/hash.h"
#include "ledger/crypto/vrf_cache.h"

namespace tessera::ledger {

namespace {

using Point = std::array<uint8_t, 32>;
using Scalar = std::array<uint8_t, 32>;

constexpr uint8_t kSuite = 0x03;
constexpr size_t kChallengeLen = 16;

// y >= p = 2^255 - 19 (with the sign bit masked)?
bool IsNonCanonicalY(const Point& p) {
  if ((p[31] & 0x7f) != 0x7f) return false;
  for (int i = 30; i >= 1; --i) {
    if (p[i] != 0xff) return false;
  }
  return p[0] >= 0xed;
}

// RFC 8032 §5.1.3 decoding test: canonical y, on the curve, and not x = 0 with sign bit 1.
bool Decodes(const Point& p) {
  if (IsNonCanonicalY(p)) return false;
  if (p[31] & 0x80) {
    // x = 0 exactly for y = 1 and y = p - 1; their encodings with the sign bit set are invalid.
    Point y = p;
    y[31] &= 0x7f;
    static const Point kOne = {1};
    Point minus_one;
    minus_one.fill(0xff);
    minus_one[0] = 0xec;
    minus_one[31] = 0x7f;
    if (y == kOne || y == minus_one) return false;
  }
  Point doubled;
  return crypto_core_ed25519_add(doubled.data(), p.data(), p.data()) == 0;
}

struct SecretScalars {
  Scalar x;             // clamped secret scalar, reduced mod L
  Scalar nonce_prefix;  // SHA-512(seed)[32..64]
};

SecretScalars Expand(const KeyPair& keys) {
  Hash512 h = Sha512(ByteSpan(keys.seed()));
  h[0] &= 248;
  h[31] &= 127;
  h[31] |= 64;
  std::array<uint8_t, 64> wide{};
  std::copy_n(h.begin(), 32, wide.begin());
  SecretScalars out;
  crypto_core_ed25519_scalar_reduce(out.x.data(), wide.data());
  std::copy_n(h.begin() + 32, 32, out.nonce_prefix.begin());
  sodium_memzero(h.data(), h.size());
  sodium_memzero(wide.data(), wide.size());
  return out;
}

Result<Point> EncodeToCurve(ByteSpan salt, ByteSpan alpha) {
  for (int ctr = 0; ctr < 256; ++ctr) {
    crypto_hash_sha512_state st;
    crypto_hash_sha512_init(&st);
    const uint8_t prefix[2] = {kSuite, 0x01};
    crypto_hash_sha512_update(&st, prefix, 2);
    crypto_hash_sha512_update(&st, salt.data(), salt.size());
    crypto_hash_sha512_update(&st, alpha.data(), alpha.size());
    const uint8_t tail[2] = {static_cast<uint8_t>(ctr), 0x00};
    crypto_hash_sha512_update(&st, tail, 2);
    Hash512 digest;
    crypto_hash_sha512_final(&st, digest.data());
    Point candidate;
    std::copy_n(digest.begin(), 32, candidate.begin());
    if (!Decodes(candidate)) continue;
    Point p2, p4, h;
    if (crypto_core_ed25519_add(p2.data(), candidate.data(), candidate.data()) != 0 ||
        crypto_core_ed25519_add(p4.data(), p2.data(), p2.data()) != 0 ||
        crypto_core_ed25519_add(h.data(), p4.data(), p4.data()) != 0) {
      continue;
    }
    return h;
  }
  return InternalError("ECVRF encode_to_curve: no valid point within 256 counters");
}

// c = SHA-512(suite || 0x02 || Y || H || Gamma || U || V || 0x00)[0..16], RFC 9381 §5.4.3.
std::array<uint8_t, kChallengeLen> Challenge(ByteSpan y, const Point& h, const Point& gamma,
                                             const Point& u, const Point& v) {
  crypto_hash_sha512_state st;
  crypto_hash_sha512_init(&st);
  const uint8_t prefix[2] = {kSuite, 0x02};
  crypto_hash_sha512_update(&st, prefix, 2);
  crypto_hash_sha512_update(&st, y.data(), y.size());
  for (const Point* p : {&h, &gamma, &u, &v}) crypto_hash_sha512_update(&st, p->data(), 32);
  const uint8_t zero = 0x00;
  crypto_hash_sha512_update(&st, &zero, 1);
  Hash512 digest;
  crypto_hash_sha512_final(&st, digest.data());
  std::array<uint8_t, kChallengeLen> c;
  std::copy_n(digest.begin(), kChallengeLen, c.begin());
  return c;
}

Result<VrfOutput> GammaToHash(const Point& gamma) {
  Point g2, g4, g8;
  if (crypto_core_ed25519_add(g2.data(), gamma.data(), gamma.data()) != 0 ||
      crypto_core_ed25519_add(g4.data(), g2.data(), g2.data()) != 0 ||
      crypto_core_ed25519_add(g8.data(), g4.data(), g4.data()) != 0) {
    return InvalidArgumentError("VRF proof: Gamma is not a curve point");
  }
  crypto_hash_sha512_state st;
  crypto_hash_sha512_init(&st);
  const uint8_t prefix[2] = {kSuite, 0x03};
  crypto_hash_sha512_update(&st, prefix, 2);
  crypto_hash_sha512_update(&st, g8.data(), g8.size());
  const uint8_t zero = 0x00;
  crypto_hash_sha512_update(&st, &zero, 1);
  VrfOutput beta;
  crypto_hash_sha512_final(&st, beta.data());
  return beta;
}

Scalar Widen(const std::array<uint8_t, kChallengeLen>& c) {
  Scalar out{};
  std::copy(c.begin(), c.end(), out.begin());
  return out;
}

}  // namespace

Result<std::array<uint8_t, 32>> VrfEncodeToCurve(const PublicKey& key, ByteSpan alpha) {
  EnsureSodium();
  return EncodeToCurve(ByteSpan(key), alpha);
}

namespace {
std::atomic<uint64_t> vrf_verifications{0};
std::atomic<uint64_t> vrf_proofs{0};
}  // namespace

uint64_t VrfVerificationsComputed() { return vrf_verifications.load(); }
uint64_t VrfProofsComputed() { return vrf_proofs.load(); }

Result<VrfProof> VrfProve(const KeyPair& keys, ByteSpan alpha) {
  vrf_proofs.fetch_add(1, std::memory_order_relaxed);
  EnsureSodium();
  const PublicKey& y = keys.public_key();
  TESSERA_ASSIGN_OR_RETURN(Point h, EncodeToCurve(ByteSpan(y), alpha));
  SecretScalars secret = Expand(keys);

  Point gamma;
  if (crypto_scalarmult_ed25519_noclamp(gamma.data(), secret.x.data(), h.data()) != 0) {
    return InternalError("ECVRF prove: x*H failed");
  }
  // k = SHA-512(nonce_prefix || H) mod L (RFC 9381 §5.4.2.2, as RFC 8032 signing).
  std::array<uint8_t, 64> k_input;
  std::copy(secret.nonce_prefix.begin(), secret.nonce_prefix.end(), k_input.begin());
  std::copy(h.begin(), h.end(), k_input.begin() + 32);
  Hash512 k_wide = Sha512(ByteSpan(k_input));
  Scalar k;
  crypto_core_ed25519_scalar_reduce(k.data(), k_wide.data());

  Point u, v;
  if (crypto_scalarmult_ed25519_base_noclamp(u.data(), k.data()) != 0 ||
      crypto_scalarmult_ed25519_noclamp(v.data(), k.data(), h.data()) != 0) {
    return InternalError("ECVRF prove: nonce multiplication failed");
  }
  auto c = Challenge(ByteSpan(y), h, gamma, u, v);
  Scalar cx, s;
  crypto_core_ed25519_scalar_mul(cx.data(), Widen(c).data(), secret.x.data());
  crypto_core_ed25519_scalar_add(s.data(), k.data(), cx.data());

  VrfProof proof;
  std::copy(gamma.begin(), gamma.end(), proof.begin());
  std::copy(c.begin(), c.end(), proof.begin() + 32);
  std::copy(s.begin(), s.end(), proof.begin() + 48);
  sodium_memzero(secret.x.data(), 32);
  sodium_memzero(k.data(), 32);
  sodium_memzero(k_wide.data(), k_wide.size());
  return proof;
}

namespace {

Result<VrfOutput> VerifyWithoutCache(const PublicKey& key, ByteSpan alpha, const VrfProof& proof) {
  vrf_verifications.fetch_add(1, std::memory_order_relaxed);
  EnsureSodium();
  if (crypto_core_ed25519_is_valid_point(key.data()) != 1) {
    return InvalidArgumentError("VRF: public key is not a valid prime-order point");
  }
  Point gamma;
  std::copy_n(proof.begin(), 32, gamma.begin());
  if (crypto_core_ed25519_is_valid_point(gamma.data()) != 1) {
    return InvalidArgumentError("VRF proof: Gamma is not a valid prime-order point");
  }
  std::array<uint8_t, kChallengeLen> c;
  std::copy_n(proof.begin() + 32, kChallengeLen, c.begin());
  Scalar s;
  std::copy_n(proof.begin() + 48, 32, s.begin());
  // s must be < L: it is iff reducing it changes nothing.
  std::array<uint8_t, 64> s_wide{};
  std::copy(s.begin(), s.end(), s_wide.begin());
  Scalar s_reduced;
  crypto_core_ed25519_scalar_reduce(s_reduced.data(), s_wide.data());
  if (s_reduced != s) return InvalidArgumentError("VRF proof: s is not reduced modulo L");

  TESSERA_ASSIGN_OR_RETURN(Point h, EncodeToCurve(ByteSpan(key), alpha));
  Scalar c_wide = Widen(c);
  Point sb, cy, sh, cg, u, v;
  if (crypto_scalarmult_ed25519_base_noclamp(sb.data(), s.data()) != 0 ||
      crypto_scalarmult_ed25519_noclamp(cy.data(), c_wide.data(), key.data()) != 0 ||
      crypto_scalarmult_ed25519_noclamp(sh.data(), s.data(), h.data()) != 0 ||
      crypto_scalarmult_ed25519_noclamp(cg.data(), c_wide.data(), gamma.data()) != 0) {
    return InvalidArgumentError("VRF proof: degenerate scalar (c = 0 or s = 0)");
  }
  if (crypto_core_ed25519_sub(u.data(), sb.data(), cy.data()) != 0 ||
      crypto_core_ed25519_sub(v.data(), sh.data(), cg.data()) != 0) {
    return InternalError("VRF verify: point subtraction failed");
  }
  if (Challenge(ByteSpan(key), h, gamma, u, v) != c) {
    return InvalidArgumentError("VRF proof does not verify (challenge mismatch)");
  }
  return GammaToHash(gamma);
}

}  // namespace

Result<VrfOutput> VrfVerify(const PublicKey& key, ByteSpan alpha, const VrfProof& proof) {
  VrfCache* cache = VrfCache::Active();
  if (cache == nullptr) return VerifyWithoutCache(key, alpha, proof);
  return cache->Verify(key, alpha, proof, [&] { return VerifyWithoutCache(key, alpha, proof); });
}

Result<VrfOutput> VrfProofToHash(const VrfProof& proof) {
  EnsureSodium();
  Point gamma;
  std::copy_n(proof.begin(), 32, gamma.begin());
  if (!Decodes(gamma)) return InvalidArgumentError("VRF proof: Gamma does not decode");
  return GammaToHash(gamma);
}

}  // namespace tessera::ledger
