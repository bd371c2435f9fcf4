#include "ledger/net/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace tessera::ledger::net {

RateLimiter::RateLimiter(double rate_per_s, double burst, size_t max_keys)
    : rate_(std::max(rate_per_s, 1e-9)),
      burst_(std::max(burst, 1.0)),
      max_keys_(std::max<size_t>(max_keys, 1)) {}

RateLimiter::Bucket& RateLimiter::Refill(const std::string& key, Clock::time_point now) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) {
      buckets_.erase(recency_.back());
      recency_.pop_back();
    }
    recency_.push_front(key);
    it = buckets_.emplace(key, Bucket{burst_, now, recency_.begin()}).first;
  } else {
    recency_.splice(recency_.begin(), recency_, it->second.recency);
  }
  Bucket& b = it->second;
  const double elapsed = std::chrono::duration<double>(now - b.refilled).count();
  if (elapsed > 0) {
    b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
    b.refilled = now;
  }
  return b;
}

bool RateLimiter::Allow(const std::string& key, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  Bucket& b = Refill(key, now);
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

uint32_t RateLimiter::RetryAfterMs(const std::string& key, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  Bucket& b = Refill(key, now);
  if (b.tokens >= 1) return 0;
  return static_cast<uint32_t>(std::ceil((1 - b.tokens) / rate_ * 1000));
}

size_t RateLimiter::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

}  // namespace tessera::ledger::net
