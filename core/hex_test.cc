#include "core/hex.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(HexTest, RoundTrip) {
  std::vector<uint8_t> bytes = {0x00, 0x7f, 0x80, 0xff, 0x1a};
  EXPECT_EQ(ToHex(bytes), "007f80ff1a");
  EXPECT_EQ(*FromHex("007F80fF1a"), bytes);
  EXPECT_EQ(*FromHex("0x007f80ff1a"), bytes);
  EXPECT_EQ(ToHex(AsBytes("ab")), "6162");
  EXPECT_EQ(AsChars(*FromHex("6162")), "ab");
}

TEST(HexTest, RejectsMalformed) {
  EXPECT_EQ(FromHex("abc").status().message(), "hex string has odd length 3");
  EXPECT_EQ(FromHex("0g").status().message(), "non-hex character at position 1");
  auto fixed = ArrayFromHex<2>("0011");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ((*fixed)[1], 0x11);
  EXPECT_EQ(ArrayFromHex<2>("001122").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
