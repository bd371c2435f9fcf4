#include "reviews/web/connection_guard.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace tessera::reviews::web {
namespace {

TEST(ContentLengthOf, FindsTheHeaderInAnyCase) {
  EXPECT_EQ(ContentLengthOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12"), 12u);
  EXPECT_EQ(ContentLengthOf("POST / HTTP/1.1\r\ncOnTeNt-LeNgTh:\t 7\r\nX: y"), 7u);
  EXPECT_EQ(ContentLengthOf("GET / HTTP/1.1\r\nHost: x"), std::nullopt);
  // The name must start a line: a value that merely contains it is not the header.
  EXPECT_EQ(ContentLengthOf("GET / HTTP/1.1\r\nX-Note: content-length: 5"), std::nullopt);
  EXPECT_EQ(ContentLengthOf("POST / HTTP/1.1\r\nContent-Length: lots"), std::nullopt);
  EXPECT_EQ(ContentLengthOf("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999"),
            std::nullopt);
}

TEST(ScanRequest, WaitsForTheHeadThenTheAnnouncedBody) {
  constexpr size_t kMax = 1000;
  EXPECT_FALSE(ScanRequest("GET / HTTP/1.1\r\nHost", kMax).complete);
  EXPECT_EQ(ScanRequest("GET / HTTP/1.1\r\nHost", kMax).want, 21u);
  EXPECT_TRUE(ScanRequest("GET / HTTP/1.1\r\nHost: x\r\n\r\n", kMax).complete);
  const std::string head = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n";
  RequestScan scan = ScanRequest(head + "12345", kMax);
  EXPECT_FALSE(scan.complete);
  EXPECT_EQ(scan.want, head.size() + 10);
  EXPECT_TRUE(ScanRequest(head + "1234567890", kMax).complete);
}

TEST(ScanRequest, NeverWaitsPastItsBuffer) {
  // A body that cannot fit: complete at once (httplib refuses it), also when the announced
  // length would overflow head + body.
  EXPECT_TRUE(ScanRequest("POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 1000).complete);
  const std::string huge = std::to_string(std::numeric_limits<size_t>::max() - 3);
  EXPECT_TRUE(
      ScanRequest("POST / HTTP/1.1\r\nContent-Length: " + huge + "\r\n\r\n", 1000).complete);
  // A head that never ends: complete once the buffer is full.
  EXPECT_TRUE(ScanRequest(std::string(1000, 'a'), 1000).complete);
  EXPECT_EQ(ScanRequest(std::string(999, 'a'), 1000).want, 1000u);
}

}  // namespace
}  // namespace tessera::reviews::web
