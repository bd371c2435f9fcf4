#include "ledger/net/surplus_filter.h"

#include "ledger/codec/messages.h"

namespace tessera::ledger::net {

bool SurplusFilter::Admit(uint64_t height, const RoundItem& item) {
  const std::string& payload = item.payload();
  if (payload.empty() ||
      static_cast<uint8_t>(payload[0]) != static_cast<uint8_t>(MessageType::kTxPoolCommitment)) {
    return true;
  }
  // Decoded only (no signature): the fields the cap needs.
  auto c = DecodeTxPoolCommitment(AsBytes(payload));
  if (!c.ok() || c->height != height || !politicians_.count(c->politician_id)) {
    ++dropped_;
    return false;
  }
  std::set<Hash256>& hashes = served_[height][c->politician_id];
  if (hashes.count(c->pool_hash)) return true;  // the same commitment again: Post dedupes
  if (hashes.size() >= kPerPolitician) {
    ++dropped_;
    return false;
  }
  hashes.insert(c->pool_hash);
  return true;
}

void SurplusFilter::Forget(uint64_t height) {
  served_.erase(served_.begin(), served_.upper_bound(height));
}

}  // namespace tessera::ledger::net
