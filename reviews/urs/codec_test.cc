#include "reviews/urs/codec.h"

#include <gtest/gtest.h>

namespace tessera::reviews::urs {
namespace {

Bytes B(std::string_view s) { return Bytes(s.begin(), s.end()); }

class Codec : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<Point> pks;
    for (int i = 0; i < 4; ++i) {
      keys_.push_back(GenerateKeyPair());
      pks.push_back(keys_.back().public_key);
    }
    ring_ = *Ring::Create(pks);
    sig_ = *Sign(keys_[1], ring_, B("scope"), B("msg"));
  }
  std::string DecodeError(const Bytes& bytes) {
    auto r = DecodeSignature(bytes);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  }
  std::vector<KeyPair> keys_;
  Ring ring_;
  Signature sig_;
};

TEST_F(Codec, SignatureRoundTrip) {
  Bytes enc = EncodeSignature(sig_);
  EXPECT_EQ(enc.size(), SignatureSize(4));
  EXPECT_EQ(enc.size(), 3u + 192 + 128);
  auto dec = DecodeSignature(enc);
  ASSERT_TRUE(dec.ok()) << dec.status();
  EXPECT_EQ(dec->tag, sig_.tag);
  EXPECT_EQ(dec->commitment, sig_.commitment);
  EXPECT_EQ(dec->link_challenge, sig_.link_challenge);
  EXPECT_EQ(dec->link_x, sig_.link_x);
  EXPECT_EQ(dec->link_r, sig_.link_r);
  EXPECT_EQ(dec->c0, sig_.c0);
  EXPECT_EQ(dec->s, sig_.s);
  EXPECT_TRUE(Verify(ring_, B("scope"), B("msg"), *dec).ok());
  EXPECT_EQ(EncodeSignature(*dec), enc);
}

TEST_F(Codec, RingRoundTrip) {
  Bytes enc = EncodeRing(ring_);
  auto dec = DecodeRing(enc);
  ASSERT_TRUE(dec.ok()) << dec.status();
  EXPECT_EQ(dec->members(), ring_.members());
  EXPECT_EQ(dec->digest(), ring_.digest());
}

// Test required by the issue: malformed encodings get clear errors.
TEST_F(Codec, MalformedSignaturesGetClearErrors) {
  Bytes enc = EncodeSignature(sig_);
  EXPECT_NE(DecodeError({}).find("shorter than the 3-byte header"), std::string::npos);
  Bytes v = enc;
  v[0] = 1;  // version 1 (LSAG, keys on G) is refused
  EXPECT_NE(DecodeError(v).find("unknown version 1"), std::string::npos);
  Bytes zero_n = enc;
  zero_n[1] = zero_n[2] = 0;
  EXPECT_NE(DecodeError(zero_n).find("ring size 0"), std::string::npos);
  Bytes huge_n = enc;
  huge_n[1] = huge_n[2] = 0xff;
  EXPECT_NE(DecodeError(huge_n).find("ring size 65535"), std::string::npos);
  Bytes truncated(enc.begin(), enc.end() - 1);
  EXPECT_NE(DecodeError(truncated).find("got 322"), std::string::npos);
  Bytes trailing = enc;
  trailing.push_back(0);
  EXPECT_NE(DecodeError(trailing).find("got 324"), std::string::npos);
  Bytes bad_tag = enc;
  std::fill(bad_tag.begin() + 3, bad_tag.begin() + 35, 0xff);
  EXPECT_NE(DecodeError(bad_tag).find("tag at offset 3"), std::string::npos);
  Bytes identity_tag = enc;
  std::fill(identity_tag.begin() + 3, identity_tag.begin() + 35, 0);
  EXPECT_NE(DecodeError(identity_tag).find("identity"), std::string::npos);
  Bytes bad_commitment = enc;
  std::fill(bad_commitment.begin() + 35, bad_commitment.begin() + 67, 0xff);
  EXPECT_NE(DecodeError(bad_commitment).find("commitment at offset 35"), std::string::npos);
  Bytes big_e = enc;
  std::fill(big_e.begin() + 67, big_e.begin() + 99, 0xff);
  EXPECT_NE(DecodeError(big_e).find("link challenge at offset 67"), std::string::npos);
  Bytes zero_zx = enc;
  std::fill(zero_zx.begin() + 99, zero_zx.begin() + 131, 0);
  EXPECT_NE(DecodeError(zero_zx).find("z_x at offset 99"), std::string::npos);
  Bytes zero_zr = enc;
  std::fill(zero_zr.begin() + 131, zero_zr.begin() + 163, 0);
  EXPECT_NE(DecodeError(zero_zr).find("z_r at offset 131"), std::string::npos);
  Bytes big_c = enc;
  std::fill(big_c.begin() + 163, big_c.begin() + 195, 0xff);
  EXPECT_NE(DecodeError(big_c).find("challenge at offset 163"), std::string::npos);
  Bytes zero_s = enc;
  std::fill(zero_s.begin() + 195 + 64, zero_s.begin() + 195 + 96, 0);
  EXPECT_NE(DecodeError(zero_s).find("response 2 at offset 259"), std::string::npos);
}

TEST_F(Codec, MalformedRingsGetClearErrors) {
  Bytes enc = EncodeRing(ring_);
  auto err = [](const Bytes& b) {
    auto r = DecodeRing(b);
    EXPECT_FALSE(r.ok());
    return r.status().message();
  };
  Bytes swapped = enc;
  std::swap_ranges(swapped.begin() + 3, swapped.begin() + 35, swapped.begin() + 35);
  EXPECT_NE(err(swapped).find("must be sorted and distinct"), std::string::npos);
  Bytes dup = enc;
  std::copy(dup.begin() + 3, dup.begin() + 35, dup.begin() + 35);
  EXPECT_NE(err(dup).find("must be sorted and distinct"), std::string::npos);
  Bytes bad = enc;
  std::fill(bad.begin() + 67, bad.begin() + 99, 0xff);
  EXPECT_NE(err(bad).find("member 2 at offset 67"), std::string::npos);
  Bytes cut(enc.begin(), enc.end() - 5);
  EXPECT_NE(err(cut).find("got 126"), std::string::npos);
}

}  // namespace
}  // namespace tessera::reviews::urs
