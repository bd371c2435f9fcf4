// Thin, checked wrappers over libsodium's ristretto255 group: the prime-order group the unique
// ring signatures (urs.h) live in.
//
// Why ristretto255: it is a prime-order group (no cofactor pitfalls, every valid encoding is a
// group element of order L or the identity), and libsodium 1.0.18 (Debian 12) ships it with a
// proper hash-to-group, crypto_core_ristretto255_from_hash, whose output has an unknown
// discrete logarithm. The latter is what keeps uniqueness tags anonymous: the public Go URS
// library hashed to the group as g^H(m), which lets anyone compute every member's tag
// (shared/research/reviews.md §4).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "core/status.h"
#include "reviews/common/bytes.h"

namespace tessera::reviews::urs {

using Point = std::array<uint8_t, 32>;   // canonical ristretto255 encoding
using Scalar = std::array<uint8_t, 32>;  // little-endian integer mod L, canonical (< L)

struct KeyPair {
  Scalar secret;
  Point public_key;  // secret * J (KeyBase): review keys live on J, not on G (urs.h says why)
};

// Initializes libsodium once (thread-safe); every function below calls it.
void EnsureSodium();

// J, the base point of review keys: HashToPoint("tessera/reviews/urs/v2/key-base"), so nobody
// knows log_G(J). The unique ring signature (urs.h) blinds a key with r*G; keys on G itself
// would let a signer move value between the key and the blinding.
const Point& KeyBase();

// A fresh key pair (secret uniform in [1, L), public key secret * J).
KeyPair GenerateKeyPair();
// INVALID_ARGUMENT for a non-canonical or zero secret.
Result<KeyPair> KeyPairFromSecret(const Scalar& secret);

// OK when `p` is the canonical encoding of a group element other than the identity.
// `what` names the value in the error ("ring member 3").
Status ValidatePoint(const Point& p, std::string_view what);
// True when `s` < L (the group order).
bool IsCanonicalScalar(const Scalar& s);
bool IsZero(const Scalar& s);
Scalar RandomNonzeroScalar();

// Hash-to-group: SHA-512 over the length-prefixed domain and parts, mapped with
// crypto_core_ristretto255_from_hash (Elligator 2 twice, added): uniform, unknown dlog.
Point HashToPoint(std::string_view domain, std::initializer_list<ByteSpan> parts);
// Hash-to-scalar: SHA-512 over the length-prefixed domain and parts, reduced mod L.
Scalar HashToScalar(std::string_view domain, std::initializer_list<ByteSpan> parts);

// Group operations on already-validated inputs. The Mul* functions return INVALID_ARGUMENT
// when the result would be the identity (a zero scalar), which honest inputs never produce.
Result<Point> MulBase(const Scalar& s);
Result<Point> Mul(const Scalar& s, const Point& p);
Point Add(const Point& a, const Point& b);
Point Sub(const Point& a, const Point& b);  // a - b (the identity encodes as 32 zero bytes)
Scalar ScalarMul(const Scalar& a, const Scalar& b);
Scalar ScalarSub(const Scalar& a, const Scalar& b);

}  // namespace tessera::reviews::urs
