#include "reviews/blind/blind_rsa.h"

#include <gtest/gtest.h>

#include "reviews/blind/rfc9474_vectors.h"

namespace tessera::reviews::blind {
namespace {

Bytes Hex(const char* hex) {
  auto bytes = FromHex(hex);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.value_or(Bytes{});
}

Bytes Concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

SecretKey VectorKey() {
  auto sk = SecretKey::FromComponents(Hex(rfc9474::kN), Hex(rfc9474::kE), Hex(rfc9474::kD));
  EXPECT_TRUE(sk.ok()) << sk.status();
  return *sk;
}

struct VectorCase {
  const char* name;
  Variant variant;
  const char* prefix;
  const char* encoded;  // null when the RFC does not list it
  const char* blinded;
  const char* blind_sig;
  const char* sig;
  const char* inv;
};

const VectorCase kCases[] = {
    {"A.1", Variant::kSha384PssRandomized, rfc9474::kA1Prefix, nullptr, rfc9474::kA1Blinded,
     rfc9474::kA1BlindSig, rfc9474::kA1Sig, rfc9474::kInv},
    {"A.2", Variant::kSha384PssZeroRandomized, rfc9474::kA2Prefix, rfc9474::kA2Encoded,
     rfc9474::kA2Blinded, rfc9474::kA2BlindSig, rfc9474::kA2Sig, rfc9474::kInv},
    {"A.3", Variant::kSha384PssDeterministic, rfc9474::kA3Prefix, rfc9474::kA3Encoded,
     rfc9474::kA3Blinded, rfc9474::kA3BlindSig, rfc9474::kA3Sig, rfc9474::kInv},
    {"A.4", Variant::kSha384PssZeroDeterministic, rfc9474::kA4Prefix, rfc9474::kA4Encoded,
     rfc9474::kA4Blinded, rfc9474::kA4BlindSig, rfc9474::kA4Sig, rfc9474::kA4Inv},
};

// Every step of the protocol reproduces the RFC's bytes exactly.
TEST(BlindRsaRfc9474, VectorsReproduceByteForByte) {
  SecretKey sk = VectorKey();
  const PublicKey& pk = sk.public_key();
  ASSERT_EQ(pk.modulus_length(), 512u);
  for (const VectorCase& c : kCases) {
    SCOPED_TRACE(c.name);
    Bytes input = Concat(Hex(c.prefix), Hex(rfc9474::kMsg));
    Bytes salt = SaltLength(c.variant) == 0 ? Bytes{} : Hex(rfc9474::kSalt);
    if (c.encoded != nullptr) {
      auto encoded = internal::EmsaPssEncode(input, 4096, salt);
      ASSERT_TRUE(encoded.ok()) << encoded.status();
      EXPECT_EQ(ToHex(*encoded), c.encoded);
    }
    auto blinded = internal::BlindWithFixedRandomness(pk, input, salt, Hex(c.inv));
    ASSERT_TRUE(blinded.ok()) << blinded.status();
    EXPECT_EQ(ToHex(blinded->blinded_msg), c.blinded);
    EXPECT_EQ(ToHex(blinded->inv), c.inv);

    auto blind_sig = BlindSign(sk, blinded->blinded_msg);
    ASSERT_TRUE(blind_sig.ok()) << blind_sig.status();
    EXPECT_EQ(ToHex(*blind_sig), c.blind_sig);

    auto sig = Finalize(pk, c.variant, input, *blind_sig, blinded->inv);
    ASSERT_TRUE(sig.ok()) << sig.status();
    EXPECT_EQ(ToHex(*sig), c.sig);
    EXPECT_TRUE(Verify(pk, c.variant, input, Hex(c.sig)).ok());
  }
}

// The RFC's signatures verify under OpenSSL's PSS verifier only with their own salt length:
// the variant is part of what is checked.
TEST(BlindRsaRfc9474, WrongVariantDoesNotVerify) {
  SecretKey sk = VectorKey();
  Bytes input = Concat(Hex(rfc9474::kA1Prefix), Hex(rfc9474::kMsg));
  EXPECT_TRUE(
      Verify(sk.public_key(), Variant::kSha384PssRandomized, input, Hex(rfc9474::kA1Sig)).ok());
  EXPECT_FALSE(
      Verify(sk.public_key(), Variant::kSha384PssZeroRandomized, input, Hex(rfc9474::kA1Sig)).ok());
}

TEST(BlindRsaRfc9474, TamperedInputsFail) {
  SecretKey sk = VectorKey();
  const PublicKey& pk = sk.public_key();
  Bytes input = Concat(Hex(rfc9474::kA1Prefix), Hex(rfc9474::kMsg));
  Bytes sig = Hex(rfc9474::kA1Sig);
  // The message prefix is covered by the signature: without it, verification fails.
  EXPECT_FALSE(Verify(pk, Variant::kSha384PssRandomized, Hex(rfc9474::kMsg), sig).ok());
  Bytes bad_input = input;
  bad_input.back() ^= 1;
  EXPECT_FALSE(Verify(pk, Variant::kSha384PssRandomized, bad_input, sig).ok());
  Bytes bad_sig = sig;
  bad_sig[100] ^= 0x40;
  EXPECT_FALSE(Verify(pk, Variant::kSha384PssRandomized, input, bad_sig).ok());
  Bytes short_sig(sig.begin() + 1, sig.end());
  EXPECT_FALSE(Verify(pk, Variant::kSha384PssRandomized, input, short_sig).ok());
  // A blind signature for a different blinded message finalizes to garbage, which Finalize
  // refuses to return.
  Bytes bad_blind = Hex(rfc9474::kA1BlindSig);
  bad_blind[5] ^= 1;
  auto finalized =
      Finalize(pk, Variant::kSha384PssRandomized, input, bad_blind, Hex(rfc9474::kInv));
  EXPECT_EQ(finalized.status().code(), StatusCode::kPermissionDenied);
}

TEST(BlindRsa, BlindSignRejectsMalformedBlindedMessages) {
  SecretKey sk = VectorKey();
  Bytes too_short(511, 1);
  EXPECT_EQ(BlindSign(sk, too_short).status().code(), StatusCode::kInvalidArgument);
  Bytes too_big = Hex(rfc9474::kN);  // exactly n: not a valid representative
  auto rejected = BlindSign(sk, too_big);
  EXPECT_EQ(rejected.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rejected.status().message().find("modulus"), std::string::npos);
  Bytes all_ff(512, 0xff);
  EXPECT_EQ(BlindSign(sk, all_ff).status().code(), StatusCode::kInvalidArgument);
}

TEST(BlindRsa, FinalizeRejectsWrongLengths) {
  SecretKey sk = VectorKey();
  Bytes input = Hex(rfc9474::kMsg);
  EXPECT_EQ(Finalize(sk.public_key(), Variant::kSha384PssDeterministic, input, Bytes(10, 1),
                     Hex(rfc9474::kInv))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Finalize(sk.public_key(), Variant::kSha384PssDeterministic, input,
                     Hex(rfc9474::kA3BlindSig), Bytes(3, 1))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// With fresh randomness: a generated 2048-bit key, every variant, end to end.
class BlindRsaGenerated : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto sk = SecretKey::Generate(2048);
    ASSERT_TRUE(sk.ok()) << sk.status();
    key_ = new SecretKey(*sk);
  }
  static void TearDownTestSuite() { delete key_; }
  static SecretKey* key_;
};
SecretKey* BlindRsaGenerated::key_ = nullptr;

TEST_F(BlindRsaGenerated, RoundTripEveryVariant) {
  const PublicKey& pk = key_->public_key();
  EXPECT_EQ(pk.modulus_length(), 256u);
  Bytes msg = Bytes{'r', 'e', 'v', 'i', 'e', 'w', '-', 'k', 'e', 'y'};
  for (Variant v : {Variant::kSha384PssRandomized, Variant::kSha384PssZeroRandomized,
                    Variant::kSha384PssDeterministic, Variant::kSha384PssZeroDeterministic}) {
    SCOPED_TRACE(VariantName(v));
    Bytes input = PrepareMessage(v, msg);
    EXPECT_EQ(input.size(), msg.size() + (IsRandomized(v) ? kMessagePrefixLength : 0));
    auto blinded = Blind(pk, v, input);
    ASSERT_TRUE(blinded.ok()) << blinded.status();
    auto blind_sig = BlindSign(*key_, blinded->blinded_msg);
    ASSERT_TRUE(blind_sig.ok()) << blind_sig.status();
    auto sig = Finalize(pk, v, input, *blind_sig, blinded->inv);
    ASSERT_TRUE(sig.ok()) << sig.status();
    EXPECT_TRUE(Verify(pk, v, input, *sig).ok());
    auto parsed = ParseVariant(VariantName(v));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, v);
  }
  EXPECT_FALSE(ParseVariant("RSABSSA-SHA256").ok());
}

// The issuer's view (the blinded message) of one message differs on every run: blinding is
// randomized, and in the randomized variant even the signed input differs.
TEST_F(BlindRsaGenerated, BlindingHidesTheMessage) {
  const PublicKey& pk = key_->public_key();
  Bytes msg(32, 7);
  Bytes input1 = PrepareMessage(Variant::kSha384PssRandomized, msg);
  Bytes input2 = PrepareMessage(Variant::kSha384PssRandomized, msg);
  EXPECT_NE(input1, input2);
  auto b1 = Blind(pk, Variant::kSha384PssRandomized, input1);
  auto b2 = Blind(pk, Variant::kSha384PssRandomized, input1);
  ASSERT_TRUE(b1.ok() && b2.ok());
  EXPECT_NE(b1->blinded_msg, b2->blinded_msg);
  EXPECT_NE(b1->inv, b2->inv);
  // A signature on one blinding finalizes only with that blinding's inverse.
  auto s1 = BlindSign(*key_, b1->blinded_msg);
  ASSERT_TRUE(s1.ok());
  EXPECT_FALSE(Finalize(pk, Variant::kSha384PssRandomized, input1, *s1, b2->inv).ok());
  EXPECT_TRUE(Finalize(pk, Variant::kSha384PssRandomized, input1, *s1, b1->inv).ok());
}

// A signature from another issuer key does not verify (a "tagging" issuer is caught).
TEST_F(BlindRsaGenerated, OtherKeyIsRejected) {
  auto other = SecretKey::Generate(2048);
  ASSERT_TRUE(other.ok());
  Bytes input = PrepareMessage(Variant::kSha384PssRandomized, Bytes(5, 1));
  auto blinded = Blind(key_->public_key(), Variant::kSha384PssRandomized, input);
  ASSERT_TRUE(blinded.ok());
  auto wrong = BlindSign(*other, blinded->blinded_msg);
  // Either the blinded value is not even below the other key's modulus (refused: nothing to
  // finalize), or the signature it yields does not verify under this key.
  if (!wrong.ok()) return;
  auto finalized =
      Finalize(key_->public_key(), Variant::kSha384PssRandomized, input, *wrong, blinded->inv);
  EXPECT_FALSE(finalized.ok());
}

TEST_F(BlindRsaGenerated, PemRoundTrip) {
  auto pem = key_->ToPem();
  ASSERT_TRUE(pem.ok());
  EXPECT_NE(pem->find("BEGIN PRIVATE KEY"), std::string::npos);
  auto back = SecretKey::FromPem(*pem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->public_key().modulus(), key_->public_key().modulus());
  auto pub_pem = key_->public_key().ToPem();
  ASSERT_TRUE(pub_pem.ok());
  auto pub = PublicKey::FromPem(*pub_pem);
  ASSERT_TRUE(pub.ok()) << pub.status();
  EXPECT_EQ(pub->Fingerprint(), key_->public_key().Fingerprint());
  EXPECT_EQ(pub->Fingerprint().size(), 64u);
  EXPECT_FALSE(PublicKey::FromPem("not a key").ok());
  EXPECT_FALSE(SecretKey::FromPem(*pub_pem).ok());
}

TEST(BlindRsa, RejectsWeakKeys) {
  EXPECT_EQ(SecretKey::Generate(1024).status().code(), StatusCode::kInvalidArgument);
  // A 1024-bit modulus given as components is refused too.
  Bytes n(128, 0xab);
  n.back() |= 1;
  EXPECT_FALSE(PublicKey::FromComponents(n, Bytes{1, 0, 1}).ok());
  Bytes even = Hex(rfc9474::kN);
  even.back() &= 0xfe;
  EXPECT_FALSE(PublicKey::FromComponents(even, Bytes{1, 0, 1}).ok());
}

}  // namespace
}  // namespace tessera::reviews::blind
