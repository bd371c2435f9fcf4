// The round timeline file and the latency breakdown built from it (round_timeline.h).
#include "ledger/net/round_timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace tessera::ledger::net {
namespace {

using std::chrono::milliseconds;

TEST(RoundTimelineTest, AppendedEventsParseBackAndMalformedLinesAreRefused) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("round_timeline_test_" + std::to_string(::getpid()) + ".tsv");
  std::filesystem::remove(path);
  const auto before = std::chrono::system_clock::now();
  AppendRoundTimeline(path, "freeze", 3, 120);
  AppendRoundTimeline(path, "commit", 3, 600);
  AppendRoundTimeline(path, "commit", 3, 600);  // a second commit of 3 (restart): the first counts
  AppendRoundTimeline(path, "freeze", 4, 80);
  const auto after = std::chrono::system_clock::now();
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::filesystem::remove(path);
  auto t = ParseRoundTimeline(text.str());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->frozen.size(), 2u);
  ASSERT_EQ(t->committed.size(), 1u);
  EXPECT_GE(t->frozen.at(3) + std::chrono::microseconds(1), before);
  EXPECT_LE(t->frozen.at(4), after);
  EXPECT_LE(t->frozen.at(3), t->committed.at(3));
  EXPECT_FALSE(ParseRoundTimeline("freeze\t3\t120\n").ok());
  EXPECT_FALSE(ParseRoundTimeline("thaw\t3\t120\t5\n").ok());
  EXPECT_FALSE(ParseRoundTimeline("freeze\t3\tx\t5\n").ok());
}

// Stages are consecutive and add up to the total, from the first submission; the freeze is the
// accepting politician's, the commit the first by any politician; a transfer whose politician
// left no freeze is unattributed.
TEST(RoundTimelineTest, TheStagesOfATransfersLatencyAddUpFromItsFirstSubmission) {
  using Steady = CommittedTransfer::Time;
  const Steady t0{std::chrono::seconds(1000)};
  // The timelines on the system clock, 500 s ahead of the steady one.
  const std::chrono::nanoseconds offset = std::chrono::seconds(500);
  auto sys = [&](Steady t) { return RoundTimeline::Time(t.time_since_epoch() + offset); };
  std::vector<RoundTimeline> timelines(2);
  timelines[0].frozen[7] = sys(t0 + milliseconds(900));
  timelines[0].committed[7] = sys(t0 + milliseconds(6000));
  timelines[1].frozen[7] = sys(t0 + milliseconds(2000));
  timelines[1].committed[7] = sys(t0 + milliseconds(5000));  // committed first
  std::vector<CommittedTransfer> txs;
  // Politician 1 took it: first try at t0, accepted 0.2 s later (a refused call first).
  txs.push_back({.height = 7,
                 .first_submit = t0,
                 .accepted = t0 + milliseconds(200),
                 .visible = t0 + milliseconds(5300),
                 .politicians = {1}});
  // Politician 0 took this one; a resend would not move its first submission.
  txs.push_back({.height = 7,
                 .first_submit = t0 + milliseconds(100),
                 .accepted = t0 + milliseconds(150),
                 .visible = t0 + milliseconds(5300),
                 .politicians = {0}});
  txs.push_back({.height = 8,  // no freeze at 8 anywhere
                 .first_submit = t0,
                 .accepted = t0,
                 .visible = t0 + milliseconds(9000),
                 .politicians = {0}});
  LatencyBreakdown b = BreakDownLatency(txs, timelines, offset);
  EXPECT_EQ(b.attributed, 2u);
  EXPECT_EQ(b.unattributed, 1u);
  // Sorted stage values; p50 = the upper of the two, p99 = the upper too (index 1 of 2).
  EXPECT_NEAR(b.admission.p50_s, 0.2, 1e-9);      // {0.05, 0.2}
  EXPECT_NEAR(b.mempool.p50_s, 1.8, 1e-9);        // {0.75, 1.8}
  EXPECT_NEAR(b.pool_to_block.p50_s, 4.1, 1e-9);  // {3.0, 4.1}: to 5.0, the first commit
  EXPECT_NEAR(b.block_to_visible.p50_s, 0.3, 1e-9);
  EXPECT_NEAR(b.total.p50_s, 5.3, 1e-9);  // {5.2, 5.3}: from the first submission
  // The tail (total >= p99 = 5.3) is the first transfer: its stages add up to 5.3.
  EXPECT_NEAR(b.admission.tail_mean_s + b.mempool.tail_mean_s + b.pool_to_block.tail_mean_s +
                  b.block_to_visible.tail_mean_s,
              b.total.tail_mean_s, 1e-9);
  EXPECT_NEAR(b.total.tail_mean_s, 5.3, 1e-9);
  EXPECT_NEAR(b.mempool.tail_mean_s, 1.8, 1e-9);
}

}  // namespace
}  // namespace tessera::ledger::net
