// Token buckets per caller: each key may make `rate_per_s` requests per second on average and
// `burst` at once. Memory is bounded: beyond `max_keys` callers the least recently seen are
// forgotten (a forgotten caller starts again with a full bucket, which is what an idle caller
// would have anyway). Thread-safe.
#pragma once

#include <chrono>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera::ledger::net {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  RateLimiter(double rate_per_s, double burst, size_t max_keys = 100000);

  // Takes one token from `key`'s bucket; false (nothing taken) if it is empty.
  bool Allow(const std::string& key, Clock::time_point now = Clock::now());
  // When `key`'s next token is due, in milliseconds from `now` (0 if one is there).
  uint32_t RetryAfterMs(const std::string& key, Clock::time_point now = Clock::now());
  size_t keys() const;

 private:
  struct Bucket {
    double tokens;
    Clock::time_point refilled;
    std::list<std::string>::iterator recency;
  };
  Bucket& Refill(const std::string& key, Clock::time_point now);  // mu_ held

  const double rate_, burst_;
  const size_t max_keys_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  std::list<std::string> recency_;  // most recently seen first
};

}  // namespace tessera::ledger::net
