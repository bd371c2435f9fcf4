#include "reviews/client/key_file.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "core/file.h"

namespace tessera::reviews::client {
namespace {

constexpr std::string_view kFormat = "tessera-review-key v1";

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

std::string EncodeKeyFile(const ReviewKeyFile& key) {
  nlohmann::json j = {{"format", kFormat},
                      {"epoch", key.epoch},
                      {"citizen", ToHex(key.citizen)},
                      {"review_secret", ToHex(key.review.secret)},
                      {"review_public", ToHex(key.review.public_key)},
                      {"input_msg", ToHex(key.input_msg)},
                      {"blinded_msg", ToHex(key.blinded_msg)},
                      {"inv", ToHex(key.inv)},
                      {"signature", ToHex(key.signature)},
                      {"registered", key.registered}};
  return j.dump(2) + "\n";
}

Result<ReviewKeyFile> DecodeKeyFile(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("review key file: not a JSON object");
  }
  TESSERA_ASSIGN_OR_RETURN(std::string format, Field(j, "format"));
  if (format != kFormat) {
    return InvalidArgumentError("review key file: format is '" + format + "', expected '" +
                                std::string(kFormat) + "'");
  }
  if (!j.contains("epoch") || !j["epoch"].is_number_unsigned()) {
    return InvalidArgumentError("review key file: 'epoch' is missing or not an unsigned integer");
  }
  if (!j.contains("registered") || !j["registered"].is_boolean()) {
    return InvalidArgumentError("review key file: 'registered' is missing or not a boolean");
  }
  ReviewKeyFile key;
  key.epoch = j["epoch"].get<uint64_t>();
  key.registered = j["registered"].get<bool>();
  TESSERA_ASSIGN_OR_RETURN(key.citizen, ArrayField<32>(j, "citizen"));
  TESSERA_ASSIGN_OR_RETURN(urs::Scalar secret, ArrayField<32>(j, "review_secret"));
  TESSERA_ASSIGN_OR_RETURN(urs::Point pub, ArrayField<32>(j, "review_public"));
  auto pair = urs::KeyPairFromSecret(secret);
  if (!pair.ok()) {
    return InvalidArgumentError("review key file: 'review_secret': " + pair.status().message());
  }
  if (pair->public_key != pub) {
    return InvalidArgumentError("review key file: 'review_public' is not review_secret * G");
  }
  key.review = *pair;
  TESSERA_ASSIGN_OR_RETURN(key.input_msg, HexField(j, "input_msg"));
  TESSERA_ASSIGN_OR_RETURN(key.blinded_msg, HexField(j, "blinded_msg"));
  TESSERA_ASSIGN_OR_RETURN(key.inv, HexField(j, "inv"));
  TESSERA_ASSIGN_OR_RETURN(key.signature, HexField(j, "signature"));
  if (key.registered && key.signature.empty()) {
    return InvalidArgumentError("review key file: registered without a credential signature");
  }
  return key;
}

Status WriteKeyFile(const std::filesystem::path& path, const ReviewKeyFile& key) {
  return WriteFileAtomically(path, EncodeKeyFile(key), 0600);
}

Result<ReviewKeyFile> ReadKeyFile(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError("review key file " + path.string() + " does not exist");
  }
  if ((st.st_mode & 077) != 0) {
    return PermissionDeniedError("review key file " + path.string() +
                                 " is accessible to group or others (chmod 600 it)");
  }
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto key = DecodeKeyFile(text);
  if (!key.ok()) return key.status().WithContext(path.string());
  return key;
}

}  // namespace tessera::reviews::client
