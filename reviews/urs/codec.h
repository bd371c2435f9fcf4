// Canonical byte encodings of rings and unique ring signatures, with strict decoders.
//
// Signature (version 2, urs.h), all integers big-endian:
//   0x02 | n: u16 (1..kMaxRingSize) | tag: 32 | commitment: 32 | link challenge: 32 |
//   z_x: 32 | z_r: 32 | c0: 32 | s_0 .. s_{n-1}: 32 each          (195 + 32 n bytes)
// (Version 1, the LSAG signature 0x01 | n | tag | c0 | s_i, is refused: its keys were on G.)
// Ring (version 1):
//   0x01 | n: u16 (1..kMaxRingSize) | n public keys of 32 bytes, strictly ascending
//
// Every value has exactly one encoding: points must be canonical ristretto255 encodings other
// than the identity, scalars canonical (< L) and nonzero, ring members sorted and distinct, and
// no trailing bytes. Decoders of untrusted input return INVALID_ARGUMENT naming the offending
// field and byte offset; they never crash (fuzzed by reviews/fuzz/urs_codec_fuzzer.cc).
#pragma once

#include "core/status.h"
#include "reviews/common/bytes.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews::urs {

inline constexpr uint8_t kSignatureVersion = 2;
inline constexpr uint8_t kRingVersion = 1;

Bytes EncodeSignature(const Signature& sig);
Result<Signature> DecodeSignature(ByteSpan bytes);
// Exact encoded size of a signature over a ring of n members.
size_t SignatureSize(size_t ring_size);

Bytes EncodeRing(const Ring& ring);
Result<Ring> DecodeRing(ByteSpan bytes);

}  // namespace tessera::reviews::urs
