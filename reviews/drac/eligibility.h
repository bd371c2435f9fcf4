// DRAC (dynamic randomized access control): which review keys may review an item in an epoch.
//
// TrustRate lets only a small random subset of identities review each item, so that a bought
// army of identities cannot all target one item. The paper's exact construction could not be
// read (shared/research/reviews.md §0); this is the lottery proposed in §6 of that note:
//
//   eligible(RK, item, epoch) <=> H(seed_e || epoch || item || RK) < 2^64 * k / N
//
// with H the first 8 bytes (big-endian) of a domain-separated SHA-512, N the number of
// registered review keys, k the expected ring size and seed_e the epoch's public seed (from
// the ledger, once it exists). Each key is eligible independently with probability q = k/N
// (in the random-oracle model), so the ring has expected size k, and anyone holding the
// registered keys and the seed recomputes the same ring. Because seed_e changes every epoch,
// an adversary cannot know in advance which of its identities an item will admit.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "reviews/common/bytes.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews::drac {

using Seed = std::array<uint8_t, 32>;

struct Lottery {
  uint64_t expected_ring_size = 0;  // k
  uint64_t registered_keys = 0;     // N
};

// floor(2^64 * k / N), saturating at 2^64 - 1 when k >= N (everyone eligible).
// INVALID_ARGUMENT when k or N is zero.
Result<uint64_t> Threshold(const Lottery& lottery);

// The lottery value of one key for one (item, epoch, seed).
uint64_t LotteryValue(const urs::Point& review_key, std::string_view item, uint64_t epoch,
                      const Seed& seed);

bool IsEligible(const urs::Point& review_key, std::string_view item, uint64_t epoch,
                const Seed& seed, uint64_t threshold);

// The eligible keys among `registered` (N = registered.size()), in canonical order. May be
// empty for tiny k.
Result<std::vector<urs::Point>> EligibleKeys(const std::vector<urs::Point>& registered,
                                             std::string_view item, uint64_t epoch,
                                             const Seed& seed, uint64_t expected_ring_size);

// The same as a URS ring; FAILED_PRECONDITION when no key is eligible.
Result<urs::Ring> EligibleRing(const std::vector<urs::Point>& registered, std::string_view item,
                               uint64_t epoch, const Seed& seed, uint64_t expected_ring_size);

}  // namespace tessera::reviews::drac
