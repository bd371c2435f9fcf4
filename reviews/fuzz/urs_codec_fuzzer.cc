// libFuzzer target for the URS decoders (reviews/urs/codec.h): any input must decode or fail
// with a Status, never crash, hang or read out of bounds; whatever decodes must re-encode to
// the same bytes (the encodings are canonical) and verify without crashing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "reviews/urs/codec.h"

using namespace tessera::reviews;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteSpan input(data, size);
  auto sig = urs::DecodeSignature(input);
  if (sig.ok() && urs::EncodeSignature(*sig) != Bytes(input.begin(), input.end())) std::abort();
  auto ring = urs::DecodeRing(input);
  if (ring.ok() && urs::EncodeRing(*ring) != Bytes(input.begin(), input.end())) std::abort();
  // Split the input into a ring and a signature and verify: exercises Verify on arbitrary
  // well-formed values.
  if (size > 3) {
    size_t ring_len = 3 + 32 * (data[0] % 4 + 1);
    if (size > ring_len) {
      auto r = urs::DecodeRing(ByteSpan(data, ring_len));
      auto s = urs::DecodeSignature(ByteSpan(data + ring_len, size - ring_len));
      if (r.ok() && s.ok()) (void)urs::Verify(*r, ByteSpan(data, 1), ByteSpan(data, 2), *s);
    }
  }
  return 0;
}
