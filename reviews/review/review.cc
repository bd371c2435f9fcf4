#include "reviews/review/review.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tessera::reviews {
namespace {
constexpr std::string_view kScopeDomain = "tessera/reviews/scope/v1";
constexpr std::string_view kMessageDomain = "tessera/reviews/review/v1";
constexpr std::string_view kCredentialDomain = "tessera/reviews/review-key/v1";

Status CheckFields(std::string_view item, int rating, std::string_view text) {
  if (item.empty() || item.size() > kMaxItemLength) {
    return InvalidArgumentError("item id must have 1.." + std::to_string(kMaxItemLength) +
                                " bytes");
  }
  if (rating < kMinRating || rating > kMaxRating) {
    return InvalidArgumentError("rating " + std::to_string(rating) + " is outside " +
                                std::to_string(kMinRating) + ".." + std::to_string(kMaxRating));
  }
  if (text.size() > kMaxTextLength) {
    return InvalidArgumentError("review text has " + std::to_string(text.size()) +
                                " bytes; at most " + std::to_string(kMaxTextLength));
  }
  return Status::Ok();
}
}  // namespace

Bytes ReviewScope(std::string_view item, uint64_t epoch) {
  Bytes out;
  AppendLengthPrefixed(out, AsBytes(kScopeDomain));
  AppendLengthPrefixed(out, AsBytes(item));
  AppendBigEndian(out, epoch, 8);
  return out;
}

Bytes ReviewMessage(std::string_view item, uint64_t epoch, int rating, std::string_view text) {
  Bytes out;
  AppendLengthPrefixed(out, AsBytes(kMessageDomain));
  AppendLengthPrefixed(out, AsBytes(item));
  AppendBigEndian(out, epoch, 8);
  AppendBigEndian(out, static_cast<uint64_t>(rating), 1);
  AppendLengthPrefixed(out, AsBytes(text));
  return out;
}

Result<Review> SignReview(const urs::KeyPair& key, const urs::Ring& ring, std::string_view item,
                          uint64_t epoch, int rating, std::string_view text) {
  TESSERA_RETURN_IF_ERROR(CheckFields(item, rating, text));
  Review review{std::string(item), epoch, rating, std::string(text), {}};
  TESSERA_ASSIGN_OR_RETURN(review.signature, urs::Sign(key, ring, ReviewScope(item, epoch),
                                                       ReviewMessage(item, epoch, rating, text)));
  return review;
}

Status VerifyReview(const urs::Ring& ring, const Review& review) {
  TESSERA_RETURN_IF_ERROR(CheckFields(review.item, review.rating, review.text));
  return urs::Verify(ring, ReviewScope(review.item, review.epoch),
                     ReviewMessage(review.item, review.epoch, review.rating, review.text),
                     review.signature);
}

std::vector<std::pair<size_t, size_t>> FindDoubleReviews(const std::vector<Review>& reviews) {
  std::map<std::tuple<std::string, uint64_t, urs::Point>, size_t> first;
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < reviews.size(); ++i) {
    auto key = std::make_tuple(reviews[i].item, reviews[i].epoch, reviews[i].signature.tag);
    auto [it, inserted] = first.emplace(key, i);
    if (!inserted) out.emplace_back(it->second, i);
  }
  return out;
}

Bytes CredentialMessage(const urs::Point& review_key, uint64_t epoch) {
  Bytes out;
  AppendLengthPrefixed(out, AsBytes(kCredentialDomain));
  AppendBigEndian(out, epoch, 8);
  out.insert(out.end(), review_key.begin(), review_key.end());
  return out;
}

Status VerifyCredential(const blind::PublicKey& issuer, const Credential& credential) {
  TESSERA_RETURN_IF_ERROR(urs::ValidatePoint(credential.review_key, "review key"));
  if (credential.msg_prefix.size() != blind::kMessagePrefixLength) {
    return InvalidArgumentError("credential message prefix must have 32 bytes");
  }
  Bytes input = credential.msg_prefix;
  Bytes msg = CredentialMessage(credential.review_key, credential.epoch);
  input.insert(input.end(), msg.begin(), msg.end());
  Status st = blind::Verify(issuer, kCredentialVariant, input, credential.signature);
  if (!st.ok())
    return PermissionDeniedError("credential not signed by this issuer: " + st.message());
  return Status::Ok();
}

Result<std::vector<urs::Point>> RegisteredKeys(const blind::PublicKey& issuer, uint64_t epoch,
                                               const std::vector<Credential>& credentials) {
  std::set<urs::Point> seen;
  std::vector<urs::Point> keys;
  for (size_t i = 0; i < credentials.size(); ++i) {
    const Credential& c = credentials[i];
    if (c.epoch != epoch) {
      return InvalidArgumentError("credential " + std::to_string(i) + " is for epoch " +
                                  std::to_string(c.epoch) + ", not " + std::to_string(epoch));
    }
    Status st = VerifyCredential(issuer, c);
    if (!st.ok()) return st.WithContext("credential " + std::to_string(i));
    if (!seen.insert(c.review_key).second) {
      return AlreadyExistsError("credential " + std::to_string(i) +
                                " registers a review key twice");
    }
    keys.push_back(c.review_key);
  }
  return keys;
}

}  // namespace tessera::reviews
