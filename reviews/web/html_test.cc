#include "reviews/web/html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::reviews::web {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kAttack = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>&amp;";

ItemSummary Summary(std::string id, std::string name) {
  ItemSummary item;
  item.id = std::move(id);
  item.name = std::move(name);
  item.review_count = 3;
  item.mean_rating = 4.333;
  item.hijack = {.known = true,
                 .feasible = true,
                 .delta = 0.5,
                 .identities_with_drac = 40,
                 .identities_without_drac = 4};
  item.epoch = 7;
  item.window = Window::kOpen;
  item.verified = true;
  return item;
}

// Any markup that would run or load something: the pages have none of their own, so finding
// one means attacker text got through.
void ExpectNoActiveContent(const std::string& page) {
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
}

TEST(ReviewsWebHtmlTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeHtml("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
  EXPECT_EQ(EscapeHtml("&amp;"), "&amp;amp;");  // escaped again, never passed through
  EXPECT_EQ(EscapeHtml("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(ReviewsWebHtmlTest, EncodesAnItemIdAsOnePathSegment) {
  EXPECT_EQ(EncodePathSegment("cafe-1_a.b~"), "cafe-1_a.b~");
  EXPECT_EQ(EncodePathSegment("a b/c?d#e%\"<"), "a%20b%2Fc%3Fd%23e%25%22%3C");
  EXPECT_EQ(EncodePathSegment("\xC3\xA9"), "%C3%A9");
}

TEST(ReviewsWebHtmlTest, FormatsRatingsAndHijackResistance) {
  ItemSummary item = Summary("a", "A");
  EXPECT_EQ(FormatRating(item), "4.3");
  item.review_count = 0;
  EXPECT_EQ(FormatRating(item), "-");

  HijackView hijack = item.hijack;
  EXPECT_EQ(DescribeHijack(hijack), "40 identities to shift the rating by 0.5 (4 without DRAC)");
  hijack.identities_with_drac = 1;
  EXPECT_EQ(DescribeHijack(hijack), "1 identity to shift the rating by 0.5 (4 without DRAC)");
  hijack.feasible = false;
  EXPECT_THAT(DescribeHijack(hijack), HasSubstr("no attack"));
  hijack.known = false;
  EXPECT_EQ(DescribeHijack(hijack), "not known yet");
}

TEST(ReviewsWebHtmlTest, ItemsPageShowsEachItemsNumbers) {
  ItemSummary unverified = Summary("b", "Bakery");
  unverified.review_count = 0;
  unverified.window = Window::kClosed;
  unverified.verified = false;
  unverified.verification = "proof does not match the state root";
  const std::string page = RenderItemsPage({Summary("cafe 1", "Cafe"), unverified});
  EXPECT_THAT(page, HasSubstr("<a href=\"/item/cafe%201\">Cafe</a>"));
  EXPECT_THAT(page, HasSubstr("4.3"));
  EXPECT_THAT(page, HasSubstr("40 identities to shift the rating by 0.5"));
  EXPECT_THAT(page, HasSubstr("epoch 7, open"));
  EXPECT_THAT(page, HasSubstr("epoch 7, closed"));
  EXPECT_THAT(page, HasSubstr("\u2713 verified"));
  EXPECT_THAT(page, HasSubstr("not verified"));
  EXPECT_THAT(page, HasSubstr("proof does not match the state root"));
  ExpectNoActiveContent(page);
}

TEST(ReviewsWebHtmlTest, ItemsPageShortensLongIds) {
  const std::string id(64, 'a');
  const std::string page = RenderItemsPage({Summary(id, "Long")});
  EXPECT_THAT(page, HasSubstr("href=\"/item/" + id + "\""));
  EXPECT_THAT(page, HasSubstr(">" + std::string(16, 'a') + "\u2026<"));
  // Cut at a character boundary: the 16th byte is inside a two-byte character.
  const std::string utf8 = std::string(15, 'x') + "\xC3\xA9" + std::string(10, 'y');
  EXPECT_THAT(RenderItemsPage({Summary(utf8, "U")}),
              HasSubstr(">" + std::string(15, 'x') + "\u2026<"));
}

TEST(ReviewsWebHtmlTest, ItemsPageSaysWhenThereAreNone) {
  EXPECT_THAT(RenderItemsPage({}), HasSubstr("No items yet."));
}

TEST(ReviewsWebHtmlTest, EscapesAttackerTextEverywhere) {
  ItemSummary item = Summary(kAttack, kAttack);
  item.verified = false;
  item.verification = kAttack;
  ItemDetail detail{item, {{.rating = 2, .text = kAttack, .tag_hex = kAttack, .height = 9}}};
  for (const std::string& page :
       {RenderItemsPage({item}), RenderItemPage(detail), RenderPostedPage(kAttack, kAttack),
        RenderErrorPage(404, kAttack, kAttack)}) {
    ExpectNoActiveContent(page);
    EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    EXPECT_THAT(page, Not(HasSubstr("onerror=alert(1)>")));  // no attribute breakout
  }
}

TEST(ReviewsWebHtmlTest, ItemPageShowsReviewsAndTheFormWhileTheWindowIsOpen) {
  ItemDetail detail{Summary("cafe", "Cafe"),
                    {{.rating = 5, .text = "Great\nespresso", .tag_hex = "ab12", .height = 11},
                     {.rating = 3, .text = "ok", .tag_hex = "cd34", .height = 12}}};
  detail.summary.histogram = {0, 0, 1, 0, 2};
  detail.summary.height = 31;
  std::string page = RenderItemPage(detail);
  EXPECT_THAT(page, HasSubstr("<p>Great\nespresso</p>"));
  EXPECT_THAT(page, HasSubstr("<td>5 \u2605</td><td><meter min=\"0\" max=\"3\" value=\"2\">"));
  EXPECT_THAT(page, HasSubstr("<td>4 \u2605</td><td><meter min=\"0\" max=\"3\" value=\"0\">"));
  EXPECT_THAT(page, HasSubstr("verified</span> <span class=\"muted\">at height 31"));
  EXPECT_THAT(page, HasSubstr("height 11"));
  EXPECT_THAT(page, HasSubstr("<code>cd34</code>"));
  EXPECT_THAT(page, HasSubstr("action=\"/item/cafe/review\""));
  EXPECT_THAT(page, HasSubstr("enctype=\"multipart/form-data\""));
  EXPECT_THAT(page, HasSubstr("name=\"signed_review\" type=\"file\""));
  EXPECT_THAT(page, HasSubstr("name=\"signed_json\""));
  EXPECT_THAT(page, HasSubstr("sign-review --key YOUR.key.json --item-id cafe"));
  EXPECT_THAT(page, Not(HasSubstr("key_file")));
  ExpectNoActiveContent(page);

  detail.summary.window = Window::kClosed;
  detail.reviews.clear();
  page = RenderItemPage(detail);
  EXPECT_THAT(page, Not(HasSubstr("<form")));
  EXPECT_THAT(page, HasSubstr("review window of epoch 7 is closed"));
  EXPECT_THAT(page, HasSubstr("No reviews yet."));

  detail.summary.window = Window::kUpcoming;
  page = RenderItemPage(detail);
  EXPECT_THAT(page, Not(HasSubstr("<form")));
  EXPECT_THAT(page, HasSubstr("Reviews open in epoch 7."));
  EXPECT_THAT(page, HasSubstr("epoch 7, upcoming"));
}

TEST(ReviewsWebHtmlTest, ErrorPageNamesTheStatusAndLinksBack) {
  const std::string page = RenderErrorPage(409, "this key already reviewed the item", "a/b");
  EXPECT_THAT(page, HasSubstr("<title>409 Conflict</title>"));
  EXPECT_THAT(page, HasSubstr("this key already reviewed the item"));
  EXPECT_THAT(page, HasSubstr("href=\"/item/a%2Fb\""));
  EXPECT_THAT(RenderErrorPage(404, "x"), Not(HasSubstr("Back to the item")));
}

}  // namespace
}  // namespace tessera::reviews::web
