#include "reviews/client/signed_review.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reviews/review/review.h"

namespace tessera::reviews::client {
namespace {

using ::testing::HasSubstr;

// A signed review of "cafe" over a ring of five; `ring_out` gets the ring, which the signed
// review does not carry (the relay and the ledger read it from state).
onchain::ReviewBatch SignedSample(const urs::KeyPair& me, urs::Ring* ring_out = nullptr) {
  std::vector<urs::Point> members = {me.public_key};
  for (int i = 0; i < 4; ++i) members.push_back(urs::GenerateKeyPair().public_key);
  urs::Ring ring = urs::Ring::Create(members).value();
  const onchain::ItemId item = onchain::ItemIdOf("cafe");
  Review r = SignReview(me, ring, onchain::ItemBytes(item), 7, 4, "fine").value();
  if (ring_out != nullptr) *ring_out = ring;
  return {item, 7, static_cast<uint16_t>(ring.size()), {{4, "fine", r.signature}}};
}

TEST(SignedReview, RoundTripsAndHoldsNoSecret) {
  const urs::KeyPair me = urs::GenerateKeyPair();
  urs::Ring ring;
  const onchain::ReviewBatch review = SignedSample(me, &ring);
  const std::string text = EncodeSignedReview(review);
  EXPECT_EQ(text.find(ToHex(me.secret)), std::string::npos);
  for (const urs::Point& m : ring.members()) {  // not even the ring's public keys
    EXPECT_EQ(text.find(ToHex(m)), std::string::npos);
  }
  auto back = DecodeSignedReview(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(onchain::EncodePayload(*back), onchain::EncodePayload(review));
  Review check{onchain::ItemBytes(back->item), back->epoch, back->reviews[0].rating,
               back->reviews[0].text, back->reviews[0].signature};
  EXPECT_TRUE(VerifyReview(ring, check).ok());
}

TEST(SignedReview, RefusesWhatIsNotOneSignedReview) {
  EXPECT_THAT(DecodeSignedReview("[]").status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(DecodeSignedReview(R"({"format": "x"})").status().message(), HasSubstr("format"));
  EXPECT_THAT(DecodeSignedReview(R"({"format": "tessera-review-key v2", "review_secret": "ab"})")
                  .status()
                  .message(),
              HasSubstr("never hand it to anyone"));
  EXPECT_THAT(DecodeSignedReview(R"({"format": "tessera-signed-review v1", "payload": "zz"})")
                  .status()
                  .message(),
              HasSubstr("'payload'"));
  const std::string create =
      ToHex(AsBytes(onchain::EncodePayload(onchain::CreateItem{"cafe", {}, {}})));
  EXPECT_THAT(
      DecodeSignedReview(R"({"format": "tessera-signed-review v1", "payload": ")" + create + "\"}")
          .status()
          .message(),
      HasSubstr("not a review"));
  onchain::ReviewBatch two = SignedSample(urs::GenerateKeyPair());
  two.reviews.push_back(two.reviews[0]);
  std::string text = EncodeSignedReview(two);
  EXPECT_THAT(DecodeSignedReview(text).status().message(), HasSubstr("expected one"));
  EXPECT_THAT(DecodeSignedReview(std::string(kMaxSignedReviewBytes + 1, ' ')).status().message(),
              HasSubstr("at most"));
}

}  // namespace
}  // namespace tessera::reviews::client
