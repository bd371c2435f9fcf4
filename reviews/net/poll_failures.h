// Failed polls while a load generator waits for its transactions to commit.
//
// reviews-load polls the chain (ReviewsClient::Refresh, then a proved ReadLeaves) until the
// last review or transfer it sent shows as committed. Under load one poll can fail while the
// chain is live: a politician answers past its deadline, is busy catching up, or serves a block
// the client cannot read yet. Before session 15 the first such failure ended the whole run
// (its figures lost). The poll loops now retry a failed poll after kPollFailurePause, count
// every failure by its error, report them, and give up only after `max_consecutive` failures in
// a row (or at the client's timeout, as before).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"

namespace tessera::reviews::net {

inline constexpr uint32_t kMaxConsecutivePollFailures = 20;
inline constexpr std::chrono::milliseconds kPollFailurePause{500};

class PollFailures {
 public:
  explicit PollFailures(uint32_t max_consecutive = kMaxConsecutivePollFailures)
      : max_consecutive_(max_consecutive) {}

  // The outcome of one poll. OK when the loop should go on: `s` is OK (a run of failures ends)
  // or a failure within the bound (counted: the caller pauses and polls again). Past the bound,
  // `s` with how many polls failed in a row.
  Status Note(const Status& s) {
    if (s.ok()) {
      streak_ = 0;
      return Status::Ok();
    }
    ++total_;
    ++errors_[s.ToString()];
    if (++streak_ <= max_consecutive_) return Status::Ok();
    return s.WithContext(std::to_string(streak_) + " polls in a row failed (at most " +
                         std::to_string(max_consecutive_) + " are retried)");
  }

  uint64_t total() const { return total_; }
  uint32_t streak() const { return streak_; }
  const std::map<std::string, uint64_t>& errors() const { return errors_; }

 private:
  uint32_t max_consecutive_;
  uint32_t streak_ = 0;
  uint64_t total_ = 0;
  std::map<std::string, uint64_t> errors_;  // each distinct error, counted
};

}  // namespace tessera::reviews::net
