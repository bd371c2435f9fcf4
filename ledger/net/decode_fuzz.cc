// libFuzzer target for the network's decoders: an identity, a downloaded pool (checked
// against its commitment as a witness does), and a certified block split into
// header, certificate and identity parts, then verified on top of a fixed genesis. None may
// crash, hang or accept bytes its encoder would not produce.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ledger/net/chain.h"
#include "ledger/net/identity.h"
#include "ledger/net/pool_availability.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  using namespace tessera::ledger::net;
  ByteSpan bytes(data, size);
  auto id = DecodeIdentity(bytes);
  if (id.ok() && EncodeIdentity(*id) != std::string(AsChars(bytes))) __builtin_trap();
  // A pool as a GetPools reply carries it (a protobuf Pool), checked as a witness checks it.
  static const Genesis pools_genesis = [] {
    Genesis g;
    g.politicians.push_back({0, PublicKey{}, "127.0.0.1:1"});
    g.max_pool_txs = 64;
    return g;
  }();
  Pool pool;
  if (pool.ParseFromArray(data, static_cast<int>(size))) {
    auto c = DecodeTxPoolCommitment(AsBytes(pool.commitment()));
    (void)CheckPoolData(pool, c.ok() ? c->pool_hash : Hash256{}, c.ok() ? c->height : 0,
                        pools_genesis);
  }
  if (size < 4) return 0;
  // First four bytes: the lengths (u16, big-endian) of the header and certificate parts; the
  // rest is one identity.
  size_t a = std::min<size_t>((data[0] << 8) | data[1], size - 4);
  size_t b = std::min<size_t>((data[2] << 8) | data[3], size - 4 - a);
  std::string rest(reinterpret_cast<const char*>(data + 4), size - 4);
  auto block = DecodeCertifiedBlock(rest.substr(0, a), rest.substr(a, b), {rest.substr(a + b)});
  if (block.ok()) {
    static const Genesis genesis = [] {
      Genesis g;
      g.sortition.population = g.sortition.committee_size = 4;
      g.sortition.seed_lookback = 1;
      g.cert_threshold = 3;
      return g;
    }();
    static const BlockHeader parent = *genesis.GenesisHeader();
    (void)VerifyCertifiedBlock(genesis, parent, *block);
  }
  return 0;
}
