#include "reviews/client/item_audit.h"

#include <set>

namespace tessera::reviews::client {

std::vector<ledger::Hash256> TagKeys(const std::vector<PostedReview>& candidates) {
  std::vector<ledger::Hash256> keys;
  keys.reserve(candidates.size());
  for (const PostedReview& r : candidates) {
    keys.push_back(onchain::leaf::Tag(r.item, r.epoch, r.entry.signature.tag));
  }
  return keys;
}

std::vector<PostedReview> SelectCommitted(
    const std::vector<PostedReview>& candidates,
    const std::vector<std::optional<ledger::LeafValue>>& tags) {
  std::vector<PostedReview> out;
  std::set<ledger::Hash256> taken;
  for (size_t i = 0; i < candidates.size() && i < tags.size(); ++i) {
    const PostedReview& r = candidates[i];
    if (!tags[i]) continue;
    ledger::Hash256 record = onchain::ReviewRecordHash(r.item, r.epoch, r.entry);
    if (*tags[i] != record) continue;
    if (!taken.insert(onchain::leaf::Tag(r.item, r.epoch, r.entry.signature.tag)).second) continue;
    out.push_back(r);
  }
  return out;
}

ItemAudit Replay(std::vector<PostedReview> reviews) {
  ItemAudit audit;
  for (const PostedReview& r : reviews) {
    if (r.entry.rating >= 1 && r.entry.rating <= 5) audit.tally.histogram[r.entry.rating - 1] += 1;
    audit.chain =
        onchain::NextChain(audit.chain, onchain::ReviewRecordHash(r.item, r.epoch, r.entry));
  }
  audit.reviews = std::move(reviews);
  return audit;
}

Status CheckAgainstState(const ItemAudit& audit, const onchain::Tally& proved_tally,
                         const ledger::LeafValue& proved_chain) {
  if (audit.tally != proved_tally) {
    return DataLossError("tally mismatch: the reviews give " + std::to_string(audit.tally.count()) +
                         " reviews summing to " + std::to_string(audit.tally.sum()) +
                         ", the proved state " + std::to_string(proved_tally.count()) +
                         " summing to " + std::to_string(proved_tally.sum()));
  }
  if (audit.chain != proved_chain) {
    return DataLossError(
        "review chain mismatch: the reviews are not exactly the committed ones in commit order "
        "(a rating, text, ring or signature differs, or a review was added, dropped or moved)");
  }
  return Status::Ok();
}

}  // namespace tessera::reviews::client
