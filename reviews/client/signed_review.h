// A review signed by the user's own client, as the user hands it to a relay (the web page,
// reviews/web/): the ledger payload of one review, nothing else.
//
//   { "format": "tessera-signed-review v1", "payload": "<hex of a Reviews payload>" }
//
// The payload (reviews/ledger/payload.h) holds the item, the epoch, the size of the item's ring
// (the ring itself is in the ledger's state: RingOpen), the rating, the text and the unique
// ring signature with its tag: no identity, no secret, no blinding value. A relay learns what
// the ledger will publish anyway.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"
#include "reviews/ledger/payload.h"

namespace tessera::reviews::client {

// A signature over a ring of kMaxRing members, hex-encoded, with room for the text.
inline constexpr size_t kMaxSignedReviewBytes = 320 * 1024;
// The largest single review's payload: kind, item, epoch, ring size, count, then rating, text
// and the signature (urs/codec.h: 195 + 32 bytes per member) with their lengths. As hex it fits
// with room for the JSON around it.
inline constexpr size_t kMaxSingleReviewPayloadBytes =
    1 + 32 + 8 + 2 + 2 + 1 + 4 + onchain::kMaxReviewText + 4 + 195 + 32 * onchain::kMaxRing;
static_assert(2 * kMaxSingleReviewPayloadBytes + 1024 <= kMaxSignedReviewBytes);

std::string EncodeSignedReview(const onchain::ReviewBatch& review);
// INVALID_ARGUMENT naming what is wrong: not JSON, another format, a payload that does not
// decode (the payload decoder's error), a payload that is not exactly one review.
Result<onchain::ReviewBatch> DecodeSignedReview(std::string_view json);

}  // namespace tessera::reviews::client
