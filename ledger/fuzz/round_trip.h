// Shared body of the ledger's decoder fuzz targets: decoding arbitrary bytes must return an
// error or a value, never crash or hang, and a value must re-encode to exactly the input
// (the encodings are canonical: one value, one byte string).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "ledger/crypto/bytes.h"

namespace tessera::ledger::fuzz {

template <typename Decode, typename Encode>
int RoundTrip(const uint8_t* data, size_t size, Decode decode, Encode encode) {
  ByteSpan input(data, size);
  auto decoded = decode(input);
  if (!decoded.ok()) return 0;
  std::string again = encode(*decoded);
  if (std::string_view(again) != AsChars(input)) {
    std::abort();  // a second encoding of the same value: the decoder is not canonical
  }
  return 0;
}

}  // namespace tessera::ledger::fuzz
