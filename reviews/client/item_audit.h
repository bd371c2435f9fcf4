// Checking an item's reviews against the committed state, the way a light client must: the
// reviews come from blocks (or from a local copy), the truth from two proved leaves.
//
//   candidates = index.ReviewCandidates(item);                       // from blocks
//   tag_leaves = ReadLeaves(TagKeys(candidates));                    // proved
//   ItemAudit audit = Replay(SelectCommitted(candidates, tag_leaves));
//   CheckAgainstState(audit, proved_tally, proved_chain);            // OK or DATA_LOSS
//
// The chain leaf is a hash chain over the record hashes of every committed review in commit
// order, so equality proves the list is exactly the committed one: nothing added, dropped,
// reordered or altered (rating, text or signature), not only that the counts add up.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "ledger/state/account.h"
#include "reviews/client/chain_index.h"
#include "reviews/ledger/state_layout.h"

namespace tessera::reviews::client {

// The tag leaf of each candidate, in order.
std::vector<ledger::Hash256> TagKeys(const std::vector<PostedReview>& candidates);

// The committed reviews among the candidates: those whose tag leaf holds their own record
// hash (first occurrence only: the ledger rejects any later review with that tag).
std::vector<PostedReview> SelectCommitted(
    const std::vector<PostedReview>& candidates,
    const std::vector<std::optional<ledger::LeafValue>>& tags);

struct ItemAudit {
  std::vector<PostedReview> reviews;
  onchain::Tally tally;
  ledger::LeafValue chain{};
};

// Tally and chain of `reviews` taken as the committed list, in order.
ItemAudit Replay(std::vector<PostedReview> reviews);

// OK iff the replay matches the proved tally and chain leaves; DATA_LOSS saying what differs.
Status CheckAgainstState(const ItemAudit& audit, const onchain::Tally& proved_tally,
                         const ledger::LeafValue& proved_chain);

}  // namespace tessera::reviews::client
