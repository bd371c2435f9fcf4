// Politicians relay evidence (evidence.h): every round a politician serves carries the
// verified evidence of every politician blacklisted at that height, so each committee reads it
// whichever politicians of its sample are honest. docs/ledger-network.md, "Evidence and
// blacklisting".
#include "ledger/crypto/hash.h"
#include "ledger/net/politician.h"
#include "ledger/net/round_item.h"

namespace tessera::ledger::net {

void PoliticianNode::RelayEvidence(uint64_t h) {
  RoundLog& log = rounds_[h];
  for (std::string& evidence : evidence_.Active(h)) {
    RoundItem item;
    item.set_payload(std::move(evidence));
    if (log.seen.emplace(RoundItemHash(item), log.items.size()).second) log.items.push_back(item);
  }
  if (options_.faults.frame && options_.genesis.politicians.back().id != options_.id) {
    // The frame adversary: two pools "of" the last politician, signed with its own key.
    const uint32_t victim = options_.genesis.politicians.back().id;
    std::vector<TxPoolCommitment> forged;
    for (int variant = 0; variant < 2; ++variant) {
      TxPoolCommitment c{
          .politician_id = victim,
          .height = h,
          .tx_count = 0,
          .pool_hash = Sha256("frame " + std::to_string(h) + " " + std::to_string(variant))};
      SignTxPoolCommitment(c, options_.keys);
      forged.push_back(c);
    }
    RoundItem item;
    item.set_payload(EncodeEvidence(*PoolEquivocation(forged[0], forged[1])));
    if (log.seen.emplace(RoundItemHash(item), log.items.size()).second) log.items.push_back(item);
  }
}

}  // namespace tessera::ledger::net
