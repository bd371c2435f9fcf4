// When a client registers its review key: the height is drawn by the client, uniformly, so that
// the anonymous RegisterKey cannot be matched to the public KeyIssue that names the identity by
// "the registration right after the issue".
//
//   DrawRegistrationHeight(now, close, std::nullopt, rng)   default: uniform in [now, close - 4]
//   DrawRegistrationHeight(now, close, 20, rng)             uniform in [now, min(now + 20, close -
//   4)] DrawRegistrationHeight(now, close, 0, rng)              now (opt-out: linkable by timing)
//
// The last 4 blocks before the close are left for the registration to commit. What remains
// linkable (docs/reviews.md, threat model): a registration can only follow its issue, so a key
// registered at height h hides among the identities issued before h; the earlier a client is
// issued, the larger that set. The submission still leaves from the client's own address.
#pragma once

#include <cstdint>
#include <optional>
#include <random>

namespace tessera::reviews::client {

inline constexpr uint64_t kRegistrationCommitMargin = 4;

inline uint64_t DrawRegistrationHeight(uint64_t now, uint64_t close,
                                       std::optional<uint64_t> max_delay_blocks,
                                       std::mt19937_64& rng) {
  const uint64_t latest = close > kRegistrationCommitMargin ? close - kRegistrationCommitMargin : 0;
  if (latest <= now) return now;
  uint64_t last = latest;
  if (max_delay_blocks) last = std::min(latest, now + *max_delay_blocks);
  return std::uniform_int_distribution<uint64_t>(now, last)(rng);
}

}  // namespace tessera::reviews::client
