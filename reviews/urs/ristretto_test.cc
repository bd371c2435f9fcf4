#include "reviews/urs/ristretto.h"

#include <gtest/gtest.h>

namespace tessera::reviews::urs {
namespace {

TEST(Ristretto, KeyPairIsSecretTimesBase) {
  KeyPair kp = GenerateKeyPair();
  auto again = KeyPairFromSecret(kp.secret);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->public_key, kp.public_key);
  EXPECT_TRUE(ValidatePoint(kp.public_key, "key").ok());
  EXPECT_FALSE(KeyPairFromSecret(Scalar{}).ok());
}

TEST(Ristretto, ScalarCanonicity) {
  Scalar l = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
              0xa2, 0xde, 0xf9, 0xde, 0x14, 0,    0,    0,    0,    0,    0,
              0,    0,    0,    0,    0,    0,    0,    0,    0,    0x10};
  EXPECT_FALSE(IsCanonicalScalar(l));
  Scalar below = l;
  below[0] -= 1;
  EXPECT_TRUE(IsCanonicalScalar(below));
  Scalar above = l;
  above[0] += 1;
  EXPECT_FALSE(IsCanonicalScalar(above));
  Scalar max{};
  max.fill(0xff);
  EXPECT_FALSE(IsCanonicalScalar(max));
  EXPECT_TRUE(IsCanonicalScalar(Scalar{}));
  EXPECT_TRUE(IsZero(Scalar{}));
}

TEST(Ristretto, PointValidation) {
  Point identity{};
  auto st = ValidatePoint(identity, "tag");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("identity"), std::string::npos);
  Point junk;
  junk.fill(0xff);
  st = ValidatePoint(junk, "ring member 2");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ring member 2"), std::string::npos);
}

TEST(Ristretto, HashesAreDomainSeparatedAndUnambiguous) {
  const Bytes ab = {'a', 'b'}, c = {'c'}, a = {'a'}, bc = {'b', 'c'};
  EXPECT_NE(HashToPoint("d", {ab, c}), HashToPoint("d", {a, bc}));
  EXPECT_NE(HashToPoint("d1", {ab}), HashToPoint("d2", {ab}));
  EXPECT_EQ(HashToPoint("d", {ab}), HashToPoint("d", {ab}));
  EXPECT_TRUE(ValidatePoint(HashToPoint("d", {ab}), "h").ok());
  EXPECT_TRUE(IsCanonicalScalar(HashToScalar("d", {ab})));
}

}  // namespace
}  // namespace tessera::reviews::urs
