#include "ledger/state/synthetic.h"

#include <algorithm>
#include <random>
#include <unordered_set>

#include "ledger/crypto/hash.h"

namespace tessera::ledger {

Hash256 SyntheticAccountKey(uint64_t index) {
  uint8_t buf[15] = {'a', 'c', 'c', 'o', 'u', 'n', 't'};
  for (int i = 0; i < 8; ++i) buf[7 + i] = static_cast<uint8_t>(index >> (56 - 8 * i));
  return Sha256(ByteSpan(buf, sizeof buf));
}

std::vector<LeafUpdate> SyntheticGenesis(uint64_t count, uint64_t balance) {
  std::vector<LeafUpdate> updates;
  updates.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    updates.push_back({SyntheticAccountKey(i), EncodeAccount({balance, 0})});
  }
  return updates;
}

std::vector<LeafUpdate> SyntheticBlock(uint64_t seed, uint64_t version, uint64_t accounts,
                                       size_t size) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL ^ version);
  std::unordered_set<uint64_t> chosen;
  std::vector<LeafUpdate> updates;
  size = static_cast<size_t>(std::min<uint64_t>(size, accounts));
  while (updates.size() < size) {
    uint64_t index = rng() % accounts;
    if (!chosen.insert(index).second) continue;
    updates.push_back({SyntheticAccountKey(index), EncodeAccount({rng() % 1000000, version})});
  }
  return updates;
}

}  // namespace tessera::ledger
