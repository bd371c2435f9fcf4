#include "reviews/net/item_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reviews/review/review.h"

namespace tessera::reviews::net {
namespace {

using ::testing::HasSubstr;

client::ItemView SampleView() {
  std::vector<urs::KeyPair> keys = {urs::GenerateKeyPair(), urs::GenerateKeyPair()};
  const urs::Ring ring = *urs::Ring::Create({keys[0].public_key, keys[1].public_key});
  client::ItemView v;
  v.summary.id = onchain::ItemIdOf("tea");
  v.summary.name = "tea";
  v.summary.review_epoch = 3;
  for (int i = 0; i < 2; ++i) {
    auto r = SignReview(keys[i], ring, onchain::ItemBytes(v.summary.id), 3, 4 + i,
                        "t" + std::to_string(i));
    v.reviews.push_back({40u + i, v.summary.id, 3, 2, {4 + i, r->text, r->signature}});
    v.summary.tally.histogram[3 + i] += 1;
  }
  v.chain = client::Replay(v.reviews).chain;
  return v;
}

TEST(ItemJson, ShowOutputReadsBackToTheSameReviews) {
  client::ItemView v = SampleView();
  std::string text = ItemToJson(v, 50).dump();
  auto back = ReviewsFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->item, v.summary.id);
  ASSERT_EQ(back->reviews.size(), 2u);
  // The same record hashes, hence the same tally and chain as the original list.
  client::ItemAudit a = client::Replay(back->reviews), b = client::Replay(v.reviews);
  EXPECT_EQ(a.chain, b.chain);
  EXPECT_EQ(a.tally, b.tally);
  EXPECT_TRUE(client::CheckAgainstState(a, v.summary.tally, v.chain).ok());
}

TEST(ItemJson, MalformedCopiesGetClearErrors) {
  nlohmann::json j = ItemToJson(SampleView(), 50);
  auto error = [](const nlohmann::json& doc) {
    return ReviewsFromJson(doc.dump()).status().message();
  };
  EXPECT_THAT(ReviewsFromJson("{").status().message(), HasSubstr("not a JSON object"));
  nlohmann::json bad = j;
  bad["item"].erase("id");
  EXPECT_THAT(error(bad), HasSubstr("'item.id' is missing"));
  bad = j;
  bad["reviews"][1]["ring_size"] = "zz";
  EXPECT_THAT(error(bad), HasSubstr("review 1: 'ring_size' missing"));
  bad = j;
  bad["reviews"][0]["signature"] = "00";
  EXPECT_THAT(error(bad), HasSubstr("review 0: "));
  bad = j;
  bad["reviews"][0].erase("rating");
  EXPECT_THAT(error(bad), HasSubstr("review 0: 'rating' missing"));
}

}  // namespace
}  // namespace tessera::reviews::net
