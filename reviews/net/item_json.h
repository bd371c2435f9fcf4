// JSON views of items for reviews-net (and anyone scripting against it).
//
// ItemToJson(view) is what `reviews-net show --json` prints:
//   { "item": { "id", "name", "created_height", "review_epoch", "count", "sum", "mean",
//               "histogram": [5], "registered_keys", "ring_size",
//               "hijack": { "feasible", "reviews_needed", "identities_without_drac",
//                           "identities_with_drac", "predicted_factor" } | null },
//     "verified": true | false, "verify_error": "...", "chain": "<hex>",
//     "reviews": [ { "height", "epoch", "rating", "text", "tag": "<hex>",
//                    "ring_size", "signature": "<hex>" }, ... ] }
// Each review carries its signature (its ring is the item's ring of the epoch, in state), so
// the list can be checked again later against the proved state (`reviews-net verify-tally
// --reviews FILE`).
#pragma once

#include <nlohmann/json.hpp>

#include "reviews/client/client.h"

namespace tessera::reviews::net {

nlohmann::json SummaryToJson(const client::ItemSummary& s, uint64_t ring_size);
nlohmann::json ItemToJson(const client::ItemView& view, uint64_t ring_size);

// The reviews of an ItemToJson document; INVALID_ARGUMENT naming the review and field.
struct LocalReviews {
  onchain::ItemId item{};
  std::vector<client::PostedReview> reviews;
};
Result<LocalReviews> ReviewsFromJson(std::string_view text);

}  // namespace tessera::reviews::net
