#include "reviews/web/api.h"

namespace tessera::reviews::web {

using nlohmann::json;

json ItemSummaryToJson(const ItemSummary& item) {
  json hijack = {{"known", item.hijack.known}};
  if (item.hijack.known) {
    hijack["feasible"] = item.hijack.feasible;
    hijack["delta"] = item.hijack.delta;
    if (item.hijack.feasible) {
      hijack["identities_with_drac"] = item.hijack.identities_with_drac;
      hijack["identities_without_drac"] = item.hijack.identities_without_drac;
    }
  }
  json j = {{"id", item.id},
            {"name", item.name},
            {"review_count", item.review_count},
            {"histogram", item.histogram},
            {"hijack_resistance", std::move(hijack)},
            {"epoch", item.epoch},
            {"window", std::string(WindowName(item.window))},
            {"verified", item.verified}};
  // No mean without reviews: 0 would read as a rating.
  j["mean_rating"] = item.review_count == 0 ? json(nullptr) : json(item.mean_rating);
  if (!item.verified) j["verification"] = item.verification;
  if (item.height != 0) j["height"] = item.height;
  return j;
}

json ItemsToJson(const std::vector<ItemSummary>& items) {
  json list = json::array();
  for (const ItemSummary& item : items) list.push_back(ItemSummaryToJson(item));
  return {{"items", std::move(list)}};
}

json ItemDetailToJson(const ItemDetail& item) {
  json j = ItemSummaryToJson(item.summary);
  json reviews = json::array();
  for (const ReviewView& review : item.reviews) {
    reviews.push_back({{"rating", review.rating},
                       {"text", review.text},
                       {"tag", review.tag_hex},
                       {"height", review.height}});
  }
  j["reviews"] = std::move(reviews);
  return j;
}

json ErrorToJson(const Status& status) {
  return {{"error",
           {{"code", std::string(StatusCodeName(status.code()))}, {"message", status.message()}}}};
}

}  // namespace tessera::reviews::web
