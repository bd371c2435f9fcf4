#include "reviews/ledger/state_layout.h"

#include "ledger/crypto/hash.h"
#include "ledger/state/application.h"
#include "reviews/ledger/reviews_app.h"

namespace tessera::reviews::onchain {
namespace {

using ledger::Hash256;
using ledger::LeafValue;

std::array<uint8_t, 8> Be64(uint64_t v) {
  std::array<uint8_t, 8> b{};
  for (int i = 7; i >= 0; --i, v >>= 8) b[i] = static_cast<uint8_t>(v);
  return b;
}

uint64_t ReadBe(const LeafValue& v, size_t at, size_t width) {
  uint64_t x = 0;
  for (size_t i = 0; i < width; ++i) x = x << 8 | v[at + i];
  return x;
}

void WriteBe(LeafValue& v, size_t at, size_t width, uint64_t x) {
  for (size_t i = width; i-- > 0; x >>= 8) v[at + i] = static_cast<uint8_t>(x);
}

ByteSpan Label(std::string_view s) { return AsBytes(s); }

// The last byte of every structured value names its type. Besides catching a leaf decoded as
// the wrong record, it keeps the values from parsing as ledger accounts (whose last 16 bytes
// are zero), so a tool that sums every account-looking leaf is not misled.
constexpr uint8_t kCounterType = 0xC1;
constexpr uint8_t kItemType = 0xC2;
constexpr uint8_t kTallyType = 0xC3;
constexpr uint8_t kRingProgressType = 0xC4;
constexpr size_t kTypeByte = 31;

bool Typed(const LeafValue& v, size_t payload_end, uint8_t type) {
  for (size_t i = payload_end; i < kTypeByte; ++i) {
    if (v[i] != 0) return false;
  }
  return v[kTypeByte] == type;
}

}  // namespace

namespace leaf {
Hash256 Item(const ItemId& item) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("item"), item});
}
Hash256 ItemCount() { return ledger::AppLeafKey(kReviewsAppId, {Label("item-count")}); }
Hash256 Tally(const ItemId& item) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("tally"), item});
}
Hash256 Chain(const ItemId& item) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("chain"), item});
}
Hash256 Tag(const ItemId& item, uint64_t epoch, const urs::Point& tag) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("tag"), item, Be64(epoch), tag});
}
Hash256 KeyRequest(uint64_t epoch, const ledger::PublicKey& citizen) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("key-request"), Be64(epoch), citizen});
}
Hash256 RequestCount(uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("request-count"), Be64(epoch)});
}
Hash256 KeyIssue(uint64_t epoch, const ledger::PublicKey& citizen) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("key-issue"), Be64(epoch), citizen});
}
Hash256 ReviewKey(uint64_t epoch, const urs::Point& key) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("review-key"), Be64(epoch), key});
}
Hash256 KeyCount(uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("key-count"), Be64(epoch)});
}
Hash256 EpochSeed(uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("epoch-seed"), Be64(epoch)});
}
Hash256 RequestCommitment(uint64_t epoch, const ledger::PublicKey& citizen) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("request-commitment"), Be64(epoch), citizen});
}
Hash256 FrontRunProof(uint64_t epoch, const ledger::PublicKey& citizen) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("front-run-proof"), Be64(epoch), citizen});
}
Hash256 FrontRunCount(uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("front-run-count"), Be64(epoch)});
}
Hash256 ItemQuota(uint64_t epoch, const ledger::PublicKey& creator) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("item-quota"), Be64(epoch), creator});
}
Hash256 RingSize(const ItemId& item, uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("ring-size"), item, Be64(epoch)});
}
Hash256 RingMember(const ItemId& item, uint64_t epoch, uint64_t index) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("ring-member"), item, Be64(epoch), Be64(index)});
}
Hash256 RingProgress(const ItemId& item, uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("ring-progress"), item, Be64(epoch)});
}
Hash256 RingCursor(const ItemId& item, uint64_t epoch) {
  return ledger::AppLeafKey(kReviewsAppId, {Label("ring-cursor"), item, Be64(epoch)});
}
std::vector<Hash256> RingMembers(const ItemId& item, uint64_t epoch, uint64_t size) {
  std::vector<Hash256> keys;
  keys.reserve(size);
  for (uint64_t i = 0; i < size; ++i) keys.push_back(RingMember(item, epoch, i));
  return keys;
}
}  // namespace leaf

LeafValue EncodeRingProgress(const RingProgress& p) {
  LeafValue v{};
  WriteBe(v, 0, 8, p.keys_listed);
  WriteBe(v, 8, 8, p.members_found);
  v[kTypeByte] = kRingProgressType;
  return v;
}

Result<RingProgress> DecodeRingProgress(const std::optional<LeafValue>& value) {
  if (!value) return RingProgress{};
  if (!Typed(*value, 16, kRingProgressType)) {
    return InvalidArgumentError("reviews leaf is not a ring opening's progress");
  }
  return RingProgress{ReadBe(*value, 0, 8), ReadBe(*value, 8, 8)};
}

LeafValue EncodeCounter(uint64_t n) {
  LeafValue v{};
  WriteBe(v, 0, 8, n);
  v[kTypeByte] = kCounterType;
  return v;
}

Result<uint64_t> DecodeCounter(const std::optional<LeafValue>& value) {
  if (!value) return uint64_t{0};
  if (!Typed(*value, 8, kCounterType)) return InvalidArgumentError("reviews leaf is not a counter");
  return ReadBe(*value, 0, 8);
}

LeafValue EncodeItemRecord(const ItemRecord& r) {
  LeafValue v{};
  WriteBe(v, 0, 8, r.created_epoch);
  WriteBe(v, 8, 8, r.created_height);
  v[kTypeByte] = kItemType;
  return v;
}

Result<ItemRecord> DecodeItemRecord(const LeafValue& value) {
  if (!Typed(value, 16, kItemType)) {
    return InvalidArgumentError("reviews leaf is not an item record");
  }
  return ItemRecord{ReadBe(value, 0, 8), ReadBe(value, 8, 8)};
}

uint64_t Tally::count() const {
  uint64_t n = 0;
  for (uint32_t h : histogram) n += h;
  return n;
}

uint64_t Tally::sum() const {
  uint64_t s = 0;
  for (size_t r = 0; r < histogram.size(); ++r) s += uint64_t{histogram[r]} * (r + 1);
  return s;
}

double Tally::mean() const {
  uint64_t n = count();
  return n == 0 ? 0.0 : static_cast<double>(sum()) / static_cast<double>(n);
}

LeafValue EncodeTally(const Tally& t) {
  LeafValue v{};
  for (size_t r = 0; r < t.histogram.size(); ++r) WriteBe(v, 4 * r, 4, t.histogram[r]);
  v[kTypeByte] = kTallyType;
  return v;
}

Result<Tally> DecodeTally(const std::optional<LeafValue>& value) {
  Tally t;
  if (!value) return t;
  if (!Typed(*value, 20, kTallyType)) return InvalidArgumentError("reviews leaf is not a tally");
  for (size_t r = 0; r < t.histogram.size(); ++r) {
    t.histogram[r] = static_cast<uint32_t>(ReadBe(*value, 4 * r, 4));
  }
  return t;
}

LeafValue NextChain(const LeafValue& previous, const Hash256& review_hash) {
  return ledger::Sha256Hasher().Update(previous).Update(review_hash).Final();
}

}  // namespace tessera::reviews::onchain
