#include "reviews/web/ledger_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>

namespace tessera::reviews::web {
namespace {

using ::testing::HasSubstr;

client::ItemSummary Item() {
  client::ItemSummary item;
  item.id = onchain::ItemIdOf("Cafe Central");
  item.name = "Cafe Central";
  item.first_review_epoch = 4;
  item.review_epoch = 4;
  item.tally.histogram = {0, 0, 1, 0, 2};  // a 3 and two 5s
  item.registered_keys = 100;
  metric::HijackResistance hijack;
  hijack.feasible = true;
  hijack.identities_with_drac = 57;
  hijack.identities_without_drac = 6;
  item.hijack = hijack;
  return item;
}

TEST(ReviewsWebLedgerViewTest, ItemIdsAreCanonicalHex) {
  const onchain::ItemId id = onchain::ItemIdOf("x");
  const std::string text = ItemIdToText(id);
  EXPECT_EQ(text.size(), 64u);
  auto back = ItemIdFromText(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, id);
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& bad : {std::string("cafe"), "0x" + text.substr(2), upper, text.substr(1),
                                 text + "0", std::string(64, 'g')}) {
    auto parsed = ItemIdFromText(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("64 lower-case hex digits"));
  }
}

TEST(ReviewsWebLedgerViewTest, SummaryCarriesTheProvedTallyAndTheMetric) {
  const ItemSummary s = ToItemSummary(Item(), {.height = 45, .current_epoch = 4}, Status::Ok());
  EXPECT_EQ(s.id, ItemIdToText(onchain::ItemIdOf("Cafe Central")));
  EXPECT_EQ(s.name, "Cafe Central");
  EXPECT_EQ(s.review_count, 3u);
  EXPECT_NEAR(s.mean_rating, 13.0 / 3, 1e-9);
  EXPECT_TRUE(s.hijack.known);
  EXPECT_TRUE(s.hijack.feasible);
  EXPECT_EQ(s.hijack.identities_with_drac, 57u);
  EXPECT_EQ(s.hijack.identities_without_drac, 6u);
  EXPECT_EQ(s.hijack.delta, 0.5);
  EXPECT_EQ(s.epoch, 4u);
  EXPECT_EQ(s.window, Window::kOpen);
  EXPECT_TRUE(s.verified);
  EXPECT_EQ(s.verification, "");
  EXPECT_EQ(s.histogram, (std::array<uint64_t, 5>{0, 0, 1, 0, 2}));
  EXPECT_EQ(s.height, 45u);
}

// Rolling windows (issue 16): upcoming before the first review epoch, then open in every epoch.
TEST(ReviewsWebLedgerViewTest, WindowOpensAtTheFirstReviewEpochAndStaysOpen) {
  EXPECT_EQ(ToItemSummary(Item(), {.current_epoch = 3}, Status::Ok()).window, Window::kUpcoming);
  EXPECT_EQ(ToItemSummary(Item(), {.current_epoch = 4}, Status::Ok()).window, Window::kOpen);
  EXPECT_EQ(ToItemSummary(Item(), {.current_epoch = 9}, Status::Ok()).window, Window::kOpen);
}

TEST(ReviewsWebLedgerViewTest, AFailedReplayIsShownAsNotVerified) {
  const ItemSummary s = ToItemSummary(
      Item(), {.current_epoch = 4}, DataLossError("the reviews replay to chain ab.., proved cd.."));
  EXPECT_FALSE(s.verified);
  EXPECT_EQ(s.verification, "DATA_LOSS: the reviews replay to chain ab.., proved cd..");
}

TEST(ReviewsWebLedgerViewTest, NoRegisteredKeysMeansHijackResistanceUnknown) {
  client::ItemSummary item = Item();
  item.registered_keys = 0;
  item.hijack.reset();
  const HijackView h =
      ToItemSummary(item, {.current_epoch = 4, .delta = 0.25}, Status::Ok()).hijack;
  EXPECT_FALSE(h.known);
  EXPECT_EQ(h.delta, 0.25);
}

TEST(ReviewsWebLedgerViewTest, ReviewsKeepTheirTextAndTag) {
  client::ItemView view;
  view.summary = Item();
  client::PostedReview review;
  review.height = 42;
  review.item = view.summary.id;
  review.epoch = 4;
  review.entry.rating = 5;
  review.entry.text = "<b>great</b>";
  review.entry.signature.tag.fill(0xab);
  view.reviews = {review};
  view.verified = Status::Ok();
  const ItemDetail detail = ToItemDetail(view, {.current_epoch = 4});
  ASSERT_EQ(detail.reviews.size(), 1u);
  EXPECT_EQ(detail.reviews[0].rating, 5);
  EXPECT_EQ(detail.reviews[0].text, "<b>great</b>");  // escaping is the page's job
  std::string ab;
  for (int i = 0; i < 32; ++i) ab += "ab";
  EXPECT_EQ(detail.reviews[0].tag_hex, ab);
  EXPECT_EQ(detail.reviews[0].height, 42u);
  EXPECT_TRUE(detail.summary.verified);
}

}  // namespace
}  // namespace tessera::reviews::web
