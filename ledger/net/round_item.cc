#include "ledger/net/round_item.h"

#include "ledger/crypto/hash.h"

namespace tessera::ledger::net {

Hash256 RoundItemHash(const RoundItem& item) {
  Sha256Hasher h;
  h.Update(item.payload()).UpdateByte(0).Update(item.block_signature());
  return h.Final();
}

}  // namespace tessera::ledger::net
