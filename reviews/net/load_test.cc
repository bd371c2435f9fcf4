#include "reviews/net/load.h"

#include <gtest/gtest.h>

namespace tessera::reviews::net {
namespace {

// The words are those of ledger/net/client.cc and LightClient::Submit (wallet.cc).
TEST(BusyRetryAfter, RetriesAfterTheShortestHintWhenEveryPoliticianIsBusy) {
  const std::string busy =
      "transaction rejected: 127.0.0.1:1: busy: RESOURCE_EXHAUSTED: mempool quota of "
      "application 'reviews' reached (273 pending); retry after 8179 ms; 127.0.0.1:2: busy: "
      "RESOURCE_EXHAUSTED: mempool full; retry after 910 ms";
  ASSERT_TRUE(BusyRetryAfter(busy));
  EXPECT_EQ(BusyRetryAfter(busy)->count(), 910);
  const std::string timeout =
      "transaction rejected: 127.0.0.1:2: politician 127.0.0.1:2: Deadline Exceeded (grpc code 4)";
  ASSERT_TRUE(BusyRetryAfter(timeout));
  EXPECT_EQ(BusyRetryAfter(timeout)->count(), 500);
}

TEST(BusyRetryAfter, RuleViolationsAreNotRetried) {
  EXPECT_FALSE(BusyRetryAfter(
      "transaction rejected: 127.0.0.1:1: rejected: FAILED_PRECONDITION: reviews for epoch 2 "
      "are accepted only during it (now epoch 3); 127.0.0.1:2: busy: x; retry after 5 ms"));
  EXPECT_FALSE(BusyRetryAfter("transaction rejected: 127.0.0.1:1: UNAVAILABLE: connect failed"));
}

}  // namespace
}  // namespace tessera::reviews::net
