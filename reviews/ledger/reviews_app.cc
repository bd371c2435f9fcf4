#include "reviews/ledger/reviews_app.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "ledger/crypto/hash.h"
#include "reviews/drac/eligibility.h"
#include "reviews/ledger/payload.h"
#include "reviews/ledger/state_layout.h"
#include "reviews/review/review.h"
#include "reviews/urs/codec.h"

namespace tessera::reviews {
namespace {

using ledger::AppVerdict;
using ledger::BlockContext;
using ledger::Hash256;
using ledger::LeafReader;
using ledger::LeafUpdate;
using ledger::LeafValue;
using namespace onchain;  // NOLINT: the payload and leaf vocabulary of this file

std::string E(uint64_t epoch) { return "epoch " + std::to_string(epoch); }

// blind_sig^e mod n == blinded_msg: the RSA relation only the issuer's secret key can produce
// (RFC 9474 BlindSign's output before any unblinding). OpenSSL's verify-recover with no
// padding computes s^e mod n and refuses s >= n.
Status CheckBlindSignature(const blind::PublicKey& issuer, const Bytes& blinded,
                           const Bytes& blind_sig) {
  const size_t n = issuer.modulus_length();
  if (blinded.size() != n || blind_sig.size() != n) {
    return PermissionDeniedError("blind signature and blinded message must have " +
                                 std::to_string(n) + " bytes (the issuer's modulus)");
  }
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new(issuer.raw(), nullptr), EVP_PKEY_CTX_free);
  Bytes out(n);
  size_t out_len = out.size();
  if (!ctx || EVP_PKEY_verify_recover_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_NO_PADDING) != 1 ||
      EVP_PKEY_verify_recover(ctx.get(), out.data(), &out_len, blind_sig.data(),
                              blind_sig.size()) != 1 ||
      out_len != n || out != blinded) {
    return PermissionDeniedError("blind signature does not match the blinded message");
  }
  return Status::Ok();
}

}  // namespace

Status VerifiedReviewCache::VerifyOnce(const ledger::Hash256& record,
                                       const std::function<Status()>& verify) {
  return verified_
      .GetOrCompute(record,
                    [&]() -> Result<std::monostate> {
                      TESSERA_RETURN_IF_ERROR(verify());
                      return std::monostate{};
                    })
      .status();
}

ReviewsAppStats VerifiedReviewCache::stats() const {
  const OnceCacheStats s = verified_.stats();
  return {.ring_verifications = s.computed, .cache_hits = s.hits, .joined = s.joined};
}

namespace {

class ReviewsApp final : public ledger::Application {
 public:
  ReviewsAppStats stats() const { return verified_.stats(); }

  explicit ReviewsApp(ReviewsParams params) : p_(std::move(params)) {}
  // What this node spent on ring signatures, for the bench's per-review verification count.
  ~ReviewsApp() override {
    const ReviewsAppStats s = verified_.stats();
    if (s.ring_verifications + s.cache_hits + s.joined > 0) {
      spdlog::info(
          "reviews app: {} ring verifications, {} verified-review cache hits, {} joined a "
          "verification in flight",
          s.ring_verifications, s.cache_hits, s.joined);
    }
  }

  uint8_t id() const override { return kReviewsAppId; }
  std::string_view name() const override { return kReviewsAppName; }

  Result<std::vector<Hash256>> ReadSet(ByteSpan payload, const BlockContext& ctx) const override {
    TESSERA_ASSIGN_OR_RETURN(Payload decoded, DecodePayload(payload));
    if (const auto* create = std::get_if<CreateItem>(&decoded)) {
      return std::vector<Hash256>{
          leaf::Item(ItemIdOf(*create)), leaf::ItemCount(),
          leaf::ItemQuota(p_.EpochOf(ctx.height), create->identity.citizen)};
    }
    return std::visit([](const auto& tx) { return Keys(tx); }, decoded);
  }

  Result<AppVerdict> Apply(ByteSpan payload, const BlockContext& ctx, const LeafReader& state,
                           bool verify_crypto) const override {
    auto decoded = DecodePayload(payload);
    if (!decoded.ok()) return AppVerdict::Reject(decoded.status().message());
    return std::visit([&](const auto& tx) { return Run(tx, ctx, state, verify_crypto); }, *decoded);
  }

  std::vector<LeafUpdate> BeginBlock(const BlockContext& ctx) const override {
    if (ctx.height % p_.epoch_blocks != 0) return {};
    // seed_e is the seed of block e*E - 1, known to every node when block e*E executes.
    return {{leaf::EpochSeed(p_.EpochOf(ctx.height)), ctx.prev_seed}};
  }

  std::vector<std::string> Coalesce(std::vector<std::string> payloads) const override;

  double MempoolShare() const override { return static_cast<double>(p_.mempool_percent) / 100; }

  // A batch weighs its reviews (Coalesce merges them; the pool budget counts what they were).
  size_t Weight(ByteSpan payload) const override { return ReviewCountOf(payload); }

 private:
  // ---- Read sets: a function of the payload only ----
  static std::vector<Hash256> Keys(const CreateItem&) { return {}; }  // ReadSet: needs ctx
  static std::vector<Hash256> Keys(const KeyRequest& tx) {
    return {leaf::KeyRequest(tx.epoch, tx.identity.citizen), leaf::RequestCount(tx.epoch),
            leaf::RequestCommitment(tx.epoch, tx.identity.citizen)};
  }
  static std::vector<Hash256> Keys(const FrontRunProof& tx) {
    return {leaf::KeyRequest(tx.epoch, tx.citizen),
            leaf::RequestCommitment(tx.epoch, tx.citizen),
            leaf::KeyIssue(tx.epoch, tx.citizen),
            leaf::FrontRunProof(tx.epoch, tx.citizen),
            leaf::ReviewKey(tx.epoch, tx.review_key),
            leaf::KeyCount(tx.epoch),
            leaf::RequestCount(tx.epoch),
            leaf::FrontRunCount(tx.epoch)};
  }
  static std::vector<Hash256> Keys(const KeyIssue& tx) {
    return {leaf::KeyRequest(tx.epoch, tx.citizen), leaf::KeyIssue(tx.epoch, tx.citizen)};
  }
  static std::vector<Hash256> Keys(const RegisterKey& tx) {
    return {leaf::ReviewKey(tx.epoch, tx.review_key), leaf::KeyCount(tx.epoch),
            leaf::RequestCount(tx.epoch)};
  }
  static std::vector<Hash256> Keys(const ReviewBatch& tx) {
    std::vector<Hash256> keys = {leaf::Item(tx.item), leaf::RingSize(tx.item, tx.epoch),
                                 leaf::Tally(tx.item), leaf::Chain(tx.item)};
    for (const Hash256& m : leaf::RingMembers(tx.item, tx.epoch, tx.ring_size)) keys.push_back(m);
    for (const ReviewEntry& r : tx.reviews) {
      keys.push_back(leaf::Tag(tx.item, tx.epoch, r.signature.tag));
    }
    return keys;
  }
  static std::vector<Hash256> Keys(const RingOpen& tx) {
    std::vector<Hash256> keys = {leaf::Item(tx.item),
                                 leaf::EpochSeed(tx.epoch),
                                 leaf::KeyCount(tx.epoch),
                                 leaf::RingSize(tx.item, tx.epoch),
                                 leaf::RingProgress(tx.item, tx.epoch),
                                 leaf::RingCursor(tx.item, tx.epoch)};
    for (const urs::Point& k : tx.keys) keys.push_back(leaf::ReviewKey(tx.epoch, k));
    // The ring so far and after this part (the exact-k merge rewrites every member leaf).
    for (uint64_t j = 0; j < tx.members; ++j) {
      keys.push_back(leaf::RingMember(tx.item, tx.epoch, j));
    }
    return keys;
  }

  // ---- Execution: state rules first, then (if asked) signatures, so a transaction that
  // breaks a state rule gets the same verdict whether or not signatures are checked. ----
  Result<AppVerdict> Run(const CreateItem& tx, const BlockContext& ctx, const LeafReader& state,
                         bool verify_crypto) const {
    if (tx.identity.registered_at > ctx.height) {
      return AppVerdict::Reject("identity is registered only from height " +
                                std::to_string(tx.identity.registered_at));
    }
    const ItemId item = ItemIdOf(tx);
    TESSERA_ASSIGN_OR_RETURN(auto existing, state.Get(leaf::Item(item)));
    if (existing) {
      return AppVerdict::Reject("item '" + tx.name +
                                "' already exists in this identity's namespace");
    }
    const uint64_t epoch = p_.EpochOf(ctx.height);
    const Hash256 quota_key = leaf::ItemQuota(epoch, tx.identity.citizen);
    TESSERA_ASSIGN_OR_RETURN(auto quota_leaf, state.Get(quota_key));
    TESSERA_ASSIGN_OR_RETURN(uint64_t created, DecodeCounter(quota_leaf));
    if (created >= p_.items_per_epoch) {
      return AppVerdict::Reject("this identity created its " + std::to_string(p_.items_per_epoch) +
                                " items of " + E(epoch) + " (items_per_epoch)");
    }
    TESSERA_ASSIGN_OR_RETURN(auto count_leaf, state.Get(leaf::ItemCount()));
    TESSERA_ASSIGN_OR_RETURN(uint64_t count, DecodeCounter(count_leaf));
    if (verify_crypto) {
      if (!ledger::net::VerifyIdentity(tx.identity, p_.registrar)) {
        return AppVerdict::RejectCrypto("identity is not signed by the registrar");
      }
      if (!ledger::Verify(tx.identity.citizen, kCreateItemDomain,
                          AsBytes(CreateItemSigningBytes(tx)), tx.signature)) {
        return AppVerdict::RejectCrypto("item creation is not signed by the identity");
      }
    }
    ItemRecord record{epoch, ctx.height};
    return AppVerdict::Accept({{leaf::Item(item), EncodeItemRecord(record)},
                               {leaf::ItemCount(), EncodeCounter(count + 1)},
                               {quota_key, EncodeCounter(created + 1)}});
  }

  Result<AppVerdict> Run(const KeyRequest& tx, const BlockContext& ctx, const LeafReader& state,
                         bool verify_crypto) const {
    if (ctx.height >= p_.RegistrationClose(tx.epoch)) {
      return AppVerdict::Reject("key requests for " + E(tx.epoch) + " closed at height " +
                                std::to_string(p_.RegistrationClose(tx.epoch)));
    }
    if (tx.identity.registered_at > ctx.height) {
      return AppVerdict::Reject("identity is registered only from height " +
                                std::to_string(tx.identity.registered_at));
    }
    if (tx.blinded_msg.size() != p_.issuer.modulus_length()) {
      return AppVerdict::Reject("blinded message must have " +
                                std::to_string(p_.issuer.modulus_length()) + " bytes");
    }
    const Hash256 key = leaf::KeyRequest(tx.epoch, tx.identity.citizen);
    TESSERA_ASSIGN_OR_RETURN(auto existing, state.Get(key));
    if (existing) return AppVerdict::Reject("identity already requested a key for " + E(tx.epoch));
    TESSERA_ASSIGN_OR_RETURN(auto count_leaf, state.Get(leaf::RequestCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t count, DecodeCounter(count_leaf));
    if (verify_crypto) {
      if (!ledger::net::VerifyIdentity(tx.identity, p_.registrar)) {
        return AppVerdict::RejectCrypto("identity is not signed by the registrar");
      }
      if (!ledger::Verify(tx.identity.citizen, kKeyRequestDomain,
                          AsBytes(KeyRequestSigningBytes(tx)), tx.signature)) {
        return AppVerdict::RejectCrypto("key request is not signed by the identity");
      }
    }
    return AppVerdict::Accept(
        {{key, ledger::Sha256(tx.blinded_msg)},
         {leaf::RequestCount(tx.epoch), EncodeCounter(count + 1)},
         {leaf::RequestCommitment(tx.epoch, tx.identity.citizen), tx.commitment}});
  }

  // The requester opens its commitment: the encoded message its blinded message hides is the
  // committed one, and the credential for the key signs exactly that message. With every
  // request of the epoch already matched by a registration, this unregistered credential
  // shows a registration that came from no request.
  Result<AppVerdict> Run(const FrontRunProof& tx, const BlockContext& ctx, const LeafReader& state,
                         bool verify_crypto) const {
    TESSERA_ASSIGN_OR_RETURN(auto request, state.Get(leaf::KeyRequest(tx.epoch, tx.citizen)));
    if (!request || *request != ledger::Sha256(tx.blinded_msg)) {
      return AppVerdict::Reject("front-run proof: no key request of this identity for " +
                                E(tx.epoch) + " with this blinded message");
    }
    TESSERA_ASSIGN_OR_RETURN(auto issued, state.Get(leaf::KeyIssue(tx.epoch, tx.citizen)));
    if (!issued) {
      return AppVerdict::Reject("front-run proof: the issuer has not answered this request");
    }
    TESSERA_ASSIGN_OR_RETURN(auto commitment,
                             state.Get(leaf::RequestCommitment(tx.epoch, tx.citizen)));
    const Hash256 marker = leaf::FrontRunProof(tx.epoch, tx.citizen);
    TESSERA_ASSIGN_OR_RETURN(auto proven, state.Get(marker));
    if (proven) return AppVerdict::Reject("front-run proof: already proven for this request");
    const Hash256 key = leaf::ReviewKey(tx.epoch, tx.review_key);
    TESSERA_ASSIGN_OR_RETURN(auto existing, state.Get(key));
    if (existing) {
      return AppVerdict::Reject("front-run proof: the key is registered, nothing was front-run");
    }
    TESSERA_ASSIGN_OR_RETURN(auto reg_leaf, state.Get(leaf::KeyCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t registered, DecodeCounter(reg_leaf));
    TESSERA_ASSIGN_OR_RETURN(auto req_leaf, state.Get(leaf::RequestCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t requested, DecodeCounter(req_leaf));
    if (registered < requested) {
      return AppVerdict::Reject("front-run proof: " + std::to_string(requested - registered) +
                                " of " + std::to_string(requested) +
                                " requests have no registered key yet; register normally");
    }
    TESSERA_ASSIGN_OR_RETURN(auto count_leaf, state.Get(leaf::FrontRunCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t proofs, DecodeCounter(count_leaf));
    if (verify_crypto) {
      Status st = CheckFrontRunOpening(tx, commitment);
      if (!st.ok()) return AppVerdict::RejectCrypto("front-run proof: " + st.message());
    }
    std::vector<LeafUpdate> updates = {{marker, ledger::Sha256(AsBytes(EncodePayload(tx)))},
                                       {leaf::FrontRunCount(tx.epoch), EncodeCounter(proofs + 1)}};
    // Before the close the refused key joins the epoch anyway: the issuer cannot keep a
    // requester out by filling the epoch first.
    if (ctx.height < p_.RegistrationClose(tx.epoch)) {
      updates.push_back({key, EncodeCounter(registered + 1)});
      updates.push_back({leaf::KeyCount(tx.epoch), EncodeCounter(registered + 1)});
    }
    return AppVerdict::Accept(std::move(updates));
  }

  Status CheckFrontRunOpening(const FrontRunProof& tx,
                              const std::optional<LeafValue>& commitment) const {
    TESSERA_ASSIGN_OR_RETURN(Bytes m, blind::UnblindMessage(p_.issuer, tx.blinded_msg, tx.inv));
    if (!commitment || *commitment != EncodedMessageCommitment(m, tx.salt)) {
      return PermissionDeniedError("the opening does not match the request's commitment");
    }
    TESSERA_ASSIGN_OR_RETURN(Bytes signed_m, blind::RecoverEncodedMessage(p_.issuer, tx.signature));
    if (signed_m != m) {
      return PermissionDeniedError("the credential does not sign the committed message");
    }
    Credential credential{tx.review_key, tx.epoch,
                          Bytes(tx.msg_prefix.begin(), tx.msg_prefix.end()), tx.signature};
    return VerifyCredential(p_.issuer, credential);
  }

  Result<AppVerdict> Run(const KeyIssue& tx, const BlockContext&, const LeafReader& state,
                         bool verify_crypto) const {
    TESSERA_ASSIGN_OR_RETURN(auto request, state.Get(leaf::KeyRequest(tx.epoch, tx.citizen)));
    if (!request) return AppVerdict::Reject("no key request of this identity for " + E(tx.epoch));
    if (*request != ledger::Sha256(tx.blinded_msg)) {
      return AppVerdict::Reject("blinded message differs from the committed request");
    }
    const Hash256 key = leaf::KeyIssue(tx.epoch, tx.citizen);
    TESSERA_ASSIGN_OR_RETURN(auto issued, state.Get(key));
    if (issued) return AppVerdict::Reject("the request for " + E(tx.epoch) + " was answered");
    if (verify_crypto) {
      Status st = CheckBlindSignature(p_.issuer, tx.blinded_msg, tx.blind_sig);
      if (!st.ok()) return AppVerdict::RejectCrypto(st.message());
    }
    return AppVerdict::Accept({{key, ledger::Sha256(tx.blind_sig)}});
  }

  Result<AppVerdict> Run(const RegisterKey& tx, const BlockContext& ctx, const LeafReader& state,
                         bool verify_crypto) const {
    if (ctx.height >= p_.RegistrationClose(tx.epoch)) {
      return AppVerdict::Reject("key registration for " + E(tx.epoch) + " closed at height " +
                                std::to_string(p_.RegistrationClose(tx.epoch)));
    }
    const Hash256 key = leaf::ReviewKey(tx.epoch, tx.review_key);
    TESSERA_ASSIGN_OR_RETURN(auto existing, state.Get(key));
    if (existing) return AppVerdict::Reject("review key already registered for " + E(tx.epoch));
    TESSERA_ASSIGN_OR_RETURN(auto reg_leaf, state.Get(leaf::KeyCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t registered, DecodeCounter(reg_leaf));
    TESSERA_ASSIGN_OR_RETURN(auto req_leaf, state.Get(leaf::RequestCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t requested, DecodeCounter(req_leaf));
    if (registered >= requested) {
      return AppVerdict::Reject("all " + std::to_string(requested) + " key requests for " +
                                E(tx.epoch) + " have a registered key");
    }
    if (verify_crypto) {
      Credential credential{tx.review_key, tx.epoch,
                            Bytes(tx.msg_prefix.begin(), tx.msg_prefix.end()), tx.signature};
      Status st = VerifyCredential(p_.issuer, credential);
      if (!st.ok()) return AppVerdict::RejectCrypto(st.message());
    }
    return AppVerdict::Accept({{key, EncodeCounter(registered + 1)},
                               {leaf::KeyCount(tx.epoch), EncodeCounter(registered + 1)}});
  }

  // The item exists and `epoch` is its open review window now.
  Result<std::optional<std::string>> WindowRule(const ItemId& item_id, uint64_t epoch,
                                                const BlockContext& ctx,
                                                const LeafReader& state) const {
    TESSERA_ASSIGN_OR_RETURN(auto item_leaf, state.Get(leaf::Item(item_id)));
    if (!item_leaf) return std::optional<std::string>("no item " + ToHex(item_id));
    TESSERA_ASSIGN_OR_RETURN(ItemRecord item, DecodeItemRecord(*item_leaf));
    const uint64_t now = p_.EpochOf(ctx.height);
    if (epoch != now) {
      return std::optional<std::string>("reviews for " + E(epoch) +
                                        " are accepted only during it (now " + E(now) + ")");
    }
    if (epoch < item.first_review_epoch()) {
      return std::optional<std::string>(
          "the item's reviews open in " + E(item.first_review_epoch()) +
          " (two epochs after its creation, so its rings come from a seed drawn after it was "
          "created)");
    }
    return std::optional<std::string>();
  }

  // The ledger computes the item's ring itself from the full list of registered keys, so the
  // ring reviews are verified over is exactly the eligible set (docs/reviews.md, "the ring").
  Result<AppVerdict> Run(const RingOpen& tx, const BlockContext& ctx, const LeafReader& state,
                         bool) const {
    TESSERA_ASSIGN_OR_RETURN(auto window, WindowRule(tx.item, tx.epoch, ctx, state));
    if (window) return AppVerdict::Reject("ring opening: " + *window);
    TESSERA_ASSIGN_OR_RETURN(auto size_leaf, state.Get(leaf::RingSize(tx.item, tx.epoch)));
    if (size_leaf) {
      return AppVerdict::Reject("the item's ring for " + E(tx.epoch) + " is open already");
    }
    TESSERA_ASSIGN_OR_RETURN(auto seed_leaf, state.Get(leaf::EpochSeed(tx.epoch)));
    if (!seed_leaf) return AppVerdict::Reject("no seed recorded for " + E(tx.epoch));
    TESSERA_ASSIGN_OR_RETURN(auto count_leaf, state.Get(leaf::KeyCount(tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(uint64_t registered, DecodeCounter(count_leaf));
    if (registered == 0) return AppVerdict::Reject("no review keys registered for " + E(tx.epoch));
    TESSERA_ASSIGN_OR_RETURN(auto progress_leaf, state.Get(leaf::RingProgress(tx.item, tx.epoch)));
    TESSERA_ASSIGN_OR_RETURN(RingProgress progress, DecodeRingProgress(progress_leaf));
    if (progress.keys_listed != tx.key_offset || progress.members_found != tx.member_offset) {
      return AppVerdict::Reject(
          "ring opening: " + std::to_string(progress.keys_listed) + " keys listed and " +
          std::to_string(progress.members_found) + " members found so far; this part starts at " +
          std::to_string(tx.key_offset) + " and " + std::to_string(tx.member_offset));
    }
    if (tx.key_offset > 0) {
      TESSERA_ASSIGN_OR_RETURN(auto cursor, state.Get(leaf::RingCursor(tx.item, tx.epoch)));
      if (!cursor || !(*cursor < tx.keys.front())) {
        return AppVerdict::Reject(
            "ring opening: the part's first key is not above the last key listed");
      }
    }
    if (tx.key_offset + tx.keys.size() > registered) {
      return AppVerdict::Reject("ring opening: lists " +
                                std::to_string(tx.key_offset + tx.keys.size()) + " keys, but " +
                                std::to_string(registered) + " are registered for " + E(tx.epoch));
    }
    // The exact-k draw (drac/eligibility.h): the ring is the k registered keys with the lowest
    // lottery values. Each part merges its keys into the ring held so far and keeps the k
    // lowest, so after the part listing the N_e-th key the ring is exactly the k lowest of all.
    const uint64_t k = p_.ring_size;
    const uint64_t before = std::min<uint64_t>(k, tx.key_offset);
    const uint64_t after = std::min<uint64_t>(k, tx.key_offset + tx.keys.size());
    if (tx.member_offset != before || tx.members != after) {
      return AppVerdict::Reject("ring opening: the ring holds " + std::to_string(before) +
                                " members before this part and " + std::to_string(after) +
                                " after it (k = " + std::to_string(k) + "), it says " +
                                std::to_string(tx.member_offset) + " and " +
                                std::to_string(tx.members));
    }
    const std::string item_bytes = ItemBytes(tx.item);
    std::vector<drac::Ranked> ranked;
    ranked.reserve(before + tx.keys.size());
    for (uint64_t j = 0; j < before; ++j) {
      TESSERA_ASSIGN_OR_RETURN(auto member, state.Get(leaf::RingMember(tx.item, tx.epoch, j)));
      if (!member) return InternalError("ring member leaf missing below the ring's progress");
      ranked.push_back(drac::Rank(*member, item_bytes, tx.epoch, *seed_leaf));
    }
    for (size_t i = 0; i < tx.keys.size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(auto reg, state.Get(leaf::ReviewKey(tx.epoch, tx.keys[i])));
      if (!reg) {
        return AppVerdict::Reject("ring opening: key " + std::to_string(i) +
                                  " is not registered for " + E(tx.epoch));
      }
      ranked.push_back(drac::Rank(tx.keys[i], item_bytes, tx.epoch, *seed_leaf));
    }
    const std::vector<urs::Point> ring = drac::LowestK(std::move(ranked), k);
    if (ring.size() != after) return InternalError("ring opening: the merge lost a member");
    std::vector<LeafUpdate> updates;
    for (size_t j = 0; j < ring.size(); ++j) {
      updates.push_back({leaf::RingMember(tx.item, tx.epoch, j), ring[j]});
    }
    const uint64_t found = after;
    const uint64_t listed = tx.key_offset + tx.keys.size();
    updates.push_back({leaf::RingProgress(tx.item, tx.epoch), EncodeRingProgress({listed, found})});
    updates.push_back({leaf::RingCursor(tx.item, tx.epoch), tx.keys.back()});
    if (listed == registered) {
      updates.push_back({leaf::RingSize(tx.item, tx.epoch), EncodeCounter(found)});
    }
    return AppVerdict::Accept(std::move(updates));
  }

  Result<AppVerdict> Run(const ReviewBatch& tx, const BlockContext& ctx, const LeafReader& state,
                         bool verify_crypto) const {
    TESSERA_ASSIGN_OR_RETURN(auto window, WindowRule(tx.item, tx.epoch, ctx, state));
    if (window) return AppVerdict::Reject(*window);
    TESSERA_ASSIGN_OR_RETURN(auto size_leaf, state.Get(leaf::RingSize(tx.item, tx.epoch)));
    if (!size_leaf) {
      return AppVerdict::Reject("the item's ring for " + E(tx.epoch) +
                                " is not open yet (a RingOpen lists the registered keys first)");
    }
    TESSERA_ASSIGN_OR_RETURN(uint64_t ring_size, DecodeCounter(size_leaf));
    if (ring_size != tx.ring_size) {
      return AppVerdict::Reject("the item's eligible ring for " + E(tx.epoch) + " has " +
                                std::to_string(ring_size) + " members; the review says " +
                                std::to_string(tx.ring_size));
    }
    std::vector<urs::Point> members;
    members.reserve(ring_size);
    for (const Hash256& key : leaf::RingMembers(tx.item, tx.epoch, ring_size)) {
      TESSERA_ASSIGN_OR_RETURN(auto member, state.Get(key));
      if (!member) return InternalError("ring member leaf missing below the ring's size");
      members.push_back(*member);
    }
    auto ring = urs::Ring::Create(std::move(members));
    if (!ring.ok()) return ring.status().WithContext("the item's ring in state");
    const std::string item_bytes = ItemBytes(tx.item);
    TESSERA_ASSIGN_OR_RETURN(auto tally_leaf, state.Get(leaf::Tally(tx.item)));
    TESSERA_ASSIGN_OR_RETURN(Tally tally, DecodeTally(tally_leaf));
    TESSERA_ASSIGN_OR_RETURN(auto chain_leaf, state.Get(leaf::Chain(tx.item)));
    LeafValue chain = chain_leaf.value_or(LeafValue{});

    std::vector<LeafUpdate> updates;
    std::set<Hash256> used_here;  // tags taken by earlier reviews of this batch
    std::string skipped;
    for (size_t i = 0; i < tx.reviews.size(); ++i) {
      const ReviewEntry& r = tx.reviews[i];
      const Hash256 tag_key = leaf::Tag(tx.item, tx.epoch, r.signature.tag);
      TESSERA_ASSIGN_OR_RETURN(auto tag_leaf, state.Get(tag_key));
      if (tag_leaf || used_here.count(tag_key)) {
        skipped += (skipped.empty() ? "" : "; ") + std::string("review ") + std::to_string(i) +
                   ": this key already reviewed the item (tag used)";
        continue;
      }
      const Hash256 record = ReviewRecordHash(tx.item, tx.epoch, r);
      if (verify_crypto) {
        Status st = verified_.VerifyOnce(record, [&] {
          return VerifyReview(*ring, Review{item_bytes, tx.epoch, r.rating, r.text, r.signature});
        });
        if (!st.ok()) {
          return AppVerdict::RejectCrypto("review " + std::to_string(i) + ": " + st.message());
        }
      }
      used_here.insert(tag_key);
      updates.push_back({tag_key, record});
      tally.histogram[r.rating - 1] += 1;
      chain = NextChain(chain, record);
    }
    if (updates.empty()) return AppVerdict::Reject(skipped);
    updates.push_back({leaf::Tally(tx.item), EncodeTally(tally)});
    updates.push_back({leaf::Chain(tx.item), chain});
    return AppVerdict::Accept(std::move(updates));
  }

  ReviewsParams p_;
  // Reviews whose ring signature this node verified, by record hash (which covers the item,
  // epoch, rating, text and signature; the ring is fixed by (item, epoch) once opened): a
  // politician verifies a review at admission and finds it here when it executes or re-admits it.
  mutable VerifiedReviewCache verified_;
};

// Merges Reviews payloads sharing (item, epoch, ring size) into the position of the first of
// them. Moving a review earlier is exact as long as it does not cross a payload that touches the
// same item (its creation, the opening of its ring, or reviews of it stating another ring
// size): those close the open batch.
// Other kinds use disjoint leaves. Inputs are payloads a politician admitted, so their
// signatures verified; the merged batch then applies review by review exactly as the inputs
// would (reviews_app.h).
std::vector<std::string> ReviewsApp::Coalesce(std::vector<std::string> payloads) const {
  struct Open {
    size_t index;  // of the batch in `out`
    size_t bytes;  // its encoded size
  };
  // Each output is either a (possibly merged) batch or a payload passed through untouched.
  std::vector<std::optional<ReviewBatch>> out;
  std::vector<std::string> raw;
  std::map<std::tuple<ItemId, uint64_t, uint16_t>, Open> open;  // (item, epoch, ring size)
  auto close_item = [&](const ItemId& item) {
    for (auto it = open.begin(); it != open.end();) {
      it = std::get<0>(it->first) == item ? open.erase(it) : std::next(it);
    }
  };
  for (std::string& p : payloads) {
    auto decoded = DecodePayload(AsBytes(p));
    if (decoded.ok() && std::holds_alternative<CreateItem>(*decoded)) {
      close_item(ItemIdOf(std::get<CreateItem>(*decoded)));
    }
    if (decoded.ok() && std::holds_alternative<RingOpen>(*decoded)) {
      close_item(std::get<RingOpen>(*decoded).item);
    }
    if (!decoded.ok() || !std::holds_alternative<ReviewBatch>(*decoded)) {
      out.emplace_back();
      raw.push_back(std::move(p));
      continue;
    }
    ReviewBatch& batch = std::get<ReviewBatch>(*decoded);
    const auto key = std::make_tuple(batch.item, batch.epoch, batch.ring_size);
    // Bytes a review adds to a batch: its payload minus the shared header.
    const size_t header = 1 + 32 + 8 + 2 + 2;
    auto it = open.find(key);
    if (it != open.end()) {
      ReviewBatch& target = *out[it->second.index];
      if (target.reviews.size() + batch.reviews.size() <= kMaxBatch &&
          it->second.bytes + p.size() - header <= kMaxPayload) {
        it->second.bytes += p.size() - header;
        for (ReviewEntry& r : batch.reviews) target.reviews.push_back(std::move(r));
        continue;
      }
    }
    close_item(batch.item);
    open[key] = Open{out.size(), p.size()};
    out.emplace_back(std::move(batch));
    raw.emplace_back();
  }
  std::vector<std::string> result;
  result.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    result.push_back(out[i] ? EncodePayload(*out[i]) : std::move(raw[i]));
  }
  return result;
}

Result<std::string> Der(const blind::PublicKey& key) {
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key.raw(), &der);
  if (len <= 0) return InternalError("encoding the issuer key as DER failed");
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return out;
}

}  // namespace

Result<std::string> IssuerPublicToHex(const blind::PublicKey& key) {
  TESSERA_ASSIGN_OR_RETURN(std::string der, Der(key));
  return ToHex(AsBytes(der));
}

Result<blind::PublicKey> IssuerPublicFromHex(std::string_view hex) {
  auto der = FromHex(hex);
  if (!der.ok()) return InvalidArgumentError("issuer_public: " + der.status().message());
  const unsigned char* p = der->data();
  EVP_PKEY* key = d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size()));
  if (key == nullptr || p != der->data() + der->size()) {
    EVP_PKEY_free(key);
    return InvalidArgumentError("issuer_public is not a DER SubjectPublicKeyInfo");
  }
  // Re-enter through the checked PEM loader (modulus size and parity rules of blind_rsa.h).
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  bool written = bio && PEM_write_bio_PUBKEY(bio.get(), key) == 1;
  EVP_PKEY_free(key);
  if (!written) return InternalError("re-encoding the issuer key failed");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  auto pk = blind::PublicKey::FromPem(std::string_view(data, static_cast<size_t>(len)));
  if (!pk.ok()) return InvalidArgumentError("issuer_public: " + pk.status().message());
  return *pk;
}

Result<ReviewsParams> ParseReviewsParams(const ledger::AppParams& params) {
  ReviewsParams p;
  auto issuer = params.GetString("issuer_public");
  if (!issuer.ok())
    return InvalidArgumentError("[apps.reviews] issuer_public: " + issuer.status().message());
  TESSERA_ASSIGN_OR_RETURN(p.issuer, IssuerPublicFromHex(*issuer));
  auto registrar = params.GetString("registrar");
  if (!registrar.ok()) {
    return InvalidArgumentError("[apps.reviews] registrar: " + registrar.status().message());
  }
  auto reg = ArrayFromHex<32>(*registrar);
  if (!reg.ok()) return InvalidArgumentError("[apps.reviews] registrar: " + reg.status().message());
  p.registrar = *reg;
  TESSERA_ASSIGN_OR_RETURN(int64_t k, params.GetIntOr("ring_size", 50));
  TESSERA_ASSIGN_OR_RETURN(int64_t e, params.GetIntOr("epoch_blocks", 100));
  TESSERA_ASSIGN_OR_RETURN(int64_t share, params.GetIntOr("mempool_percent", 50));
  if (share < 1 || share > 100) {
    return InvalidArgumentError("[apps.reviews] mempool_percent must be 1..100");
  }
  p.mempool_percent = static_cast<uint64_t>(share);
  TESSERA_ASSIGN_OR_RETURN(int64_t quota, params.GetIntOr("items_per_epoch", 16));
  if (quota < 1) return InvalidArgumentError("[apps.reviews] items_per_epoch must be at least 1");
  p.items_per_epoch = static_cast<uint64_t>(quota);
  if (k < 1 || static_cast<uint64_t>(k) > kMaxRingParameter) {
    return InvalidArgumentError("[apps.reviews] ring_size must be 1.." +
                                std::to_string(kMaxRingParameter) +
                                " (every item's ring holds exactly min(ring_size, keys) keys)");
  }
  if (e < 2) return InvalidArgumentError("[apps.reviews] epoch_blocks must be at least 2");
  p.ring_size = static_cast<uint64_t>(k);
  p.epoch_blocks = static_cast<uint64_t>(e);
  return p;
}

Result<std::vector<RingOpen>> PlanRingOpen(const ReviewsParams& params, const ItemId& item,
                                           uint64_t epoch, std::vector<urs::Point> registered,
                                           const Hash256& seed, const RingProgress& done,
                                           size_t keys_per_part) {
  if (keys_per_part == 0 || keys_per_part > kMaxRingOpenKeys) {
    return InvalidArgumentError("keys_per_part must be 1.." + std::to_string(kMaxRingOpenKeys));
  }
  std::sort(registered.begin(), registered.end());
  if (std::adjacent_find(registered.begin(), registered.end()) != registered.end()) {
    return InvalidArgumentError("a registered key is listed twice");
  }
  if (done.keys_listed > registered.size()) {
    return InvalidArgumentError("the opening listed more keys than are registered");
  }
  std::vector<RingOpen> parts;
  for (size_t at = done.keys_listed; at < registered.size(); at += keys_per_part) {
    const size_t end = std::min(registered.size(), at + keys_per_part);
    RingOpen part{item, epoch, at, std::min<uint64_t>(params.ring_size, at), 0, {}};
    part.members = static_cast<uint16_t>(std::min<uint64_t>(params.ring_size, end));
    part.keys.assign(registered.begin() + static_cast<long>(at),
                     registered.begin() + static_cast<long>(end));
    parts.push_back(std::move(part));
  }
  return parts;
}

ReviewsAppStats StatsOf(const ledger::Application& app) {
  const auto* reviews = dynamic_cast<const ReviewsApp*>(&app);
  return reviews == nullptr ? ReviewsAppStats{} : reviews->stats();
}

std::shared_ptr<const ledger::Application> MakeReviewsApp(ReviewsParams params) {
  return std::make_shared<ReviewsApp>(std::move(params));
}

Result<std::shared_ptr<const ledger::Application>> MakeReviewsApp(const ledger::AppParams& params) {
  TESSERA_ASSIGN_OR_RETURN(ReviewsParams p, ParseReviewsParams(params));
  return MakeReviewsApp(std::move(p));
}

}  // namespace tessera::reviews
