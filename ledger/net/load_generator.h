// The localnet's load generator: transfers between genesis accounts at an offered rate, from
// several threads, each with its own gRPC channels and its own share of the accounts, so that
// one slow politician answer does not hold up the whole offered load.
//
// Each account has at most one transfer in flight (its next nonce), so the sustainable rate is
// about accounts / commit latency. A transfer is sent to `fanout` politicians in random
// order; a politician that answers RESOURCE_EXHAUSTED (full mempool) is skipped for the next
// one (at most two busy answers per transfer), and if none takes it the transfer is dropped
// (the account stays idle) and the thread pauses for the politician's retry hint (at most
// 200 ms), as a client that respects back-pressure does. Counts:
//   offered    transfers the schedule called for
//   submitted  transfers at least one politician accepted
//   busy       offered transfers no politician had room for, and those skipped while the
//              thread paused for a retry hint
//   idle_miss  offered transfers not sent because every sampled account had one in flight
// and, not per offered transfer: busy_answers, the RESOURCE_EXHAUSTED answers received (the
// calls a saturated network had to refuse: up to two per busy transfer, none for the transfers
// skipped while a thread pauses, which `busy` counts too; plus refused resends and twins).
// A fraction of transfers is followed by a double spend: the same nonce to another receiver,
// sent to other politicians. Transfers in flight for longer than resend_s and 4 block
// intervals are sent again, to one politician (a dropping politician may have eaten them; a
// saturated chain's own backlog is not sent again). Nothing is resent before the block
// interval has been measured (ResendAfter): a chain slower than resend_s would otherwise have
// its whole backlog sent again while it starts, which is when it is slowest.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ledger/codec/messages.h"
#include "ledger/net/client.h"
#include "ledger/net/round_timeline.h"

namespace tessera::ledger::net {

struct LoadOptions {
  double rate = 50;  // offered transfers per second, over all threads
  uint32_t threads = 4;
  uint32_t fanout = 2;
  double double_spend_fraction = 0.05;
  double resend_s = 6;
  uint64_t seed = 12345;
};

// The block interval as the load sees it: an EWMA over the intervals between the blocks
// observed, starting from the first interval measured (not from zero, which would make the
// chain look fast for its first several blocks). Not thread-safe.
class BlockIntervalEstimate {
 public:
  using Clock = std::chrono::steady_clock;
  void Observe(Clock::time_point block_time);
  // Seconds; nullopt until two blocks have been observed.
  std::optional<double> seconds() const { return seconds_; }

 private:
  std::optional<Clock::time_point> last_;
  std::optional<double> seconds_;
};

// How long a transfer waits in flight before it is sent again: resend_s and 4 block
// intervals, whichever is longer; nullopt (never yet) while the interval is unknown.
std::optional<double> ResendAfter(double resend_s, std::optional<double> block_interval_s);

struct LoadCounts {
  uint64_t offered = 0, submitted = 0, busy = 0, idle_miss = 0, rejected = 0;
  uint64_t double_spend_attempts = 0;
  uint64_t resent = 0;        // transfers sent again after waiting (not part of offered)
  uint64_t busy_answers = 0;  // RESOURCE_EXHAUSTED answers received, over all calls
};

class LoadGenerator {
 public:
  using Clock = std::chrono::steady_clock;

  // Sends from `senders` (indices into `accounts`) to any of `accounts`.
  LoadGenerator(LoadOptions options, std::vector<std::string> politician_addresses,
                std::vector<KeyPair> accounts, std::vector<uint32_t> senders);
  ~LoadGenerator();

  void Start();
  void Stop();  // joins the threads; idempotent

  // After each committed block `height`, seen at `now`: `applied` are its transfers;
  // `nonce_of` reads an account's nonce in the state after it. Returns every transfer of ours
  // that `applied` contains, with its first submission (the clock of its latency starts there,
  // whatever resends followed), its acceptance and the politicians that accepted it.
  std::vector<CommittedTransfer> OnBlock(const std::vector<Transaction>& applied,
                                         const std::function<uint64_t(const PublicKey&)>& nonce_of,
                                         uint64_t height, Clock::time_point now);

  LoadCounts counts() const;
  std::optional<Clock::time_point> first_submit() const;

 private:
  struct Sender {
    uint32_t account = 0;
    uint64_t next_nonce = 0;
    std::optional<Transaction> in_flight;
    Clock::time_point sent;
  };
  struct Worker;

  void Run(Worker* w);
  // Sends `tx` to up to fanout politicians, skipping `avoid`; the accepting politicians.
  // Stops after `max_busy` RESOURCE_EXHAUSTED answers.
  std::vector<uint32_t> Send(Worker* w, const Transaction& tx, const std::vector<uint32_t>& avoid,
                             uint32_t max_busy, uint32_t* retry_after_ms, bool* busy);

  LoadOptions options_;
  std::vector<std::string> addresses_;
  std::vector<KeyPair> accounts_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stop_{false};
  Clock::time_point start_;
  std::atomic<double> block_interval_s_{0};  // interval_.seconds(), 0 while unknown
  std::atomic<uint64_t> resent_{0};
  std::atomic<uint64_t> busy_answers_{0};

  mutable std::mutex mu_;  // guards the members below
  struct Submission {
    Clock::time_point first_submit, accepted;
    std::vector<uint32_t> politicians;
  };
  std::unordered_map<std::string, Submission> submitted_;  // tx id (bytes) -> its submission
  std::optional<Clock::time_point> first_submit_;
  BlockIntervalEstimate interval_;
  LoadCounts counts_;
};

}  // namespace tessera::ledger::net
