#include "reviews/tally/item_tally.h"

#include <sodium.h>

namespace tessera::reviews {

ItemTally::ItemTally(std::string item, uint64_t epoch, urs::Ring ring)
    : item_(std::move(item)), epoch_(epoch), ring_(std::move(ring)) {}

Status ItemTally::Add(const Review& review) {
  if (review.item != item_ || review.epoch != epoch_) {
    return PermissionDeniedError("review is for '" + review.item + "' epoch " +
                                 std::to_string(review.epoch) + ", this tally is for '" + item_ +
                                 "' epoch " + std::to_string(epoch_));
  }
  Status verified = VerifyReview(ring_, review);
  if (!verified.ok()) return PermissionDeniedError("review rejected: " + verified.message());
  // Checked after verification, so a forged signature cannot "use up" someone's tag.
  if (!tags_.insert(review.signature.tag).second) {
    return AlreadyExistsError("double review: this key already reviewed '" + item_ + "' in epoch " +
                              std::to_string(epoch_));
  }
  ++count_;
  rating_sum_ += static_cast<uint64_t>(review.rating);
  ++histogram_[static_cast<size_t>(review.rating - kMinRating)];
  return Status::Ok();
}

double ItemTally::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(rating_sum_) / static_cast<double>(count_);
}

Result<metric::HijackResistance> ItemTally::HijackResistance(uint64_t identities,
                                                             uint64_t ring_size,
                                                             double delta) const {
  metric::HijackInput in;
  in.identities = identities;
  in.ring_size = ring_size;
  in.honest_reviews = count_;
  in.honest_mean = count_ == 0 ? 3.0 : mean();
  in.delta = delta;
  return metric::ComputeHijackResistance(in);
}

std::array<uint8_t, 32> ItemTally::Digest() const {
  Bytes data;
  AppendLengthPrefixed(data, AsBytes("tessera/reviews/tally/v1"));
  AppendLengthPrefixed(data, AsBytes(item_));
  AppendBigEndian(data, epoch_, 8);
  data.insert(data.end(), ring_.digest().begin(), ring_.digest().end());
  AppendBigEndian(data, count_, 8);
  for (uint64_t h : histogram_) AppendBigEndian(data, h, 8);
  for (const urs::Point& t : tags_) data.insert(data.end(), t.begin(), t.end());
  uint8_t full[crypto_hash_sha512_BYTES];
  crypto_hash_sha512(full, data.data(), data.size());
  std::array<uint8_t, 32> out;
  std::copy(full, full + 32, out.begin());
  return out;
}

}  // namespace tessera::reviews
