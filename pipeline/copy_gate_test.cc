#include "pipeline/copy_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Interval {
  Clock::time_point begin, end;
};

struct CopyRun {
  Clock::time_point arrived, left;  // before Start(); after the loop
  std::vector<Interval> kept;
};

// Copy t warms up for 3 (t + 1) ms and then needs 3 iterations of 2 (t + 1) ms each: the
// copies reach their start and their minimum at different times, as profiling threads do on a
// loaded machine. The loop is the one TimeUnitLoop (pipeline/model.cc) runs.
std::vector<CopyRun> RunCopies(int copies, bool gated) {
  CopyGate gate(copies);
  std::vector<CopyRun> runs(copies);
  std::vector<std::thread> threads;
  for (int t = 0; t < copies; ++t) {
    threads.emplace_back([&, t] {
      CopyGate::Copy copy(gated ? &gate : nullptr);
      std::this_thread::sleep_for(milliseconds(3 * (t + 1)));
      runs[t].arrived = Clock::now();
      copy.Start();
      for (int done = 0;; ++done) {
        if (done >= 3 && !copy.reached()) copy.ReachedMinimum();
        if (copy.stopped()) break;
        const Interval i{Clock::now(), {}};
        std::this_thread::sleep_for(milliseconds(2 * (t + 1)));
        if (copy.stopped()) break;  // under way when the copies stopped: dropped
        runs[t].kept.push_back({i.begin, Clock::now()});
      }
      runs[t].left = Clock::now();
    });
  }
  for (std::thread& t : threads) t.join();
  return runs;
}

// What the contention profile relies on: every kept iteration of every copy ran while all the
// copies were running (after the last one arrived at the start, before the first one left).
// Broken on purpose (issue #14's fifth session): Start() without the latch, and stopped() on a
// copy's own minimum, each fail here.
TEST(CopyGate, KeptWorkRanWhileAllCopiesRan) {
  const std::vector<CopyRun> runs = RunCopies(4, /*gated=*/true);
  Clock::time_point all_started = runs[0].arrived, first_left = runs[0].left;
  for (const CopyRun& r : runs) {
    all_started = std::max(all_started, r.arrived);
    first_left = std::min(first_left, r.left);
  }
  for (size_t t = 0; t < runs.size(); ++t) {
    EXPECT_GE(runs[t].kept.size(), 3u) << "copy " << t;  // each has its minimum
    for (const Interval& i : runs[t].kept) {
      EXPECT_GE(i.begin, all_started) << "copy " << t << " timed before all had started";
      EXPECT_LE(i.end, first_left) << "copy " << t << " timed after one had stopped";
    }
  }
  // The fastest copy ran on while the slowest got its minimum.
  EXPECT_GT(runs[0].kept.size(), runs[3].kept.size());
}

TEST(CopyGate, AloneACopyStopsAtItsMinimum) {
  for (const CopyRun& r : RunCopies(2, /*gated=*/false)) EXPECT_EQ(r.kept.size(), 3u);
}

// A copy that fails (an exception before its start) must not leave the others waiting at the
// start or running for ever.
TEST(CopyGate, AFailedCopyReleasesTheOthers) {
  CopyGate gate(3);
  std::vector<int> iterations(3, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      try {
        CopyGate::Copy copy(&gate);
        if (t == 1) throw std::runtime_error("model failed");
        copy.Start();
        for (int done = 0; !copy.stopped(); ++done) {
          if (done >= 2 && !copy.reached()) copy.ReachedMinimum();
          ++iterations[t];
        }
      } catch (const std::exception&) {
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(iterations[1], 0);
  EXPECT_GE(iterations[0], 2);
  EXPECT_GE(iterations[2], 2);
}

}  // namespace
}  // namespace tessera::pipeline
