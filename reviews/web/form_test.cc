#include "reviews/web/form.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reviews/review/review.h"

namespace tessera::reviews::web {
namespace {

using ::testing::HasSubstr;

constexpr size_t kMaxText = 1000;
constexpr const char* kKey = R"({"epoch": 1, "public": "ab", "secret": "cd"})";

FormFields ValidFields() { return {{"rating", "4"}, {"text", "Good coffee"}, {"key_file", kKey}}; }

TEST(ReviewsWebFormTest, ParsesAnUploadedKeyFile) {
  auto form = ParseReviewForm(ValidFields(), kMaxText);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(form->rating, 4);
  EXPECT_EQ(form->text, "Good coffee");
  EXPECT_EQ(form->key_file, kKey);
}

TEST(ReviewsWebFormTest, ParsesAPastedKeyFileWhenTheUploadIsEmpty) {
  // A browser sends an empty file part when no file was chosen.
  FormFields fields = {{"rating", "1"}, {"key_file", ""}, {"key_json", kKey}, {"submit", "x"}};
  auto form = ParseReviewForm(fields, kMaxText);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(form->rating, 1);
  EXPECT_EQ(form->text, "");
  EXPECT_EQ(form->key_file, kKey);
}

TEST(ReviewsWebFormTest, RejectsRatingsOutsideOneToFive) {
  for (const char* rating : {"", "0", "6", "3.5", " 3", "33", "-1", "x", "\xE2\x91\xA2"}) {
    FormFields fields = ValidFields();
    fields["rating"] = rating;
    auto form = ParseReviewForm(fields, kMaxText);
    ASSERT_FALSE(form.ok()) << "rating '" << rating << "'";
    EXPECT_EQ(form.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(form.status().message(), HasSubstr("rating"));
  }
  FormFields missing = ValidFields();
  missing.erase("rating");
  EXPECT_THAT(ParseReviewForm(missing, kMaxText).status().message(), HasSubstr("rating"));
}

TEST(ReviewsWebFormTest, NeedsExactlyOneKeyFile) {
  FormFields both = ValidFields();
  both["key_json"] = kKey;
  EXPECT_THAT(ParseReviewForm(both, kMaxText).status().message(), HasSubstr("not both"));

  FormFields none = ValidFields();
  none.erase("key_file");
  EXPECT_THAT(ParseReviewForm(none, kMaxText).status().message(), HasSubstr("key file"));

  FormFields blank = ValidFields();
  blank["key_file"] = " \r\n\t";
  blank["key_json"] = "\n";
  EXPECT_THAT(ParseReviewForm(blank, kMaxText).status().message(),
              HasSubstr("upload your review key"));
}

TEST(ReviewsWebFormTest, RejectsAKeyFileTooLargeToBeOne) {
  FormFields fields = ValidFields();
  fields["key_file"] = std::string(kMaxKeyFileBytes, 'x');
  EXPECT_TRUE(ParseReviewForm(fields, kMaxText).ok());
  fields["key_file"] += 'x';
  auto form = ParseReviewForm(fields, kMaxText);
  ASSERT_FALSE(form.ok());
  EXPECT_THAT(form.status().message(), HasSubstr("too large"));
}

TEST(ReviewsWebFormTest, LimitsTheTextAfterNormalizingLineBreaks) {
  FormFields fields = ValidFields();
  // Each browser "\r\n" counts as one byte once normalized: exactly at the limit.
  std::string text;
  for (size_t i = 0; i < kMaxText / 2; ++i) text += "a\r\n";
  fields["text"] = text;
  auto form = ParseReviewForm(fields, kMaxText);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(form->text.size(), kMaxText);
  EXPECT_EQ(form->text.find('\r'), std::string::npos);

  fields["text"] = text + "b";
  auto too_long = ParseReviewForm(fields, kMaxText);
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.status().message(), HasSubstr("text: at most"));

  fields["text"] = "lone\rreturn";  // not part of a "\r\n": kept as typed
  EXPECT_EQ(ParseReviewForm(fields, kMaxText)->text, "lone\rreturn");
}

TEST(ReviewsWebFormTest, RejectsTextThatIsNotUtf8) {
  FormFields fields = ValidFields();
  fields["text"] = "caf\xE9";  // Latin-1
  EXPECT_THAT(ParseReviewForm(fields, kMaxText).status().message(), HasSubstr("UTF-8"));
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
