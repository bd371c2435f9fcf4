// libFuzzer target: a GetHeads reply (protobuf HeadsReply) as a lying politician may send it,
// handed to a chain follower at the genesis header. Parsing and ChainFollower::Extend must
// return, never crash, and take no header that does not extend the tip (without a registered
// proposer's winning ticket none can).
#include <cstddef>
#include <cstdint>

#include "ledger/net/chain_follower.h"

namespace tessera::ledger::net {
struct ChainFollowerFuzz {
  static bool Extend(ChainFollower& follower, const HeadsReply& reply) {
    return follower.Extend(reply);
  }
};
}  // namespace tessera::ledger::net

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger::net;
  static const Genesis genesis = [] {
    Genesis g;
    g.sortition.population = g.sortition.committee_size = g.sortition.proposers = 4;
    g.sortition.seed_lookback = 1;
    g.cert_threshold = 3;
    return g;
  }();
  HeadsReply reply;
  if (!reply.ParseFromArray(data, static_cast<int>(size))) return 0;
  const auto genesis_header = *genesis.GenesisHeader();
  ChainFollower follower(genesis, FollowOptions{}, genesis_header);
  (void)ChainFollowerFuzz::Extend(follower, reply);
  if (follower.tip().height != 0) __builtin_trap();  // nobody can propose in this genesis
  return 0;
}
