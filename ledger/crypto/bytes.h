// Fixed-size byte strings and hex conversion shared by the ledger's crypto, codec and state.
//
//   Hash256 root = ...;
//   std::string text = ToHex(root);
//   TESSERA_ASSIGN_OR_RETURN(Hash256 back, ArrayFromHex<32>(text));
#pragma once

#include <array>
#include <cstdint>

#include "core/hex.h"

namespace tessera::ledger {

// Byte views and hex helpers come from core (shared with the reviews system).
using tessera::ArrayFromHex;
using tessera::AsBytes;
using tessera::AsChars;
using tessera::ByteSpan;
using tessera::FromHex;
using tessera::ToHex;

using Hash256 = std::array<uint8_t, 32>;
using Hash512 = std::array<uint8_t, 64>;

}  // namespace tessera::ledger
