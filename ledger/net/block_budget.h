// Back-pressure for one politician: how many transactions its next pool may carry, how many
// it may hold pending, and when a client turned away should come back.
//
// Without limits a politician under load freezes ever larger pools; the committee then needs
// longer than the round timeout to validate the block, the round is retried, and committed
// throughput falls as offered load rises (issue #13 measured 348 -> 228 tx/s). The budget
// closes the loop on what is measured, the round time: from the moment this politician
// freezes its pool for height h to the moment it commits block h. That span contains the
// committee's validation of the block (execution, proofs, the sampled signature checks) and
// the agreement on it, on whatever hardware the committee runs.
//
//   - Pool size: multiplicative decrease when a round took longer than `target_round_s`
//     (x0.75), increase (x1.25) when a round with a full pool took less than half of it;
//     always within [min_pool_txs, max_pool_txs].
//   - Mempool capacity: `backlog_pools` pools' worth. A transaction admitted when the mempool
//     is below capacity waits at most about that many rounds, so latency stays bounded.
//   - Retry hint: the measured mean round time (EWMA), the time after which a pool's worth of
//     room has typically been freed by a commit.
//
// Not thread-safe: the politician calls it under its mempool lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>

namespace tessera::ledger::net {

struct BlockBudgetOptions {
  size_t max_pool_txs = 2000;  // the genesis file's hard limit
  size_t min_pool_txs = 50;
  double target_round_s = 6.0;
  double backlog_pools = 3;
};

class BlockBudget {
 public:
  using Clock = std::chrono::steady_clock;

  explicit BlockBudget(BlockBudgetOptions options);

  // This politician froze its pool for `height` with `txs` transactions at `now`.
  void PoolFrozen(uint64_t height, size_t txs, Clock::time_point now = Clock::now());
  // Block `height` was committed at `now`. Heights this politician froze no pool for (catch-up)
  // are not measured.
  void BlockCommitted(uint64_t height, Clock::time_point now = Clock::now());

  size_t pool_txs() const { return pool_txs_; }
  size_t mempool_capacity() const;
  std::chrono::milliseconds retry_after() const;
  double mean_round_s() const { return mean_round_s_; }

 private:
  BlockBudgetOptions options_;
  size_t pool_txs_;
  double mean_round_s_;
  std::map<uint64_t, std::pair<Clock::time_point, size_t>> frozen_;  // height -> (when, txs)
};

}  // namespace tessera::ledger::net
