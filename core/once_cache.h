// A bounded cache of successful computations that also shares the ones in flight, so that an
// expensive, deterministic check (a signature, a VRF proof) runs once per process however many
// threads ask for it at once.
//
//   OnceCache<Hash256, VrfOutput> verified(1 << 16);
//   Result<VrfOutput> beta =
//       verified.GetOrCompute(digest, [&] { return VrfVerify(key, alpha, pi); });
//
// Only successes are kept: a failure is returned to the threads that waited for it and
// computed again on the next request, so a cache hit is exactly what computing again would
// give, provided the key names everything the computation reads. The oldest entry is forgotten
// first once `capacity` are kept. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>

#include "core/status.h"

namespace tessera {

struct OnceCacheStats {
  uint64_t computed = 0;  // computations run
  uint64_t hits = 0;      // answered from a kept success
  uint64_t joined = 0;    // answered by a computation another thread was running
};

template <class Key, class Value>
class OnceCache {
 public:
  explicit OnceCache(size_t capacity) : capacity_(capacity) {}
  OnceCache(const OnceCache&) = delete;
  OnceCache& operator=(const OnceCache&) = delete;

  // The kept value for `key`; else the result of the computation of `key` another thread is
  // running; else `compute()`'s, run outside the lock and kept when it succeeds.
  Result<Value> GetOrCompute(const Key& key, const std::function<Result<Value>()>& compute) {
    std::unique_lock lock(mu_);
    if (auto kept = kept_.find(key); kept != kept_.end()) {
      ++stats_.hits;
      return kept->second;
    }
    if (auto running = in_flight_.find(key); running != in_flight_.end()) {
      ++stats_.joined;
      std::shared_future<Result<Value>> result = running->second;
      lock.unlock();
      return result.get();
    }
    std::promise<Result<Value>> promise;
    in_flight_.emplace(key, promise.get_future().share());
    lock.unlock();
    Result<Value> result = compute();
    lock.lock();
    ++stats_.computed;
    in_flight_.erase(key);
    if (result.ok()) KeepLocked(key, *result);
    lock.unlock();
    promise.set_value(result);
    return result;
  }

  OnceCacheStats stats() const {
    std::lock_guard lock(mu_);
    return stats_;
  }

 private:
  void KeepLocked(const Key& key, const Value& value) {
    if (capacity_ == 0 || !kept_.emplace(key, value).second) return;
    order_.push_back(key);
    if (order_.size() > capacity_) {
      kept_.erase(order_.front());
      order_.pop_front();
    }
  }

  mutable std::mutex mu_;
  const size_t capacity_;
  std::map<Key, Value> kept_;
  std::deque<Key> order_;
  std::map<Key, std::shared_future<Result<Value>>> in_flight_;
  OnceCacheStats stats_;
};

}  // namespace tessera
