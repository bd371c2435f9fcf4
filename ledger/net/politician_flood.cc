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

// The cap comes first: a commitment of a politician that already has two for this height is
// refused on its decoded fields alone, so the thousands a flooder signs cost an honest
// politician a decode each, not a signature check each (PoliticianFloodTest counts them). A
// forged commitment never enters the cap (it is inserted only once verified), so nobody else
// can use it up for a politician.
Status PoliticianNode::AdmitCommitment(uint64_t h, const TxPoolCommitment& c, RoundLog& log) {
  const PoliticianInfo* owner = options_.genesis.Politician(c.politician_id);
  if (c.height != h || owner == nullptr) return InvalidArgumentError("invalid pool commitment");
  std::set<Hash256>& signed_pools = log.commitments[c.politician_id];
  if (!signed_pools.count(c.pool_hash) && signed_pools.size() >= 2) {
    return ResourceExhaustedError("politician " + std::to_string(c.politician_id) +
                                  " already has two commitments for height " + std::to_string(h));
  }
  if (!VerifyTxPoolCommitment(c, owner->key))
    return InvalidArgumentError("invalid pool commitment");
  // One commitment per politician and height; a second is equivocation evidence and is kept
  // (citizens leave such a politician out).
  signed_pools.insert(c.pool_hash);
  return Status::Ok();
}

}  // namespace tessera::ledger::net
