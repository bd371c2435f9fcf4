#include "reviews/client/chain_index.h"

#include <algorithm>

#include "reviews/ledger/reviews_app.h"

namespace tessera::reviews::client {

std::vector<onchain::Payload> ReviewsPayloads(const std::vector<ledger::LedgerTx>& txs) {
  std::vector<onchain::Payload> out;
  for (const ledger::LedgerTx& tx : txs) {
    const auto* app = std::get_if<ledger::AppTransaction>(&tx);
    if (app == nullptr || app->app != kReviewsAppId) continue;
    auto payload = onchain::DecodePayload(AsBytes(app->payload));
    if (payload.ok()) out.push_back(std::move(*payload));
  }
  return out;
}

void ChainIndex::Add(uint64_t height, const std::vector<ledger::LedgerTx>& txs) {
  height_ = height;
  for (onchain::Payload& p : ReviewsPayloads(txs)) {
    if (auto* c = std::get_if<onchain::CreateItem>(&p)) {
      const ItemId id = onchain::ItemIdOf(*c);
      if (ids_.emplace(id, creations_.size()).second) {
        creations_.push_back({id, c->name, c->identity.citizen, height});
      }
    } else if (auto* r = std::get_if<onchain::RegisterKey>(&p)) {
      auto& keys = keys_[r->epoch];
      if (std::find(keys.begin(), keys.end(), r->review_key) == keys.end()) {
        keys.push_back(r->review_key);
      }
    } else if (auto* i = std::get_if<onchain::KeyIssue>(&p)) {
      issues_[{i->epoch, i->citizen}].push_back({height, i->blinded_msg, i->blind_sig});
    } else if (auto* b = std::get_if<onchain::ReviewBatch>(&p)) {
      for (onchain::ReviewEntry& e : b->reviews) {
        reviews_[b->item].push_back({height, b->item, b->epoch, b->ring_size, std::move(e)});
      }
    }
  }
}

std::vector<urs::Point> ChainIndex::KeyCandidates(uint64_t epoch) const {
  auto it = keys_.find(epoch);
  return it == keys_.end() ? std::vector<urs::Point>{} : it->second;
}

std::vector<PostedReview> ChainIndex::ReviewCandidates(const ItemId& item) const {
  auto it = reviews_.find(item);
  return it == reviews_.end() ? std::vector<PostedReview>{} : it->second;
}

std::vector<PostedIssue> ChainIndex::IssueCandidates(uint64_t epoch,
                                                     const ledger::PublicKey& citizen) const {
  auto it = issues_.find({epoch, citizen});
  return it == issues_.end() ? std::vector<PostedIssue>{} : it->second;
}

}  // namespace tessera::reviews::client
