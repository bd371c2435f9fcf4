#include "ledger/net/pool_preverifier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <span>
#include <variant>

#include "ledger/state/block_transition.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {

PoolPreverifier::PoolPreverifier(const AppRegistry* apps, SignatureCache* signatures,
                                 std::function<uint64_t()> committed_height, Options options)
    : apps_(apps),
      signatures_(signatures),
      committed_height_(std::move(committed_height)),
      options_(options) {
  options_.max_pending = std::max<size_t>(options_.max_pending, 1);
  options_.chunk_txs = std::max<size_t>(options_.chunk_txs, 1);
}

PoolPreverifier::~PoolPreverifier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // What it did, for measurements (docs/reviews.md reads it from the politicians' logs).
  if (stats_.pools + stats_.dropped + stats_.stale > 0) {
    spdlog::info(
        "pool pre-verification: {} pools, {} application transactions executed; "
        "{} pools dropped (queue full), {} skipped or cut short (height committed)",
        stats_.pools, stats_.txs, stats_.dropped, stats_.stale);
  }
}

bool PoolPreverifier::Offer(uint64_t height, const std::vector<LedgerTx>& txs,
                            SparseMerkleTree state, BlockContext ctx) {
  Job job{.height = height, .txs = {}, .state = std::move(state), .ctx = ctx};
  for (const LedgerTx& tx : txs) {
    if (std::holds_alternative<AppTransaction>(tx)) job.txs.push_back(tx);
  }
  if (job.txs.empty()) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    if (queue_.size() >= options_.max_pending) {
      queue_.pop_front();  // the oldest is the likeliest to be executed or committed already
      ++stats_.dropped;
    }
    queue_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  }
  cv_.notify_one();
  return true;
}

void PoolPreverifier::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return stop_ || (queue_.empty() && !busy_); });
}

PoolPreverifier::Stats PoolPreverifier::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void PoolPreverifier::Run() {
  SignatureCache::Scope scope(signatures_);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Execute(job);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
  idle_cv_.notify_all();
}

// No lock held: ApplyBlock runs over an immutable tree, and applications are thread-safe
// (a politician already runs them from concurrent request handlers).
void PoolPreverifier::Execute(const Job& job) {
  const std::span<const LedgerTx> all(job.txs);
  size_t done = 0;
  bool stale = false;
  for (size_t begin = 0; begin < all.size(); begin += options_.chunk_txs) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    if (committed_height_() >= job.height) {
      stale = true;
      break;
    }
    const auto chunk = all.subspan(begin, std::min(options_.chunk_txs, all.size() - begin));
    (void)ApplyBlock(TreeLookup(job.state), chunk, job.ctx, *apps_);  // for its side effects
    done += chunk.size();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (done > 0) ++stats_.pools;
  stats_.txs += done;
  if (stale) ++stats_.stale;
}

}  // namespace tessera::ledger::net
