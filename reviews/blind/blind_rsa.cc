#include "reviews/blind/blind_rsa.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include <array>
#include <cstring>

namespace tessera::reviews::blind {
namespace {

constexpr size_t kHashLength = 48;  // SHA-384

struct BnDeleter {
  void operator()(BIGNUM* bn) const { BN_clear_free(bn); }
};
using Bn = std::unique_ptr<BIGNUM, BnDeleter>;
struct BnCtxDeleter {
  void operator()(BN_CTX* ctx) const { BN_CTX_free(ctx); }
};
using BnCtx = std::unique_ptr<BN_CTX, BnCtxDeleter>;
struct PkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter>;
struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioDeleter>;

std::shared_ptr<EVP_PKEY> ShareKey(EVP_PKEY* key) {
  return std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
}

// The most recent OpenSSL error, for messages (clears OpenSSL's error queue).
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

Bn NewBn() { return Bn(BN_new()); }

Bn BnFromBytes(ByteSpan bytes) { return Bn(BN_bin2bn(bytes.data(), bytes.size(), nullptr)); }

// Fixed-width big-endian encoding (RFC 8017 I2OSP).
Result<Bytes> BnToBytes(const BIGNUM* bn, size_t length) {
  Bytes out(length);
  if (BN_bn2binpad(bn, out.data(), static_cast<int>(length)) < 0) {
    return InternalError("integer does not fit in " + std::to_string(length) + " bytes");
  }
  return out;
}

Result<Bn> GetBnParam(const EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) {
    return InternalError(std::string("reading RSA parameter ") + name + ": " + OpenSslError());
  }
  return Bn(bn);
}

Result<Bytes> Sha384(ByteSpan data) {
  Bytes out(kHashLength);
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha384(), nullptr) != 1) {
    return InternalError("SHA-384 failed: " + OpenSslError());
  }
  return out;
}

// MGF1 (RFC 8017 §B.2.1) with SHA-384.
Result<Bytes> Mgf1(ByteSpan seed, size_t length) {
  Bytes out;
  out.reserve(length + kHashLength);
  Bytes block(seed.begin(), seed.end());
  block.resize(seed.size() + 4);
  for (uint32_t counter = 0; out.size() < length; ++counter) {
    for (int i = 0; i < 4; ++i)
      block[seed.size() + i] = static_cast<uint8_t>(counter >> (24 - 8 * i));
    TESSERA_ASSIGN_OR_RETURN(Bytes digest, Sha384(block));
    out.insert(out.end(), digest.begin(), digest.end());
  }
  out.resize(length);
  return out;
}

// Builds an RSA EVP_PKEY from parameters; `d` is null for a public key.
Result<std::shared_ptr<EVP_PKEY>> KeyFromParams(const BIGNUM* n, const BIGNUM* e, const BIGNUM* d) {
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(),
                                                                      OSSL_PARAM_BLD_free);
  if (!bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, n) != 1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, e) != 1 ||
      (d != nullptr && OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_D, d) != 1)) {
    return InternalError("building RSA parameters: " + OpenSslError());
  }
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(bld.get()),
                                                                 OSSL_PARAM_free);
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, d != nullptr ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                        params.get()) != 1) {
    return InvalidArgumentError("invalid RSA key: " + OpenSslError());
  }
  return ShareKey(key);
}

// The RSA public operation x^e mod n (RSAVP1), on public values only.
Result<Bn> PublicOp(const PublicKey& pk, const BIGNUM* x, BN_CTX* ctx) {
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  TESSERA_ASSIGN_OR_RETURN(Bn e, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_E));
  Bn out = NewBn();
  if (!out || BN_mod_exp(out.get(), x, e.get(), n.get(), ctx) != 1) {
    return InternalError("RSA public operation failed: " + OpenSslError());
  }
  return out;
}

// The core of Blind (RFC 9474 §4.2 steps 1-9) with the salt and r given.
Result<BlindOutput> BlindCore(const PublicKey& pk, ByteSpan input_msg, ByteSpan salt,
                              const BIGNUM* r, BN_CTX* ctx) {
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  TESSERA_ASSIGN_OR_RETURN(Bytes encoded,
                           internal::EmsaPssEncode(input_msg, BN_num_bits(n.get()), salt));
  Bn m = BnFromBytes(encoded);
  Bn gcd = NewBn();
  if (!m || !gcd || BN_gcd(gcd.get(), m.get(), n.get(), ctx) != 1) {
    return InternalError("gcd failed: " + OpenSslError());
  }
  // A message sharing a factor with n would reveal that factor; RFC 9474 says "invalid input".
  if (!BN_is_one(gcd.get())) return InvalidArgumentError("encoded message is not coprime with n");

  // The secret blinding factor is handled with constant-time BIGNUM operations.
  Bn r_secret(BN_dup(r));
  BN_set_flags(r_secret.get(), BN_FLG_CONSTTIME);
  Bn inv(BN_mod_inverse(nullptr, r_secret.get(), n.get(), ctx));
  if (!inv) return InvalidArgumentError("blinding factor is not invertible mod n");
  TESSERA_ASSIGN_OR_RETURN(Bn r_e, PublicOp(pk, r_secret.get(), ctx));
  Bn x = NewBn();
  if (!x || BN_mod_mul(x.get(), m.get(), r_e.get(), n.get(), ctx) != 1) {
    return InternalError("blinding multiplication failed: " + OpenSslError());
  }
  BlindOutput out;
  TESSERA_ASSIGN_OR_RETURN(out.blinded_msg, BnToBytes(x.get(), pk.modulus_length()));
  TESSERA_ASSIGN_OR_RETURN(out.inv, BnToBytes(inv.get(), pk.modulus_length()));
  return out;
}

}  // namespace

std::string_view VariantName(Variant variant) {
  switch (variant) {
    case Variant::kSha384PssRandomized:
      return "RSABSSA-SHA384-PSS-Randomized";
    case Variant::kSha384PssZeroRandomized:
      return "RSABSSA-SHA384-PSSZERO-Randomized";
    case Variant::kSha384PssDeterministic:
      return "RSABSSA-SHA384-PSS-Deterministic";
    case Variant::kSha384PssZeroDeterministic:
      return "RSABSSA-SHA384-PSSZERO-Deterministic";
  }
  return "unknown";
}

Result<Variant> ParseVariant(std::string_view name) {
  for (Variant v : {Variant::kSha384PssRandomized, Variant::kSha384PssZeroRandomized,
                    Variant::kSha384PssDeterministic, Variant::kSha384PssZeroDeterministic}) {
    if (name == VariantName(v)) return v;
  }
  return InvalidArgumentError("unknown RSABSSA variant '" + std::string(name) + "'");
}

size_t SaltLength(Variant variant) {
  return variant == Variant::kSha384PssRandomized || variant == Variant::kSha384PssDeterministic
             ? kHashLength
             : 0;
}

bool IsRandomized(Variant variant) {
  return variant == Variant::kSha384PssRandomized || variant == Variant::kSha384PssZeroRandomized;
}

// ---- PublicKey ----

Result<PublicKey> PublicKey::Wrap(std::shared_ptr<EVP_PKEY> key) {
  if (!EVP_PKEY_is_a(key.get(), "RSA")) return InvalidArgumentError("not an RSA key");
  int bits = EVP_PKEY_get_bits(key.get());
  if (bits < kMinModulusBits || bits > kMaxModulusBits) {
    return InvalidArgumentError("RSA modulus has " + std::to_string(bits) + " bits; need " +
                                std::to_string(kMinModulusBits) + ".." +
                                std::to_string(kMaxModulusBits));
  }
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(key.get(), OSSL_PKEY_PARAM_RSA_N));
  TESSERA_ASSIGN_OR_RETURN(Bn e, GetBnParam(key.get(), OSSL_PKEY_PARAM_RSA_E));
  if (!BN_is_odd(n.get())) return InvalidArgumentError("RSA modulus is even");
  if (!BN_is_odd(e.get()) || BN_is_one(e.get())) {
    return InvalidArgumentError("RSA public exponent must be odd and greater than 1");
  }
  PublicKey pk;
  pk.key_ = std::move(key);
  pk.modulus_length_ = static_cast<size_t>(BN_num_bytes(n.get()));
  return pk;
}

Result<PublicKey> PublicKey::FromComponents(ByteSpan n, ByteSpan e) {
  Bn bn_n = BnFromBytes(n), bn_e = BnFromBytes(e);
  if (!bn_n || !bn_e) return InternalError("BN_bin2bn failed");
  TESSERA_ASSIGN_OR_RETURN(auto key, KeyFromParams(bn_n.get(), bn_e.get(), nullptr));
  return Wrap(std::move(key));
}

Result<PublicKey> PublicKey::FromPem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EVP_PKEY* key = bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key == nullptr) return InvalidArgumentError("not a PEM public key: " + OpenSslError());
  return Wrap(ShareKey(key));
}

Result<std::string> PublicKey::ToPem() const {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) {
    return InternalError("writing PEM public key: " + OpenSslError());
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

Bytes PublicKey::modulus() const {
  auto n = GetBnParam(key_.get(), OSSL_PKEY_PARAM_RSA_N);
  if (!n.ok()) return {};
  auto bytes = BnToBytes(n->get(), modulus_length_);
  return bytes.ok() ? *bytes : Bytes{};
}

std::string PublicKey::Fingerprint() const {
  Bytes data = modulus();
  auto e = GetBnParam(key_.get(), OSSL_PKEY_PARAM_RSA_E);
  if (e.ok()) {
    Bytes eb(static_cast<size_t>(BN_num_bytes(e->get())));
    BN_bn2bin(e->get(), eb.data());
    data.insert(data.end(), eb.begin(), eb.end());
  }
  std::array<uint8_t, 32> digest{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr);
  return ToHex(digest);
}

// ---- SecretKey ----

Result<SecretKey> SecretKey::Wrap(std::shared_ptr<EVP_PKEY> key) {
  if (!EVP_PKEY_is_a(key.get(), "RSA")) return InvalidArgumentError("not an RSA key");
  // The public half is rebuilt from (n, e) alone so public operations never touch secrets.
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(key.get(), OSSL_PKEY_PARAM_RSA_N));
  TESSERA_ASSIGN_OR_RETURN(Bn e, GetBnParam(key.get(), OSSL_PKEY_PARAM_RSA_E));
  TESSERA_ASSIGN_OR_RETURN(auto pub, KeyFromParams(n.get(), e.get(), nullptr));
  SecretKey sk;
  TESSERA_ASSIGN_OR_RETURN(sk.public_key_, PublicKey::Wrap(std::move(pub)));
  sk.key_ = std::move(key);
  return sk;
}

Result<SecretKey> SecretKey::Generate(int bits) {
  if (bits < kMinModulusBits || bits > kMaxModulusBits) {
    return InvalidArgumentError("RSA key size must be " + std::to_string(kMinModulusBits) + ".." +
                                std::to_string(kMaxModulusBits) + " bits, got " +
                                std::to_string(bits));
  }
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY* key = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), bits) != 1 ||
      EVP_PKEY_generate(ctx.get(), &key) != 1) {
    return InternalError("RSA key generation failed: " + OpenSslError());
  }
  return Wrap(ShareKey(key));
}

Result<SecretKey> SecretKey::FromComponents(ByteSpan n, ByteSpan e, ByteSpan d) {
  Bn bn_n = BnFromBytes(n), bn_e = BnFromBytes(e), bn_d = BnFromBytes(d);
  if (!bn_n || !bn_e || !bn_d) return InternalError("BN_bin2bn failed");
  TESSERA_ASSIGN_OR_RETURN(auto key, KeyFromParams(bn_n.get(), bn_e.get(), bn_d.get()));
  return Wrap(std::move(key));
}

Result<SecretKey> SecretKey::FromPem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key == nullptr) return InvalidArgumentError("not a PEM private key: " + OpenSslError());
  return Wrap(ShareKey(key));
}

Result<std::string> SecretKey::ToPem() const {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return InternalError("writing PEM private key: " + OpenSslError());
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

// ---- The protocol ----

Bytes PrepareMessage(Variant variant, ByteSpan msg) {
  Bytes out;
  if (IsRandomized(variant)) {
    out.resize(kMessagePrefixLength);
    // RAND_bytes only fails when the DRBG cannot be seeded; a zero prefix would silently
    // weaken the scheme, so that case aborts rather than continuing.
    if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) std::abort();
  }
  out.insert(out.end(), msg.begin(), msg.end());
  return out;
}

Result<BlindOutput> Blind(const PublicKey& pk, Variant variant, ByteSpan input_msg) {
  BnCtx ctx(BN_CTX_secure_new());
  Bytes salt(SaltLength(variant));
  if (!ctx || (!salt.empty() && RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1)) {
    return InternalError("random generation failed: " + OpenSslError());
  }
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  // r uniform in [1, n): exactly over Z_n* minus negligible non-units, never a biased
  // modular reduction (a biased r leaks bits of the message across tokens).
  Bn r(BN_secure_new());
  do {
    if (!r || BN_priv_rand_range(r.get(), n.get()) != 1) {
      return InternalError("random generation failed: " + OpenSslError());
    }
  } while (BN_is_zero(r.get()));
  return BlindCore(pk, input_msg, salt, r.get(), ctx.get());
}

Result<Bytes> BlindSign(const SecretKey& sk, ByteSpan blinded_msg) {
  const PublicKey& pk = sk.public_key();
  if (blinded_msg.size() != pk.modulus_length()) {
    return InvalidArgumentError("blinded message has " + std::to_string(blinded_msg.size()) +
                                " bytes; the key needs exactly " +
                                std::to_string(pk.modulus_length()));
  }
  BnCtx ctx(BN_CTX_new());
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  Bn m = BnFromBytes(blinded_msg);
  if (!ctx || !m) return InternalError("BIGNUM allocation failed");
  if (BN_cmp(m.get(), n.get()) >= 0) {
    return InvalidArgumentError("blinded message is not below the modulus");
  }
  // RSASP1 through OpenSSL's RSA implementation (blinded, constant-time exponentiation).
  PkeyCtx pctx(EVP_PKEY_CTX_new(sk.raw(), nullptr));
  Bytes sig(pk.modulus_length());
  size_t sig_len = sig.size();
  if (!pctx || EVP_PKEY_decrypt_init(pctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_padding(pctx.get(), RSA_NO_PADDING) != 1 ||
      EVP_PKEY_decrypt(pctx.get(), sig.data(), &sig_len, blinded_msg.data(), blinded_msg.size()) !=
          1) {
    return InternalError("RSA private operation failed: " + OpenSslError());
  }
  if (sig_len != sig.size()) {
    // OpenSSL returns the full modulus length for raw RSA; anything else is a library bug.
    return InternalError("RSA private operation returned " + std::to_string(sig_len) + " bytes");
  }
  // RFC 9474 §4.3 step 3: re-verify, so a fault in the CRT computation never leaves the issuer.
  Bn s = BnFromBytes(sig);
  TESSERA_ASSIGN_OR_RETURN(Bn check, PublicOp(pk, s.get(), ctx.get()));
  if (BN_cmp(check.get(), m.get()) != 0) {
    return InternalError("signing failure: blind signature does not verify (RFC 9474 §4.3)");
  }
  return sig;
}

Result<Bytes> UnblindMessage(const PublicKey& pk, ByteSpan blinded_msg, ByteSpan inv) {
  if (blinded_msg.size() != pk.modulus_length() || inv.size() != pk.modulus_length()) {
    return InvalidArgumentError("blinded message and inverse must have " +
                                std::to_string(pk.modulus_length()) + " bytes");
  }
  BnCtx ctx(BN_CTX_new());
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  Bn x = BnFromBytes(blinded_msg), bn_inv = BnFromBytes(inv), m = NewBn();
  if (!ctx || !x || !bn_inv || !m) return InternalError("BIGNUM allocation failed");
  if (BN_cmp(x.get(), n.get()) >= 0 || BN_cmp(bn_inv.get(), n.get()) >= 0) {
    return InvalidArgumentError("blinded message or inverse is not below the modulus");
  }
  TESSERA_ASSIGN_OR_RETURN(Bn inv_e, PublicOp(pk, bn_inv.get(), ctx.get()));
  if (BN_mod_mul(m.get(), x.get(), inv_e.get(), n.get(), ctx.get()) != 1) {
    return InternalError("unblinding the message failed: " + OpenSslError());
  }
  return BnToBytes(m.get(), pk.modulus_length());
}

Result<Bytes> RecoverEncodedMessage(const PublicKey& pk, ByteSpan sig) {
  if (sig.size() != pk.modulus_length()) {
    return InvalidArgumentError("signature must have " + std::to_string(pk.modulus_length()) +
                                " bytes");
  }
  BnCtx ctx(BN_CTX_new());
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  Bn s = BnFromBytes(sig);
  if (!ctx || !s) return InternalError("BIGNUM allocation failed");
  if (BN_cmp(s.get(), n.get()) >= 0) return InvalidArgumentError("signature is not below n");
  TESSERA_ASSIGN_OR_RETURN(Bn m, PublicOp(pk, s.get(), ctx.get()));
  return BnToBytes(m.get(), pk.modulus_length());
}

Result<Bytes> Finalize(const PublicKey& pk, Variant variant, ByteSpan input_msg, ByteSpan blind_sig,
                       ByteSpan inv) {
  if (blind_sig.size() != pk.modulus_length()) {
    return InvalidArgumentError("blind signature has " + std::to_string(blind_sig.size()) +
                                " bytes; the key needs exactly " +
                                std::to_string(pk.modulus_length()));
  }
  if (inv.size() != pk.modulus_length()) {
    return InvalidArgumentError("blinding inverse has the wrong length");
  }
  BnCtx ctx(BN_CTX_secure_new());
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  Bn z = BnFromBytes(blind_sig), bn_inv = BnFromBytes(inv), s = NewBn();
  if (!ctx || !z || !bn_inv || !s) return InternalError("BIGNUM allocation failed");
  if (BN_cmp(z.get(), n.get()) >= 0) {
    return InvalidArgumentError("blind signature is not below the modulus");
  }
  BN_set_flags(bn_inv.get(), BN_FLG_CONSTTIME);
  if (BN_mod_mul(s.get(), z.get(), bn_inv.get(), n.get(), ctx.get()) != 1) {
    return InternalError("unblinding failed: " + OpenSslError());
  }
  TESSERA_ASSIGN_OR_RETURN(Bytes sig, BnToBytes(s.get(), pk.modulus_length()));
  Status verified = Verify(pk, variant, input_msg, sig);
  if (!verified.ok()) {
    return PermissionDeniedError(
        "finalized signature does not verify: the issuer's blind "
        "signature is invalid for this key or message");
  }
  return sig;
}

Status Verify(const PublicKey& pk, Variant variant, ByteSpan input_msg, ByteSpan sig) {
  if (sig.size() != pk.modulus_length()) {
    return PermissionDeniedError("signature has " + std::to_string(sig.size()) +
                                 " bytes; the key needs exactly " +
                                 std::to_string(pk.modulus_length()));
  }
  TESSERA_ASSIGN_OR_RETURN(Bytes digest, Sha384(input_msg));
  PkeyCtx ctx(EVP_PKEY_CTX_new(pk.raw(), nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PSS_PADDING) != 1 ||
      EVP_PKEY_CTX_set_signature_md(ctx.get(), EVP_sha384()) != 1 ||
      EVP_PKEY_CTX_set_rsa_mgf1_md(ctx.get(), EVP_sha384()) != 1 ||
      EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx.get(), static_cast<int>(SaltLength(variant))) != 1) {
    return InternalError("setting up PSS verification: " + OpenSslError());
  }
  int rc = EVP_PKEY_verify(ctx.get(), sig.data(), sig.size(), digest.data(), digest.size());
  ERR_clear_error();
  if (rc != 1) return PermissionDeniedError("RSA-PSS signature does not verify");
  return Status::Ok();
}

namespace internal {

Result<Bytes> EmsaPssEncode(ByteSpan msg, size_t modulus_bits, ByteSpan salt) {
  const size_t em_bits = modulus_bits - 1;
  const size_t em_len = (em_bits + 7) / 8;
  TESSERA_ASSIGN_OR_RETURN(Bytes m_hash, Sha384(msg));
  if (em_len < kHashLength + salt.size() + 2) {
    return InvalidArgumentError("modulus too small for PSS encoding");
  }
  Bytes m_prime(8, 0);
  m_prime.insert(m_prime.end(), m_hash.begin(), m_hash.end());
  m_prime.insert(m_prime.end(), salt.begin(), salt.end());
  TESSERA_ASSIGN_OR_RETURN(Bytes h, Sha384(m_prime));
  const size_t db_len = em_len - kHashLength - 1;
  Bytes db(db_len - salt.size() - 1, 0);  // PS
  db.push_back(0x01);
  db.insert(db.end(), salt.begin(), salt.end());
  TESSERA_ASSIGN_OR_RETURN(Bytes mask, Mgf1(h, db_len));
  for (size_t i = 0; i < db_len; ++i) db[i] ^= mask[i];
  db[0] &= static_cast<uint8_t>(0xff >> (8 * em_len - em_bits));
  Bytes em = std::move(db);
  em.insert(em.end(), h.begin(), h.end());
  em.push_back(0xbc);
  return em;
}

Result<BlindOutput> BlindWithFixedRandomness(const PublicKey& pk, ByteSpan input_msg, ByteSpan salt,
                                             ByteSpan inv) {
  BnCtx ctx(BN_CTX_new());
  TESSERA_ASSIGN_OR_RETURN(Bn n, GetBnParam(pk.raw(), OSSL_PKEY_PARAM_RSA_N));
  Bn bn_inv = BnFromBytes(inv);
  Bn r(BN_mod_inverse(nullptr, bn_inv.get(), n.get(), ctx.get()));
  if (!r) return InvalidArgumentError("inv is not invertible mod n");
  return BlindCore(pk, input_msg, salt, r.get(), ctx.get());
}

}  // namespace internal

}  // namespace tessera::reviews::blind
