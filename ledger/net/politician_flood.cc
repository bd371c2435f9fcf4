// The flood adversary (PoliticianFaults::flood): what a politician can send without limit --
// signed commitments by the thousand for the height being agreed, and pools for heights far
// ahead. Honest politicians keep two commitments per politician and height and refuse pools
// more than two heights ahead (AddPool, AcceptItem); citizens keep two commitments per
// politician (two are equivocation and exclude its pool). docs/ledger-network.md,
// "Adversaries and their measured effect".
#include "ledger/crypto/hash.h"
#include "ledger/net/politician.h"
#include "ledger/net/round_item.h"

namespace tessera::ledger::net {

void PoliticianNode::Flood(uint64_t h) {
  RoundLog& log = rounds_[h];
  for (int i = 0; i < PoliticianFaults::kFloodCommitments; ++i) {
    TxPoolCommitment c{.politician_id = options_.id,
                       .height = h,
                       .tx_count = 0,
                       .pool_hash = Sha256("flood " + std::to_string(h) + " " + std::to_string(i))};
    SignTxPoolCommitment(c, options_.keys);
    RoundItem item;
    item.set_payload(EncodeTxPoolCommitment(c));
    // Served to citizens from its own round log, and pushed to every peer.
    if (log.seen.emplace(RoundItemHash(item), log.items.size()).second) log.items.push_back(item);
    Gossip([item, h](PoliticianClient& peer) { (void)peer.Post(h, item); });
  }
  for (uint64_t ahead : {10, 1000, 1000000}) {
    TxPoolCommitment c{.politician_id = options_.id,
                       .height = h + ahead,
                       .tx_count = 0,
                       .pool_hash = PoolHash({})};
    SignTxPoolCommitment(c, options_.keys);
    Pool pool;
    pool.set_commitment(EncodeTxPoolCommitment(c));
    Gossip([pool](PoliticianClient& peer) { (void)peer.PostPool(pool); });
  }
}

}  // namespace tessera::ledger::net
