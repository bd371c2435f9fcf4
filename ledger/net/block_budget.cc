#include "ledger/net/block_budget.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "ledger/net/round_timeline.h"

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
  if (!options_.timeline.empty()) AppendRoundTimeline(options_.timeline, "freeze", height, txs);
  carry_txs_ = 0;
  frozen_.emplace(height, std::make_pair(now, txs));
  while (frozen_.size() > 16) frozen_.erase(frozen_.begin());  // heights never committed
}

void BlockBudget::BlockCommitted(uint64_t height, size_t block_txs, bool measures_size,
                                 Clock::time_point now) {
  if (!options_.timeline.empty()) {
    AppendRoundTimeline(options_.timeline, "commit", height, block_txs);
  }
  carry_txs_ = 0;
  auto it = frozen_.find(height);
  if (it == frozen_.end()) return;
  const double round_s = std::chrono::duration<double>(now - it->second.first).count();
  const size_t frozen_txs = it->second.second;
  const bool full = frozen_txs >= pool_txs_;
  frozen_.erase(frozen_.begin(), std::next(it));
  if (!measures_size) return;
  mean_round_s_ = 0.7 * mean_round_s_ + 0.3 * round_s;
  samples_.emplace_back(static_cast<double>(block_txs), round_s);
  while (samples_.size() > kFitSamples) samples_.pop_front();
  const double target = options_.target_round_s;
  auto ratio_shrink = [&] { return std::clamp(0.8 * target / round_s, 0.25, 0.8); };
  double factor = 1;
  const std::optional<RoundFit> f = fit();
  if (f && f->fixed_s < target && block_txs > 0) {
    // The per-transfer part gets what the fixed part leaves of the target.
    const double fitting_txs = (target - f->fixed_s) / f->per_tx_s;
    factor = std::clamp(fitting_txs / static_cast<double>(block_txs), 0.25, 2.0);
  } else if (round_s > target) {
    factor = ratio_shrink();
  } else if (full && !f) {
    // No usable fit: grow by as much as cannot overshoot the target whatever the round's
    // fixed part is (r = fixed + per_tx x txs with fixed >= 0: scaling txs by k = 0.9 x
    // target / r gives at most 0.9 x target), at least x1.25 (a probe: the fit needs blocks
    // of different sizes) and at most x2.
    factor = std::clamp(0.9 * target / std::max(round_s, 1e-3), 1.25, 2.0);
  }
  if (factor > 1 && (!full || round_s > target)) factor = 1;
  // Far over the target whatever the fit says (a stale fit, a machine suddenly slower).
  if (round_s > 1.5 * target) factor = std::min(factor, ratio_shrink());
  double next = static_cast<double>(pool_txs_) * factor;
  // Growth is bounded by this round's own measurement, whatever the rule above planned: the
  // pool this politician froze for it, `frozen`, took `round_s`, and a round at most
  // proportional to the block (fixed part >= 0, or CPU-bound: max(latency, work)) cannot take
  // longer than the target at frozen x target / round_s. A planned growth is checked again
  // this way when the round after it (frozen right after the commit that planned it, so still
  // admitted under the previous bound) turns out slower: the localnet's one slow round per
  // run was a doubling planned after a fast round (block of 2,149 in 5.1 s; the fit
  // extrapolated 0.6 ms/tx) that the next round at the old size (8.5 s) already contradicted;
  // the doubled block took 15.6 s. Only a pool of at least a quarter of the budget counts as a
  // measurement of it (an empty or light pool says nothing of what a full one costs).
  const double frozen = static_cast<double>(frozen_txs);
  if (frozen > 0 && 4 * frozen >= static_cast<double>(pool_txs_)) {
    next = std::min(next, frozen * std::clamp(target / std::max(round_s, 1e-3), 1.0, 2.0));
  }
  const size_t previous = pool_txs_;
  pool_txs_ = std::clamp(static_cast<size_t>(std::ceil(next)), options_.min_pool_txs,
                         options_.max_pool_txs);
  if (pool_txs_ < previous && round_s <= kCarryWithinTarget * target) carry_txs_ = previous;
  spdlog::info(
      "block budget: block {} of {} txs took {:.2f} s (pool {}); fit {}; pool now {} "
      "(next {})",
      height, block_txs, round_s, full ? "full" : "not full",
      f ? fmt::format("{:.2f} s + {:.2f} ms/tx", f->fixed_s, f->per_tx_s * 1e3)
        : std::string("none"),
      pool_txs_, next_pool_txs());
}

std::optional<BlockBudget::RoundFit> BlockBudget::fit() const {
  if (samples_.size() < 3) return std::nullopt;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  double lo = samples_.front().first, hi = lo;
  for (const auto& [x, y] : samples_) {
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
    lo = std::min(lo, x), hi = std::max(hi, x);
  }
  if (hi < 1.25 * lo || hi <= 0) return std::nullopt;  // one block size: no slope to see
  const double var = n * sxx - sx * sx;
  if (var <= 0) return std::nullopt;
  const double per_tx = (n * sxy - sx * sy) / var;
  if (!(per_tx > 0)) return std::nullopt;  // round time not growing with size: load dominates
  return RoundFit{.fixed_s = std::max(0.0, (sy - per_tx * sx) / n), .per_tx_s = per_tx};
}

size_t BlockWeight(const std::vector<LedgerTx>& txs, const AppRegistry& apps) {
  size_t weight = 0;
  for (const LedgerTx& tx : txs) {
    const auto* app_tx = std::get_if<AppTransaction>(&tx);
    const Application* app = app_tx != nullptr ? apps.Find(app_tx->app) : nullptr;
    weight += app != nullptr ? std::max<size_t>(1, app->Weight(AsBytes(app_tx->payload))) : 1;
  }
  return weight;
}

size_t BlockBudget::mempool_capacity() const {
  return static_cast<size_t>(std::ceil(options_.backlog_pools * static_cast<double>(pool_txs_)));
}

size_t BlockBudget::waiting_capacity() const {
  if (options_.waiting_pools <= 0) return 0;
  return std::max<size_t>(
      1, static_cast<size_t>(std::ceil(options_.waiting_pools * static_cast<double>(pool_txs_))));
}

std::chrono::milliseconds BlockBudget::retry_after() const {
  return std::chrono::milliseconds(
      std::max<int64_t>(100, static_cast<int64_t>(std::llround(mean_round_s_ * 1e3))));
}

}  // namespace tessera::ledger::net
