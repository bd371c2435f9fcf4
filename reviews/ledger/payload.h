// The reviews application's transactions: canonical payload encodings with strict decoders.
//
// A payload is the `payload` of a ledger AppTransaction with app id kReviewsAppId
// (reviews_app.h). It is one kind byte followed by the kind's fields, all integers big-endian,
// every variable-length field preceded by its u32 length, and nothing after the last field:
//
//   1 CreateItem   name: bytes (1..128, UTF-8) | identity: 105 bytes | signature: 64 (Ed25519
//                  by the identity's key over CreateItemSigningBytes, "reviews/create-item")
//   2 KeyRequest   identity: 105 bytes (ledger/net/identity.h encoding) | epoch: u64 |
//                  blinded_msg: bytes (256..1024) | commitment: 32 | signature: 64 (Ed25519 by
//                  the identity's key over KeyRequestSigningBytes, domain "reviews/key-request")
//   3 KeyIssue     epoch: u64 | citizen: 32 | blinded_msg: bytes | blind_sig: bytes (256..1024)
//   4 RegisterKey  epoch: u64 | review_key: 32 (ristretto255) | msg_prefix: 32 |
//                  signature: bytes (256..1024; RFC 9474 over msg_prefix || CredentialMessage)
//   5 Reviews      item: 32 | epoch: u64 | ring_size: u16 (1..kMaxRing) |
//                  count: u16 (1..kMaxBatch) | count x { rating: u8 (1..5) |
//                  text: bytes (0..1000) | signature: bytes (urs/codec.h, ring_size
//                  responses) }
//                  The ring itself is not in the payload: it is the item's eligible set for
//                  the epoch, written into state by RingOpen (reviews_app.h).
//   6 FrontRunProof  epoch: u64 | citizen: 32 | blinded_msg: bytes (256..1024) |
//                  inv: bytes (same length) | salt: 32 | review_key: 32 | msg_prefix: 32 |
//                  signature: bytes (same length)
//   7 RingOpen     item: 32 | epoch: u64 | key_offset: u64 | member_offset: u64 |
//                  members: u16 (member_offset..member_offset + count, at most
//                  kMaxRingParameter) | count: u16 (1..kMaxRingOpenKeys) | count x key: 32
//                  (ristretto255, strictly increasing)
//
// Every value has one encoding, so the transaction id (a hash of the encoding) names one
// transaction. Decoders never trust a length: each is bounded before anything is allocated,
// and an error names the field and the byte offset ("reviews payload: 'text' of review 2 at
// offset 71 is 1200 bytes, at most 1000"). Fuzzed by reviews/fuzz/ledger_payload_fuzzer.cc.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"
#include "ledger/crypto/bytes.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/net/identity.h"
#include "reviews/common/bytes.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews::onchain {

using ItemId = ledger::Hash256;  // ItemIdOf(creator, name): names are namespaced by creator

inline constexpr size_t kMaxPayload = 256 * 1024;  // the ledger's AppTransaction limit
inline constexpr size_t kMaxItemName = 128;
inline constexpr size_t kMaxReviewText = 1000;
inline constexpr size_t kMinRsaBytes = 256;   // 2048-bit modulus
inline constexpr size_t kMaxRsaBytes = 1024;  // 8192-bit modulus
// Ring members of one review: urs's own bound. An item's ring holds exactly min(k, N_e) keys
// (the exact-k draw), and the genesis ring_size k is at most kMaxRingParameter
// (ParseReviewsParams), which also bounds a ring opening's read set (k member leaves beside
// the part's keys). A verifier holds at most k keys of 32 bytes; a review's signature is at
// most 195 + 32 k bytes.
inline constexpr size_t kMaxRing = urs::kMaxRingSize;      // 4096
inline constexpr size_t kMaxRingParameter = kMaxRing / 2;  // the largest genesis ring_size
inline constexpr size_t kMaxBatch = 256;                   // reviews in one Reviews payload
inline constexpr size_t kIdentityBytes = 105;
inline constexpr size_t kMaxRingOpenKeys = 4096;  // registered keys listed by one RingOpen

enum class TxKind : uint8_t {
  kCreateItem = 1,
  kKeyRequest = 2,
  kKeyIssue = 3,
  kRegisterKey = 4,
  kReviews = 5,
  kFrontRunProof = 6,
  kRingOpen = 7,
};

// An item, created by an identity in its own namespace: the item id is
// ItemIdOf(identity.citizen, name), so nobody can take (squat) a name in another identity's
// namespace, and creations are counted per identity and epoch (a quota, reviews_app.h).
struct CreateItem {
  std::string name;
  ledger::net::Identity identity;
  ledger::Signature signature{};  // by identity.citizen
};

// An identity asks the issuer to blind-sign the credential message of its review key for
// `epoch`. Public on chain: who asked, for which epoch, and the blinded message (which reveals
// nothing about the key).
//
// `commitment` = EncodedMessageCommitment(m, salt) binds the request to the encoded message m
// that blinded_msg hides (hiding: the salt is secret), so that a requester whose registration
// is refused because the issuer filled the epoch with keys of its own can prove it
// (FrontRunProof). Nothing checks it until then.
struct KeyRequest {
  ledger::net::Identity identity;
  uint64_t epoch = 0;
  Bytes blinded_msg;
  ledger::Hash256 commitment{};
  ledger::Signature signature{};  // by identity.citizen
};

// The issuer's answer: the blind signature of a committed request. Needs no signature of its
// own: only the issuer's RSA key can produce blind_sig^e = blinded_msg (mod n).
struct KeyIssue {
  uint64_t epoch = 0;
  ledger::PublicKey citizen{};
  Bytes blinded_msg;
  Bytes blind_sig;
};

// An anonymous registration of a review key with its unblinded credential.
struct RegisterKey {
  uint64_t epoch = 0;
  urs::Point review_key{};
  std::array<uint8_t, 32> msg_prefix{};
  Bytes signature;
};

struct ReviewEntry {
  int rating = 0;
  std::string text;
  urs::Signature signature;
};

// Reviews of one item in one epoch (a single review is a batch of one). Each signature is over
// the item's eligible ring of the epoch, which the ledger reads from state (RingOpen wrote it);
// the payload says only its size, so that the read set names its member leaves.
struct ReviewBatch {
  ItemId item{};
  uint64_t epoch = 0;
  uint16_t ring_size = 0;
  std::vector<ReviewEntry> reviews;
};

// One part of the opening of an item's ring for an epoch: the ledger itself computes the DRAC
// ring (the exact-k draw, drac/eligibility.h: the k keys with the lowest lottery values) from
// the full list of the epoch's registered keys, so the ring a review is verified over is
// exactly the drawn set, neither smaller (a shrunken anonymity set) nor larger. The keys are
// listed in strictly increasing byte order across parts: part j starts at `key_offset` (keys
// listed by the earlier parts); `member_offset` and `members` are the ring's size before and
// after it, min(k, keys listed) (the member leaves it rewrites must be named by the payload).
// Each part merges its keys into the ring so far and keeps the k lowest. The part that brings
// the count of listed keys to N_e closes the opening and records the ring's size. Anybody may
// submit it (it carries no secret and nothing to sign); it is refused when it lists a key that is
// not registered, skips or repeats one, or states a wrong count.
struct RingOpen {
  ItemId item{};
  uint64_t epoch = 0;
  uint64_t key_offset = 0;
  uint64_t member_offset = 0;
  uint16_t members = 0;
  std::vector<urs::Point> keys;
};

// A requester's proof that the issuer front-ran it: every key request of the epoch has a
// registered key, yet this request's credential (opened from the request's commitment: the
// encoded message blinded_msg * inv^e, and the credential's s^e, equal the committed m) is not
// registered. Each request yields one credential (RSA blind signatures are one-more
// unforgeable), so some registered key came from no request: only the issuer can make one.
// Reveals which key the requester holds (ring signatures still hide which ring member signs).
// Applied, it registers the key anyway (before the close) and records the evidence.
struct FrontRunProof {
  uint64_t epoch = 0;
  ledger::PublicKey citizen{};
  Bytes blinded_msg;
  Bytes inv;
  std::array<uint8_t, 32> salt{};
  urs::Point review_key{};
  std::array<uint8_t, 32> msg_prefix{};
  Bytes signature;
};

using Payload = std::variant<CreateItem, KeyRequest, KeyIssue, RegisterKey, ReviewBatch,
                             FrontRunProof, RingOpen>;

std::string EncodePayload(const Payload& payload);
// INVALID_ARGUMENT naming the field and offset for anything that is not exactly one encoding.
Result<Payload> DecodePayload(ByteSpan bytes);

// The number of reviews a Reviews payload carries, read from its header (kind, item, epoch,
// ring_size, count: the count is the u16 at offset 43) without decoding the rest: the
// application's Weight for the politicians' pool budget (ledger/state/application.h). 1 for
// any other kind, a header too short, or a count outside 1..kMaxBatch (a payload that does not
// decode weighs at most kMaxBatch).
size_t ReviewCountOf(ByteSpan bytes);

// "create-item", "key-request", ... for logs and errors.
std::string_view KindName(const Payload& payload);

// SHA-256("tessera/reviews/item" || creator || name): the id of `name` in `creator`'s namespace.
ItemId ItemIdOf(const ledger::PublicKey& creator, std::string_view name);
// SHA-256 of a bare string: ids for tests and tools that have no creator.
ItemId ItemIdOf(std::string_view name);
ItemId ItemIdOf(const CreateItem& item);
// The item id as the `item` string of the DRAC lottery and of review scopes and messages
// (drac/eligibility.h, review/review.h): its 32 raw bytes.
std::string ItemBytes(const ItemId& item);

// The bytes an identity signs in a CreateItem (the payload without the signature).
std::string CreateItemSigningBytes(const CreateItem& item);
inline constexpr std::string_view kCreateItemDomain = "reviews/create-item";
void SignCreateItem(CreateItem& item, const ledger::KeyPair& creator);

// The bytes an identity signs in a KeyRequest (the payload without the signature).
std::string KeyRequestSigningBytes(const KeyRequest& request);
inline constexpr std::string_view kKeyRequestDomain = "reviews/key-request";
void SignKeyRequest(KeyRequest& request, const ledger::KeyPair& citizen);
// SHA-256("tessera/reviews/em-commitment" || salt || encoded_msg).
ledger::Hash256 EncodedMessageCommitment(ByteSpan encoded_msg, const std::array<uint8_t, 32>& salt);

// The identifier of one review inside the item's chain (state_layout.h): SHA-256 over the
// item, the epoch, the rating, the text and the signature, canonically encoded. The ring is a
// function of (item, epoch) on the ledger (written once by RingOpen, never changed), and the
// signature binds its digest, so the hash names everything a verification depends on.
ledger::Hash256 ReviewRecordHash(const ItemId& item, uint64_t epoch, const ReviewEntry& review);

}  // namespace tessera::reviews::onchain
