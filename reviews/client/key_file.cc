#include "reviews/client/key_file.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "core/file.h"

namespace tessera::reviews::client {
namespace {

constexpr std::string_view kFormat = "tessera-review-key v3";
constexpr std::string_view kRequestFormat = "tessera-review-key-request v1";

Result<std::string> Field(const nlohmann::json& j, const char* name) {
  if (!j.contains(name) || !j[name].is_string()) {
    return InvalidArgumentError(std::string("review key file: '") + name +
                                "' is missing or not a string");
  }
  return j[name].get<std::string>();
}

Result<Bytes> HexField(const nlohmann::json& j, const char* name) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, Field(j, name));
  auto bytes = FromHex(text);
  if (!bytes.ok()) {
    return InvalidArgumentError(std::string("review key file: '") + name +
                                "': " + bytes.status().message());
  }
  return Bytes(bytes->begin(), bytes->end());
}

template <size_t N>
Result<std::array<uint8_t, N>> ArrayField(const nlohmann::json& j, const char* name) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, Field(j, name));
  auto a = ArrayFromHex<N>(text);
  if (!a.ok()) {
    return InvalidArgumentError(std::string("review key file: '") + name +
                                "': " + a.status().message());
  }
  return *a;
}

}  // namespace

Result<nlohmann::json> ParseObject(std::string_view text, std::string_view format) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("review key file: not a JSON object");
  }
  TESSERA_ASSIGN_OR_RETURN(std::string found, Field(j, "format"));
  if (found == "tessera-review-key v1") {
    return InvalidArgumentError(
        "review key file: format 'tessera-review-key v1' mixed the identity and its blinding "
        "values with the review key; request a new key (files are now split, key_file.h)");
  }
  if (found == "tessera-review-key v2") {
    return InvalidArgumentError(
        "review key file: format 'tessera-review-key v2' holds a key on G, which the version 2 "
        "ring signature (urs.h: keys on J) cannot use; request a new key");
  }
  if (found != format) {
    return InvalidArgumentError("review key file: format is '" + found + "', expected '" +
                                std::string(format) + "'");
  }
  if (!j.contains("epoch") || !j["epoch"].is_number_unsigned()) {
    return InvalidArgumentError("review key file: 'epoch' is missing or not an unsigned integer");
  }
  return j;
}

std::string EncodeKeyFile(const ReviewKeyFile& key) {
  nlohmann::json j = {{"format", kFormat},
                      {"epoch", key.epoch},
                      {"review_secret", ToHex(key.review.secret)},
                      {"review_public", ToHex(key.review.public_key)},
                      {"input_msg", ToHex(key.input_msg)},
                      {"signature", ToHex(key.signature)},
                      {"registered", key.registered}};
  return j.dump(2) + "\n";
}

Result<ReviewKeyFile> DecodeKeyFile(std::string_view text) {
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json j, ParseObject(text, kFormat));
  if (!j.contains("registered") || !j["registered"].is_boolean()) {
    return InvalidArgumentError("review key file: 'registered' is missing or not a boolean");
  }
  ReviewKeyFile key;
  key.epoch = j["epoch"].get<uint64_t>();
  key.registered = j["registered"].get<bool>();
  TESSERA_ASSIGN_OR_RETURN(urs::Scalar secret, ArrayField<32>(j, "review_secret"));
  TESSERA_ASSIGN_OR_RETURN(urs::Point pub, ArrayField<32>(j, "review_public"));
  auto pair = urs::KeyPairFromSecret(secret);
  if (!pair.ok()) {
    return InvalidArgumentError("review key file: 'review_secret': " + pair.status().message());
  }
  if (pair->public_key != pub) {
    return InvalidArgumentError("review key file: 'review_public' is not review_secret * J");
  }
  key.review = *pair;
  TESSERA_ASSIGN_OR_RETURN(key.input_msg, HexField(j, "input_msg"));
  TESSERA_ASSIGN_OR_RETURN(key.signature, HexField(j, "signature"));
  if (key.registered && key.signature.empty()) {
    return InvalidArgumentError("review key file: registered without a credential signature");
  }
  return key;
}

std::filesystem::path RequestFilePath(const std::filesystem::path& key_file) {
  std::filesystem::path p = key_file;
  p += ".request";
  return p;
}

std::string EncodeRequestFile(const KeyRequestFile& request) {
  nlohmann::json j = {{"format", kRequestFormat},
                      {"epoch", request.epoch},
                      {"citizen", ToHex(request.citizen)},
                      {"review_public", ToHex(request.review_public)},
                      {"blinded_msg", ToHex(request.blinded_msg)},
                      {"inv", ToHex(request.inv)},
                      {"salt", ToHex(request.salt)}};
  return j.dump(2) + "\n";
}

Result<KeyRequestFile> DecodeRequestFile(std::string_view text) {
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json j, ParseObject(text, kRequestFormat));
  KeyRequestFile r;
  r.epoch = j["epoch"].get<uint64_t>();
  TESSERA_ASSIGN_OR_RETURN(r.citizen, ArrayField<32>(j, "citizen"));
  TESSERA_ASSIGN_OR_RETURN(r.review_public, ArrayField<32>(j, "review_public"));
  TESSERA_ASSIGN_OR_RETURN(r.blinded_msg, HexField(j, "blinded_msg"));
  TESSERA_ASSIGN_OR_RETURN(r.inv, HexField(j, "inv"));
  TESSERA_ASSIGN_OR_RETURN(r.salt, ArrayField<32>(j, "salt"));
  return r;
}

namespace {

Result<std::string> ReadPrivateFile(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError("review key file " + path.string() + " does not exist");
  }
  if ((st.st_mode & 077) != 0) {
    return PermissionDeniedError("review key file " + path.string() +
                                 " is accessible to group or others (chmod 600 it)");
  }
  return ReadFile(path);
}

}  // namespace

Status WriteKeyFile(const std::filesystem::path& path, const ReviewKeyFile& key) {
  return WriteFileAtomically(path, EncodeKeyFile(key), 0600);
}

Result<ReviewKeyFile> ReadKeyFile(const std::filesystem::path& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadPrivateFile(path));
  auto key = DecodeKeyFile(text);
  if (!key.ok()) return key.status().WithContext(path.string());
  return key;
}

Status WriteRequestFile(const std::filesystem::path& path, const KeyRequestFile& request) {
  return WriteFileAtomically(path, EncodeRequestFile(request), 0600);
}

Result<KeyRequestFile> ReadRequestFile(const std::filesystem::path& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadPrivateFile(path));
  auto request = DecodeRequestFile(text);
  if (!request.ok()) return request.status().WithContext(path.string());
  return request;
}

}  // namespace tessera::reviews::client
