#include "reviews/web/ledger_view.h"

#include "core/hex.h"

namespace tessera::reviews::web {

std::string ItemIdToText(const onchain::ItemId& id) { return ToHex(id); }

Result<onchain::ItemId> ItemIdFromText(std::string_view text) {
  // Exactly the form this server links to: one spelling per item, no "0x", no upper case.
  const bool canonical =
      text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (!canonical) {
    return InvalidArgumentError("an item id is 64 lower-case hex digits (the SHA-256 of its name)");
  }
  return ArrayFromHex<32>(text);
}

HijackView ToHijackView(const std::optional<metric::HijackResistance>& hijack, double delta) {
  HijackView view;
  view.delta = delta;
  if (!hijack) return view;  // no registered keys in the review epoch yet
  view.known = true;
  view.feasible = hijack->feasible;
  view.identities_with_drac = hijack->identities_with_drac;
  view.identities_without_drac = hijack->identities_without_drac;
  return view;
}

ItemSummary ToItemSummary(const client::ItemSummary& item, const LedgerContext& context,
                          const Status& verified) {
  const uint64_t current_epoch = context.current_epoch;
  ItemSummary out;
  out.id = ItemIdToText(item.id);
  out.name = item.name;
  out.review_count = item.tally.count();
  out.mean_rating = item.tally.mean();
  for (size_t r = 0; r < out.histogram.size(); ++r) out.histogram[r] = item.tally.histogram[r];
  out.hijack = ToHijackView(item.hijack, context.delta);
  out.epoch = item.review_epoch;
  // Rolling windows: an item is reviewable in every epoch from its first (docs/reviews.md).
  out.window = current_epoch < item.first_review_epoch ? Window::kUpcoming : Window::kOpen;
  out.verified = verified.ok();
  if (!verified.ok()) out.verification = verified.ToString();
  out.height = context.height;
  return out;
}

ReviewView ToReviewView(const client::PostedReview& review) {
  return ReviewView{.rating = review.entry.rating,
                    .text = review.entry.text,
                    .tag_hex = ToHex(review.entry.signature.tag),
                    .height = review.height};
}

ItemDetail ToItemDetail(const client::ItemView& item, const LedgerContext& context) {
  ItemDetail out;
  out.summary = ToItemSummary(item.summary, context, item.verified);
  // Unverified reviews are still listed (the summary says they are not verified): hiding them
  // would hide what is wrong.
  for (const client::PostedReview& review : item.reviews) {
    out.reviews.push_back(ToReviewView(review));
  }
  return out;
}

}  // namespace tessera::reviews::web
