// Reviews and review-key credentials: the records the reviews system signs, verifies and
// stores, built on the blind signatures (blind/), the unique ring signatures (urs/) and the
// DRAC ring (drac/).
//
// A review of `item` in `epoch` is a unique ring signature over the item's DRAC ring, in the
// scope ReviewScope(item, epoch), on the canonical ReviewMessage. Its tag is the double-review
// detector: two reviews with one (item, epoch) and one tag come from one key.
//
// A review key is a ristretto255 key pair made fresh each epoch. Its credential is an RFC 9474
// blind signature (RSABSSA-SHA384-PSS-Randomized) by the identity issuer on
// CredentialMessage(key, epoch): the issuer signed it for some registered identity without
// seeing it, so the credential proves eligibility to register but not who registered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "reviews/blind/blind_rsa.h"
#include "reviews/common/bytes.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews {

inline constexpr int kMinRating = 1;
inline constexpr int kMaxRating = 5;
inline constexpr size_t kMaxItemLength = 256;
inline constexpr size_t kMaxTextLength = 4096;
inline constexpr blind::Variant kCredentialVariant = blind::Variant::kSha384PssRandomized;

// The URS linking scope of an item in an epoch (review keys are per epoch, so is the scope).
Bytes ReviewScope(std::string_view item, uint64_t epoch);

// The canonical bytes a review signs: domain, item, epoch, rating and text, length-prefixed.
Bytes ReviewMessage(std::string_view item, uint64_t epoch, int rating, std::string_view text);

struct Review {
  std::string item;
  uint64_t epoch = 0;
  int rating = 0;
  std::string text;
  urs::Signature signature;
};

// INVALID_ARGUMENT for a bad item, rating or text; PERMISSION_DENIED when the key is not in the
// ring.
Result<Review> SignReview(const urs::KeyPair& key, const urs::Ring& ring, std::string_view item,
                          uint64_t epoch, int rating, std::string_view text);

// OK, or the reason the review is invalid for this ring.
Status VerifyReview(const urs::Ring& ring, const Review& review);

// Pairs (i, j), i < j, of reviews with the same item, epoch and tag: double reviews.
std::vector<std::pair<size_t, size_t>> FindDoubleReviews(const std::vector<Review>& reviews);

// ---- Review-key credentials ----

Bytes CredentialMessage(const urs::Point& review_key, uint64_t epoch);

struct Credential {
  urs::Point review_key{};
  uint64_t epoch = 0;
  Bytes msg_prefix;  // RFC 9474 randomized-variant prefix (32 bytes)
  Bytes signature;   // the finalized blind signature
};

// OK when the issuer's signature covers msg_prefix || CredentialMessage(key, epoch).
Status VerifyCredential(const blind::PublicKey& issuer, const Credential& credential);

// The review keys of `credentials` after checking every credential, its epoch and that no key
// appears twice. The result is the registered set DRAC draws rings from.
Result<std::vector<urs::Point>> RegisteredKeys(const blind::PublicKey& issuer, uint64_t epoch,
                                               const std::vector<Credential>& credentials);

}  // namespace tessera::reviews
