#include "reviews/client/signed_review.h"

#include <nlohmann/json.hpp>

namespace tessera::reviews::client {
namespace {
constexpr std::string_view kFormat = "tessera-signed-review v1";
}  // namespace

std::string EncodeSignedReview(const onchain::ReviewBatch& review) {
  const std::string payload = onchain::EncodePayload(review);
  nlohmann::json j = {{"format", kFormat}, {"payload", ToHex(AsBytes(payload))}};
  return j.dump(2) + "\n";
}

Result<onchain::ReviewBatch> DecodeSignedReview(std::string_view text) {
  if (text.size() > kMaxSignedReviewBytes) {
    return InvalidArgumentError("signed review: " + std::to_string(text.size()) +
                                " bytes, at most " + std::to_string(kMaxSignedReviewBytes));
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(
        "signed review: not a JSON object (make one with reviews-net sign-review)");
  }
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != kFormat) {
    if (j.contains("review_secret")) {
      return InvalidArgumentError(
          "signed review: this is a review key file; never hand it to anyone. Sign the review "
          "with reviews-net sign-review and post its output instead");
    }
    return InvalidArgumentError("signed review: 'format' must be '" + std::string(kFormat) + "'");
  }
  if (!j.contains("payload") || !j["payload"].is_string()) {
    return InvalidArgumentError("signed review: 'payload' is missing or not a string");
  }
  auto bytes = FromHex(j["payload"].get<std::string>());
  if (!bytes.ok())
    return InvalidArgumentError("signed review: 'payload': " + bytes.status().message());
  auto payload = onchain::DecodePayload(*bytes);
  if (!payload.ok()) return payload.status().WithContext("signed review");
  auto* batch = std::get_if<onchain::ReviewBatch>(&*payload);
  if (batch == nullptr) {
    return InvalidArgumentError("signed review: the payload is a " +
                                std::string(onchain::KindName(*payload)) + ", not a review");
  }
  if (batch->reviews.size() != 1) {
    return InvalidArgumentError("signed review: the payload holds " +
                                std::to_string(batch->reviews.size()) + " reviews, expected one");
  }
  return std::move(*batch);
}

}  // namespace tessera::reviews::client
