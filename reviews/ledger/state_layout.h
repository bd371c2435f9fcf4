// Where the reviews application keeps its records in the ledger's state tree, and how the
// 32-byte leaf values are encoded. Clients use the same functions to name the leaves they ask
// a politician to prove (LightClient::ReadLeaves) and to decode what comes back.
//
// Every key is ledger::AppLeafKey(kReviewsAppId, {label, fields...}), so it cannot collide
// with an account, another application or another record kind. Every key depends on the
// transaction's payload and the block context only, never on state, as ReadSet requires.
//
//   leaf                          key fields                value
//   item                          item id                   ItemRecord (creation epoch, height)
//   item quota                    epoch, creator key        Counter: items it created in epoch
//   item count                    -                         Counter
//   tally                         item id                   Tally (histogram of ratings 1..5)
//   chain                         item id                   SHA-256(prev chain || review hash)
//   tag                           item id, epoch, URS tag   the review's record hash (one review
//                                                           per key, item and epoch)
//   key request                   epoch, citizen key        SHA-256(blinded message)
//   request count                 epoch                     Counter
//   key issue                     epoch, citizen key        SHA-256(blind signature)
//   review key                    epoch, review key         Counter: 1-based registration index
//   key count                     epoch                     Counter (N_e)
//   epoch seed                    epoch                     seed of block e*E - 1 (BeginBlock)
//   request commitment            epoch, citizen key        the KeyRequest's commitment
//   front-run proof               epoch, citizen key        SHA-256 of the applied proof
//   front-run count               epoch                     Counter: proofs applied (evidence
//                                                           that the issuer minted keys)
//   ring size                     item id, epoch            Counter: members of the item's
//                                                           eligible ring (present = opened)
//   ring member                   item id, epoch, index     the index-th member (sorted), the
//                                                           key's 32 bytes
//   ring progress                 item id, epoch            RingProgress of an opening
//   ring cursor                   item id, epoch            the last key an opening listed
//
// An absent leaf reads as "none" (zero count, no item, unused tag).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.h"
#include "ledger/state/account.h"
#include "reviews/ledger/payload.h"

namespace tessera::reviews::onchain {

namespace leaf {
ledger::Hash256 Item(const ItemId& item);
ledger::Hash256 ItemCount();
ledger::Hash256 Tally(const ItemId& item);
ledger::Hash256 Chain(const ItemId& item);
ledger::Hash256 Tag(const ItemId& item, uint64_t epoch, const urs::Point& tag);
ledger::Hash256 KeyRequest(uint64_t epoch, const ledger::PublicKey& citizen);
ledger::Hash256 RequestCount(uint64_t epoch);
ledger::Hash256 KeyIssue(uint64_t epoch, const ledger::PublicKey& citizen);
ledger::Hash256 ReviewKey(uint64_t epoch, const urs::Point& key);
ledger::Hash256 KeyCount(uint64_t epoch);
ledger::Hash256 EpochSeed(uint64_t epoch);
ledger::Hash256 RequestCommitment(uint64_t epoch, const ledger::PublicKey& citizen);
ledger::Hash256 FrontRunProof(uint64_t epoch, const ledger::PublicKey& citizen);
ledger::Hash256 FrontRunCount(uint64_t epoch);
ledger::Hash256 ItemQuota(uint64_t epoch, const ledger::PublicKey& creator);
ledger::Hash256 RingSize(const ItemId& item, uint64_t epoch);
ledger::Hash256 RingMember(const ItemId& item, uint64_t epoch, uint64_t index);
ledger::Hash256 RingProgress(const ItemId& item, uint64_t epoch);
ledger::Hash256 RingCursor(const ItemId& item, uint64_t epoch);
// RingMember(item, epoch, i) for i < size.
std::vector<ledger::Hash256> RingMembers(const ItemId& item, uint64_t epoch, uint64_t size);
}  // namespace leaf

// Structured values end in a type byte (counter, item, tally), so no record reads as another
// or as a ledger account.
// A u64 count, big-endian, zero bytes, type byte.
ledger::LeafValue EncodeCounter(uint64_t n);
// INVALID_ARGUMENT when the value is not a counter. An absent leaf is zero.
Result<uint64_t> DecodeCounter(const std::optional<ledger::LeafValue>& value);

struct ItemRecord {
  uint64_t created_epoch = 0;  // reviews are accepted in every epoch from created_epoch + 2
  uint64_t created_height = 0;
  uint64_t first_review_epoch() const { return created_epoch + 2; }
};
ledger::LeafValue EncodeItemRecord(const ItemRecord& r);
Result<ItemRecord> DecodeItemRecord(const ledger::LeafValue& value);

// How far the opening of an item's ring for an epoch got (RingOpen, payload.h): registered
// keys listed so far and eligible keys found among them. Absent: nothing listed yet.
struct RingProgress {
  uint64_t keys_listed = 0;
  uint64_t members_found = 0;
};
ledger::LeafValue EncodeRingProgress(const RingProgress& p);
Result<RingProgress> DecodeRingProgress(const std::optional<ledger::LeafValue>& value);

// The committed tally of an item: how many reviews gave each rating. The count, the sum and
// the mean follow from it. Five u32 big-endian counters, zero bytes, type byte.
struct Tally {
  std::array<uint32_t, 5> histogram{};  // histogram[r - 1] = reviews with rating r
  uint64_t count() const;
  uint64_t sum() const;
  double mean() const;  // 0 without reviews
  friend bool operator==(const Tally&, const Tally&) = default;
};
ledger::LeafValue EncodeTally(const Tally& t);
Result<Tally> DecodeTally(const std::optional<ledger::LeafValue>& value);

// The review chain of an item after `review_hash` is appended to `previous` (all zero for an
// item without reviews). A client replays the reviews it read from blocks and compares the
// result with the proved chain leaf: equal iff it holds exactly the committed reviews in
// their committed order.
ledger::LeafValue NextChain(const ledger::LeafValue& previous, const ledger::Hash256& review_hash);

}  // namespace tessera::reviews::onchain
