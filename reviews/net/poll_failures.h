// Polling for commits while a load generator waits for its transactions, and the polls that fail.
//
// reviews-load polls the chain until the items, the reviews or the transfers it sent show as
// committed; every one of its waits polls the same way, PollLeaves: a Refresh, then the proved
// leaves it waits for (ReadLeaves, in parts of kReadPartKeys keys), as one result. Under load
// one poll can fail while the chain is live: a politician answers past its deadline, is busy
// catching up, or serves a block the client cannot read yet. Before session 15 the first such
// failure ended the whole run (its figures lost). The waits now retry a failed poll, count every
// failure by its error, report them, and give up only after `max_consecutive` failures in a row
// (or at the client's timeout, as before). PollFailures holds the one rule for all of them: what
// a wait writes when it retries (RetryLine) and how long it pauses before the next poll (Pause).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/crypto/hash.h"
#include "ledger/state/account.h"
#include "reviews/client/client.h"

namespace tessera::reviews::net {

inline constexpr uint32_t kMaxConsecutivePollFailures = 20;
inline constexpr std::chrono::milliseconds kPollFailurePause{500};
// Proved leaves are read in parts of this many keys (a politician's state reply stays small,
// and the reads stay within its anonymous read budget).
inline constexpr size_t kReadPartKeys = 512;

// One poll: c.Refresh(), then the proved leaves of `keys` (in parts of kReadPartKeys), in the
// order of `keys`. The first error of either is the result.
Result<std::vector<std::optional<ledger::LeafValue>>> PollLeaves(
    client::ReviewsClient& c, const std::vector<ledger::Hash256>& keys);

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

  // The progress line a wait writes after Note(failed) let it go on.
  std::string RetryLine(uint64_t height, const Status& failed) const {
    return "height " + std::to_string(height) + ": poll failed (" + std::to_string(streak_) +
           " in a row), retrying: " + failed.ToString() + "\n";
  }

  // How long a wait sleeps before its next poll: its poll interval, and at least
  // kPollFailurePause while the last poll noted failed.
  std::chrono::milliseconds Pause(std::chrono::milliseconds poll) const {
    return streak_ == 0 ? poll : std::max(poll, kPollFailurePause);
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
