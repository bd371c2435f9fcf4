// Fixed-size byte strings and hex conversion shared by the ledger's crypto, codec and state.
//
//   Hash256 root = ...;
//   std::string text = ToHex(root);
//   TESSERA_ASSIGN_OR_RETURN(Hash256 back, ArrayFromHex<32>(text));
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::ledger {

using ByteSpan = std::span<const uint8_t>;
using Hash256 = std::array<uint8_t, 32>;
using Hash512 = std::array<uint8_t, 64>;

inline ByteSpan AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view AsChars(ByteSpan b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Lower-case hex, two characters per byte.
std::string ToHex(ByteSpan bytes);

// Accepts upper or lower case; INVALID_ARGUMENT on odd length or a non-hex character.
Result<std::vector<uint8_t>> FromHex(std::string_view hex);

// Like FromHex, but the decoded length must be exactly N bytes.
template <size_t N>
Result<std::array<uint8_t, N>> ArrayFromHex(std::string_view hex) {
  if (hex.size() != 2 * N) {
    return InvalidArgumentError("expected " + std::to_string(2 * N) + " hex characters, got " +
                                std::to_string(hex.size()));
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, FromHex(hex));
  std::array<uint8_t, N> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

}  // namespace tessera::ledger
