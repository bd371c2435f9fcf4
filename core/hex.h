// Byte views and hex conversion, shared by the systems that hash, sign and print bytes
// (ledger, reviews).
//
//   std::string text = ToHex(digest);
//   TESSERA_ASSIGN_OR_RETURN(auto key, ArrayFromHex<32>(text));
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera {

using ByteSpan = std::span<const uint8_t>;

inline ByteSpan AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view AsChars(ByteSpan b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Lower-case hex, two characters per byte.
std::string ToHex(ByteSpan bytes);

// Accepts upper or lower case and an optional "0x" prefix; INVALID_ARGUMENT on odd length or a
// non-hex character (naming its position).
Result<std::vector<uint8_t>> FromHex(std::string_view hex);

// Like FromHex, but the decoded length must be exactly N bytes.
template <size_t N>
Result<std::array<uint8_t, N>> ArrayFromHex(std::string_view hex) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, FromHex(hex));
  if (bytes.size() != N) {
    return InvalidArgumentError("expected " + std::to_string(N) + " bytes (" +
                                std::to_string(2 * N) + " hex characters), got " +
                                std::to_string(bytes.size()) + " bytes");
  }
  std::array<uint8_t, N> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

}  // namespace tessera
