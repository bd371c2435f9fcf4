#include "ledger/state/application.h"

#include <charconv>

#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger {

Result<std::string> AppParams::GetString(std::string_view key) const {
  auto it = values.find(std::string(key));
  if (it == values.end()) {
    return InvalidArgumentError("[apps." + name + "] has no '" + std::string(key) + "'");
  }
  return it->second;
}

Result<int64_t> AppParams::GetInt(std::string_view key) const {
  TESSERA_ASSIGN_OR_RETURN(std::string text, GetString(key));
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgumentError("[apps." + name + "] '" + std::string(key) +
                                "' is not an integer: " + text);
  }
  return value;
}

Result<int64_t> AppParams::GetIntOr(std::string_view key, int64_t fallback) const {
  if (!values.contains(std::string(key))) return fallback;
  return GetInt(key);
}

Status AppRegistry::Add(std::shared_ptr<const Application> app) {
  uint8_t id = app->id();
  if (apps_.contains(id)) {
    return AlreadyExistsError("application id " + std::to_string(id) + " is already taken by '" +
                              std::string(apps_.at(id)->name()) + "'");
  }
  apps_.emplace(id, std::move(app));
  return Status::Ok();
}

const Application* AppRegistry::Find(uint8_t id) const {
  auto it = apps_.find(id);
  return it == apps_.end() ? nullptr : it->second.get();
}

Hash256 AppLeafKey(uint8_t app, std::initializer_list<ByteSpan> parts) {
  CanonicalWriter w;
  w.Raw(AsBytes(std::string_view("tessera/app"))).U8(app);
  for (ByteSpan part : parts) w.Bytes(part);
  return Sha256(w.bytes());
}

}  // namespace tessera::ledger
