// The JSON file formats of reviews-tool (listed in commands.h), with loaders that reject
// malformed files with errors naming the file and the field. Binary fields are hex. These are
// also the formats a web client will post, so they live apart from the commands.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "reviews/blind/blind_rsa.h"
#include "reviews/review/review.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews::tool {

using nlohmann::json;

// NOT_FOUND for a missing file, INVALID_ARGUMENT when it is not a JSON object.
Result<json> ReadJson(const std::string& path);
Status WriteJson(const std::string& path, const json& j, unsigned mode = 0644);

// Field accessors: INVALID_ARGUMENT "<where>: missing string field 'x'" and the like.
Result<std::string> GetString(const json& j, const char* field, const std::string& where);
Result<uint64_t> GetUint(const json& j, const char* field, const std::string& where);
Result<Bytes> GetHex(const json& j, const char* field, const std::string& where);
template <size_t N>
Result<std::array<uint8_t, N>> GetArray(const json& j, const char* field,
                                        const std::string& where) {
  TESSERA_ASSIGN_OR_RETURN(std::string hex, GetString(j, field, where));
  auto a = ArrayFromHex<N>(hex);
  if (!a.ok()) return a.status().WithContext(where + ": field '" + field + "'");
  return a;
}

Result<blind::PublicKey> LoadIssuerPublic(const std::string& path);
// A review key file; the public key must match the secret.
Result<urs::KeyPair> LoadReviewKey(const std::string& path, uint64_t* epoch);

json CredentialToJson(const Credential& c);
Result<Credential> CredentialFromJson(const json& j, const std::string& where);

struct Registry {
  uint64_t epoch = 0;
  std::vector<Credential> credentials;
};
Result<Registry> LoadRegistry(const std::string& path);

struct RingFile {
  std::string item;
  uint64_t epoch = 0;
  std::string seed_hex;
  uint64_t k = 0;
  uint64_t registered = 0;
  urs::Ring ring;
};
Result<RingFile> LoadRing(const std::string& path);

json ReviewToJson(const Review& review);
Result<Review> ReviewFromJson(const json& j, const std::string& where);
Result<Review> LoadReview(const std::string& path);

}  // namespace tessera::reviews::tool
