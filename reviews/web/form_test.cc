#include "reviews/web/form.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reviews/review/review.h"

namespace tessera::reviews::web {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSigned = R"({"format": "tessera-signed-review v1", "payload": "05ab"})";

TEST(ReviewsWebFormTest, ParsesAnUploadedSignedReview) {
  auto form = ParseReviewForm({{"signed_review", kSigned}, {"submit", "x"}});
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(form->signed_review, kSigned);
}

TEST(ReviewsWebFormTest, ParsesAPastedSignedReviewWhenTheUploadIsEmpty) {
  // A browser sends an empty file part when no file was chosen.
  auto form = ParseReviewForm({{"signed_review", ""}, {"signed_json", kSigned}});
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(form->signed_review, kSigned);
}

TEST(ReviewsWebFormTest, NeedsExactlyOneSignedReview) {
  EXPECT_THAT(
      ParseReviewForm({{"signed_review", kSigned}, {"signed_json", kSigned}}).status().message(),
      HasSubstr("not both"));
  EXPECT_THAT(ParseReviewForm({}).status().message(), HasSubstr("upload the file"));
  EXPECT_THAT(
      ParseReviewForm({{"signed_review", " \r\n\t"}, {"signed_json", "\n"}}).status().message(),
      HasSubstr("upload the file"));
}

// The page never takes a key: a key field, even beside a valid signed review, is refused.
TEST(ReviewsWebFormTest, RefusesReviewKeys) {
  for (const char* field : {"key_file", "key_json"}) {
    auto form = ParseReviewForm({{"signed_review", kSigned}, {field, "{\"review_secret\": 1}"}});
    ASSERT_FALSE(form.ok()) << field;
    EXPECT_EQ(form.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(form.status().message(), HasSubstr("does not take review keys"));
  }
}

TEST(ReviewsWebFormTest, RejectsASignedReviewTooLargeToBeOne) {
  std::string big(kMaxSignedReviewBytes, 'x');
  EXPECT_TRUE(ParseReviewForm({{"signed_json", big}}).ok());
  big += 'x';
  auto form = ParseReviewForm({{"signed_json", big}});
  ASSERT_FALSE(form.ok());
  EXPECT_THAT(form.status().message(), HasSubstr("too large"));
}

TEST(ReviewsWebFormTest, ValidatesUtf8Strictly) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9F\x98\x80"));  // é ✓ 😀
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));                            // U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));                                       // lone continuation
  EXPECT_FALSE(IsValidUtf8("\xC3"));                                       // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));                                   // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));                               // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));                               // surrogate D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));                           // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xE2\x9C"));  // truncated at the end
  EXPECT_FALSE(IsValidUtf8("\xE2\x28\xA1"));
}

TEST(ReviewsWebFormTest, ChecksItemIds) {
  EXPECT_TRUE(CheckItemId("cafe").ok());
  EXPECT_TRUE(CheckItemId("shops/caf\xC3\xA9 #1?").ok());  // any printable UTF-8
  EXPECT_TRUE(CheckItemId(std::string(kMaxItemLength, 'a')).ok());
  EXPECT_EQ(CheckItemId("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckItemId(std::string(kMaxItemLength + 1, 'a')).code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(CheckItemId("a\nb").message(), HasSubstr("control"));
  EXPECT_THAT(CheckItemId(std::string("a\0b", 3)).message(), HasSubstr("control"));
  EXPECT_THAT(CheckItemId("\xC3").message(), HasSubstr("UTF-8"));
}

}  // namespace
}  // namespace tessera::reviews::web
