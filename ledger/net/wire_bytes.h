// Fixed-size values carried as protobuf `bytes` fields, decoded with a clear error.
#pragma once

#include <algorithm>
#include <string>

#include "core/status.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger::net {

// `bytes` as a 32-byte hash; INVALID_ARGUMENT "<what> must be 32 bytes" otherwise.
inline Result<Hash256> HashFromBytes(const std::string& bytes, const char* what) {
  if (bytes.size() != 32) return InvalidArgumentError(std::string(what) + " must be 32 bytes");
  Hash256 h;
  std::copy(bytes.begin(), bytes.end(), h.begin());
  return h;
}

}  // namespace tessera::ledger::net
