#include "ledger/net/safe_sample.h"

#include <algorithm>

namespace tessera::ledger::net {

std::vector<uint32_t> DrawSafeSample(uint32_t politicians, uint32_t k, const Blacklist& blacklist,
                                     uint64_t height, std::mt19937_64& rng) {
  const size_t size = k == 0 ? politicians : std::min(k, politicians);
  std::vector<uint32_t> clean, blocked;
  for (uint32_t i = 0; i < politicians; ++i) {
    (blacklist.Blocked(i, height) ? blocked : clean).push_back(i);
  }
  std::shuffle(clean.begin(), clean.end(), rng);
  std::shuffle(blocked.begin(), blocked.end(), rng);
  clean.insert(clean.end(), blocked.begin(), blocked.end());
  clean.resize(size);
  return clean;
}

}  // namespace tessera::ledger::net
