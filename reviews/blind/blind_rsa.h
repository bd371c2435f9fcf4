// RSA blind signatures exactly as RFC 9474 ("RSA Blind Signatures", RSABSSA), on OpenSSL 3.0.
//
// The reviews system uses them to issue anonymous review keys: a registered identity asks the
// issuer to sign its fresh review key without the issuer seeing that key, so the finished
// signature proves "issued to some registered identity" but not to which one.
//
// Protocol (client C, issuer S with key pair (sk, pk)):
//
//   C: input  = PrepareMessage(variant, msg)             // msg_prefix || msg (randomized)
//   C: blind  = Blind(pk, variant, input)                // keeps blind.inv secret
//   C -> S: blind.blinded_msg
//   S: blind_sig = BlindSign(sk, blind.blinded_msg)      // S learns nothing about msg
//   S -> C: blind_sig
//   C: sig = Finalize(pk, variant, input, blind_sig, blind.inv)   // also verifies
//   anyone: Verify(pk, variant, input, sig)
//
// All four RFC 9474 variants are implemented; the reviews system uses
// RSABSSA-SHA384-PSS-Randomized, as the RFC recommends (SHOULD use a randomized variant).
//
// Pitfalls this implementation handles (RFC 9474 §4 and §7, and the issues collected in
// shared/research/reviews.md §5):
//   * message randomization: randomized variants prepend a fresh 32-byte prefix, so the issuer
//     cannot choose the message it ends up signing (RFC 9474 §7.4);
//   * the blinding factor r is drawn uniformly from [1, n) with OpenSSL's private DRBG, and the
//     encoded message must be coprime with n (otherwise gcd(m, n) would factor n);
//   * BlindSign rejects a blinded message of the wrong length or >= n, and re-verifies its own
//     result (s^e == m) before returning it, so a faulty RSA computation cannot leak the key;
//   * the issuer's private operation goes through OpenSSL's RSA implementation, which applies
//     base blinding and constant-time Montgomery exponentiation; the client's secret inverse is
//     computed with BN_FLG_CONSTTIME;
//   * Finalize verifies the unblinded signature, so a malicious issuer cannot hand out a
//     signature under a different key (a tagging attack) without the client noticing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "reviews/common/bytes.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace tessera::reviews::blind {

enum class Variant {
  kSha384PssRandomized,         // RSABSSA-SHA384-PSS-Randomized (recommended)
  kSha384PssZeroRandomized,     // RSABSSA-SHA384-PSSZERO-Randomized
  kSha384PssDeterministic,      // RSABSSA-SHA384-PSS-Deterministic
  kSha384PssZeroDeterministic,  // RSABSSA-SHA384-PSSZERO-Deterministic
};

// "RSABSSA-SHA384-PSS-Randomized", etc.
std::string_view VariantName(Variant variant);
Result<Variant> ParseVariant(std::string_view name);
// PSS salt length in bytes: 48 for PSS variants, 0 for PSSZERO.
size_t SaltLength(Variant variant);
bool IsRandomized(Variant variant);

inline constexpr size_t kMessagePrefixLength = 32;
// RFC 9474 requires at least 2048-bit moduli for deployment; smaller keys are refused.
inline constexpr int kMinModulusBits = 2048;
inline constexpr int kMaxModulusBits = 8192;

// An RSA public key (n, e). Cheap to copy (shares the OpenSSL object).
class PublicKey {
 public:
  // Big-endian unsigned integers. Rejects moduli outside [kMinModulusBits, kMaxModulusBits],
  // even moduli and even exponents.
  static Result<PublicKey> FromComponents(ByteSpan n, ByteSpan e);
  // SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
  static Result<PublicKey> FromPem(std::string_view pem);

  Result<std::string> ToPem() const;
  // Byte length of the modulus (the length of blinded messages and signatures).
  size_t modulus_length() const { return modulus_length_; }
  Bytes modulus() const;
  // SHA-256 of the modulus and exponent: a short identifier for logs and file formats.
  std::string Fingerprint() const;

  EVP_PKEY* raw() const { return key_.get(); }

 private:
  friend class SecretKey;
  static Result<PublicKey> Wrap(std::shared_ptr<EVP_PKEY> key);
  std::shared_ptr<EVP_PKEY> key_;
  size_t modulus_length_ = 0;
};

// An RSA private key.
class SecretKey {
 public:
  // A fresh key with e = 65537. 2048 bits takes tens to hundreds of milliseconds.
  static Result<SecretKey> Generate(int bits);
  // (n, e, d) as big-endian unsigned integers; enough for RFC 9474's test vectors.
  static Result<SecretKey> FromComponents(ByteSpan n, ByteSpan e, ByteSpan d);
  // PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
  static Result<SecretKey> FromPem(std::string_view pem);

  Result<std::string> ToPem() const;
  const PublicKey& public_key() const { return public_key_; }
  EVP_PKEY* raw() const { return key_.get(); }

 private:
  static Result<SecretKey> Wrap(std::shared_ptr<EVP_PKEY> key);
  std::shared_ptr<EVP_PKEY> key_;
  PublicKey public_key_;
};

// RFC 9474 §4.1: msg_prefix || msg, with a fresh random 32-byte prefix for randomized variants
// and an empty prefix for deterministic ones. The result is what Blind, Finalize and Verify
// take as `input_msg`; the client must keep it (it is part of what the signature covers).
Bytes PrepareMessage(Variant variant, ByteSpan msg);

struct BlindOutput {
  Bytes blinded_msg;  // sent to the issuer
  Bytes inv;          // kept secret by the client until Finalize
};

// RFC 9474 §4.2. Errors: message too long for the modulus, message not coprime with n.
Result<BlindOutput> Blind(const PublicKey& pk, Variant variant, ByteSpan input_msg);

// RFC 9474 §4.3. Rejects a blinded message of the wrong length or not below n.
Result<Bytes> BlindSign(const SecretKey& sk, ByteSpan blinded_msg);

// RFC 9474 §4.4: unblinds and verifies. Rejects a blind signature of the wrong length and any
// result that does not verify under pk.
Result<Bytes> Finalize(const PublicKey& pk, Variant variant, ByteSpan input_msg, ByteSpan blind_sig,
                       ByteSpan inv);

// RSASSA-PSS-VERIFY (RFC 8017 §8.1.2) with SHA-384, MGF1-SHA-384 and the variant's salt
// length, performed by OpenSSL's own PSS verifier. OK or a PERMISSION_DENIED status.
Status Verify(const PublicKey& pk, Variant variant, ByteSpan input_msg, ByteSpan sig);

// The integer a blinded message hides, blinded_msg * inv^e mod n: for the client that blinded
// it, the EMSA-PSS encoding of its input (RFC 9474 §4.2 step 7's m). Since any m' is hidden by
// some r, this proves nothing alone; with a commitment to m made before the issuer answered it
// binds a request to the credential it produced (reviews/ledger: the front-running proof).
Result<Bytes> UnblindMessage(const PublicKey& pk, ByteSpan blinded_msg, ByteSpan inv);
// s^e mod n (RSAVP1 of RFC 8017) for s < n: the encoded message a signature covers.
Result<Bytes> RecoverEncodedMessage(const PublicKey& pk, ByteSpan sig);

namespace internal {
// EMSA-PSS-ENCODE (RFC 8017 §9.1.1) with SHA-384 and MGF1-SHA-384 for a modulus of
// `modulus_bits` bits, with the given salt. Exposed for the RFC test vectors.
Result<Bytes> EmsaPssEncode(ByteSpan msg, size_t modulus_bits, ByteSpan salt);
// Blind with the salt and the blinding inverse fixed (RFC 9474 test vectors give `inv`; the
// blinding factor r is its inverse mod n). Never use outside tests.
Result<BlindOutput> BlindWithFixedRandomness(const PublicKey& pk, ByteSpan input_msg, ByteSpan salt,
                                             ByteSpan inv);
}  // namespace internal

}  // namespace tessera::reviews::blind
