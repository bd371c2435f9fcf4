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
  options_.threads = std::max<size_t>(options_.threads, 1);
}

PoolPreverifier::~PoolPreverifier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
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
  auto job = std::make_shared<Job>();
  job->height = height;
  job->state = std::move(state);
  job->ctx = ctx;
  for (const LedgerTx& tx : txs) {
    if (std::holds_alternative<AppTransaction>(tx)) job->txs.push_back(tx);
  }
  if (job->txs.empty()) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    if (queue_.size() >= options_.max_pending) {
      // The oldest is the likeliest to be executed or committed already. Chunks of it already
      // running finish; the pool is counted as dropped when the last one ends.
      std::shared_ptr<Job> oldest = std::move(queue_.front());
      queue_.pop_front();
      oldest->next = oldest->txs.size();
      oldest->dropped = true;
      if (oldest->running == 0) Finish(*oldest);
    }
    queue_.push_back(std::move(job));
    while (threads_.size() < options_.threads) threads_.emplace_back([this] { Run(); });
  }
  cv_.notify_all();
  return true;
}

void PoolPreverifier::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return stop_ || (queue_.empty() && running_ == 0); });
}

PoolPreverifier::Stats PoolPreverifier::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void PoolPreverifier::Finish(const Job& job) {
  stats_.txs += job.done;
  if (job.dropped) {
    ++stats_.dropped;
    return;
  }
  if (job.done > 0) ++stats_.pools;
  if (job.stale) ++stats_.stale;
}

// Chunks run with no lock held: ApplyBlock runs over an immutable tree, and applications are
// thread-safe (a politician already runs them from concurrent request handlers).
void PoolPreverifier::Run() {
  SignatureCache::Scope scope(signatures_);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    std::shared_ptr<Job> job = queue_.front();
    const size_t begin = job->next;
    const size_t n = std::min(options_.chunk_txs, job->txs.size() - begin);
    job->next += n;
    if (job->next >= job->txs.size()) queue_.pop_front();  // its last chunk is taken
    ++job->running;
    ++running_;
    lock.unlock();
    const bool stale = committed_height_() >= job->height;
    if (!stale) {
      const std::span<const LedgerTx> chunk(job->txs.data() + begin, n);
      (void)ApplyBlock(TreeLookup(job->state), chunk, job->ctx, *apps_);  // for its side effects
    }
    lock.lock();
    --running_;
    --job->running;
    if (stale) {
      // The height committed: nothing more of this job is worth checking.
      job->stale = true;
      if (job->next < job->txs.size()) {
        job->next = job->txs.size();
        auto it = std::find(queue_.begin(), queue_.end(), job);
        if (it != queue_.end()) queue_.erase(it);
      }
    } else {
      job->done += n;
    }
    if (job->running == 0 && job->next >= job->txs.size()) Finish(*job);
    if (queue_.empty() && running_ == 0) idle_cv_.notify_all();
  }
  idle_cv_.notify_all();
}

}  // namespace tessera::ledger::net
