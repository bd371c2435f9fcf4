#include "reviews/net/load.h"

#include <gtest/gtest.h>

#include "reviews/net/poll_failures.h"

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

// reviews-load's commit polls (load.cc, transfer_phase.cc) go through PollFailures: a failed
// poll is retried, counted and reported; only a run of more than the bound ends the wait.
TEST(PollFailures, RetriesAFailedPollCountsItAndGivesUpOnlyPastTheBoundInARow) {
  PollFailures f(3);
  const Status timeout = DeadlineExceededError("politician 127.0.0.1:1: Deadline Exceeded");
  const Status unavailable = UnavailableError("connect failed");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(f.Note(timeout).ok()) << i;  // within the bound
  EXPECT_EQ(f.streak(), 3u);
  EXPECT_TRUE(f.Note(Status::Ok()).ok());  // a good poll ends the run
  EXPECT_EQ(f.streak(), 0u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(f.Note(unavailable).ok()) << i;
  const Status gave_up = f.Note(unavailable);  // the fourth in a row
  EXPECT_FALSE(gave_up.ok());
  EXPECT_EQ(gave_up.code(), StatusCode::kUnavailable);
  EXPECT_NE(gave_up.message().find("4 polls in a row failed"), std::string::npos) << gave_up;
  EXPECT_EQ(f.total(), 7u);
  ASSERT_EQ(f.errors().size(), 2u);
  EXPECT_EQ(f.errors().at(timeout.ToString()), 3u);
  EXPECT_EQ(f.errors().at(unavailable.ToString()), 4u);
}

// Every wait writes the same line and pauses by the same rule (poll_failures.h).
TEST(PollFailures, OneRetryLineAndOnePauseRuleForEveryWait) {
  PollFailures f;
  const std::chrono::milliseconds fast{100}, slow{800};
  EXPECT_EQ(f.Pause(fast), fast);  // no failure: the wait's own poll interval
  const Status timeout = DeadlineExceededError("politician 127.0.0.1:1: Deadline Exceeded");
  ASSERT_TRUE(f.Note(timeout).ok());
  ASSERT_TRUE(f.Note(timeout).ok());
  EXPECT_EQ(f.RetryLine(42, timeout),
            "height 42: poll failed (2 in a row), retrying: " + timeout.ToString() + "\n");
  EXPECT_EQ(f.Pause(fast), kPollFailurePause);  // after a failure: at least the pause
  EXPECT_EQ(f.Pause(slow), slow);               // and never shorter than the poll interval
  ASSERT_TRUE(f.Note(Status::Ok()).ok());
  EXPECT_EQ(f.Pause(fast), fast);
}

}  // namespace
}  // namespace tessera::reviews::net
