#include "core/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace tessera {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return InvalidArgumentError("must be positive");
  return x;
}

Result<int> Doubled(int x) {
  TESSERA_ASSIGN_OR_RETURN(int v, ParsePositive(x));
  return 2 * v;
}

Status CheckBoth(int a, int b) {
  TESSERA_RETURN_IF_ERROR(ParsePositive(a).status());
  TESSERA_RETURN_IF_ERROR(ParsePositive(b).status().WithContext("second"));
  return Status::Ok();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
  Status s = NotFoundError("block 7");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: block 7");
  EXPECT_EQ(s.WithContext("read").message(), "read: block 7");
  EXPECT_EQ(Status(StatusCode::kOk, "ignored").message(), "");
}

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> good = Doubled(4);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 8);
  Result<int> bad = Doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.value_or(-5), -5);
}

TEST(StatusTest, ReturnIfErrorPropagatesWithContext) {
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(0, 2).message(), "must be positive");
  EXPECT_EQ(CheckBoth(1, 0).message(), "second: must be positive");
}

TEST(StatusTest, ResultFromOkStatusBecomesInternalError) {
  Result<int> r = Status::Ok();
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(StatusTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(3);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 3);
}

TEST(StatusDeathTest, ValueOfErrorAborts) {
  Result<int> r = InternalError("x");
  EXPECT_DEATH((void)r.value(), "value\\(\\) of an error Result");
}

}  // namespace
}  // namespace tessera
