// The JSON answers of /api/items and /api/item/<id>: the same records the HTML pages show, for
// scripts. Field names follow backend.h; "window" is "upcoming", "open" or "closed".
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"
#include "reviews/web/backend.h"

namespace tessera::reviews::web {

nlohmann::json ItemSummaryToJson(const ItemSummary& item);

// {"items": [summary, ...]}
nlohmann::json ItemsToJson(const std::vector<ItemSummary>& items);

// summary fields plus "reviews": [{"rating", "text", "tag", "height"}, ...]
nlohmann::json ItemDetailToJson(const ItemDetail& item);

// {"error": {"code": "NOT_FOUND", "message": "..."}}
nlohmann::json ErrorToJson(const Status& status);

}  // namespace tessera::reviews::web
