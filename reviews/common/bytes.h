// Byte strings and hex conversion for the reviews system's cryptography and file formats.
//
//   Bytes key = ...;
//   std::string text = ToHex(key);
//   TESSERA_ASSIGN_OR_RETURN(Bytes back, FromHex(text));
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/hex.h"

namespace tessera::reviews {

using Bytes = std::vector<uint8_t>;

// Byte views and hex helpers come from core (shared with the ledger).
using tessera::ArrayFromHex;
using tessera::AsBytes;
using tessera::ByteSpan;
using tessera::FromHex;
using tessera::ToHex;

// Appends a big-endian integer of `width` bytes (1..8).
void AppendBigEndian(Bytes& out, uint64_t value, int width);

// Appends a 4-byte big-endian length followed by the bytes: an unambiguous concatenation for
// hash inputs (so ("ab","c") and ("a","bc") never hash alike).
void AppendLengthPrefixed(Bytes& out, ByteSpan bytes);

}  // namespace tessera::reviews
