#include "reviews/web/api.h"

#include <gtest/gtest.h>

namespace tessera::reviews::web {
namespace {

TEST(ReviewsWebApiTest, ItemWithReviews) {
  ItemDetail item;
  item.summary = {.id = "cafe",
                  .name = "Cafe",
                  .review_count = 2,
                  .mean_rating = 4.5,
                  .histogram = {0, 0, 0, 1, 1},
                  .hijack = {.known = true,
                             .feasible = true,
                             .delta = 0.5,
                             .identities_with_drac = 30,
                             .identities_without_drac = 3},
                  .epoch = 2,
                  .window = Window::kOpen,
                  .verified = true,
                  .verification = ""};
  item.reviews = {{.rating = 4, .text = "<b>", .tag_hex = "aa", .height = 5},
                  {.rating = 5, .text = "", .tag_hex = "bb", .height = 6}};
  const nlohmann::json j = ItemDetailToJson(item);
  EXPECT_EQ(j["id"], "cafe");
  EXPECT_EQ(j["mean_rating"], 4.5);
  EXPECT_EQ(j["review_count"], 2);
  EXPECT_EQ(j["histogram"], nlohmann::json::parse("[0, 0, 0, 1, 1]"));
  EXPECT_EQ(j["hijack_resistance"]["identities_with_drac"], 30);
  EXPECT_EQ(j["hijack_resistance"]["identities_without_drac"], 3);
  EXPECT_EQ(j["window"], "open");
  EXPECT_EQ(j["verified"], true);
  EXPECT_FALSE(j.contains("verification"));
  ASSERT_EQ(j["reviews"].size(), 2u);
  EXPECT_EQ(j["reviews"][0]["text"], "<b>");  // JSON carries the text as written
  EXPECT_EQ(j["reviews"][1]["tag"], "bb");
  EXPECT_EQ(j["reviews"][1]["height"], 6);
}

TEST(ReviewsWebApiTest, NoReviewsMeansNoMeanAndUnknownHijackHasNoNumbers) {
  ItemSummary item;
  item.id = "x";
  item.name = "x";
  item.verification = "no proof yet";
  const nlohmann::json j = ItemsToJson({item});
  ASSERT_EQ(j["items"].size(), 1u);
  EXPECT_TRUE(j["items"][0]["mean_rating"].is_null());
  EXPECT_EQ(j["items"][0]["hijack_resistance"], nlohmann::json({{"known", false}}));
  EXPECT_EQ(j["items"][0]["verified"], false);
  EXPECT_EQ(j["items"][0]["verification"], "no proof yet");
}

TEST(ReviewsWebApiTest, Errors) {
  EXPECT_EQ(ErrorToJson(NotFoundError("no item 'x'")),
            nlohmann::json::parse(R"({"error": {"code": "NOT_FOUND", "message": "no item 'x'"}})"));
}

}  // namespace
}  // namespace tessera::reviews::web
