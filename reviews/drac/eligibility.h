// DRAC (dynamic randomized access control): which review keys may review an item in an epoch.
//
// TrustRate lets only a small random subset of identities review each item, so that a bought
// army of identities cannot all target one item. The paper's exact construction could not be
// read (shared/research/reviews.md §0). Every key gets a lottery value per (item, epoch):
//
//   value(RK, item, epoch) = first 8 bytes (big-endian) of SHA-512("tessera/reviews/drac/v1" |
//                            seed_e | epoch | item | RK)
//
// with seed_e the epoch's public seed (the ledger records it after the keys are frozen and the
// item exists). Two draws use it:
//   * the exact-k draw (ours; what the ledger and the clients use): the ring is the k registered
//     keys with the lowest (value, key) pairs, every key when N <= k. Exactly min(k, N)
//     reviewers per item and epoch, each key in with probability k/N, nobody able to tell which
//     before seed_e exists, and anyone with the registered keys and the seed recomputes it;
//   * the expected-k draw (the research note's §6 proposal): each key is in when
//     value < floor(2^64 k / N), independently with probability q = k/N, so the ring has
//     Binomial(N, q) members. The window simulation (sim/) and its closed form
//     (metric/window_attack.h) model this draw.
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

struct Lottery {                    // the expected-k draw's parameters
  uint64_t expected_ring_size = 0;  // k
  uint64_t registered_keys = 0;     // N
};

// The expected-k draw's threshold: floor(2^64 * k / N), saturating at 2^64 - 1 when k >= N
// (everyone eligible). INVALID_ARGUMENT when k or N is zero.
Result<uint64_t> Threshold(const Lottery& lottery);

// The lottery value of one key for one (item, epoch, seed).
uint64_t LotteryValue(const urs::Point& review_key, std::string_view item, uint64_t epoch,
                      const Seed& seed);

// The expected-k draw: value < threshold.
bool IsEligible(const urs::Point& review_key, std::string_view item, uint64_t epoch,
                const Seed& seed, uint64_t threshold);

// A key with its lottery value; the exact-k draw keeps the k lowest, ties (probability about
// N^2 / 2^65) broken by the key's bytes, so the order is total and the draw deterministic.
struct Ranked {
  uint64_t value = 0;
  urs::Point key{};
  friend bool operator<(const Ranked& a, const Ranked& b) {
    return a.value != b.value ? a.value < b.value : a.key < b.key;
  }
};
Ranked Rank(const urs::Point& review_key, std::string_view item, uint64_t epoch, const Seed& seed);
// The min(k, size) lowest of `ranked` (which must hold distinct keys), as keys in canonical
// (ascending byte) order. The ledger merges its ring opening's parts with it.
std::vector<urs::Point> LowestK(std::vector<Ranked> ranked, size_t k);

// The exact-k ring: the min(k, N) keys of `registered` (N = registered.size(), duplicates
// counted once) with the lowest lottery values, in canonical order. INVALID_ARGUMENT for k = 0.
Result<std::vector<urs::Point>> EligibleKeys(const std::vector<urs::Point>& registered,
                                             std::string_view item, uint64_t epoch,
                                             const Seed& seed, uint64_t ring_size);

// The same as a URS ring; FAILED_PRECONDITION when no key is registered.
Result<urs::Ring> EligibleRing(const std::vector<urs::Point>& registered, std::string_view item,
                               uint64_t epoch, const Seed& seed, uint64_t ring_size);

}  // namespace tessera::reviews::drac
