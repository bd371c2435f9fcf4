#include "reviews/review/review.h"

#include <gtest/gtest.h>

#include "reviews/drac/eligibility.h"

namespace tessera::reviews {
namespace {

// The whole flow without files: issue credentials blindly, register, draw a DRAC ring, review.
class ReviewFlow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    issuer_ = new blind::SecretKey(*blind::SecretKey::Generate(2048));
  }
  static void TearDownTestSuite() { delete issuer_; }

  Credential Issue(const urs::KeyPair& key, uint64_t epoch) {
    const blind::PublicKey& pk = issuer_->public_key();
    Bytes input =
        blind::PrepareMessage(kCredentialVariant, CredentialMessage(key.public_key, epoch));
    auto blinded = *blind::Blind(pk, kCredentialVariant, input);
    auto blind_sig = *blind::BlindSign(*issuer_, blinded.blinded_msg);
    Credential c;
    c.review_key = key.public_key;
    c.epoch = epoch;
    c.msg_prefix.assign(input.begin(), input.begin() + blind::kMessagePrefixLength);
    c.signature = *blind::Finalize(pk, kCredentialVariant, input, blind_sig, blinded.inv);
    return c;
  }
  static blind::SecretKey* issuer_;
};
blind::SecretKey* ReviewFlow::issuer_ = nullptr;

TEST_F(ReviewFlow, IssueRegisterDrawSignVerify) {
  std::vector<urs::KeyPair> keys;
  std::vector<Credential> creds;
  for (int i = 0; i < 40; ++i) {
    keys.push_back(urs::GenerateKeyPair());
    creds.push_back(Issue(keys.back(), 7));
  }
  auto registered = RegisteredKeys(issuer_->public_key(), 7, creds);
  ASSERT_TRUE(registered.ok()) << registered.status();
  drac::Seed seed{};
  seed[0] = 42;
  auto ring = drac::EligibleRing(*registered, "cafe-du-coin", 7, seed, 10);
  ASSERT_TRUE(ring.ok()) << ring.status();
  // Find an eligible and an ineligible key.
  const urs::KeyPair* in = nullptr;
  const urs::KeyPair* out = nullptr;
  for (const auto& k : keys) (ring->IndexOf(k.public_key) ? in : out) = &k;
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  auto review = SignReview(*in, *ring, "cafe-du-coin", 7, 4, "good coffee");
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_TRUE(VerifyReview(*ring, *review).ok());
  // An ineligible key's review is rejected.
  EXPECT_EQ(SignReview(*out, *ring, "cafe-du-coin", 7, 4, "x").status().code(),
            StatusCode::kPermissionDenied);
  // A tampered review fails: rating, text, item, epoch.
  for (int field = 0; field < 4; ++field) {
    Review bad = *review;
    if (field == 0) bad.rating = 5;
    if (field == 1) bad.text += "!";
    if (field == 2) bad.item = "cafe-du-coin-2";
    if (field == 3) bad.epoch = 8;
    EXPECT_FALSE(VerifyReview(*ring, bad).ok()) << field;
  }
  // A second review of the item by the same key is a double review.
  auto again = SignReview(*in, *ring, "cafe-du-coin", 7, 1, "changed my mind");
  ASSERT_TRUE(again.ok());
  auto dups = FindDoubleReviews({*review, *again});
  ASSERT_EQ(dups.size(), 1u);
  EXPECT_EQ(dups[0], std::make_pair(size_t{0}, size_t{1}));
}

TEST_F(ReviewFlow, CredentialChecks) {
  urs::KeyPair k = urs::GenerateKeyPair();
  Credential c = Issue(k, 3);
  EXPECT_TRUE(VerifyCredential(issuer_->public_key(), c).ok());
  Credential other_key = c;
  other_key.review_key = urs::GenerateKeyPair().public_key;
  EXPECT_FALSE(VerifyCredential(issuer_->public_key(), other_key).ok());
  Credential other_epoch = c;
  other_epoch.epoch = 4;
  EXPECT_FALSE(VerifyCredential(issuer_->public_key(), other_epoch).ok());
  EXPECT_FALSE(RegisteredKeys(issuer_->public_key(), 4, {c}).ok());
  auto twice = RegisteredKeys(issuer_->public_key(), 3, {c, c});
  EXPECT_EQ(twice.status().code(), StatusCode::kAlreadyExists);
}

TEST(Review, FieldValidation) {
  urs::KeyPair k = urs::GenerateKeyPair();
  auto ring = *urs::Ring::Create({k.public_key});
  EXPECT_FALSE(SignReview(k, ring, "", 0, 3, "").ok());
  EXPECT_FALSE(SignReview(k, ring, "i", 0, 0, "").ok());
  EXPECT_FALSE(SignReview(k, ring, "i", 0, 6, "").ok());
  EXPECT_FALSE(SignReview(k, ring, "i", 0, 3, std::string(kMaxTextLength + 1, 'x')).ok());
  EXPECT_TRUE(SignReview(k, ring, "i", 0, 3, "").ok());
  // Messages are unambiguous: moving bytes between item and text changes them.
  EXPECT_NE(ReviewMessage("ab", 1, 3, "c"), ReviewMessage("a", 1, 3, "bc"));
  EXPECT_NE(ReviewScope("a", 1), ReviewScope("a", 2));
}

}  // namespace
}  // namespace tessera::reviews
