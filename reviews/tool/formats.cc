#include "reviews/tool/formats.h"

#include "core/file.h"
#include "reviews/urs/codec.h"

namespace tessera::reviews::tool {

Result<json> ReadJson(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(path + ": not a JSON object");
  }
  return j;
}

Status WriteJson(const std::string& path, const json& j, unsigned mode) {
  return WriteFileAtomically(path, j.dump(2) + "\n", mode);
}

Result<std::string> GetString(const json& j, const char* field, const std::string& path) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string()) {
    return InvalidArgumentError(path + ": missing string field '" + field + "'");
  }
  return it->get<std::string>();
}

Result<uint64_t> GetUint(const json& j, const char* field, const std::string& path) {
  auto it = j.find(field);
  // In-memory JSON holds non-negative ints as signed; parsed JSON holds them as unsigned.
  if (it == j.end() || !it->is_number_integer() ||
      (!it->is_number_unsigned() && it->get<int64_t>() < 0)) {
    return InvalidArgumentError(path + ": missing unsigned integer field '" + field + "'");
  }
  return it->get<uint64_t>();
}

Result<Bytes> GetHex(const json& j, const char* field, const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string hex, GetString(j, field, path));
  auto bytes = FromHex(hex);
  if (!bytes.ok()) return bytes.status().WithContext(path + ": field '" + field + "'");
  return bytes;
}

Result<blind::PublicKey> LoadIssuerPublic(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string pem, ReadFile(path));
  auto pk = blind::PublicKey::FromPem(pem);
  if (!pk.ok()) return pk.status().WithContext(path);
  return pk;
}

Result<urs::KeyPair> LoadReviewKey(const std::string& path, uint64_t* epoch) {
  TESSERA_ASSIGN_OR_RETURN(json j, ReadJson(path));
  TESSERA_ASSIGN_OR_RETURN(*epoch, GetUint(j, "epoch", path));
  TESSERA_ASSIGN_OR_RETURN(urs::Scalar secret, GetArray<32>(j, "secret", path));
  TESSERA_ASSIGN_OR_RETURN(urs::Point pub, GetArray<32>(j, "public", path));
  auto kp = urs::KeyPairFromSecret(secret);
  if (!kp.ok()) return kp.status().WithContext(path);
  if (kp->public_key != pub) {
    return InvalidArgumentError(path + ": public key does not match the secret key");
  }
  return kp;
}

json CredentialToJson(const Credential& c) {
  return json{{"epoch", c.epoch},
              {"review_key", ToHex(c.review_key)},
              {"msg_prefix", ToHex(c.msg_prefix)},
              {"signature", ToHex(c.signature)}};
}

Result<Credential> CredentialFromJson(const json& j, const std::string& where) {
  Credential c;
  TESSERA_ASSIGN_OR_RETURN(c.epoch, GetUint(j, "epoch", where));
  TESSERA_ASSIGN_OR_RETURN(c.review_key, GetArray<32>(j, "review_key", where));
  TESSERA_ASSIGN_OR_RETURN(c.msg_prefix, GetHex(j, "msg_prefix", where));
  TESSERA_ASSIGN_OR_RETURN(c.signature, GetHex(j, "signature", where));
  return c;
}

Result<Registry> LoadRegistry(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(json j, ReadJson(path));
  Registry r;
  TESSERA_ASSIGN_OR_RETURN(r.epoch, GetUint(j, "epoch", path));
  auto it = j.find("credentials");
  if (it == j.end() || !it->is_array()) {
    return InvalidArgumentError(path + ": missing array 'credentials'");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(
        Credential c, CredentialFromJson((*it)[i], path + " credential " + std::to_string(i)));
    r.credentials.push_back(std::move(c));
  }
  return r;
}

Result<RingFile> LoadRing(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(json j, ReadJson(path));
  RingFile r;
  TESSERA_ASSIGN_OR_RETURN(r.item, GetString(j, "item", path));
  TESSERA_ASSIGN_OR_RETURN(r.epoch, GetUint(j, "epoch", path));
  TESSERA_ASSIGN_OR_RETURN(r.seed_hex, GetString(j, "seed", path));
  TESSERA_ASSIGN_OR_RETURN(r.k, GetUint(j, "k", path));
  TESSERA_ASSIGN_OR_RETURN(r.registered, GetUint(j, "registered", path));
  auto it = j.find("members");
  if (it == j.end() || !it->is_array()) return InvalidArgumentError(path + ": missing 'members'");
  std::vector<urs::Point> members;
  for (const auto& m : *it) {
    if (!m.is_string()) return InvalidArgumentError(path + ": members must be hex strings");
    auto p = ArrayFromHex<32>(m.get<std::string>());
    if (!p.ok()) return p.status().WithContext(path + ": member");
    members.push_back(*p);
  }
  auto ring = urs::Ring::Create(std::move(members));
  if (!ring.ok()) return ring.status().WithContext(path);
  r.ring = std::move(*ring);
  return r;
}

json ReviewToJson(const Review& review) {
  return json{{"item", review.item},
              {"epoch", review.epoch},
              {"rating", static_cast<uint64_t>(review.rating)},
              {"text", review.text},
              {"tag", ToHex(review.signature.tag)},
              {"signature", ToHex(urs::EncodeSignature(review.signature))}};
}

Result<Review> ReviewFromJson(const json& j, const std::string& path) {
  if (!j.is_object()) return InvalidArgumentError(path + ": not a JSON object");
  Review r;
  TESSERA_ASSIGN_OR_RETURN(r.item, GetString(j, "item", path));
  TESSERA_ASSIGN_OR_RETURN(r.epoch, GetUint(j, "epoch", path));
  TESSERA_ASSIGN_OR_RETURN(uint64_t rating, GetUint(j, "rating", path));
  if (rating > 255) return InvalidArgumentError(path + ": rating out of range");
  r.rating = static_cast<int>(rating);
  TESSERA_ASSIGN_OR_RETURN(r.text, GetString(j, "text", path));
  TESSERA_ASSIGN_OR_RETURN(Bytes sig, GetHex(j, "signature", path));
  auto decoded = urs::DecodeSignature(sig);
  if (!decoded.ok()) return decoded.status().WithContext(path);
  r.signature = std::move(*decoded);
  // The tag field is informational (it is inside the signature); a mismatch means tampering.
  auto tag = j.find("tag");
  if (tag != j.end() && (!tag->is_string() || *tag != ToHex(r.signature.tag))) {
    return InvalidArgumentError(path + ": field 'tag' does not match the signature's tag");
  }
  return r;
}

Result<Review> LoadReview(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(json j, ReadJson(path));
  return ReviewFromJson(j, path);
}

}  // namespace tessera::reviews::tool
