#include "reviews/web/http_status.h"

#include <gtest/gtest.h>

namespace tessera::reviews::web {
namespace {

TEST(ReviewsWebHttpStatusTest, RefusalsKeepTheirMeaning) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kOutOfRange), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kPermissionDenied), 403);  // key not in the item's ring
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kAlreadyExists), 409);       // second review by a key
  EXPECT_EQ(HttpStatusFor(StatusCode::kFailedPrecondition), 409);  // window not open
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 413);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);  // no politician answers
  EXPECT_EQ(HttpStatusFor(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDataLoss), 500);  // blocks and proved state disagree
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kOk), 500);  // no error to map: a bug, not a success
}

TEST(ReviewsWebHttpStatusTest, ReasonPhrases) {
  EXPECT_EQ(ReasonPhrase(404), "Not Found");
  EXPECT_EQ(ReasonPhrase(409), "Conflict");
  EXPECT_EQ(ReasonPhrase(413), "Payload Too Large");
  EXPECT_EQ(ReasonPhrase(503), "Service Unavailable");
  EXPECT_EQ(ReasonPhrase(299), "Error");
}

}  // namespace
}  // namespace tessera::reviews::web
