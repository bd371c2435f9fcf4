// libFuzzer target for the politicians' vote store (vote_relay.h): arbitrary bytes cut into
// vote-sized records are decoded (strictly) and admitted. Nothing may crash or hang, and the
// store never holds more than two votes per (voter, period, step) nor a period beyond the
// window -- the bounds that keep a flooding citizen from growing a politician's memory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <tuple>

#include "ledger/net/vote_relay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  using namespace tessera::ledger::net;
  constexpr size_t kVoteBytes = 223;
  VoteRelay relay;
  std::map<std::tuple<PublicKey, uint32_t, uint8_t>, size_t> per_key;
  const size_t threshold = size > 0 ? 1 + data[0] % 4 : 1;
  for (size_t off = size > 0 ? 1 : 0; off + kVoteBytes <= size; off += kVoteBytes) {
    auto vote = DecodeVote(ByteSpan(data + off, kVoteBytes));
    if (!vote.ok()) continue;
    const uint32_t floor = relay.floor_period();
    if (!relay.Admit(*vote, threshold).ok()) continue;
    if (vote->period > uint64_t{floor} + VoteRelay::kMaxPeriodsAhead) std::abort();
    size_t& n = per_key[{vote->citizen, vote->period, static_cast<uint8_t>(vote->step)}];
    if (++n > 2) std::abort();
  }
  return 0;
}
