#include "reviews/urs/ristretto.h"

#include <sodium.h>

#include <cstdlib>
#include <mutex>

namespace tessera::reviews::urs {
namespace {

// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
constexpr Scalar kOrder = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                           0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};

void HashParts(std::string_view domain, std::initializer_list<ByteSpan> parts,
               uint8_t out[crypto_hash_sha512_BYTES]) {
  crypto_hash_sha512_state state;
  crypto_hash_sha512_init(&state);
  Bytes header;
  AppendLengthPrefixed(header, AsBytes(domain));
  crypto_hash_sha512_update(&state, header.data(), header.size());
  for (ByteSpan part : parts) {
    Bytes len;
    AppendBigEndian(len, part.size(), 4);
    crypto_hash_sha512_update(&state, len.data(), len.size());
    crypto_hash_sha512_update(&state, part.data(), part.size());
  }
  crypto_hash_sha512_final(&state, out);
}

}  // namespace

void EnsureSodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    // sodium_init fails only when the OS cannot provide randomness; nothing is safe then.
    if (sodium_init() < 0) std::abort();
  });
}

const Point& KeyBase() {
  static const Point key_base = HashToPoint("tessera/reviews/urs/v2/key-base", {});
  return key_base;
}

KeyPair GenerateKeyPair() {
  EnsureSodium();
  KeyPair kp;
  kp.secret = RandomNonzeroScalar();
  // A nonzero scalar below L times a point of order L is never the identity.
  kp.public_key = *Mul(kp.secret, KeyBase());
  return kp;
}

Result<KeyPair> KeyPairFromSecret(const Scalar& secret) {
  EnsureSodium();
  if (!IsCanonicalScalar(secret)) return InvalidArgumentError("secret key is not below L");
  if (IsZero(secret)) return InvalidArgumentError("secret key is zero");
  KeyPair kp;
  kp.secret = secret;
  TESSERA_ASSIGN_OR_RETURN(kp.public_key, Mul(secret, KeyBase()));
  return kp;
}

Status ValidatePoint(const Point& p, std::string_view what) {
  EnsureSodium();
  // libsodium 1.0.18 accepts an encoding with the top bit set and decodes it to the same
  // element as the one without (RFC 9496 refuses it: the bytes are >= p). Tags and keys are
  // ledger leaves by their bytes, so a second encoding of one tag would let a key review an
  // item twice: refuse it here, where every point from outside is checked.
  if ((p[31] & 0x80) != 0 || crypto_core_ristretto255_is_valid_point(p.data()) != 1) {
    return InvalidArgumentError(std::string(what) + " is not a canonical ristretto255 encoding");
  }
  if (sodium_is_zero(p.data(), p.size())) {
    return InvalidArgumentError(std::string(what) + " is the identity element");
  }
  return Status::Ok();
}

bool IsCanonicalScalar(const Scalar& s) {
  // Compare as little-endian integers, most significant byte first.
  for (int i = 31; i >= 0; --i) {
    if (s[i] < kOrder[i]) return true;
    if (s[i] > kOrder[i]) return false;
  }
  return false;  // equal to L
}

bool IsZero(const Scalar& s) { return sodium_is_zero(s.data(), s.size()) == 1; }

Scalar RandomNonzeroScalar() {
  EnsureSodium();
  Scalar s;
  do {
    crypto_core_ristretto255_scalar_random(s.data());
  } while (IsZero(s));
  return s;
}

Point HashToPoint(std::string_view domain, std::initializer_list<ByteSpan> parts) {
  EnsureSodium();
  uint8_t h[crypto_hash_sha512_BYTES];
  HashParts(domain, parts, h);
  Point p;
  crypto_core_ristretto255_from_hash(p.data(), h);
  return p;
}

Scalar HashToScalar(std::string_view domain, std::initializer_list<ByteSpan> parts) {
  EnsureSodium();
  uint8_t h[crypto_hash_sha512_BYTES];
  HashParts(domain, parts, h);
  Scalar s;
  crypto_core_ristretto255_scalar_reduce(s.data(), h);
  return s;
}

Result<Point> MulBase(const Scalar& s) {
  Point out;
  if (crypto_scalarmult_ristretto255_base(out.data(), s.data()) != 0) {
    return InvalidArgumentError("scalar multiplication gave the identity (zero scalar)");
  }
  return out;
}

Result<Point> Mul(const Scalar& s, const Point& p) {
  Point out;
  if (crypto_scalarmult_ristretto255(out.data(), s.data(), p.data()) != 0) {
    return InvalidArgumentError("scalar multiplication gave the identity (zero scalar)");
  }
  return out;
}

Point Add(const Point& a, const Point& b) {
  Point out;
  crypto_core_ristretto255_add(out.data(), a.data(), b.data());
  return out;
}

Point Sub(const Point& a, const Point& b) {
  Point out;
  crypto_core_ristretto255_sub(out.data(), a.data(), b.data());
  return out;
}

Scalar ScalarMul(const Scalar& a, const Scalar& b) {
  Scalar out;
  crypto_core_ristretto255_scalar_mul(out.data(), a.data(), b.data());
  return out;
}

Scalar ScalarSub(const Scalar& a, const Scalar& b) {
  Scalar out;
  crypto_core_ristretto255_scalar_sub(out.data(), a.data(), b.data());
  return out;
}

}  // namespace tessera::reviews::urs
