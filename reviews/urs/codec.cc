#include "reviews/urs/codec.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace tessera::reviews::urs {
namespace {

constexpr size_t kHeaderSize = 3;  // version + u16 count

Status Malformed(std::string what) { return InvalidArgumentError("malformed " + what); }

// Reads and checks the version byte and the member count shared by both encodings.
Result<size_t> ReadHeader(ByteSpan bytes, std::string_view kind, uint8_t version) {
  if (bytes.size() < kHeaderSize) {
    return Malformed(std::string(kind) + ": " + std::to_string(bytes.size()) +
                     " bytes is shorter than the 3-byte header");
  }
  if (bytes[0] != version) {
    return Malformed(std::string(kind) + ": unknown version " + std::to_string(bytes[0]) +
                     " at offset 0 (expected " + std::to_string(version) + ")");
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

constexpr size_t kSignatureFixed = 6 * 32;  // tag, commitment, e, z_x, z_r, c0

void PutHeader(Bytes& out, uint8_t version, size_t n) {
  out.push_back(version);
  AppendBigEndian(out, n, 2);
}

}  // namespace

size_t SignatureSize(size_t ring_size) { return kHeaderSize + kSignatureFixed + 32 * ring_size; }

Bytes EncodeSignature(const Signature& sig) {
  Bytes out;
  out.reserve(SignatureSize(sig.s.size()));
  PutHeader(out, kSignatureVersion, sig.s.size());
  for (const auto* part :
       {&sig.tag, &sig.commitment, &sig.link_challenge, &sig.link_x, &sig.link_r, &sig.c0}) {
    out.insert(out.end(), part->begin(), part->end());
  }
  for (const Scalar& s : sig.s) out.insert(out.end(), s.begin(), s.end());
  return out;
}

Result<Signature> DecodeSignature(ByteSpan bytes) {
  TESSERA_ASSIGN_OR_RETURN(size_t n, ReadHeader(bytes, "signature", kSignatureVersion));
  if (bytes.size() != SignatureSize(n)) {
    return Malformed("signature: a signature over " + std::to_string(n) + " members has " +
                     std::to_string(SignatureSize(n)) + " bytes, got " +
                     std::to_string(bytes.size()));
  }
  Signature sig;
  for (const auto& [point, what, offset] : {std::tuple{&sig.tag, "tag", kHeaderSize},
                                            {&sig.commitment, "commitment", kHeaderSize + 32}}) {
    *point = Take<32>(bytes, offset);
    Status ok = ValidatePoint(*point, std::string(what) + " at offset " + std::to_string(offset));
    if (!ok.ok()) return Malformed("signature: " + ok.message());
  }
  for (const auto& [scalar, what, offset] :
       {std::tuple{&sig.link_challenge, "link challenge", kHeaderSize + 64},
        {&sig.link_x, "link response z_x", kHeaderSize + 96},
        {&sig.link_r, "link response z_r", kHeaderSize + 128},
        {&sig.c0, "challenge", kHeaderSize + 160}}) {
    *scalar = Take<32>(bytes, offset);
    if (!IsCanonicalScalar(*scalar) || IsZero(*scalar)) {
      return Malformed("signature: " + std::string(what) + " at offset " + std::to_string(offset) +
                       " is not a nonzero scalar below L");
    }
  }
  sig.s.resize(n);
  for (size_t i = 0; i < n; ++i) {
    size_t offset = kHeaderSize + kSignatureFixed + 32 * i;
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
  PutHeader(out, kRingVersion, ring.size());
  for (const Point& p : ring.members()) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Result<Ring> DecodeRing(ByteSpan bytes) {
  TESSERA_ASSIGN_OR_RETURN(size_t n, ReadHeader(bytes, "ring", kRingVersion));
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
