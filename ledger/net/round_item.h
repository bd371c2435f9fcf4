// The identity of a relayed round item (pool commitment, witness list, proposal, vote): what
// politicians deduplicate gossip by and what citizens ask for when they read a round by hash.
#pragma once

#include "ledger/crypto/bytes.h"
#include "ledger/net/blockene.pb.h"

namespace tessera::ledger::net {

// SHA-256(payload || 0x00 || block_signature): the identity is not part of it, because it is
// implied by the signed payload.
Hash256 RoundItemHash(const RoundItem& item);

}  // namespace tessera::ledger::net
