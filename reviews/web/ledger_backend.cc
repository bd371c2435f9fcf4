#include "reviews/web/ledger_backend.h"

#include <spdlog/spdlog.h>

#include "reviews/client/signed_review.h"
#include "reviews/ledger/payload.h"

namespace tessera::reviews::web {

Result<std::unique_ptr<LedgerBackend>> LedgerBackend::Open(LedgerBackendOptions options) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<client::ReviewsClient> client,
                           client::ReviewsClient::Open(options.client));
  // A ledger that does not answer yet is not fatal: pages say so (503) and every page tries
  // again, so the server and the network may start in either order.
  const Status first = client->Refresh();
  if (first.ok()) {
    spdlog::info("following the ledger: height {}, epoch {}", client->height(),
                 client->CurrentEpoch());
  } else {
    spdlog::warn("the ledger does not answer yet: {}", first.ToString());
  }
  auto backend =
      std::unique_ptr<LedgerBackend>(new LedgerBackend(std::move(options), std::move(client)));
  if (first.ok()) backend->last_refresh_ = std::chrono::steady_clock::now();
  return backend;
}

LedgerBackend::LedgerBackend(LedgerBackendOptions options,
                             std::unique_ptr<client::ReviewsClient> client)
    : options_(std::move(options)), client_(std::move(client)) {}

LedgerContext LedgerBackend::Context() const {
  return LedgerContext{.height = client_->height(),
                       .current_epoch = client_->CurrentEpoch(),
                       .delta = options_.client.hijack_delta};
}

Status LedgerBackend::RefreshIfStale() {
  std::lock_guard lock(refresh_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refresh_ < options_.refresh_interval) return Status::Ok();
  Status status = client_->Refresh();
  if (!status.ok()) return status.WithContext("following the chain");
  last_refresh_ = now;
  return Status::Ok();
}

Result<std::vector<ItemSummary>> LedgerBackend::ListItems() {
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_ASSIGN_OR_RETURN(std::vector<client::ItemSummary> items, client_->ListItems());
  const LedgerContext context = Context();
  std::vector<ItemSummary> out;
  out.reserve(items.size());
  for (const client::ItemSummary& item : items) {
    // The tally in `item` is a proved leaf; "verified" on the page means more: the reviews read
    // from blocks replay exactly to that tally and to the item's proved review chain.
    Result<client::ItemView> view = client_->GetItem(item.id);
    const Status verified = view.ok() ? view->verified : view.status();
    out.push_back(ToItemSummary(item, context, verified));
  }
  return out;
}

Result<ItemDetail> LedgerBackend::GetItem(std::string_view id) {
  TESSERA_ASSIGN_OR_RETURN(onchain::ItemId item, ItemIdFromText(id));
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_ASSIGN_OR_RETURN(client::ItemView view, client_->GetItem(item));
  return ToItemDetail(view, Context());
}

Result<RingView> LedgerBackend::GetRing(std::string_view id) {
  TESSERA_ASSIGN_OR_RETURN(onchain::ItemId item, ItemIdFromText(id));
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_ASSIGN_OR_RETURN(client::ItemView view, client_->GetItem(item));
  const uint64_t epoch = client_->CurrentEpoch();
  if (epoch < view.summary.first_review_epoch) {
    return FailedPreconditionError("the item's reviews open in epoch " +
                                   std::to_string(view.summary.first_review_epoch));
  }
  TESSERA_ASSIGN_OR_RETURN(urs::Ring ring, client_->OpenRing(item, epoch));
  RingView out{ToHex(item), epoch, {}};
  for (const urs::Point& m : ring.members()) out.members.push_back(ToHex(m));
  return out;
}

Result<std::string> LedgerBackend::PostSignedReview(std::string_view item_id,
                                                    std::string_view signed_review) {
  TESSERA_ASSIGN_OR_RETURN(onchain::ItemId item, ItemIdFromText(item_id));
  // The format is the client library's (signed_review.h); its decoder names what is wrong.
  TESSERA_ASSIGN_OR_RETURN(onchain::ReviewBatch review, client::DecodeSignedReview(signed_review));
  if (review.item != item) {
    return InvalidArgumentError("signed review: it reviews item " + ToHex(review.item) +
                                ", not this one");
  }
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_RETURN_IF_ERROR(client_->SubmitSignedReview(review, client::PostOptions{.wait = false}));
  return std::string(
      "Your signed review was checked and submitted to the ledger. It appears on the item's page "
      "once a block commits it, usually within seconds.");
}

}  // namespace tessera::reviews::web
