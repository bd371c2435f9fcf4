#include "ledger/net/block_budget.h"

#include <algorithm>
#include <cmath>

namespace tessera::ledger::net {

BlockBudget::BlockBudget(BlockBudgetOptions options)
    : options_(options), mean_round_s_(options.target_round_s / 2) {
  options_.max_pool_txs = std::max<size_t>(options_.max_pool_txs, 1);
  options_.min_pool_txs = std::clamp<size_t>(options_.min_pool_txs, 1, options_.max_pool_txs);
  options_.backlog_pools = std::max(options_.backlog_pools, 1.0);
  const size_t initial =
      options_.initial_pool_txs > 0 ? options_.initial_pool_txs : options_.max_pool_txs / 8;
  pool_txs_ = std::clamp(initial, options_.min_pool_txs, options_.max_pool_txs);
}

void BlockBudget::PoolFrozen(uint64_t height, size_t txs, Clock::time_point now) {
  frozen_.emplace(height, std::make_pair(now, txs));
  while (frozen_.size() > 16) frozen_.erase(frozen_.begin());  // heights never committed
}

void BlockBudget::BlockCommitted(uint64_t height, Clock::time_point now) {
  auto it = frozen_.find(height);
  if (it == frozen_.end()) return;
  const double round_s = std::chrono::duration<double>(now - it->second.first).count();
  const bool full = it->second.second >= pool_txs_;
  frozen_.erase(frozen_.begin(), std::next(it));
  mean_round_s_ = 0.7 * mean_round_s_ + 0.3 * round_s;
  const double target = options_.target_round_s;
  double factor = 1;
  if (round_s > target) {
    factor = std::clamp(0.8 * target / round_s, 0.25, 0.8);
  } else if (full && round_s < target / 2) {
    factor = std::clamp(0.5 * target / std::max(round_s, 1e-3), 1.25, 2.0);
  }
  const double next = std::ceil(static_cast<double>(pool_txs_) * factor);
  pool_txs_ = std::clamp(static_cast<size_t>(next), options_.min_pool_txs, options_.max_pool_txs);
}

size_t BlockBudget::mempool_capacity() const {
  return static_cast<size_t>(std::ceil(options_.backlog_pools * static_cast<double>(pool_txs_)));
}

std::chrono::milliseconds BlockBudget::retry_after() const {
  return std::chrono::milliseconds(
      std::max<int64_t>(100, static_cast<int64_t>(std::llround(mean_round_s_ * 1e3))));
}

}  // namespace tessera::ledger::net
