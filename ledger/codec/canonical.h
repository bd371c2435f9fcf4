// A small canonical binary writer and reader for the bytes the ledger signs and hashes.
//
// Protobuf is not canonical (field order, varint padding, unknown fields all vary), and a
// signature over bytes that can be re-encoded differently is a signature over nothing in
// particular. This format has exactly one encoding per value:
//   * integers are fixed-width big-endian (u8, u16, u32, u64);
//   * keys, hashes, signatures and proofs are fixed-size byte arrays, written raw;
//   * a list is a u32 count followed by its elements, the count bounded by a per-field limit;
//   * booleans are the bytes 0 and 1 only;
//   * a message ends exactly where its last field ends (trailing bytes are an error).
// Every read names the field, so an error reads
//   "vote: truncated at offset 40 reading 'value' (need 32 bytes, 5 left)".
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "ledger/crypto/bytes.h"

namespace tessera::ledger {

class CanonicalWriter {
 public:
  CanonicalWriter& U8(uint8_t v);
  CanonicalWriter& U16(uint16_t v);
  CanonicalWriter& U32(uint32_t v);
  CanonicalWriter& U64(uint64_t v);
  CanonicalWriter& Bool(bool v) { return U8(v ? 1 : 0); }
  CanonicalWriter& Raw(ByteSpan bytes);
  // A length-prefixed (u32) byte string.
  CanonicalWriter& Bytes(ByteSpan bytes);
  template <size_t N>
  CanonicalWriter& Array(const std::array<uint8_t, N>& a) {
    return Raw(ByteSpan(a));
  }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class CanonicalReader {
 public:
  // `message` names what is being decoded, for error messages.
  CanonicalReader(ByteSpan bytes, std::string_view message) : bytes_(bytes), message_(message) {}

  Status U8(uint8_t* v, const char* field);
  Status U16(uint16_t* v, const char* field);
  Status U32(uint32_t* v, const char* field);
  Status U64(uint64_t* v, const char* field);
  Status Bool(bool* v, const char* field);
  template <size_t N>
  Status Array(std::array<uint8_t, N>* a, const char* field) {
    return Raw(a->data(), N, field);
  }
  // A list count: INVALID_ARGUMENT if above `limit`, or if the remaining bytes cannot hold
  // `count` elements of at least `min_element_size` bytes (so a forged count cannot make the
  // decoder reserve gigabytes).
  Status Count(uint32_t* count, uint32_t limit, size_t min_element_size, const char* field);
  // A length-prefixed (u32) byte string of at most `limit` bytes.
  Status Bytes(std::string* out, uint32_t limit, const char* field);
  // INVALID_ARGUMENT unless every byte was consumed.
  Status Finish() const;

  // An INVALID_ARGUMENT status "<message>: <what> (at offset N)", for checks done by callers.
  Status Error(std::string_view what) const;

  size_t offset() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  Status Raw(uint8_t* out, size_t n, const char* field);
  ByteSpan bytes_;
  std::string_view message_;
  size_t pos_ = 0;
};

}  // namespace tessera::ledger
