// How the reviews client's records (reviews/client/client.h) become the web page's records
// (backend.h). Pure functions, apart from LedgerBackend so they are tested without a ledger.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "reviews/client/client.h"
#include "reviews/web/backend.h"

namespace tessera::reviews::web {

// The id of an item in URLs: the lower-case hex of its 32-byte ItemId (SHA-256 of its name).
std::string ItemIdToText(const onchain::ItemId& id);
// INVALID_ARGUMENT unless `text` is exactly 64 hex digits.
Result<onchain::ItemId> ItemIdFromText(std::string_view text);

HijackView ToHijackView(const std::optional<metric::HijackResistance>& hijack, double delta);

// Where the client stands when the records are read.
struct LedgerContext {
  uint64_t height = 0;         // the synced height the leaves are proved at
  uint64_t current_epoch = 0;  // the epoch of the next block: places the review window
  double delta = 0.5;          // the rating shift of the hijack resistance
};

// `verified` is the outcome of replaying the item's reviews against its proved tally and chain
// (OK: verified).
ItemSummary ToItemSummary(const client::ItemSummary& item, const LedgerContext& context,
                          const Status& verified);

ReviewView ToReviewView(const client::PostedReview& review);

ItemDetail ToItemDetail(const client::ItemView& item, const LedgerContext& context);

}  // namespace tessera::reviews::web
