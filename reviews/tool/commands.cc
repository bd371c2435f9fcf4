#include "reviews/tool/commands.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/file.h"
#include "reviews/blind/blind_rsa.h"
#include "reviews/drac/eligibility.h"
#include "reviews/metric/hijack.h"
#include "reviews/review/review.h"
#include "reviews/tally/item_tally.h"
#include "reviews/tool/formats.h"
#include "reviews/urs/codec.h"

namespace tessera::reviews::tool {
namespace {

std::string Short(ByteSpan b) { return ToHex(b).substr(0, 16) + "…"; }

}  // namespace

Status IssuerKeygen(int bits, const std::string& secret_path, const std::string& public_path,
                    std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(blind::SecretKey sk, blind::SecretKey::Generate(bits));
  TESSERA_ASSIGN_OR_RETURN(std::string sk_pem, sk.ToPem());
  TESSERA_ASSIGN_OR_RETURN(std::string pk_pem, sk.public_key().ToPem());
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(secret_path, sk_pem, 0600));
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(public_path, pk_pem));
  out << "issuer key: RSA-" << bits << ", fingerprint " << sk.public_key().Fingerprint() << "\n";
  return Status::Ok();
}

Status ReviewKeygen(uint64_t epoch, const std::string& key_path, std::ostream& out) {
  urs::KeyPair kp = urs::GenerateKeyPair();
  json j{{"epoch", epoch}, {"public", ToHex(kp.public_key)}, {"secret", ToHex(kp.secret)}};
  TESSERA_RETURN_IF_ERROR(WriteJson(key_path, j, 0600));
  out << "review key for epoch " << epoch << ": " << ToHex(kp.public_key) << "\n";
  return Status::Ok();
}

Status BlindRequest(const std::string& issuer_public, const std::string& key_path,
                    const std::string& request_path, const std::string& state_path,
                    std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(blind::PublicKey pk, LoadIssuerPublic(issuer_public));
  uint64_t epoch = 0;
  TESSERA_ASSIGN_OR_RETURN(urs::KeyPair kp, LoadReviewKey(key_path, &epoch));
  Bytes input = blind::PrepareMessage(kCredentialVariant, CredentialMessage(kp.public_key, epoch));
  TESSERA_ASSIGN_OR_RETURN(blind::BlindOutput b, blind::Blind(pk, kCredentialVariant, input));
  TESSERA_RETURN_IF_ERROR(
      WriteJson(request_path, {{"epoch", epoch}, {"blinded_msg", ToHex(b.blinded_msg)}}));
  TESSERA_RETURN_IF_ERROR(WriteJson(state_path,
                                    {{"epoch", epoch},
                                     {"public", ToHex(kp.public_key)},
                                     {"input_msg", ToHex(input)},
                                     {"inv", ToHex(b.inv)}},
                                    0600));
  out << "blinded request for epoch " << epoch << ": " << Short(b.blinded_msg)
      << " (the issuer cannot see the review key)\n";
  return Status::Ok();
}

Status BlindSignRequest(const std::string& issuer_secret, const std::string& request_path,
                        const std::string& identity, const std::string& issued_log,
                        const std::string& response_path, std::ostream& out) {
  if (identity.empty()) return InvalidArgumentError("identity must not be empty");
  TESSERA_ASSIGN_OR_RETURN(std::string pem, ReadFile(issuer_secret));
  auto sk = blind::SecretKey::FromPem(pem);
  if (!sk.ok()) return sk.status().WithContext(issuer_secret);
  TESSERA_ASSIGN_OR_RETURN(json req, ReadJson(request_path));
  TESSERA_ASSIGN_OR_RETURN(uint64_t epoch, GetUint(req, "epoch", request_path));
  TESSERA_ASSIGN_OR_RETURN(Bytes blinded, GetHex(req, "blinded_msg", request_path));
  json log = json::object();
  if (std::filesystem::exists(issued_log)) {
    TESSERA_ASSIGN_OR_RETURN(log, ReadJson(issued_log));
  }
  json& issued = log[std::to_string(epoch)];
  if (!issued.is_array()) issued = json::array();
  for (const auto& who : issued) {
    if (who == identity) {
      return AlreadyExistsError("identity '" + identity +
                                "' already obtained a review key for epoch " +
                                std::to_string(epoch));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(Bytes blind_sig, blind::BlindSign(*sk, blinded));
  issued.push_back(identity);
  // Record the issuance before releasing the signature: a crash in between loses a signature,
  // never lets an identity get two.
  TESSERA_RETURN_IF_ERROR(WriteJson(issued_log, log));
  TESSERA_RETURN_IF_ERROR(WriteJson(response_path, {{"blind_sig", ToHex(blind_sig)}}));
  out << "issued a blind signature to '" << identity << "' for epoch " << epoch << "\n";
  return Status::Ok();
}

Status FinalizeCredential(const std::string& issuer_public, const std::string& state_path,
                          const std::string& response_path, const std::string& credential_path,
                          std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(blind::PublicKey pk, LoadIssuerPublic(issuer_public));
  TESSERA_ASSIGN_OR_RETURN(json state, ReadJson(state_path));
  TESSERA_ASSIGN_OR_RETURN(json resp, ReadJson(response_path));
  Credential c;
  TESSERA_ASSIGN_OR_RETURN(c.epoch, GetUint(state, "epoch", state_path));
  TESSERA_ASSIGN_OR_RETURN(c.review_key, GetArray<32>(state, "public", state_path));
  TESSERA_ASSIGN_OR_RETURN(Bytes input, GetHex(state, "input_msg", state_path));
  TESSERA_ASSIGN_OR_RETURN(Bytes inv, GetHex(state, "inv", state_path));
  TESSERA_ASSIGN_OR_RETURN(Bytes blind_sig, GetHex(resp, "blind_sig", response_path));
  Bytes expected = CredentialMessage(c.review_key, c.epoch);
  if (input.size() != blind::kMessagePrefixLength + expected.size() ||
      !std::equal(expected.begin(), expected.end(), input.begin() + blind::kMessagePrefixLength)) {
    return InvalidArgumentError(state_path + ": input_msg does not match the review key");
  }
  TESSERA_ASSIGN_OR_RETURN(c.signature,
                           blind::Finalize(pk, kCredentialVariant, input, blind_sig, inv));
  c.msg_prefix.assign(input.begin(), input.begin() + blind::kMessagePrefixLength);
  TESSERA_RETURN_IF_ERROR(WriteJson(credential_path, CredentialToJson(c)));
  out << "credential for review key " << Short(c.review_key) << " verified\n";
  return Status::Ok();
}

Status Register(const std::string& issuer_public, const std::string& credential_path,
                const std::string& registry_path, std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(blind::PublicKey pk, LoadIssuerPublic(issuer_public));
  TESSERA_ASSIGN_OR_RETURN(json cj, ReadJson(credential_path));
  TESSERA_ASSIGN_OR_RETURN(Credential c, CredentialFromJson(cj, credential_path));
  Registry registry{c.epoch, {}};
  if (std::filesystem::exists(registry_path)) {
    TESSERA_ASSIGN_OR_RETURN(registry, LoadRegistry(registry_path));
  }
  registry.credentials.push_back(c);
  // Re-verifies everything: the registry file is not trusted either.
  auto keys = RegisteredKeys(pk, registry.epoch, registry.credentials);
  if (!keys.ok()) return keys.status().WithContext("registering " + credential_path);
  json creds = json::array();
  for (const Credential& cred : registry.credentials) creds.push_back(CredentialToJson(cred));
  TESSERA_RETURN_IF_ERROR(
      WriteJson(registry_path,
                {{"epoch", registry.epoch}, {"issuer", pk.Fingerprint()}, {"credentials", creds}}));
  out << "registered review key " << Short(c.review_key) << " (" << keys->size()
      << " keys in epoch " << registry.epoch << ")\n";
  return Status::Ok();
}

namespace {
Result<std::vector<urs::Point>> VerifiedRegistryKeys(const std::string& issuer_public,
                                                     const std::string& registry_path,
                                                     uint64_t* epoch) {
  TESSERA_ASSIGN_OR_RETURN(blind::PublicKey pk, LoadIssuerPublic(issuer_public));
  TESSERA_ASSIGN_OR_RETURN(Registry registry, LoadRegistry(registry_path));
  *epoch = registry.epoch;
  auto keys = RegisteredKeys(pk, registry.epoch, registry.credentials);
  if (!keys.ok()) return keys.status().WithContext(registry_path);
  return keys;
}
}  // namespace

Status ComputeRing(const std::string& issuer_public, const std::string& registry_path,
                   const std::string& item, const std::string& seed_hex, uint64_t k,
                   const std::string& ring_path, std::ostream& out) {
  auto seed = ArrayFromHex<32>(seed_hex);
  if (!seed.ok()) return seed.status().WithContext("--seed");
  uint64_t epoch = 0;
  TESSERA_ASSIGN_OR_RETURN(auto keys, VerifiedRegistryKeys(issuer_public, registry_path, &epoch));
  TESSERA_ASSIGN_OR_RETURN(urs::Ring ring, drac::EligibleRing(keys, item, epoch, *seed, k));
  json members = json::array();
  for (const urs::Point& p : ring.members()) members.push_back(ToHex(p));
  TESSERA_RETURN_IF_ERROR(WriteJson(ring_path, {{"item", item},
                                                {"epoch", epoch},
                                                {"seed", ToHex(*seed)},
                                                {"k", k},
                                                {"registered", keys.size()},
                                                {"members", members}}));
  out << "ring of '" << item << "' in epoch " << epoch << ": " << ring.size() << " of "
      << keys.size() << " registered keys eligible (expected " << std::min<uint64_t>(k, keys.size())
      << ")\n";
  return Status::Ok();
}

Status SignReviewFile(const std::string& key_path, const std::string& ring_path, int rating,
                      const std::string& text, const std::string& review_path, std::ostream& out) {
  uint64_t key_epoch = 0;
  TESSERA_ASSIGN_OR_RETURN(urs::KeyPair kp, LoadReviewKey(key_path, &key_epoch));
  TESSERA_ASSIGN_OR_RETURN(RingFile rf, LoadRing(ring_path));
  if (key_epoch != rf.epoch) {
    return InvalidArgumentError("review key is for epoch " + std::to_string(key_epoch) +
                                " but the ring is for epoch " + std::to_string(rf.epoch));
  }
  auto review = SignReview(kp, rf.ring, rf.item, rf.epoch, rating, text);
  if (!review.ok() && review.status().code() == StatusCode::kPermissionDenied) {
    return review.status().WithContext("this key is not eligible for '" + rf.item + "'");
  }
  if (!review.ok()) return review.status();
  TESSERA_RETURN_IF_ERROR(WriteJson(review_path, ReviewToJson(*review)));
  out << "signed review of '" << rf.item << "' (" << rating << "/5) over a ring of "
      << rf.ring.size() << "; tag " << Short(review->signature.tag) << "\n";
  return Status::Ok();
}

Status VerifyReviewFile(const std::string& ring_path, const std::string& review_path,
                        const std::string& issuer_public, const std::string& registry_path,
                        std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(RingFile rf, LoadRing(ring_path));
  TESSERA_ASSIGN_OR_RETURN(Review review, LoadReview(review_path));
  if (review.item != rf.item || review.epoch != rf.epoch) {
    return PermissionDeniedError("review is for '" + review.item + "' epoch " +
                                 std::to_string(review.epoch) + " but the ring is for '" + rf.item +
                                 "' epoch " + std::to_string(rf.epoch));
  }
  if (!registry_path.empty()) {
    uint64_t epoch = 0;
    TESSERA_ASSIGN_OR_RETURN(auto keys, VerifiedRegistryKeys(issuer_public, registry_path, &epoch));
    TESSERA_ASSIGN_OR_RETURN(drac::Seed seed, ArrayFromHex<32>(rf.seed_hex));
    TESSERA_ASSIGN_OR_RETURN(urs::Ring expected,
                             drac::EligibleRing(keys, rf.item, rf.epoch, seed, rf.k));
    if (epoch != rf.epoch || expected.members() != rf.ring.members()) {
      return PermissionDeniedError(ring_path +
                                   ": ring does not match the DRAC lottery over the registry");
    }
    out << "ring recomputed from the registry: matches\n";
  }
  Status st = VerifyReview(rf.ring, review);
  if (!st.ok()) return st.WithContext(review_path);
  out << "review of '" << review.item << "' (" << review.rating << "/5) is VALID: signed by one of "
      << rf.ring.size() << " eligible keys; tag " << Short(review.signature.tag) << "\n";
  return Status::Ok();
}

Status FindDuplicates(const std::vector<std::string>& review_paths, bool fail_on_duplicate,
                      std::ostream& out) {
  std::vector<Review> reviews;
  for (const std::string& path : review_paths) {
    TESSERA_ASSIGN_OR_RETURN(Review r, LoadReview(path));
    reviews.push_back(std::move(r));
  }
  auto dups = FindDoubleReviews(reviews);
  for (const auto& [i, j] : dups) {
    out << "DOUBLE REVIEW: " << review_paths[i] << " and " << review_paths[j] << " review '"
        << reviews[i].item << "' with the same key (tag " << Short(reviews[i].signature.tag)
        << ")\n";
  }
  out << reviews.size() << " reviews, " << dups.size() << " double review(s)\n";
  if (fail_on_duplicate && !dups.empty()) {
    return FailedPreconditionError(std::to_string(dups.size()) + " double review(s) found");
  }
  return Status::Ok();
}

Status Tally(const std::string& ring_path, const std::vector<std::string>& review_paths,
             std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(RingFile rf, LoadRing(ring_path));
  ItemTally tally(rf.item, rf.epoch, rf.ring);
  for (const std::string& path : review_paths) {
    TESSERA_ASSIGN_OR_RETURN(Review r, LoadReview(path));
    Status st = tally.Add(r);
    out << (st.ok() ? "accepted " : "REJECTED ") << path;
    if (!st.ok()) out << ": " << st.message();
    out << "\n";
  }
  out << "'" << rf.item << "' epoch " << rf.epoch << ": " << tally.count() << " reviews, mean "
      << tally.mean() << "\n";
  auto hr = tally.HijackResistance(rf.registered, rf.k);
  if (hr.ok() && hr->reviews_needed > 0) {
    out << "hijack-resistance (shift by 0.5, N=" << rf.registered << ", k=" << rf.k
        << "): " << hr->reviews_needed << " adversarial reviews, ";
    if (hr->feasible) {
      out << hr->identities_with_drac << " identities with DRAC vs " << hr->identities_without_drac
          << " without\n";
    } else {
      out << "more identities than exist with DRAC\n";
    }
  }
  out << "tally digest " << ToHex(tally.Digest()) << "\n";
  return Status::Ok();
}

Status Hijack(uint64_t identities, uint64_t k, uint64_t honest_reviews, double mean, double delta,
              std::ostream& out) {
  metric::HijackInput in;
  in.identities = identities;
  in.ring_size = k;
  in.honest_reviews = honest_reviews;
  in.honest_mean = mean;
  in.delta = delta;
  TESSERA_ASSIGN_OR_RETURN(metric::HijackResistance hr, metric::ComputeHijackResistance(in));
  out << "N=" << identities << " k=" << k << " honest reviews=" << honest_reviews
      << " mean=" << mean << " delta=" << delta << "\n";
  if (hr.reviews_needed == 0) {
    out << "hijack-resistance: infinite (no number of reviews shifts the mean by delta)\n";
    return Status::Ok();
  }
  out << "reviews needed toward " << hr.target_extreme << ": " << hr.reviews_needed << "\n"
      << "identities needed without DRAC: " << hr.identities_without_drac << "\n";
  if (hr.feasible) {
    out << "identities needed with DRAC (success >= 1/2): " << hr.identities_with_drac
        << "  (N/k = " << hr.predicted_factor << ", ratio "
        << static_cast<double>(hr.identities_with_drac) / hr.identities_without_drac << ")\n";
  } else {
    out << "identities needed with DRAC: more than all " << identities
        << " identities (infeasible)\n";
  }
  return Status::Ok();
}

}  // namespace tessera::reviews::tool
