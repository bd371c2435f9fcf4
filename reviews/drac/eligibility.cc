#include "reviews/drac/eligibility.h"

#include <sodium.h>

#include <algorithm>

namespace tessera::reviews::drac {

namespace {
constexpr std::string_view kDomain = "tessera/reviews/drac/v1";
}

Result<uint64_t> Threshold(const Lottery& lottery) {
  if (lottery.registered_keys == 0) return InvalidArgumentError("no registered review keys");
  if (lottery.expected_ring_size == 0) return InvalidArgumentError("expected ring size is zero");
  if (lottery.expected_ring_size >= lottery.registered_keys) return UINT64_MAX;
  unsigned __int128 t =
      (static_cast<unsigned __int128>(lottery.expected_ring_size) << 64) / lottery.registered_keys;
  return static_cast<uint64_t>(t);
}

uint64_t LotteryValue(const urs::Point& review_key, std::string_view item, uint64_t epoch,
                      const Seed& seed) {
  urs::EnsureSodium();
  Bytes input;
  input.reserve(kDomain.size() + 4 + seed.size() + 8 + 4 + item.size() + 32);
  AppendLengthPrefixed(input, AsBytes(kDomain));
  input.insert(input.end(), seed.begin(), seed.end());
  AppendBigEndian(input, epoch, 8);
  AppendLengthPrefixed(input, AsBytes(item));
  input.insert(input.end(), review_key.begin(), review_key.end());
  uint8_t h[crypto_hash_sha512_BYTES];
  crypto_hash_sha512(h, input.data(), input.size());
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | h[i];
  return v;
}

bool IsEligible(const urs::Point& review_key, std::string_view item, uint64_t epoch,
                const Seed& seed, uint64_t threshold) {
  // With k >= N the threshold saturates and every key is in.
  if (threshold == UINT64_MAX) return true;
  return LotteryValue(review_key, item, epoch, seed) < threshold;
}

Ranked Rank(const urs::Point& review_key, std::string_view item, uint64_t epoch, const Seed& seed) {
  return {LotteryValue(review_key, item, epoch, seed), review_key};
}

std::vector<urs::Point> LowestK(std::vector<Ranked> ranked, size_t k) {
  const size_t keep = std::min(k, ranked.size());
  std::nth_element(ranked.begin(), ranked.begin() + static_cast<long>(keep), ranked.end());
  std::vector<urs::Point> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) out.push_back(ranked[i].key);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<urs::Point>> EligibleKeys(const std::vector<urs::Point>& registered,
                                             std::string_view item, uint64_t epoch,
                                             const Seed& seed, uint64_t ring_size) {
  if (ring_size == 0) return InvalidArgumentError("ring size is zero");
  std::vector<urs::Point> keys = registered;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<Ranked> ranked;
  ranked.reserve(keys.size());
  for (const urs::Point& key : keys) ranked.push_back(Rank(key, item, epoch, seed));
  return LowestK(std::move(ranked), ring_size);
}

Result<urs::Ring> EligibleRing(const std::vector<urs::Point>& registered, std::string_view item,
                               uint64_t epoch, const Seed& seed, uint64_t ring_size) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<urs::Point> keys,
                           EligibleKeys(registered, item, epoch, seed, ring_size));
  if (keys.empty()) {
    return FailedPreconditionError("no review key is registered for item '" + std::string(item) +
                                   "' in epoch " + std::to_string(epoch));
  }
  return urs::Ring::Create(std::move(keys));
}

}  // namespace tessera::reviews::drac
