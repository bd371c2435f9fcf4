// PoliticianCalls against politicians that hang (SIGSTOP-like) while one honest politician is
// still busy with an earlier call: issue #12's `unresponsive` stall at 80/25. The calls here
// never touch the network; each politician is a latch the test opens.
#include "ledger/net/hedged_fetch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace tessera::ledger::net {
namespace {

using std::chrono::milliseconds;

// A hung call: returns once `open` is set (or after a long safety bound).
Result<int> Hang(const std::atomic<bool>& open, int answer) {
  for (int i = 0; i < 2000 && !open.load(); ++i) std::this_thread::sleep_for(milliseconds(5));
  return answer;
}

// Builds First()'s calls: `honest` answers 42 at once, every other politician hangs until
// `stopped_open` is set.
std::function<PoliticianCalls::Call<int>(PoliticianClient*)> OnlyHonestAnswers(
    PoliticianClient* honest, const std::atomic<bool>& stopped_open) {
  return [honest, &stopped_open](PoliticianClient* p) -> PoliticianCalls::Call<int> {
    const bool is_honest = p == honest;
    return [&stopped_open, is_honest](PoliticianClient&) -> Result<int> {
      if (is_honest) return 42;
      return Hang(stopped_open, 7);
    };
  };
}

struct Network {
  Network() {
    for (int i = 0; i < 5; ++i) {
      clients.push_back(std::make_shared<PoliticianClient>("127.0.0.1:1"));
      all.push_back(clients.back().get());
    }
  }
  std::vector<std::shared_ptr<PoliticianClient>> clients;
  std::vector<PoliticianClient*> all;
};

// Four stopped politicians ranked first and the honest one (last) busy with a read when the
// execution starts: the honest one must be asked once its worker is free. First() used to pass
// a busy politician over for good, so the execution waited out its deadline on the stopped
// ones (measured: "proposal ... built in 8100 ms", then an empty block, in the 80/25 runs);
// here it would return nothing once the stopped ones are released, after the deadline.
TEST(PoliticianCallsTest, FirstAsksABusyPoliticianOnceItsWorkerIsFree) {
  Network net;
  PoliticianCalls calls(net.clients);
  std::atomic<bool> stopped_open{false}, read_done{false};
  PoliticianClient* honest = net.all[4];
  // The honest politician's worker busy with a read that ends 100 ms in; the read's All()
  // returns at once (wait 0), as a Poll leaves a loaded politician behind.
  calls.All<int>(
      {honest},
      [&](PoliticianClient&) -> Result<int> {
        std::this_thread::sleep_for(milliseconds(100));
        read_done = true;
        return 0;
      },
      milliseconds(0));
  ASSERT_TRUE(calls.Busy(honest));
  auto answer = calls.First<int>(
      net.all, OnlyHonestAnswers(honest, stopped_open),
      [](PoliticianClient*, int&) { return true; }, /*hedge=*/milliseconds(20),
      /*deadline=*/milliseconds(5000));
  const bool before_release = !stopped_open.load();
  stopped_open = true;  // lets the hung calls end before `calls` goes
  ASSERT_TRUE(answer.has_value()) << "the busy honest politician was never asked";
  EXPECT_EQ(answer->first, honest);
  EXPECT_EQ(answer->second, 42);
  EXPECT_TRUE(before_release);
  EXPECT_TRUE(read_done.load());
}

// Every politician busy when the call starts, the only honest one freed later: First() waits
// for it rather than giving up at once.
TEST(PoliticianCallsTest, FirstWaitsForAFreeWorkerWhenAllAreBusy) {
  Network net;
  PoliticianCalls calls(net.clients);
  std::atomic<bool> stopped_open{false};
  PoliticianClient* honest = net.all[0];
  calls.All<int>(
      net.all,
      [&](PoliticianClient& p) -> Result<int> {
        if (&p == honest) {
          std::this_thread::sleep_for(milliseconds(50));
          return 0;
        }
        return Hang(stopped_open, 0);
      },
      milliseconds(0));
  auto answer = calls.First<int>(
      net.all,
      [](PoliticianClient*) -> PoliticianCalls::Call<int> {
        return [](PoliticianClient&) -> Result<int> { return 1; };
      },
      [](PoliticianClient*, int&) { return true; }, milliseconds(20), milliseconds(5000));
  stopped_open = true;
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->first, honest);
}

// A politician whose last call ran past `slow_call` (a stopped one runs every call to its
// deadline) does not hold All()'s wait open: the honest answers are returned without it. Its
// hung call here is released 1 s after All() started; had All() waited for it (up to the
// 10 s wait), its answer would be in the result.
TEST(PoliticianCallsTest, AllDoesNotWaitForAPoliticianSlowLately) {
  Network net;
  PoliticianCalls calls(net.clients, /*slow_call=*/milliseconds(20));
  PoliticianClient* stopped = net.all[0];
  // Its first call takes 50 ms: slow from then on.
  calls.All<int>(
      {stopped},
      [](PoliticianClient&) -> Result<int> {
        std::this_thread::sleep_for(milliseconds(50));
        return 0;
      },
      milliseconds(1000));
  while (calls.Busy(stopped)) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(calls.Slow(stopped));
  std::atomic<bool> open{false};
  std::thread release([&] {
    std::this_thread::sleep_for(milliseconds(1000));
    open = true;
  });
  auto out = calls.All<int>(
      net.all,
      [&](PoliticianClient& p) -> Result<int> {
        if (&p == stopped) return Hang(open, 9);
        return 1;
      },
      milliseconds(10000));
  EXPECT_FALSE(out[0].has_value()) << "All() waited for the slow politician";
  for (size_t i = 1; i < out.size(); ++i) {
    ASSERT_TRUE(out[i].has_value());
    EXPECT_EQ(*out[i], 1);
  }
  release.join();
}

// A post (sent once) must reach a politician still busy with an earlier call once it is free,
// not skip it: a witness list that found the one honest politician busy was lost, and the
// round's proposers waited 2 s for witness lists. Stopped politicians (slow lately) are still
// not waited for.
TEST(PoliticianCallsTest, AllWithStartBusyPostsToABusyPoliticianOnceFree) {
  Network net;
  PoliticianCalls calls(net.clients, /*slow_call=*/milliseconds(300));
  PoliticianClient* honest = net.all[4];
  std::atomic<bool> stopped_open{false};
  // The four stopped politicians: their last calls ran past slow_call...
  std::vector<PoliticianClient*> stopped(net.all.begin(), net.all.begin() + 4);
  calls.All<int>(
      stopped,
      [](PoliticianClient&) -> Result<int> {
        std::this_thread::sleep_for(milliseconds(350));
        return 0;
      },
      milliseconds(2000));
  for (PoliticianClient* p : stopped) {
    while (calls.Busy(p)) std::this_thread::sleep_for(milliseconds(5));
  }
  // ... and now hang; the honest one answers a read for 150 ms.
  calls.All<int>(
      net.all,
      [&](PoliticianClient& p) -> Result<int> {
        if (&p == honest) {
          std::this_thread::sleep_for(milliseconds(150));
          return 0;
        }
        return Hang(stopped_open, 0);
      },
      milliseconds(0));
  ASSERT_TRUE(calls.Busy(honest));
  for (PoliticianClient* p : stopped) ASSERT_TRUE(calls.Slow(p));
  std::atomic<int> posted{0};
  auto out = calls.All<int>(
      net.all,
      [&](PoliticianClient&) -> Result<int> {
        ++posted;
        return 1;
      },
      milliseconds(5000), /*patience=*/{}, /*start_busy=*/true);
  stopped_open = true;
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(out[i].has_value());
  ASSERT_TRUE(out[4].has_value()) << "the post skipped the busy honest politician";
  EXPECT_EQ(posted.load(), 1);
}

// Four politicians that execute in 15 s and one that executes at once (issue #12's
// `slow_execute` at 80%): once the slow ones have cost a hedge, they stay behind the fast one
// for as long as their penalty lasts in *time*, however many calls the citizen makes
// meanwhile. With the old decay by 0.8 per call, a slow politician was ranked first again after
// about a dozen calls (about every 20 s of a round at 0.5 s per call, less with pool
// downloads counted) and cost a 600 ms hedge each time. Virtual time: no sleeping.
TEST(LatencyRankingTest, APenaltyDecaysWithTimeNotWithTheNumberOfCalls) {
  Network net;
  using Clock = LatencyRanking::Clock;
  LatencyRanking ranking(/*half_life=*/milliseconds(30000));
  PoliticianClient* fast = net.all[4];
  std::vector<PoliticianClient*> slow(net.all.begin(), net.all.begin() + 4);
  Clock::time_point t = Clock::now();
  // The first call asks the four slow ones first (nothing learned), and the fast one answers
  // after four hedges of 600 ms.
  ranking.Learn(net.all, fast, t, milliseconds(600), t + milliseconds(2400));
  t += milliseconds(2400);
  // 200 calls in 100 s (0.5 s apart), each won by the fast one in 20 ms.
  for (int call = 0; call < 200; ++call) {
    std::vector<PoliticianClient*> order = net.all;
    ranking.Rank(order, t);
    ASSERT_EQ(order.front(), fast) << "a slow politician ranked first again at call " << call;
    ranking.Learn(order, fast, t, milliseconds(600), t + milliseconds(20));
    t += milliseconds(500);
  }
  // ... and after enough time (10 half-lives) a slow one's penalty has decayed below the
  // fast one's latest 20 ms, so it is tried first again: it may have recovered.
  t += milliseconds(300000);
  ranking.Learn({fast}, fast, t, milliseconds(600), t + milliseconds(20));
  t += milliseconds(20);
  std::vector<PoliticianClient*> order = net.all;
  ranking.Rank(order, t);
  EXPECT_NE(order.front(), fast);
  EXPECT_LT(ranking.CostMs(slow[0], t), ranking.CostMs(fast, t));
}

// Nobody answered: everyone asked is charged; a politician never charged costs nothing and
// keeps its place among equals (the caller's shuffle breaks ties).
TEST(LatencyRankingTest, ChargesEveryoneAskedWhenNobodyAnswersAndKeepsTiesInOrder) {
  Network net;
  LatencyRanking ranking;
  const auto t = LatencyRanking::Clock::now();
  ranking.Learn({net.all[0], net.all[1]}, nullptr, t, milliseconds(500), t + milliseconds(1000));
  EXPECT_NEAR(ranking.CostMs(net.all[0], t + milliseconds(1000)), 1500, 1e-6);
  EXPECT_NEAR(ranking.CostMs(net.all[1], t + milliseconds(1000)), 1500, 1e-6);
  EXPECT_EQ(ranking.CostMs(net.all[2], t), 0);
  std::vector<PoliticianClient*> order = net.all;
  ranking.Rank(order, t + milliseconds(1000));
  EXPECT_EQ(order, (std::vector<PoliticianClient*>{net.all[2], net.all[3], net.all[4], net.all[0],
                                                   net.all[1]}));
}

// Exploration: the first never-asked eligible politician moves to the front, the others keep
// their order; with none left (or none eligible) the order is unchanged.
TEST(LatencyRankingTest, ExplorationPutsTheFirstNeverAskedEligiblePoliticianFirst) {
  Network net;
  using Clock = LatencyRanking::Clock;
  LatencyRanking ranking(LatencyRanking::kDefaultHalfLife, /*unknown=*/milliseconds(600));
  const Clock::time_point t = Clock::now();
  // all[1] was asked and passed over, all[0] answered fast; all[2..4] were never asked.
  ranking.Learn({net.all[1], net.all[0]}, net.all[0], t, milliseconds(200), t + milliseconds(220),
                t + milliseconds(200));
  std::vector<PoliticianClient*> order = net.all;
  ranking.Rank(order, t + milliseconds(220));
  // all[1]'s charge (the call's 220 ms plus the hedge) is still below the never-asked 600 ms.
  ASSERT_EQ(order, net.all);
  auto everyone = [](PoliticianClient*) { return true; };
  std::vector<PoliticianClient*> explored = order;
  ASSERT_TRUE(MoveFirstUnaskedToFront(explored, ranking, everyone));
  EXPECT_EQ(explored, (std::vector<PoliticianClient*>{net.all[2], net.all[0], net.all[1],
                                                      net.all[3], net.all[4]}));
  // all[2] not eligible (blacklisted, say): the next never-asked one goes first.
  explored = order;
  ASSERT_TRUE(MoveFirstUnaskedToFront(explored, ranking,
                                      [&](PoliticianClient* p) { return p != net.all[2]; }));
  EXPECT_EQ(explored, (std::vector<PoliticianClient*>{net.all[3], net.all[0], net.all[1],
                                                      net.all[2], net.all[4]}));
  // Everyone asked (all[2..4] passed over before all[0] answered): nothing to explore.
  ranking.Learn({net.all[2], net.all[3], net.all[4], net.all[0]}, net.all[0], t, milliseconds(200),
                t + milliseconds(820), t + milliseconds(800));
  explored = order;
  EXPECT_FALSE(MoveFirstUnaskedToFront(explored, ranking, everyone));
  EXPECT_EQ(explored, order);
}

// A fresh citizen asked a slow politician first, hedged after 600 ms to the honest one, which
// answered in 20 ms; three were never asked. Its next call must go to the honest one first:
// charged its own 20 ms (not the 620 ms the whole call took), it ranks before the never-asked,
// which rank at the hedge delay (not at 0, before everyone known). Either old rule put a
// never-asked politician first, and in the 80/25 run with four `slow_execute` politicians
// each such call cost a member another 600 ms hedge in which it did not vote.
TEST(LatencyRankingTest, TheHonestWinnerRanksBeforeTheNeverAskedAfterOneCall) {
  Network net;
  using Clock = LatencyRanking::Clock;
  LatencyRanking ranking(LatencyRanking::kDefaultHalfLife, /*unknown=*/milliseconds(600));
  PoliticianClient* slow = net.all[0];
  PoliticianClient* honest = net.all[1];
  const Clock::time_point t = Clock::now();
  ranking.Learn(net.all, honest, t, milliseconds(600), t + milliseconds(620),
                /*winner_asked=*/t + milliseconds(600));
  EXPECT_NEAR(ranking.CostMs(honest, t + milliseconds(620)), 20, 1e-6);
  EXPECT_NEAR(ranking.CostMs(slow, t + milliseconds(620)), 1220, 1e-6);
  EXPECT_FALSE(ranking.Known(net.all[2]));
  std::vector<PoliticianClient*> order = net.all;
  ranking.Rank(order, t + milliseconds(620));
  EXPECT_EQ(order,
            (std::vector<PoliticianClient*>{honest, net.all[2], net.all[3], net.all[4], slow}));
}

// First() reports when the winning call started, so that the hedges before it are not
// charged to the winner.
TEST(PoliticianCallsTest, FirstReportsWhenTheWinnersCallStarted) {
  Network net;
  PoliticianCalls calls(net.clients);
  std::atomic<bool> stopped_open{false};
  PoliticianClient* honest = net.all[1];
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point winner_asked{};
  auto answer = calls.First<int>(
      net.all, OnlyHonestAnswers(honest, stopped_open),
      [](PoliticianClient*, int&) { return true; }, /*hedge=*/milliseconds(100),
      /*deadline=*/milliseconds(5000), std::nullopt, &winner_asked);
  stopped_open = true;
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->first, honest);
  // Asked second, one hedge (100 ms) after the start.
  EXPECT_GE(winner_asked - start, milliseconds(100));
}

// A failure that `ends_call` picks ("that height is already committed") ends First() at once;
// any other failure moves on to the next politician. The stopped politicians are released
// 300 ms in and then answer 7, which First() would accept had it kept waiting (the deadline
// is 5 s).
TEST(PoliticianCallsTest, FirstEndsAtAFailureThatMakesTheOthersMoot) {
  for (const StatusCode code : {StatusCode::kOutOfRange, StatusCode::kUnavailable}) {
    SCOPED_TRACE(StatusCodeName(code));
    Network net;
    PoliticianCalls calls(net.clients);
    std::atomic<bool> stopped_open{false};
    PoliticianClient* committed = net.all[1];
    auto make_call = [&](PoliticianClient* p) -> PoliticianCalls::Call<int> {
      const bool refuses = p == committed;
      return [&stopped_open, refuses, code](PoliticianClient&) -> Result<int> {
        if (refuses) return Status(code, "block 7 is already committed");
        return Hang(stopped_open, 7);
      };
    };
    std::thread release([&] {
      std::this_thread::sleep_for(milliseconds(300));
      stopped_open = true;
    });
    auto answer = calls.First<int>(
        net.all, make_call, [](PoliticianClient*, int&) { return true; },
        /*hedge=*/milliseconds(20), /*deadline=*/milliseconds(5000), std::nullopt, nullptr,
        [&](PoliticianClient* p, const Status& s) {
          EXPECT_EQ(p, committed);
          return s.code() == StatusCode::kOutOfRange;
        });
    release.join();
    if (code == StatusCode::kOutOfRange) {
      EXPECT_FALSE(answer.has_value()) << "kept waiting for the stopped politicians";
    } else {
      ASSERT_TRUE(answer.has_value()) << "an ordinary failure ended the call";
      EXPECT_EQ(answer->second, 7);
    }
  }
}

// After a refusal, First() waits `after_refusal` for a second opinion only while some target
// not slow lately may still give one. Four stopped politicians (slow: their earlier calls are
// still in flight past `slow_call`) and one fast politician whose answer is refused: First()
// returns at once. Released 300 ms in, the stopped ones would answer 7, which is accepted, had
// it waited (after_refusal 5 s). With one of the four answering at once instead, it waits and
// takes that answer.
TEST(PoliticianCallsTest, FirstWaitsForASecondOpinionOnlyWhileOneCanCome) {
  for (const bool one_fast_left : {false, true}) {
    SCOPED_TRACE(one_fast_left ? "a fast politician left" : "only slow politicians left");
    Network net;
    PoliticianCalls calls(net.clients, /*slow_call=*/milliseconds(20));
    std::atomic<bool> stopped_open{false};
    PoliticianClient* refuted = net.all[0];
    PoliticianClient* fast = one_fast_left ? net.all[4] : nullptr;
    std::vector<PoliticianClient*> stopped;
    for (PoliticianClient* p : net.all) {
      if (p != refuted && p != fast) stopped.push_back(p);
    }
    calls.All<int>(
        stopped, [&](PoliticianClient&) -> Result<int> { return Hang(stopped_open, 0); },
        milliseconds(0));
    std::this_thread::sleep_for(milliseconds(50));  // their calls in flight past slow_call
    for (PoliticianClient* p : stopped) ASSERT_TRUE(calls.Slow(p));
    std::thread release([&] {
      std::this_thread::sleep_for(milliseconds(300));
      stopped_open = true;
    });
    auto make_call = [&](PoliticianClient* p) -> PoliticianCalls::Call<int> {
      const int answer = p == refuted ? 1 : p == fast ? 9 : 7;
      return [&stopped_open, answer](PoliticianClient&) -> Result<int> {
        if (answer != 7) return answer;
        return Hang(stopped_open, 7);
      };
    };
    auto answer = calls.First<int>(
        net.all, make_call, [&](PoliticianClient* p, int&) { return p != refuted; },
        /*hedge=*/milliseconds(20), /*deadline=*/milliseconds(10000),
        /*after_refusal=*/milliseconds(5000));
    const bool before_release = !stopped_open.load();
    release.join();
    if (one_fast_left) {
      ASSERT_TRUE(answer.has_value());
      EXPECT_EQ(answer->second, 9);
    } else {
      EXPECT_FALSE(answer.has_value()) << "waited for a second opinion only slow ones could give";
      EXPECT_TRUE(before_release);
    }
  }
}

// After a failure, First() gives up as soon as only politicians slow lately are left to
// answer, so that its caller may ask again: the one honest politician of a member's sample
// had not yet committed the previous block and refused, and the member waited out the round's
// 8 s for an unresponsive politician's call (LocalnetTest.ASafeSample..., session 24). Here one
// politician fails at once and four hang (slow: past `slow_call`), released 300 ms in to
// answer 7; with a fifth politician not slow lately still hanging, First() waits for it.
TEST(PoliticianCallsTest, FirstGivesUpAfterAFailureOnceOnlySlowPoliticiansAreLeft) {
  for (const bool one_fast_left : {false, true}) {
    SCOPED_TRACE(one_fast_left ? "a fast politician left" : "only slow politicians left");
    Network net;
    PoliticianCalls calls(net.clients, /*slow_call=*/milliseconds(one_fast_left ? 5000 : 20));
    std::atomic<bool> stopped_open{false};
    PoliticianClient* failing = net.all[0];
    std::thread release([&] {
      std::this_thread::sleep_for(milliseconds(300));
      stopped_open = true;
    });
    auto make_call = [&](PoliticianClient* p) -> PoliticianCalls::Call<int> {
      const bool fails = p == failing;
      return [&stopped_open, fails](PoliticianClient&) -> Result<int> {
        if (fails) return UnavailableError("cannot execute block 8 yet");
        return Hang(stopped_open, 7);
      };
    };
    auto answer = calls.First<int>(
        net.all, make_call, [](PoliticianClient*, int&) { return true; },
        /*hedge=*/milliseconds(20), /*deadline=*/milliseconds(10000));
    const bool before_release = !stopped_open.load();
    release.join();
    if (one_fast_left) {
      ASSERT_TRUE(answer.has_value()) << "gave up on politicians not slow lately";
      EXPECT_EQ(answer->second, 7);
    } else {
      EXPECT_FALSE(answer.has_value()) << "waited for politicians slow lately";
      EXPECT_TRUE(before_release);
    }
  }
}

}  // namespace
}  // namespace tessera::ledger::net
