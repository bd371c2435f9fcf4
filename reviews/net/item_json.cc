#include "reviews/net/item_json.h"

#include "reviews/urs/codec.h"

namespace tessera::reviews::net {

using nlohmann::json;

json SummaryToJson(const client::ItemSummary& s, uint64_t ring_size) {
  json j = {{"id", ToHex(s.id)},
            {"name", s.name},
            {"created_height", s.created_height},
            {"review_epoch", s.review_epoch},
            {"first_review_epoch", s.first_review_epoch},
            {"creator", ToHex(s.creator)},
            {"count", s.tally.count()},
            {"sum", s.tally.sum()},
            {"mean", s.tally.mean()},
            {"histogram", s.tally.histogram},
            {"registered_keys", s.registered_keys},
            {"ring_size", ring_size},
            {"hijack", nullptr}};
  if (s.hijack) {
    j["hijack"] = {{"feasible", s.hijack->feasible},
                   {"reviews_needed", s.hijack->reviews_needed},
                   {"identities_without_drac", s.hijack->identities_without_drac},
                   {"identities_with_drac", s.hijack->identities_with_drac},
                   {"predicted_factor", s.hijack->predicted_factor}};
  }
  return j;
}

json ItemToJson(const client::ItemView& view, uint64_t ring_size) {
  json reviews = json::array();
  for (const client::PostedReview& r : view.reviews) {
    reviews.push_back({{"height", r.height},
                       {"epoch", r.epoch},
                       {"rating", r.entry.rating},
                       {"text", r.entry.text},
                       {"tag", ToHex(r.entry.signature.tag)},
                       {"ring_size", r.ring_size},
                       {"signature", ToHex(urs::EncodeSignature(r.entry.signature))}});
  }
  return {{"item", SummaryToJson(view.summary, ring_size)},
          {"verified", view.verified.ok()},
          {"verify_error", view.verified.ok() ? "" : view.verified.message()},
          {"chain", ToHex(view.chain)},
          {"reviews", reviews}};
}

Result<LocalReviews> ReviewsFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError("not a JSON object");
  if (!j.contains("item") || !j["item"].is_object() || !j["item"].contains("id") ||
      !j["item"]["id"].is_string()) {
    return InvalidArgumentError("'item.id' is missing");
  }
  LocalReviews out;
  auto id = ArrayFromHex<32>(j["item"]["id"].get<std::string>());
  if (!id.ok()) return InvalidArgumentError("'item.id': " + id.status().message());
  out.item = *id;
  if (!j.contains("reviews") || !j["reviews"].is_array()) {
    return InvalidArgumentError("'reviews' is missing or not a list");
  }
  for (size_t i = 0; i < j["reviews"].size(); ++i) {
    const json& r = j["reviews"][i];
    const std::string where = "review " + std::to_string(i) + ": ";
    auto bad = [&](const std::string& what) { return InvalidArgumentError(where + what); };
    if (!r.is_object()) return bad("not an object");
    if (!r.contains("epoch") || !r["epoch"].is_number_unsigned()) return bad("'epoch' missing");
    if (!r.contains("height") || !r["height"].is_number_unsigned()) return bad("'height' missing");
    if (!r.contains("rating") || !r["rating"].is_number_integer()) return bad("'rating' missing");
    if (!r.contains("text") || !r["text"].is_string()) return bad("'text' missing");
    if (!r.contains("ring_size") || !r["ring_size"].is_number_unsigned()) {
      return bad("'ring_size' missing");
    }
    if (!r.contains("signature") || !r["signature"].is_string()) return bad("'signature' missing");
    auto sig_bytes = FromHex(r["signature"].get<std::string>());
    if (!sig_bytes.ok()) return bad("signature: " + sig_bytes.status().message());
    auto sig = urs::DecodeSignature(*sig_bytes);
    if (!sig.ok()) return bad(sig.status().message());
    client::PostedReview p;
    p.height = r["height"].get<uint64_t>();
    p.item = out.item;
    p.epoch = r["epoch"].get<uint64_t>();
    p.ring_size = static_cast<uint16_t>(std::min<uint64_t>(r["ring_size"].get<uint64_t>(), 65535));
    p.entry = {r["rating"].get<int>(), r["text"].get<std::string>(), std::move(*sig)};
    out.reviews.push_back(std::move(p));
  }
  return out;
}

}  // namespace tessera::reviews::net
