// The running tally of one item in one epoch: the reviews accepted so far, their mean rating
// and the item's hijack resistance. It is the per-item record the ledger will keep in its state
// (see docs/reviews.md, "Not yet built"); here it is a plain in-memory object.
//
//   ItemTally tally("cafe", epoch, ring);       // ring = the item's DRAC ring
//   tally.Add(review);   // OK, PERMISSION_DENIED (invalid / wrong item), ALREADY_EXISTS (double)
//   tally.mean(), tally.count(), tally.HijackResistance(identities)
//
// A review is accepted only if its unique ring signature verifies over the item's ring and its
// tag has not been seen for this item: a second review by one key is rejected, not counted.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>

#include "core/status.h"
#include "reviews/metric/hijack.h"
#include "reviews/review/review.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews {

class ItemTally {
 public:
  ItemTally(std::string item, uint64_t epoch, urs::Ring ring);

  // Verifies and counts a review. Errors: PERMISSION_DENIED when the review is for another
  // item or epoch or does not verify over the ring; ALREADY_EXISTS when its tag was seen.
  Status Add(const Review& review);

  const std::string& item() const { return item_; }
  uint64_t epoch() const { return epoch_; }
  const urs::Ring& ring() const { return ring_; }
  uint64_t count() const { return count_; }
  uint64_t rating_sum() const { return rating_sum_; }
  // Mean rating; 0 when there are no reviews.
  double mean() const;
  // Reviews with each rating 1..5.
  const std::array<uint64_t, 5>& histogram() const { return histogram_; }

  // The item's hijack resistance for a shift of `delta`, given the registered identities N and
  // this ring's size as k (the reviews so far are taken as the honest ones).
  Result<metric::HijackResistance> HijackResistance(uint64_t identities, uint64_t ring_size,
                                                    double delta = 0.5) const;

  // SHA-512/256-style digest (first 32 bytes of SHA-512) over the item, epoch, ring digest,
  // counts and the sorted accepted tags: a canonical commitment to the tally, for the ledger.
  std::array<uint8_t, 32> Digest() const;

 private:
  std::string item_;
  uint64_t epoch_;
  urs::Ring ring_;
  std::set<urs::Point> tags_;
  uint64_t count_ = 0;
  uint64_t rating_sum_ = 0;
  std::array<uint64_t, 5> histogram_{};
};

}  // namespace tessera::reviews
