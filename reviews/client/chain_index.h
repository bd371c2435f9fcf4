// What a client learns from the blocks it reads: every reviews-app transaction, indexed.
//
// Blocks hold transactions that applied and transactions that were skipped (a double review,
// a late registration, ...) side by side; the block does not say which is which. The index
// therefore holds *candidates*, and item_audit.h / client.cc decide which of them committed
// by reading proved leaves (a review committed iff its tag leaf holds its record hash; a key is
// registered iff its key leaf exists; the lists are complete iff their counters match).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ledger/codec/messages.h"
#include "reviews/ledger/payload.h"

namespace tessera::reviews::client {

using onchain::ItemId;

struct ItemCreation {
  ItemId id{};
  std::string name;
  ledger::PublicKey creator{};
  uint64_t height = 0;
};

struct PostedReview {
  uint64_t height = 0;
  ItemId item{};
  uint64_t epoch = 0;
  uint16_t ring_size = 0;  // the item's ring for the epoch is in state (RingOpen)
  onchain::ReviewEntry entry;
};

struct PostedIssue {
  uint64_t height = 0;
  Bytes blinded_msg;
  Bytes blind_sig;
};

// The reviews-app payloads among a block's transactions, in block order (others and
// undecodable ones are left out: the ledger skips those too).
std::vector<onchain::Payload> ReviewsPayloads(const std::vector<ledger::LedgerTx>& txs);

class ChainIndex {
 public:
  // Blocks must be added in height order, each once.
  void Add(uint64_t height, const std::vector<ledger::LedgerTx>& txs);
  uint64_t height() const { return height_; }

  // Every CreateItem, first occurrence of each item id (creator, name) only, in chain order.
  const std::vector<ItemCreation>& creations() const { return creations_; }
  // Distinct review keys named by RegisterKey transactions for `epoch`, in chain order.
  std::vector<urs::Point> KeyCandidates(uint64_t epoch) const;
  // Review transactions of the item, batches expanded, in chain order.
  std::vector<PostedReview> ReviewCandidates(const ItemId& item) const;
  // KeyIssue transactions answering (epoch, citizen), in chain order.
  std::vector<PostedIssue> IssueCandidates(uint64_t epoch, const ledger::PublicKey& citizen) const;

 private:
  uint64_t height_ = 0;
  std::vector<ItemCreation> creations_;
  std::map<ItemId, size_t> ids_;
  std::map<uint64_t, std::vector<urs::Point>> keys_;
  std::map<ItemId, std::vector<PostedReview>> reviews_;
  std::map<std::pair<uint64_t, ledger::PublicKey>, std::vector<PostedIssue>> issues_;
};

}  // namespace tessera::reviews::client
