#include "reviews/tally/item_tally.h"

#include <gtest/gtest.h>

namespace tessera::reviews {
namespace {

struct RingSetup {
  std::vector<urs::KeyPair> keys;
  urs::Ring ring;
};

RingSetup Make(size_t n) {
  RingSetup s;
  std::vector<urs::Point> pks;
  for (size_t i = 0; i < n; ++i) {
    s.keys.push_back(urs::GenerateKeyPair());
    pks.push_back(s.keys.back().public_key);
  }
  s.ring = *urs::Ring::Create(pks);
  return s;
}

// Required by the issue: a second review of one item by one key is rejected.
TEST(ItemTally, SecondReviewByOneKeyIsRejected) {
  RingSetup s = Make(5);
  ItemTally tally("tea-house", 2, s.ring);
  ASSERT_TRUE(tally.Add(*SignReview(s.keys[0], s.ring, "tea-house", 2, 5, "lovely")).ok());
  ASSERT_TRUE(tally.Add(*SignReview(s.keys[1], s.ring, "tea-house", 2, 3, "ok")).ok());
  Status again = tally.Add(*SignReview(s.keys[0], s.ring, "tea-house", 2, 1, "bad"));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(tally.count(), 2u);
  EXPECT_DOUBLE_EQ(tally.mean(), 4.0);
  EXPECT_EQ(tally.histogram()[4], 1u);
  EXPECT_EQ(tally.histogram()[2], 1u);
}

// Required by the issue: an ineligible key's review and a tampered review are rejected.
TEST(ItemTally, IneligibleAndTamperedReviewsAreRejected) {
  RingSetup s = Make(4);
  RingSetup others = Make(2);
  ItemTally tally("tea-house", 2, s.ring);
  // A review signed over another ring (the outsider's own) does not verify over this one.
  auto outsider = SignReview(others.keys[0], others.ring, "tea-house", 2, 1, "spam");
  ASSERT_TRUE(outsider.ok());
  EXPECT_EQ(tally.Add(*outsider).code(), StatusCode::kPermissionDenied);
  Review tampered = *SignReview(s.keys[2], s.ring, "tea-house", 2, 2, "meh");
  tampered.rating = 5;
  EXPECT_EQ(tally.Add(tampered).code(), StatusCode::kPermissionDenied);
  // The failed attempt did not consume the key's tag: its honest review still counts.
  tampered.rating = 2;
  EXPECT_TRUE(tally.Add(tampered).ok());
  auto other_item = SignReview(s.keys[3], s.ring, "coffee-bar", 2, 4, "");
  EXPECT_EQ(tally.Add(*other_item).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(tally.count(), 1u);
}

// A tampered tally (any field changed) has another digest.
TEST(ItemTally, DigestCommitsToTheTally) {
  RingSetup s = Make(3);
  ItemTally a("x", 1, s.ring), b("x", 1, s.ring);
  Review r = *SignReview(s.keys[0], s.ring, "x", 1, 4, "");
  ASSERT_TRUE(a.Add(r).ok());
  ASSERT_TRUE(b.Add(r).ok());
  EXPECT_EQ(a.Digest(), b.Digest());
  ASSERT_TRUE(b.Add(*SignReview(s.keys[1], s.ring, "x", 1, 4, "")).ok());
  EXPECT_NE(a.Digest(), b.Digest());
  ItemTally c("x", 2, s.ring);
  ItemTally d("x", 1, s.ring);
  EXPECT_NE(c.Digest(), d.Digest());
}

TEST(ItemTally, HijackResistanceFromLiveParameters) {
  RingSetup s = Make(3);
  ItemTally tally("x", 1, s.ring);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(tally.Add(*SignReview(s.keys[i], s.ring, "x", 1, 4, "")).ok());
  }
  auto hr = tally.HijackResistance(1000, 3);
  ASSERT_TRUE(hr.ok()) << hr.status();
  // Mean 4 over 3 reviews, delta 0.5 toward 1: t = ceil(1.5 / 2.5) = 1.
  EXPECT_EQ(hr->reviews_needed, 1u);
  EXPECT_GT(hr->identities_with_drac, 100u);  // ~ N/k * ln 2 for t = 1
}

}  // namespace
}  // namespace tessera::reviews
