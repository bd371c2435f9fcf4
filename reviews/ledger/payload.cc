#include "reviews/ledger/payload.h"

#include <string_view>

#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"
#include "reviews/review/review.h"
#include "reviews/urs/codec.h"

namespace tessera::reviews::onchain {
namespace {

// A strict reader over the payload. Fixed-size fields go through ledger::CanonicalReader's
// rules (the same error wording); variable-length byte fields, which that reader does not
// offer, are bounded here before anything is copied.
class Reader {
 public:
  explicit Reader(ByteSpan bytes) : bytes_(bytes) {}

  Status U8(uint8_t* v, std::string_view field) { return Fixed(v, 1, field); }
  Status U16(uint16_t* v, std::string_view field) {
    uint8_t b[2];
    TESSERA_RETURN_IF_ERROR(Fixed(b, 2, field));
    *v = static_cast<uint16_t>(b[0] << 8 | b[1]);
    return Status::Ok();
  }
  Status U32(uint32_t* v, std::string_view field) {
    uint8_t b[4];
    TESSERA_RETURN_IF_ERROR(Fixed(b, 4, field));
    *v = uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
    return Status::Ok();
  }
  Status U64(uint64_t* v, std::string_view field) {
    uint8_t b[8];
    TESSERA_RETURN_IF_ERROR(Fixed(b, 8, field));
    *v = 0;
    for (uint8_t x : b) *v = *v << 8 | x;
    return Status::Ok();
  }
  template <size_t N>
  Status Array(std::array<uint8_t, N>* a, std::string_view field) {
    return Fixed(a->data(), N, field);
  }
  // A u32 length in [min, max] followed by that many bytes.
  Status Bytes(ByteSpan* out, size_t min, size_t max, std::string_view field) {
    size_t at = pos_;
    uint32_t n = 0;
    TESSERA_RETURN_IF_ERROR(U32(&n, field));
    if (n < min || n > max) {
      return Error(at, "'" + std::string(field) + "' is " + std::to_string(n) + " bytes, must be " +
                           std::to_string(min) + ".." + std::to_string(max));
    }
    if (n > bytes_.size() - pos_) {
      return Error(at, "truncated reading '" + std::string(field) + "' (need " + std::to_string(n) +
                           " bytes, " + std::to_string(bytes_.size() - pos_) + " left)");
    }
    *out = bytes_.subspan(pos_, n);
    pos_ += n;
    return Status::Ok();
  }
  Status Finish() const {
    if (pos_ == bytes_.size()) return Status::Ok();
    return Error(pos_, std::to_string(bytes_.size() - pos_) + " trailing bytes");
  }
  Status Error(size_t at, std::string_view what) const {
    return InvalidArgumentError("reviews payload: " + std::string(what) + " (at offset " +
                                std::to_string(at) + ")");
  }
  size_t offset() const { return pos_; }

 private:
  Status Fixed(uint8_t* out, size_t n, std::string_view field) {
    if (n > bytes_.size() - pos_) {
      return Error(pos_, "truncated reading '" + std::string(field) + "' (need " +
                             std::to_string(n) + " bytes, " + std::to_string(bytes_.size() - pos_) +
                             " left)");
    }
    std::copy_n(bytes_.data() + pos_, n, out);
    pos_ += n;
    return Status::Ok();
  }

  ByteSpan bytes_;
  size_t pos_ = 0;
};

class Writer {
 public:
  Writer& U8(uint8_t v) { return Put(&v, 1); }
  Writer& U16(uint16_t v) {
    uint8_t b[2] = {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
    return Put(b, 2);
  }
  Writer& U32(uint32_t v) {
    uint8_t b[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                    static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
    return Put(b, 4);
  }
  Writer& U64(uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) U8(static_cast<uint8_t>(v >> shift));
    return *this;
  }
  Writer& Raw(ByteSpan b) { return Put(b.data(), b.size()); }
  Writer& Bytes(ByteSpan b) { return U32(static_cast<uint32_t>(b.size())).Raw(b); }
  std::string Take() { return std::move(out_); }

 private:
  Writer& Put(const uint8_t* p, size_t n) {
    out_.append(reinterpret_cast<const char*>(p), n);
    return *this;
  }
  std::string out_;
};

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<uint8_t>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (n >= s.size() - i) return false;  // truncated sequence
    for (size_t k = 1; k <= n; ++k) {
      auto d = static_cast<uint8_t>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

Status DecodeCreateItem(Reader& r, CreateItem* out) {
  ByteSpan name;
  size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.Bytes(&name, 1, kMaxItemName, "name"));
  out->name.assign(reinterpret_cast<const char*>(name.data()), name.size());
  if (!IsUtf8(out->name)) return r.Error(at, "'name' is not valid UTF-8");
  std::array<uint8_t, kIdentityBytes> identity{};
  at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.Array(&identity, "identity"));
  auto id = ledger::net::DecodeIdentity(identity);
  if (!id.ok()) return r.Error(at, "'identity': " + id.status().message());
  out->identity = *id;
  return r.Array(&out->signature, "signature");
}

Status DecodeKeyRequest(Reader& r, KeyRequest* out) {
  std::array<uint8_t, kIdentityBytes> identity{};
  size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.Array(&identity, "identity"));
  auto id = ledger::net::DecodeIdentity(identity);
  if (!id.ok()) return r.Error(at, "'identity': " + id.status().message());
  out->identity = *id;
  TESSERA_RETURN_IF_ERROR(r.U64(&out->epoch, "epoch"));
  ByteSpan blinded;
  TESSERA_RETURN_IF_ERROR(r.Bytes(&blinded, kMinRsaBytes, kMaxRsaBytes, "blinded_msg"));
  out->blinded_msg.assign(blinded.begin(), blinded.end());
  TESSERA_RETURN_IF_ERROR(r.Array(&out->commitment, "commitment"));
  return r.Array(&out->signature, "signature");
}

Status DecodeFrontRunProof(Reader& r, FrontRunProof* out) {
  TESSERA_RETURN_IF_ERROR(r.U64(&out->epoch, "epoch"));
  TESSERA_RETURN_IF_ERROR(r.Array(&out->citizen, "citizen"));
  ByteSpan blinded, inv, sig;
  TESSERA_RETURN_IF_ERROR(r.Bytes(&blinded, kMinRsaBytes, kMaxRsaBytes, "blinded_msg"));
  TESSERA_RETURN_IF_ERROR(r.Bytes(&inv, blinded.size(), blinded.size(), "inv"));
  TESSERA_RETURN_IF_ERROR(r.Array(&out->salt, "salt"));
  const size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.Array(&out->review_key, "review_key"));
  Status valid = urs::ValidatePoint(out->review_key, "review_key");
  if (!valid.ok()) return r.Error(at, valid.message());
  TESSERA_RETURN_IF_ERROR(r.Array(&out->msg_prefix, "msg_prefix"));
  TESSERA_RETURN_IF_ERROR(r.Bytes(&sig, blinded.size(), blinded.size(), "signature"));
  out->blinded_msg.assign(blinded.begin(), blinded.end());
  out->inv.assign(inv.begin(), inv.end());
  out->signature.assign(sig.begin(), sig.end());
  return Status::Ok();
}

Status DecodeKeyIssue(Reader& r, KeyIssue* out) {
  TESSERA_RETURN_IF_ERROR(r.U64(&out->epoch, "epoch"));
  TESSERA_RETURN_IF_ERROR(r.Array(&out->citizen, "citizen"));
  ByteSpan blinded, sig;
  TESSERA_RETURN_IF_ERROR(r.Bytes(&blinded, kMinRsaBytes, kMaxRsaBytes, "blinded_msg"));
  size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.Bytes(&sig, kMinRsaBytes, kMaxRsaBytes, "blind_sig"));
  if (sig.size() != blinded.size()) {
    return r.Error(at, "'blind_sig' is " + std::to_string(sig.size()) + " bytes, 'blinded_msg' " +
                           std::to_string(blinded.size()));
  }
  out->blinded_msg.assign(blinded.begin(), blinded.end());
  out->blind_sig.assign(sig.begin(), sig.end());
  return Status::Ok();
}

Status DecodeRegisterKey(Reader& r, RegisterKey* out) {
  TESSERA_RETURN_IF_ERROR(r.U64(&out->epoch, "epoch"));
  size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.Array(&out->review_key, "review_key"));
  Status valid = urs::ValidatePoint(out->review_key, "review_key");
  if (!valid.ok()) return r.Error(at, valid.message());
  TESSERA_RETURN_IF_ERROR(r.Array(&out->msg_prefix, "msg_prefix"));
  ByteSpan sig;
  TESSERA_RETURN_IF_ERROR(r.Bytes(&sig, kMinRsaBytes, kMaxRsaBytes, "signature"));
  out->signature.assign(sig.begin(), sig.end());
  return Status::Ok();
}

Status DecodeReviews(Reader& r, ReviewBatch* out) {
  TESSERA_RETURN_IF_ERROR(r.Array(&out->item, "item"));
  TESSERA_RETURN_IF_ERROR(r.U64(&out->epoch, "epoch"));
  size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.U16(&out->ring_size, "ring_size"));
  if (out->ring_size == 0 || out->ring_size > kMaxRing) {
    return r.Error(at, "'ring_size' is " + std::to_string(out->ring_size) + ", must be 1.." +
                           std::to_string(kMaxRing));
  }
  uint16_t count = 0;
  at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.U16(&count, "count"));
  if (count == 0 || count > kMaxBatch) {
    return r.Error(
        at, "'count' is " + std::to_string(count) + ", must be 1.." + std::to_string(kMaxBatch));
  }
  const size_t sig_size = urs::SignatureSize(out->ring_size);
  for (uint16_t i = 0; i < count; ++i) {
    const std::string n = " of review " + std::to_string(i);
    ReviewEntry e;
    uint8_t rating = 0;
    at = r.offset();
    TESSERA_RETURN_IF_ERROR(r.U8(&rating, "rating" + n));
    if (rating < kMinRating || rating > kMaxRating) {
      return r.Error(at, "'rating'" + n + " is " + std::to_string(rating) + ", must be 1..5");
    }
    e.rating = rating;
    ByteSpan text, sig;
    TESSERA_RETURN_IF_ERROR(r.Bytes(&text, 0, kMaxReviewText, "text" + n));
    e.text.assign(reinterpret_cast<const char*>(text.data()), text.size());
    at = r.offset();
    TESSERA_RETURN_IF_ERROR(r.Bytes(&sig, sig_size, sig_size, "signature" + n));
    auto s = urs::DecodeSignature(sig);
    if (!s.ok()) return r.Error(at, "'signature'" + n + ": " + s.status().message());
    e.signature = std::move(*s);
    out->reviews.push_back(std::move(e));
  }
  return Status::Ok();
}

Status DecodeRingOpen(Reader& r, RingOpen* out) {
  TESSERA_RETURN_IF_ERROR(r.Array(&out->item, "item"));
  TESSERA_RETURN_IF_ERROR(r.U64(&out->epoch, "epoch"));
  TESSERA_RETURN_IF_ERROR(r.U64(&out->key_offset, "key_offset"));
  TESSERA_RETURN_IF_ERROR(r.U64(&out->member_offset, "member_offset"));
  TESSERA_RETURN_IF_ERROR(r.U16(&out->members, "members"));
  uint16_t count = 0;
  size_t at = r.offset();
  TESSERA_RETURN_IF_ERROR(r.U16(&count, "count"));
  if (count == 0 || count > kMaxRingOpenKeys) {
    return r.Error(at, "'count' is " + std::to_string(count) + ", must be 1.." +
                           std::to_string(kMaxRingOpenKeys));
  }
  if (out->key_offset > (uint64_t{1} << 40) || out->member_offset > out->key_offset) {
    return r.Error(at, "'key_offset' / 'member_offset' out of range");
  }
  // members is the ring's size after this part: it grows by at most the keys listed.
  if (out->members < out->member_offset || out->members > out->member_offset + count ||
      out->members > kMaxRingParameter) {
    return r.Error(
        at, "'members' is " + std::to_string(out->members) + ", outside " +
                std::to_string(out->member_offset) + ".." +
                std::to_string(std::min<uint64_t>(out->member_offset + count, kMaxRingParameter)));
  }
  out->keys.resize(count);
  for (uint16_t i = 0; i < count; ++i) {
    at = r.offset();
    const std::string field = "key " + std::to_string(i);
    TESSERA_RETURN_IF_ERROR(r.Array(&out->keys[i], field));
    if (i > 0 && !(out->keys[i - 1] < out->keys[i])) {
      return r.Error(at, "'" + field +
                             "' is not above the key before it (keys are listed in "
                             "strictly increasing order)");
    }
    // Not validated as points here: Apply refuses any key without a registration leaf, and
    // registration validated it (a square root per key, 4,096 of them per decode, saved).
  }
  return Status::Ok();
}

void EncodeReviewEntry(Writer& w, const ReviewEntry& e) {
  w.U8(static_cast<uint8_t>(e.rating))
      .Bytes(AsBytes(e.text))
      .Bytes(urs::EncodeSignature(e.signature));
}

}  // namespace

size_t ReviewCountOf(ByteSpan bytes) {
  constexpr size_t kCountOffset = 1 + 32 + 8 + 2;  // kind, item, epoch, ring_size
  if (bytes.size() < kCountOffset + 2 || bytes[0] != static_cast<uint8_t>(TxKind::kReviews)) {
    return 1;
  }
  const size_t count = (static_cast<size_t>(bytes[kCountOffset]) << 8) | bytes[kCountOffset + 1];
  return count >= 1 && count <= kMaxBatch ? count : 1;
}

std::string EncodePayload(const Payload& payload) {
  Writer w;
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, CreateItem>) {
          w.Raw(AsBytes(CreateItemSigningBytes(p))).Raw(p.signature);
        } else if constexpr (std::is_same_v<T, KeyRequest>) {
          w.Raw(AsBytes(KeyRequestSigningBytes(p))).Raw(p.signature);
        } else if constexpr (std::is_same_v<T, KeyIssue>) {
          w.U8(static_cast<uint8_t>(TxKind::kKeyIssue))
              .U64(p.epoch)
              .Raw(p.citizen)
              .Bytes(p.blinded_msg)
              .Bytes(p.blind_sig);
        } else if constexpr (std::is_same_v<T, RegisterKey>) {
          w.U8(static_cast<uint8_t>(TxKind::kRegisterKey))
              .U64(p.epoch)
              .Raw(p.review_key)
              .Raw(p.msg_prefix)
              .Bytes(p.signature);
        } else if constexpr (std::is_same_v<T, FrontRunProof>) {
          w.U8(static_cast<uint8_t>(TxKind::kFrontRunProof))
              .U64(p.epoch)
              .Raw(p.citizen)
              .Bytes(p.blinded_msg)
              .Bytes(p.inv)
              .Raw(p.salt)
              .Raw(p.review_key)
              .Raw(p.msg_prefix)
              .Bytes(p.signature);
        } else if constexpr (std::is_same_v<T, RingOpen>) {
          w.U8(static_cast<uint8_t>(TxKind::kRingOpen))
              .Raw(p.item)
              .U64(p.epoch)
              .U64(p.key_offset)
              .U64(p.member_offset)
              .U16(p.members)
              .U16(static_cast<uint16_t>(p.keys.size()));
          for (const urs::Point& k : p.keys) w.Raw(k);
        } else {
          w.U8(static_cast<uint8_t>(TxKind::kReviews))
              .Raw(p.item)
              .U64(p.epoch)
              .U16(p.ring_size)
              .U16(static_cast<uint16_t>(p.reviews.size()));
          for (const ReviewEntry& e : p.reviews) EncodeReviewEntry(w, e);
        }
      },
      payload);
  return w.Take();
}

Result<Payload> DecodePayload(ByteSpan bytes) {
  if (bytes.size() > kMaxPayload) {
    return InvalidArgumentError("reviews payload: " + std::to_string(bytes.size()) +
                                " bytes, at most " + std::to_string(kMaxPayload));
  }
  Reader r(bytes);
  uint8_t kind = 0;
  TESSERA_RETURN_IF_ERROR(r.U8(&kind, "kind"));
  Payload out;
  switch (static_cast<TxKind>(kind)) {
    case TxKind::kCreateItem:
      TESSERA_RETURN_IF_ERROR(DecodeCreateItem(r, &out.emplace<CreateItem>()));
      break;
    case TxKind::kKeyRequest:
      TESSERA_RETURN_IF_ERROR(DecodeKeyRequest(r, &out.emplace<KeyRequest>()));
      break;
    case TxKind::kKeyIssue:
      TESSERA_RETURN_IF_ERROR(DecodeKeyIssue(r, &out.emplace<KeyIssue>()));
      break;
    case TxKind::kRegisterKey:
      TESSERA_RETURN_IF_ERROR(DecodeRegisterKey(r, &out.emplace<RegisterKey>()));
      break;
    case TxKind::kReviews:
      TESSERA_RETURN_IF_ERROR(DecodeReviews(r, &out.emplace<ReviewBatch>()));
      break;
    case TxKind::kFrontRunProof:
      TESSERA_RETURN_IF_ERROR(DecodeFrontRunProof(r, &out.emplace<FrontRunProof>()));
      break;
    case TxKind::kRingOpen:
      TESSERA_RETURN_IF_ERROR(DecodeRingOpen(r, &out.emplace<RingOpen>()));
      break;
    default:
      return r.Error(0, "unknown kind " + std::to_string(kind));
  }
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return out;
}

std::string_view KindName(const Payload& payload) {
  static constexpr std::string_view kNames[] = {"create-item",  "key-request", "key-issue",
                                                "register-key", "reviews",     "front-run-proof",
                                                "ring-open"};
  return kNames[payload.index()];
}

ItemId ItemIdOf(std::string_view name) { return ledger::Sha256(name); }

ItemId ItemIdOf(const ledger::PublicKey& creator, std::string_view name) {
  Writer w;
  w.Raw(AsBytes(std::string_view("tessera/reviews/item"))).Raw(creator).Raw(AsBytes(name));
  return ledger::Sha256(AsBytes(w.Take()));
}

ItemId ItemIdOf(const CreateItem& item) { return ItemIdOf(item.identity.citizen, item.name); }

std::string CreateItemSigningBytes(const CreateItem& item) {
  Writer w;
  w.U8(static_cast<uint8_t>(TxKind::kCreateItem))
      .Bytes(AsBytes(item.name))
      .Raw(AsBytes(ledger::net::EncodeIdentity(item.identity)));
  return w.Take();
}

void SignCreateItem(CreateItem& item, const ledger::KeyPair& creator) {
  item.signature = ledger::Sign(creator, kCreateItemDomain, AsBytes(CreateItemSigningBytes(item)));
}

std::string ItemBytes(const ItemId& item) {
  return std::string(reinterpret_cast<const char*>(item.data()), item.size());
}

std::string KeyRequestSigningBytes(const KeyRequest& request) {
  Writer w;
  w.U8(static_cast<uint8_t>(TxKind::kKeyRequest))
      .Raw(AsBytes(ledger::net::EncodeIdentity(request.identity)))
      .U64(request.epoch)
      .Bytes(request.blinded_msg)
      .Raw(request.commitment);
  return w.Take();
}

ledger::Hash256 EncodedMessageCommitment(ByteSpan encoded_msg,
                                         const std::array<uint8_t, 32>& salt) {
  Writer w;
  w.Raw(AsBytes(std::string_view("tessera/reviews/em-commitment"))).Raw(salt).Raw(encoded_msg);
  return ledger::Sha256(AsBytes(w.Take()));
}

void SignKeyRequest(KeyRequest& request, const ledger::KeyPair& citizen) {
  request.signature =
      ledger::Sign(citizen, kKeyRequestDomain, AsBytes(KeyRequestSigningBytes(request)));
}

ledger::Hash256 ReviewRecordHash(const ItemId& item, uint64_t epoch, const ReviewEntry& review) {
  Writer w;
  w.Raw(AsBytes(std::string_view("tessera/reviews/review/v2"))).Raw(item).U64(epoch);
  EncodeReviewEntry(w, review);
  return ledger::Sha256(AsBytes(w.Take()));
}

}  // namespace tessera::reviews::onchain
