#include "reviews/urs/codec.h"

#include <algorithm>
#include <cstring>

namespace tessera::reviews::urs {
namespace {

constexpr size_t kHeaderSize = 3;  // version + u16 count

Status Malformed(std::string what) { return InvalidArgumentError("malformed " + what); }

// Reads and checks the version byte and the member count shared by both encodings.
Result<size_t> ReadHeader(ByteSpan bytes, std::string_view kind) {
  if (bytes.size() < kHeaderSize) {
    return Malformed(std::string(kind) + ": " + std::to_string(bytes.size()) +
                     " bytes is shorter than the 3-byte header");
  }
  if (bytes[0] != kCodecVersion) {
    return Malformed(std::string(kind) + ": unknown version " + std::to_string(bytes[0]) +
                     " at offset 0 (expected " + std::to_string(kCodecVersion) + ")");
  }
  size_t n = static_cast<size_t>(bytes[1]) << 8 | bytes[2];
  if (n == 0 || n > kMaxRingSize) {
    return Malformed(std::string(kind) + ": ring size " + std::to_string(n) +
                     " at offset 1 is outside 1.." + std::to_string(kMaxRingSize));
  }
  return n;
}

template <size_t N>
std::array<uint8_t, N> Take(ByteSpan bytes, size_t offset) {
  std::array<uint8_t, N> out;
  std::memcpy(out.data(), bytes.data() + offset, N);
  return out;
}

void PutHeader(Bytes& out, size_t n) {
  out.push_back(kCodecVersion);
  AppendBigEndian(out, n, 2);
}

}  // namespace

size_t SignatureSize(size_t ring_size) { return kHeaderSize + 64 + 32 * ring_size; }

Bytes EncodeSignature(const Signature& sig) {
  Bytes out;
  out.reserve(SignatureSize(sig.s.size()));
  PutHeader(out, sig.s.size());
  out.insert(out.end(), sig.tag.begin(), sig.tag.end());
  out.insert(out.end(), sig.c0.begin(), sig.c0.end());
  for (const Scalar& s : sig.s) out.insert(out.end(), s.begin(), s.end());
  return out;
}

Result<Signature> DecodeSignature(ByteSpan bytes) {
  TESSERA_ASSIGN_OR_RETURN(size_t n, ReadHeader(bytes, "signature"));
  if (bytes.size() != SignatureSize(n)) {
    return Malformed("signature: a signature over " + std::to_string(n) + " members has " +
                     std::to_string(SignatureSize(n)) + " bytes, got " +
                     std::to_string(bytes.size()));
  }
  Signature sig;
  sig.tag = Take<32>(bytes, kHeaderSize);
  Status tag_ok = ValidatePoint(sig.tag, "tag at offset 3");
  if (!tag_ok.ok()) return Malformed("signature: " + tag_ok.message());
  sig.c0 = Take<32>(bytes, kHeaderSize + 32);
  if (!IsCanonicalScalar(sig.c0) || IsZero(sig.c0)) {
    return Malformed("signature: challenge at offset 35 is not a nonzero scalar below L");
  }
  sig.s.resize(n);
  for (size_t i = 0; i < n; ++i) {
    size_t offset = kHeaderSize + 64 + 32 * i;
    sig.s[i] = Take<32>(bytes, offset);
    if (!IsCanonicalScalar(sig.s[i]) || IsZero(sig.s[i])) {
      return Malformed("signature: response " + std::to_string(i) + " at offset " +
                       std::to_string(offset) + " is not a nonzero scalar below L");
    }
  }
  return sig;
}

Bytes EncodeRing(const Ring& ring) {
  Bytes out;
  out.reserve(kHeaderSize + 32 * ring.size());
  PutHeader(out, ring.size());
  for (const Point& p : ring.members()) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Result<Ring> DecodeRing(ByteSpan bytes) {
  TESSERA_ASSIGN_OR_RETURN(size_t n, ReadHeader(bytes, "ring"));
  if (bytes.size() != kHeaderSize + 32 * n) {
    return Malformed("ring: a ring of " + std::to_string(n) + " members has " +
                     std::to_string(kHeaderSize + 32 * n) + " bytes, got " +
                     std::to_string(bytes.size()));
  }
  std::vector<Point> members(n);
  for (size_t i = 0; i < n; ++i) {
    size_t offset = kHeaderSize + 32 * i;
    members[i] = Take<32>(bytes, offset);
    Status ok = ValidatePoint(
        members[i], "member " + std::to_string(i) + " at offset " + std::to_string(offset));
    if (!ok.ok()) return Malformed("ring: " + ok.message());
    if (i > 0 && !(members[i - 1] < members[i])) {
      return Malformed("ring: member " + std::to_string(i) + " at offset " +
                       std::to_string(offset) +
                       " is not above its predecessor (members must be sorted and distinct)");
    }
  }
  return Ring::Create(std::move(members));
}

}  // namespace tessera::reviews::urs
