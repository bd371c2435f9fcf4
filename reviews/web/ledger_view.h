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

// `current_epoch` (the epoch of the next block) places the review window; `verified` is the outcome
// of replaying the item's reviews against its proved tally and chain (OK: verified).
ItemSummary ToItemSummary(const client::ItemSummary& item, uint64_t current_epoch, double delta,
                          const Status& verified);

ReviewView ToReviewView(const client::PostedReview& review);

ItemDetail ToItemDetail(const client::ItemView& item, uint64_t current_epoch, double delta);

}  // namespace tessera::reviews::web
