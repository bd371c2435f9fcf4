// Byte strings and hex conversion for the reviews system's cryptography and file formats.
//
//   Bytes key = ...;
//   std::string text = ToHex(key);
//   TESSERA_ASSIGN_OR_RETURN(Bytes back, FromHex(text));
//
// The reviews system keeps its own copy of these helpers (rather than ledger/crypto/bytes.h) so
// that it does not depend on the ledger while the ledger's foundations are still changing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::reviews {

using Bytes = std::vector<uint8_t>;
using ByteSpan = std::span<const uint8_t>;

inline ByteSpan AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Lower-case hex, two characters per byte.
std::string ToHex(ByteSpan bytes);

// Accepts upper or lower case and an optional "0x" prefix; INVALID_ARGUMENT on odd length or a
// non-hex character.
Result<Bytes> FromHex(std::string_view hex);

// Like FromHex, but the decoded length must be exactly N bytes.
template <size_t N>
Result<std::array<uint8_t, N>> ArrayFromHex(std::string_view hex) {
  TESSERA_ASSIGN_OR_RETURN(Bytes bytes, FromHex(hex));
  if (bytes.size() != N) {
    return InvalidArgumentError("expected " + std::to_string(N) + " bytes (" +
                                std::to_string(2 * N) + " hex characters), got " +
                                std::to_string(bytes.size()) + " bytes");
  }
  std::array<uint8_t, N> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

// Appends a big-endian integer of `width` bytes (1..8).
void AppendBigEndian(Bytes& out, uint64_t value, int width);

// Appends a 4-byte big-endian length followed by the bytes: an unambiguous concatenation for
// hash inputs (so ("ab","c") and ("a","bc") never hash alike).
void AppendLengthPrefixed(Bytes& out, ByteSpan bytes);

}  // namespace tessera::reviews
