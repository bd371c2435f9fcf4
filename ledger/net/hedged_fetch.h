// Concurrent and hedged calls from a citizen to the politicians of its safe sample, so that a
// slow or stopped politician costs one short wait instead of a deadline per call (issue #12:
// with the sample asked one politician after another, one SIGSTOP'd politician of five made
// every read wait 1.5 s and nearly halted the chain).
//
// Each politician gets one worker thread, and a worker runs one call at a time. A politician
// that has not answered an earlier call is *busy*: All() skips it, not queued behind, so a
// stopped politician ties up one thread for one client deadline and later calls never wait
// for it; First() asks it as soon as its worker is free again (an honest politician still
// answering the last read must not be passed over for an execution: that left hedged calls
// with stopped politicians only, waiting out their whole deadline -- issue #12's
// `unresponsive` stall, docs/ledger-network.md).
//
// A politician whose last call took longer than `slow_call` (a stopped one runs every call to
// its client deadline) is *slow*: All() still asks it but does not hold its wait open for it.
//
//   PoliticianCalls calls(clients);
//   // every sample politician at once; what has arrived after 250 ms:
//   auto listings = calls.All<RoundReply>(sample, [h](PoliticianClient& p) {
//     return p.GetRound(h, 0); }, 250ms);
//   // the first execution that checks out; another politician is asked whenever 1 s passes
//   // without one, or an answer fails or is refused:
//   auto exec = calls.First<ExecuteReply>(sample, make_call, accept, 1000ms, 20000ms);
//
// A call's std::function is copied to the worker: it must capture by value (or point at
// objects that outlive this PoliticianCalls; the destructor waits for calls in flight, each
// bounded by its client's deadline).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ledger/net/client.h"

namespace tessera::ledger::net {

class PoliticianCalls {
 public:
  template <typename T>
  using Call = std::function<Result<T>(PoliticianClient&)>;

  explicit PoliticianCalls(const std::vector<std::shared_ptr<PoliticianClient>>& politicians,
                           std::chrono::milliseconds slow_call = kDefaultSlowCall);
  static constexpr std::chrono::milliseconds kDefaultSlowCall{1000};
  ~PoliticianCalls();
  PoliticianCalls(const PoliticianCalls&) = delete;
  PoliticianCalls& operator=(const PoliticianCalls&) = delete;

  // Runs `call` on every target at once (busy ones are skipped) and waits until all started
  // calls to politicians not slow lately have answered, or `wait` has passed (a slow one's
  // answer is taken if it comes in that time); if by then no call has answered at all, it
  // keeps waiting for the first successful answer until `patience` (from the start) has passed, so
  // that a politician slower than `wait` (a loaded machine) is still heard when it is the only one
  // answering. result[i] is targets[i]'s answer, or nullopt if it was busy, failed, or had
  // not answered in time.
  // With `start_busy`, a busy target not slow lately is started as soon as its worker is free
  // within `wait` instead of being skipped: for posts, which are sent once (a witness list that
  // found the one honest politician still answering a read was lost, and its round's proposers
  // waited out 2 s for witness lists -- the `unresponsive` and blacklisted-`equivocate` runs).
  template <typename T>
  std::vector<std::optional<T>> All(const std::vector<PoliticianClient*>& targets,
                                    const Call<T>& call, std::chrono::milliseconds wait,
                                    std::chrono::milliseconds patience = {},
                                    bool start_busy = false);

  // Hedged: asks targets[0]; asks the next target as well whenever `hedge` passes without an
  // accepted answer, or an answer fails or is refused by `accept` (a target passed over
  // because it was busy is asked as soon as its worker is free; run on the caller's
  // thread; it may keep what it needs from the answer). `make_call` builds the call for a
  // target when it is asked (on the caller's thread). Returns the first accepted answer and
  // who gave it, or nullopt once every target has failed or `deadline` has passed -- or
  // `after_refusal` after the first answer `accept` refused (a second opinion is worth a
  // short wait, not the whole deadline: a validator blocked here misses its votes), or, once
  // an answer has failed or been refused, as soon as every target still to answer is slow
  // lately (Slow(); checked at every answer and hedge): none can answer soon, and the caller
  // may ask again later. A member refuting a wrong-root proposal with four stopped
  // politicians left spent the wait blocked, seeing no proposals or votes; a member whose one
  // honest politician had not yet committed the previous block waited out the round (8 s)
  // for an unresponsive one (LocalnetTest.ASafeSample..., session 24).
  // `winner_asked`, if set, receives when the accepted answer's call was started (its own
  // latency, for LatencyRanking::Learn, without the hedges before it). A failure for which
  // `ends_call(target, status)` (if set; run on the caller's thread) returns true ends the call
  // at once with nullopt: an answer that makes the others moot ("that height is already
  // committed": a member waiting out four stopped politicians' calls for a committed height
  // missed the next height's votes).
  template <typename T>
  std::optional<std::pair<PoliticianClient*, T>> First(
      const std::vector<PoliticianClient*>& targets,
      const std::function<Call<T>(PoliticianClient*)>& make_call,
      const std::function<bool(PoliticianClient*, T&)>& accept, std::chrono::milliseconds hedge,
      std::chrono::milliseconds deadline,
      std::optional<std::chrono::milliseconds> after_refusal = std::nullopt,
      std::chrono::steady_clock::time_point* winner_asked = nullptr,
      const std::function<bool(PoliticianClient*, const Status&)>& ends_call = {});

  // Whether p is still running an earlier call.
  bool Busy(PoliticianClient* p) const;
  // Whether p's last call took longer than `slow_call`, or its call in flight has already.
  bool Slow(PoliticianClient* p) const;

 private:
  struct Worker;
  // Where answers arrive, shared with the jobs (a late job may outlive its caller's wait).
  template <typename T>
  struct Inbox {
    explicit Inbox(size_t n) : answers(n) {}
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<Result<T>>> answers;
    std::deque<size_t> arrived;
  };
  // Starts `job` on p's worker (which times it for Slow()); false if p is busy or not one of
  // the politicians. `job` makes the call and returns what delivers its answer; the worker is
  // marked idle before the delivery runs, so a caller woken by the answer finds p free for its
  // next call.
  using Job = std::function<std::function<void()>()>;
  bool Start(PoliticianClient* p, Job job);
  template <typename T>
  bool Launch(const std::shared_ptr<Inbox<T>>& box, size_t i, PoliticianClient* p, Call<T> call);
  // How often First() looks again whether a busy target's worker is free.
  static constexpr std::chrono::milliseconds kBusyRecheck{10};

  std::map<PoliticianClient*, std::unique_ptr<Worker>> workers_;
};

// What a citizen has learned about how fast each politician answers one kind of hedged call
// (pool downloads, executions), so that First() asks the ones that answered fast lately first
// and a majority of slow politicians costs one hedge delay once, not on every call.
//
// After a hedged call over `order` that started at `since`, the winner's cost is the time it
// took; every politician asked before it was slower (or failed) and is charged that plus the
// hedge delay. A cost decays with *time* (halving every `half_life`), so a politician that
// recovers is tried first again after a while. It used to decay by 0.8 at every call, and pool
// downloads and executions shared one table: a politician that serves pools in milliseconds but
// executes in 15 s (`slow_execute`) was ranked first for an execution again after about a dozen
// calls, or at once after winning a pool download, and cost a 600 ms hedge each time (issue
// #12's 80/25 run: slow_execute at 55-93% of honest). Keep one LatencyRanking per call kind.
//
// A politician never asked ranks at `unknown` (the caller's hedge delay): after one known to
// answer faster than a hedge, before one known to be slower. Ranked at 0, the unasked went
// first, so a citizen that found the one fast politician of five at the second try explored
// the three it had not asked on its next calls, a hedge delay each (issue #12's 80/25 run,
// `slow_execute`: the first blocks took 4-6 s against 1.6 s).
//
// Not thread-safe: one citizen's round thread uses it.
class LatencyRanking {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kDefaultHalfLife{30000};

  explicit LatencyRanking(std::chrono::milliseconds half_life = kDefaultHalfLife,
                          std::chrono::milliseconds unknown = std::chrono::milliseconds(0))
      : half_life_(half_life), unknown_(unknown) {}

  // `order` sorted by cost at `now` (`unknown` for a politician never charged), lowest first;
  // ties keep their order, so a caller shuffles first for a random tie-break.
  void Rank(std::vector<PoliticianClient*>& order, Clock::time_point now = Clock::now()) const;
  // Whether p was ever charged (asked, or passed over by a call it was asked in).
  bool Known(PoliticianClient* p) const { return costs_.count(p) > 0; }
  // After a hedged call over `order` (as ranked) that started at `since`: `winner` answered
  // at `now` (nullptr: nobody did, and everyone asked is charged). The winner is charged its
  // own latency, from `winner_asked` (when its call started; default `since`): the hedges
  // spent on slower politicians before it are theirs, not its.
  void Learn(const std::vector<PoliticianClient*>& order, PoliticianClient* winner,
             Clock::time_point since, std::chrono::milliseconds hedge,
             Clock::time_point now = Clock::now(),
             std::optional<Clock::time_point> winner_asked = std::nullopt);
  // p's cost at `now`, in milliseconds (0 if never charged).
  double CostMs(PoliticianClient* p, Clock::time_point now = Clock::now()) const;

 private:
  struct Cost {
    double ms = 0;
    Clock::time_point at;  // when `ms` was set; it halves every half_life_ since
  };
  std::chrono::milliseconds half_life_;
  std::chrono::milliseconds unknown_;
  std::map<PoliticianClient*, Cost> costs_;
};

// Exploration, so that every politician of a citizen's sample is asked now and then: moves the
// first politician of `order` that `costs` never charged and `eligible` accepts to the front
// (the rest keep their order). Returns false, leaving `order` as it was, if there is none.
//
// Why: ranking the never-asked after those known to be fast means a politician that no first
// call happened to reach is never asked at all -- harmless for agreement, but a politician
// that signs wrong executions is then never caught, and with 8 citizens that was the case in
// 2 of 5 runs of EvidenceLocalnetTest (session 17: 8 of 8 honest citizens blacklisted the
// equivocator, 0 the wrong executor). A citizen explores every few calls (citizen.cc
// kExploreEvery), so each politician it never asked costs it at most one fresh hedge.
bool MoveFirstUnaskedToFront(std::vector<PoliticianClient*>& order, const LatencyRanking& costs,
                             const std::function<bool(PoliticianClient*)>& eligible);

// ---- Implementation -----------------------------------------------------------------------

template <typename T>
bool PoliticianCalls::Launch(const std::shared_ptr<Inbox<T>>& box, size_t i, PoliticianClient* p,
                             Call<T> call) {
  return Start(p, [box, i, p, call = std::move(call)]() -> std::function<void()> {
    auto answer = std::make_shared<Result<T>>(call(*p));
    return [box, i, answer] {
      std::lock_guard<std::mutex> lock(box->mu);
      box->answers[i] = std::move(*answer);
      box->arrived.push_back(i);
      box->cv.notify_all();
    };
  });
}

template <typename T>
std::vector<std::optional<T>> PoliticianCalls::All(const std::vector<PoliticianClient*>& targets,
                                                   const Call<T>& call,
                                                   std::chrono::milliseconds wait,
                                                   std::chrono::milliseconds patience,
                                                   bool start_busy) {
  const auto start = std::chrono::steady_clock::now();
  auto box = std::make_shared<Inbox<T>>(targets.size());
  size_t started = 0;
  std::vector<bool> launched(targets.size(), false);
  std::vector<size_t> awaited;  // started, and not slow lately
  auto launch_free = [&] {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (launched[i] || !Launch<T>(box, i, targets[i], call)) continue;
      launched[i] = true;
      ++started;
      if (!Slow(targets[i])) awaited.push_back(i);
    }
  };
  // With start_busy: a target not started yet (busy) and not slow is still waited for.
  auto busy_awaited = [&] {
    if (!start_busy) return false;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!launched[i] && !Slow(targets[i])) return true;
    }
    return false;
  };
  launch_free();
  std::vector<std::optional<T>> out(targets.size());
  std::unique_lock<std::mutex> lock(box->mu);
  auto done = [&] {
    return !busy_awaited() && (box->arrived.size() >= started ||
                               std::all_of(awaited.begin(), awaited.end(),
                                           [&](size_t i) { return box->answers[i].has_value(); }));
  };
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= start + wait) break;
    const auto until = busy_awaited() ? std::min(start + wait, now + kBusyRecheck) : start + wait;
    if (box->cv.wait_until(lock, until, done)) break;
    if (start_busy) launch_free();
  }
  auto answered = [&] {
    return box->arrived.size() >= started ||
           std::any_of(box->arrived.begin(), box->arrived.end(),
                       [&](size_t i) { return box->answers[i]->ok(); });
  };
  if (!answered()) box->cv.wait_until(lock, start + patience, answered);
  for (size_t i : box->arrived) {
    if (box->answers[i]->ok()) out[i] = std::move(**box->answers[i]);
  }
  return out;
}

template <typename T>
std::optional<std::pair<PoliticianClient*, T>> PoliticianCalls::First(
    const std::vector<PoliticianClient*>& targets,
    const std::function<Call<T>(PoliticianClient*)>& make_call,
    const std::function<bool(PoliticianClient*, T&)>& accept, std::chrono::milliseconds hedge,
    std::chrono::milliseconds deadline, std::optional<std::chrono::milliseconds> after_refusal,
    std::chrono::steady_clock::time_point* winner_asked,
    const std::function<bool(PoliticianClient*, const Status&)>& ends_call) {
  using Clock = std::chrono::steady_clock;
  auto box = std::make_shared<Inbox<T>>(targets.size());
  std::vector<Clock::time_point> asked(targets.size());
  auto give_up = Clock::now() + deadline;
  std::deque<size_t> unasked;  // in the caller's order
  for (size_t i = 0; i < targets.size(); ++i) unasked.push_back(i);
  std::set<size_t> passed;  // unasked targets passed over while busy
  size_t pending = 0;
  std::vector<bool> answered(targets.size(), false);
  bool disappointed = false;  // an answer failed or was refused
  // After a failure or refusal: whether a target not slow lately may still answer (asked or
  // not).
  auto fast_answer_possible = [&] {
    for (size_t j = 0; j < targets.size(); ++j) {
      if (!answered[j] && !Slow(targets[j])) return true;
    }
    return false;
  };
  bool owed = true;  // a call is owed (the first, a hedge passed, or an answer failed)
  // Asks every passed-over target whose worker is free now, and, if a call is owed, the first
  // free unasked target (passing over the busy ones before it).
  auto launch = [&] {
    for (auto it = unasked.begin(); it != unasked.end();) {
      const size_t i = *it;
      if ((!owed && !passed.count(i)) || Busy(targets[i]) ||
          !Launch<T>(box, i, targets[i], make_call(targets[i]))) {
        if (owed) passed.insert(i);
        ++it;
        continue;
      }
      if (!passed.erase(i)) owed = false;
      asked[i] = Clock::now();
      it = unasked.erase(it);
      ++pending;
    }
  };
  launch();
  auto next_hedge = Clock::now() + hedge;
  while (pending > 0 || !unasked.empty()) {
    auto wake = std::min(next_hedge, give_up);
    if (!passed.empty()) wake = std::min(wake, Clock::now() + kBusyRecheck);
    std::optional<Result<T>> answer;
    size_t i = 0;
    {
      std::unique_lock<std::mutex> lock(box->mu);
      box->cv.wait_until(lock, wake, [&] { return !box->arrived.empty(); });
      if (!box->arrived.empty()) {
        i = box->arrived.front();
        box->arrived.pop_front();
        answer = std::move(box->answers[i]);
      }
    }
    if (answer) {
      --pending;
      answered[i] = true;
      if (answer->ok()) {
        if (accept(targets[i], **answer)) {
          if (winner_asked != nullptr) *winner_asked = asked[i];
          return std::make_pair(targets[i], std::move(**answer));
        }
        if (after_refusal) give_up = std::min(give_up, Clock::now() + *after_refusal);
      } else if (ends_call && ends_call(targets[i], answer->status())) {
        return std::nullopt;
      }
      disappointed = true;
      owed = true;  // failed or refused: ask another one now
    } else if (Clock::now() >= next_hedge) {
      owed = true;  // slow: ask another one as well
      next_hedge = Clock::now() + hedge;
    }
    if (Clock::now() >= give_up) return std::nullopt;
    launch();
    if (disappointed && !fast_answer_possible()) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tessera::ledger::net
