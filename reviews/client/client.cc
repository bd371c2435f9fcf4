#include "reviews/client/client.h"

#include <sodium.h>

#include <algorithm>
#include <random>
#include <set>
#include <thread>

#include "ledger/crypto/hash.h"
#include "reviews/client/key_file.h"
#include "reviews/client/registration_delay.h"
#include "reviews/drac/eligibility.h"
#include "reviews/review/review.h"

namespace tessera::reviews::client {
namespace {

using Lock = std::lock_guard<std::recursive_mutex>;
using namespace onchain;  // NOLINT: the payload and leaf vocabulary of this file

std::string E(uint64_t epoch) { return "epoch " + std::to_string(epoch); }

}  // namespace

Result<ReviewsParams> ReviewsParamsFromGenesis(const ledger::net::Genesis& genesis) {
  for (ledger::AppParams params : genesis.apps) {
    if (params.name != kReviewsAppName) continue;
    params.values.emplace("registrar", ToHex(genesis.registrar));
    return ParseReviewsParams(params);
  }
  return FailedPreconditionError(
      "the genesis file has no [apps.reviews]: this chain does not run reviews");
}

ReviewsClient::ReviewsClient(ClientOptions options, ledger::net::Genesis genesis,
                             ReviewsParams params)
    : options_(std::move(options)), genesis_(std::move(genesis)), params_(std::move(params)) {
  light_ = std::make_unique<ledger::net::LightClient>(genesis_, options_.checkpoint);
}

Result<std::unique_ptr<ReviewsClient>> ReviewsClient::Open(ClientOptions options) {
  TESSERA_ASSIGN_OR_RETURN(ledger::net::Genesis genesis, ledger::net::LoadGenesis(options.genesis));
  TESSERA_ASSIGN_OR_RETURN(ReviewsParams params, ReviewsParamsFromGenesis(genesis));
  return std::unique_ptr<ReviewsClient>(
      new ReviewsClient(std::move(options), std::move(genesis), std::move(params)));
}

uint64_t ReviewsClient::height() const {
  Lock lock(mu_);
  return index_.height();
}

uint64_t ReviewsClient::CurrentEpoch() const { return params_.EpochOf(height() + 1); }

uint64_t ReviewsClient::NextKeyEpoch(uint64_t margin_blocks) const {
  uint64_t next = height() + 1;
  uint64_t e = std::max<uint64_t>(2, params_.EpochOf(next) + 2);
  while (params_.RegistrationClose(e) < next + margin_blocks) ++e;
  return e;
}

Status ReviewsClient::Refresh(
    const std::function<void(uint64_t, const std::vector<onchain::Payload>&)>& on_block) {
  Lock lock(mu_);
  return RefreshLocked(on_block);
}

Status ReviewsClient::RefreshLocked(
    const std::function<void(uint64_t, const std::vector<onchain::Payload>&)>& on_block) {
  TESSERA_RETURN_IF_ERROR(light_->Sync());
  const uint64_t head = light_->head().height;
  for (uint64_t h = index_.height() + 1; h <= head; ++h) {
    auto txs = light_->BlockTxs(h);
    if (!txs.ok()) return txs.status().WithContext("reading block " + std::to_string(h));
    index_.Add(h, *txs);
    if (on_block) on_block(h, ReviewsPayloads(*txs));
  }
  return Status::Ok();
}

Result<std::vector<std::optional<ledger::LeafValue>>> ReviewsClient::ReadLeaves(
    const std::vector<ledger::Hash256>& keys) {
  Lock lock(mu_);
  if (keys.empty()) return std::vector<std::optional<ledger::LeafValue>>{};
  return ProvedLeaves(keys);
}

Result<std::vector<std::optional<ledger::LeafValue>>> ReviewsClient::ProvedLeaves(
    const std::vector<ledger::Hash256>& keys) {
  auto leaves = light_->ReadLeaves(keys);
  // A politician reads a state request for height 0 as "the latest height"
  // (PoliticianNode::ReadState), so a client still at the genesis header gets a proof against
  // a later root once block 1 exists and refuses it ("state proof hashes to root ..., not the
  // expected ..."). Catching up and asking again reads at a real height.
  if (!leaves.ok() && light_->head().height == 0) {
    TESSERA_RETURN_IF_ERROR(RefreshLocked(nullptr));
    if (light_->head().height > 0) leaves = light_->ReadLeaves(keys);
  }
  return leaves;
}

Status ReviewsClient::Submit(const onchain::Payload& payload) {
  Lock lock(mu_);
  const size_t fanout = options_.fanout != 0 ? options_.fanout : genesis_.safe_sample;
  return light_->Submit(ledger::AppTransaction{kReviewsAppId, EncodePayload(payload)}, fanout);
}

Status ReviewsClient::WaitFor(std::string_view what, const std::function<Result<bool>()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  Status last;
  while (true) {
    last = RefreshLocked(nullptr);
    if (last.ok()) {
      TESSERA_ASSIGN_OR_RETURN(bool finished, done());
      if (finished) return Status::Ok();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceededError("gave up waiting for " + std::string(what) + " after " +
                                   std::to_string(options_.timeout.count()) + " ms at height " +
                                   std::to_string(index_.height()) +
                                   (last.ok() ? "" : " (last error: " + last.message() + ")"));
    }
    std::this_thread::sleep_for(options_.poll);
  }
}

std::optional<metric::HijackResistance> ReviewsClient::Hijack(uint64_t keys,
                                                              const onchain::Tally& t) const {
  if (keys == 0) return std::nullopt;
  metric::HijackInput in;
  in.identities = keys;
  in.ring_size = params_.ring_size;
  in.honest_reviews = t.count();
  in.honest_mean = t.count() == 0 ? 3.0 : t.mean();  // no reviews yet: the scale's middle
  in.delta = options_.hijack_delta;
  auto hr = metric::ComputeHijackResistance(in);
  if (!hr.ok()) return std::nullopt;
  return *hr;
}

// ---- Reading ----

Result<std::vector<ItemSummary>> ReviewsClient::ListItems() {
  Lock lock(mu_);
  const auto& creations = index_.creations();
  std::vector<ledger::Hash256> keys = {leaf::ItemCount()};
  std::set<uint64_t> epochs;
  for (const ItemCreation& c : creations) {
    keys.push_back(leaf::Item(c.id));
    keys.push_back(leaf::Tally(c.id));
    epochs.insert(WindowEpoch(c.height));
  }
  for (uint64_t e : epochs) keys.push_back(leaf::KeyCount(e));
  TESSERA_ASSIGN_OR_RETURN(auto leaves, ProvedLeaves(keys));
  TESSERA_ASSIGN_OR_RETURN(uint64_t count, DecodeCounter(leaves[0]));
  std::map<uint64_t, uint64_t> key_counts;
  size_t at = 1 + 2 * creations.size();
  for (uint64_t e : epochs) {
    TESSERA_ASSIGN_OR_RETURN(key_counts[e], DecodeCounter(leaves[at++]));
  }
  std::vector<ItemSummary> out;
  for (size_t i = 0; i < creations.size(); ++i) {
    const ItemCreation& c = creations[i];
    const auto& item_leaf = leaves[1 + 2 * i];
    if (!item_leaf) continue;  // the CreateItem was skipped (cannot happen for a first name)
    TESSERA_ASSIGN_OR_RETURN(ItemRecord rec, DecodeItemRecord(*item_leaf));
    if (rec.created_height != c.height) {
      return DataLossError("item '" + c.name + "' was created at height " +
                           std::to_string(rec.created_height) + " in state but at " +
                           std::to_string(c.height) + " in the blocks");
    }
    ItemSummary s;
    s.id = c.id;
    s.name = c.name;
    s.created_height = c.height;
    s.creator = c.creator;
    s.first_review_epoch = rec.first_review_epoch();
    s.review_epoch = WindowEpoch(c.height);
    TESSERA_ASSIGN_OR_RETURN(s.tally, DecodeTally(leaves[2 + 2 * i]));
    s.registered_keys = key_counts[s.review_epoch];
    s.hijack = Hijack(s.registered_keys, s.tally);
    out.push_back(std::move(s));
  }
  if (out.size() != count) {
    return DataLossError("the proved state holds " + std::to_string(count) + " items, the blocks " +
                         std::to_string(out.size()));
  }
  return out;
}

Result<ItemView> ReviewsClient::GetItem(const ItemId& item) {
  Lock lock(mu_);
  return GetItemLocked(item);
}

Result<ItemView> ReviewsClient::GetItemLocked(const ItemId& item) {
  const auto& creations = index_.creations();
  auto c = std::find_if(creations.begin(), creations.end(),
                        [&](const ItemCreation& x) { return x.id == item; });
  if (c == creations.end()) {
    return NotFoundError("no item " + ToHex(item) + " as of height " +
                         std::to_string(index_.height()));
  }
  std::vector<PostedReview> candidates = index_.ReviewCandidates(item);
  const uint64_t epoch = WindowEpoch(c->height);
  std::vector<ledger::Hash256> keys = {leaf::Item(item), leaf::Tally(item), leaf::Chain(item),
                                       leaf::KeyCount(epoch)};
  std::vector<ledger::Hash256> tags = TagKeys(candidates);
  keys.insert(keys.end(), tags.begin(), tags.end());
  TESSERA_ASSIGN_OR_RETURN(auto leaves, ProvedLeaves(keys));
  if (!leaves[0]) return DataLossError("item " + c->name + " is in the blocks but not in state");
  TESSERA_ASSIGN_OR_RETURN(ItemRecord rec, DecodeItemRecord(*leaves[0]));
  ItemView v;
  v.summary.id = item;
  v.summary.name = c->name;
  v.summary.created_height = rec.created_height;
  v.summary.creator = c->creator;
  v.summary.first_review_epoch = rec.first_review_epoch();
  v.summary.review_epoch = epoch;
  TESSERA_ASSIGN_OR_RETURN(v.summary.tally, DecodeTally(leaves[1]));
  v.chain = leaves[2].value_or(ledger::LeafValue{});
  TESSERA_ASSIGN_OR_RETURN(v.summary.registered_keys, DecodeCounter(leaves[3]));
  v.summary.hijack = Hijack(v.summary.registered_keys, v.summary.tally);
  std::vector<std::optional<ledger::LeafValue>> tag_leaves(leaves.begin() + 4, leaves.end());
  ItemAudit audit = Replay(SelectCommitted(candidates, tag_leaves));
  v.verified = CheckAgainstState(audit, v.summary.tally, v.chain);
  v.reviews = std::move(audit.reviews);
  return v;
}

Status ReviewsClient::VerifyReviews(const ItemId& item, const std::vector<PostedReview>& reviews) {
  Lock lock(mu_);
  for (const PostedReview& r : reviews) {
    if (r.item != item) return InvalidArgumentError("a review of another item is in the list");
  }
  TESSERA_ASSIGN_OR_RETURN(auto leaves, ProvedLeaves({leaf::Tally(item), leaf::Chain(item)}));
  TESSERA_ASSIGN_OR_RETURN(Tally tally, DecodeTally(leaves[0]));
  return CheckAgainstState(Replay(reviews), tally, leaves[1].value_or(ledger::LeafValue{}));
}

Result<std::vector<urs::Point>> ReviewsClient::RegisteredKeys(uint64_t epoch) {
  Lock lock(mu_);
  return RegisteredKeysLocked(epoch);
}

Result<std::vector<urs::Point>> ReviewsClient::RegisteredKeysLocked(uint64_t epoch) {
  std::vector<urs::Point> candidates = index_.KeyCandidates(epoch);
  std::vector<ledger::Hash256> keys = {leaf::KeyCount(epoch)};
  for (const urs::Point& k : candidates) keys.push_back(leaf::ReviewKey(epoch, k));
  TESSERA_ASSIGN_OR_RETURN(auto leaves, ProvedLeaves(keys));
  TESSERA_ASSIGN_OR_RETURN(uint64_t count, DecodeCounter(leaves[0]));
  std::vector<urs::Point> registered;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (leaves[i + 1]) registered.push_back(candidates[i]);
  }
  if (registered.size() != count) {
    return DataLossError("the proved state counts " + std::to_string(count) + " review keys for " +
                         E(epoch) + ", the blocks show " + std::to_string(registered.size()));
  }
  return registered;
}

Result<urs::Ring> ReviewsClient::EligibleRing(const ItemId& item, uint64_t epoch) {
  Lock lock(mu_);
  return EligibleRingLocked(item, epoch);
}

Result<urs::Ring> ReviewsClient::EligibleRingLocked(const ItemId& item, uint64_t epoch) {
  TESSERA_ASSIGN_OR_RETURN(auto seed, ProvedLeaves({leaf::EpochSeed(epoch)}));
  if (!seed[0]) {
    return FailedPreconditionError("the seed of " + E(epoch) + " is drawn at height " +
                                   std::to_string(epoch * params_.epoch_blocks) + " (now " +
                                   std::to_string(index_.height()) + ")");
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<urs::Point> keys, RegisteredKeysLocked(epoch));
  if (keys.empty()) return FailedPreconditionError("no review keys are registered for " + E(epoch));
  return drac::EligibleRing(keys, ItemBytes(item), epoch, *seed[0], params_.ring_size);
}

Result<std::optional<urs::Ring>> ReviewsClient::LedgerRing(const ItemId& item, uint64_t epoch) {
  Lock lock(mu_);
  return LedgerRingLocked(item, epoch);
}

Result<std::optional<urs::Ring>> ReviewsClient::LedgerRingLocked(const ItemId& item,
                                                                 uint64_t epoch) {
  TESSERA_ASSIGN_OR_RETURN(auto size_leaf, ProvedLeaves({leaf::RingSize(item, epoch)}));
  if (!size_leaf[0]) return std::optional<urs::Ring>();
  TESSERA_ASSIGN_OR_RETURN(uint64_t size, DecodeCounter(size_leaf[0]));
  if (size == 0) {
    return FailedPreconditionError("no review key won the lottery for this item in " + E(epoch));
  }
  TESSERA_ASSIGN_OR_RETURN(auto leaves, ProvedLeaves(leaf::RingMembers(item, epoch, size)));
  std::vector<urs::Point> members;
  for (const auto& l : leaves) {
    if (!l) return DataLossError("a member of the item's ring is missing from the proved state");
    members.push_back(*l);
  }
  TESSERA_ASSIGN_OR_RETURN(urs::Ring ring, urs::Ring::Create(std::move(members)));
  return std::optional<urs::Ring>(std::move(ring));
}

Result<urs::Ring> ReviewsClient::OpenRing(const ItemId& item, uint64_t epoch) {
  Lock lock(mu_);
  return OpenRingLocked(item, epoch);
}

Result<urs::Ring> ReviewsClient::OpenRingLocked(const ItemId& item, uint64_t epoch) {
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(auto ring, LedgerRingLocked(item, epoch));
    if (ring) return std::move(*ring);
    TESSERA_ASSIGN_OR_RETURN(
        auto l, ProvedLeaves({leaf::EpochSeed(epoch), leaf::RingProgress(item, epoch)}));
    if (!l[0]) {
      return FailedPreconditionError("the seed of " + E(epoch) + " is drawn at height " +
                                     std::to_string(epoch * params_.epoch_blocks));
    }
    TESSERA_ASSIGN_OR_RETURN(RingProgress done, DecodeRingProgress(l[1]));
    TESSERA_ASSIGN_OR_RETURN(std::vector<urs::Point> keys, RegisteredKeysLocked(epoch));
    if (keys.empty())
      return FailedPreconditionError("no review keys are registered for " + E(epoch));
    TESSERA_ASSIGN_OR_RETURN(std::vector<RingOpen> parts,
                             PlanRingOpen(params_, item, epoch, keys, *l[0], done));
    if (parts.empty()) return DataLossError("every key is listed but the ring is not open");
    // One part at a time: each continues where the committed ones stopped. Another client
    // opening the same ring at the same time makes ours fail; the loop then reads its result.
    const RingOpen& part = parts.front();
    const uint64_t listed = part.key_offset + part.keys.size();
    auto progressed = [&]() -> Result<bool> {
      TESSERA_ASSIGN_OR_RETURN(auto p, ProvedLeaves({leaf::RingProgress(item, epoch)}));
      TESSERA_ASSIGN_OR_RETURN(RingProgress now, DecodeRingProgress(p[0]));
      return now.keys_listed > done.keys_listed;
    };
    Status submitted = Submit(part);
    // Reviewers of one item open its ring with the same payload: another client's copy
    // pending at the politicians is as good as ours.
    if (!submitted.ok() && submitted.message().find("already pending") != std::string::npos) {
      submitted = Status::Ok();
    }
    if (!submitted.ok()) {
      TESSERA_RETURN_IF_ERROR(RefreshLocked(nullptr));
      TESSERA_ASSIGN_OR_RETURN(bool moved, progressed());
      if (moved) continue;  // another client's part committed meanwhile
      return submitted.WithContext("opening the item's ring for " + E(epoch));
    }
    TESSERA_RETURN_IF_ERROR(WaitFor("the item's ring to be opened", [&]() -> Result<bool> {
      TESSERA_ASSIGN_OR_RETURN(auto p, ProvedLeaves({leaf::RingProgress(item, epoch)}));
      TESSERA_ASSIGN_OR_RETURN(RingProgress now, DecodeRingProgress(p[0]));
      return now.keys_listed >= listed;
    }));
  }
}

// ---- Writing ----

Result<ItemId> ReviewsClient::CreateItem(const ledger::net::Identity& identity,
                                         const ledger::KeyPair& creator, std::string_view name,
                                         bool wait) {
  Lock lock(mu_);
  if (identity.citizen != creator.public_key()) {
    return InvalidArgumentError("the identity is not the citizen key's");
  }
  onchain::CreateItem tx{std::string(name), identity, {}};
  SignCreateItem(tx, creator);
  // Validate locally with the ledger's own decoder, for the same error a politician gives.
  TESSERA_RETURN_IF_ERROR(DecodePayload(AsBytes(EncodePayload(tx))).status());
  const ItemId id = ItemIdOf(tx);
  TESSERA_RETURN_IF_ERROR(Submit(tx));
  if (wait) {
    TESSERA_RETURN_IF_ERROR(WaitFor("the item to be committed", [&]() -> Result<bool> {
      TESSERA_ASSIGN_OR_RETURN(auto l, ProvedLeaves({leaf::Item(id)}));
      return l[0].has_value();
    }));
  }
  return id;
}

Status ReviewsClient::RequestKey(const ledger::net::Identity& identity,
                                 const ledger::KeyPair& citizen, uint64_t epoch,
                                 const std::filesystem::path& key_file, bool wait) {
  Lock lock(mu_);
  if (std::filesystem::exists(key_file)) {
    return AlreadyExistsError("review key file " + key_file.string() +
                              " exists; a key file is never overwritten");
  }
  if (identity.citizen != citizen.public_key()) {
    return InvalidArgumentError("the identity is not the citizen key's");
  }
  TESSERA_RETURN_IF_ERROR(RefreshLocked(nullptr));
  if (index_.height() + 1 >= params_.RegistrationClose(epoch)) {
    return FailedPreconditionError("key requests for " + E(epoch) + " closed at height " +
                                   std::to_string(params_.RegistrationClose(epoch)));
  }
  ReviewKeyFile key;
  key.epoch = epoch;
  key.review = urs::GenerateKeyPair();
  key.input_msg =
      blind::PrepareMessage(kCredentialVariant, CredentialMessage(key.review.public_key, epoch));
  TESSERA_ASSIGN_OR_RETURN(blind::BlindOutput b,
                           blind::Blind(params_.issuer, kCredentialVariant, key.input_msg));
  KeyRequestFile request_file{
      epoch, citizen.public_key(), key.review.public_key, b.blinded_msg, b.inv, {}};
  randombytes_buf(request_file.salt.data(), request_file.salt.size());
  TESSERA_ASSIGN_OR_RETURN(Bytes encoded,
                           blind::UnblindMessage(params_.issuer, b.blinded_msg, b.inv));
  // On disk before anything is sent: a crash after the request must not lose the key. The
  // identity's half (request file) and the review key file are separate (key_file.h).
  TESSERA_RETURN_IF_ERROR(WriteRequestFile(RequestFilePath(key_file), request_file));
  TESSERA_RETURN_IF_ERROR(WriteKeyFile(key_file, key));
  KeyRequest request{
      identity, epoch, b.blinded_msg, EncodedMessageCommitment(encoded, request_file.salt), {}};
  SignKeyRequest(request, citizen);
  TESSERA_RETURN_IF_ERROR(Submit(request));
  if (!wait) return Status::Ok();
  const ledger::Hash256 want = ledger::Sha256(b.blinded_msg);
  return WaitFor("the key request to be committed", [&]() -> Result<bool> {
    TESSERA_ASSIGN_OR_RETURN(auto l, ProvedLeaves({leaf::KeyRequest(epoch, citizen.public_key())}));
    if (l[0] && *l[0] != want) {
      return FailedPreconditionError("this identity already requested another key for " + E(epoch));
    }
    return l[0].has_value();
  });
}

Status ReviewsClient::CompleteKey(const std::filesystem::path& key_file) {
  return CompleteKeys({key_file});
}

Status ReviewsClient::CompleteKeys(const std::vector<std::filesystem::path>& key_files) {
  Lock lock(mu_);
  std::vector<ReviewKeyFile> keys;
  std::vector<KeyRequestFile> requests;
  for (const auto& f : key_files) {
    TESSERA_ASSIGN_OR_RETURN(ReviewKeyFile key, ReadKeyFile(f));
    TESSERA_ASSIGN_OR_RETURN(KeyRequestFile request, ReadRequestFile(RequestFilePath(f)));
    if (request.review_public != key.review.public_key || request.epoch != key.epoch) {
      return InvalidArgumentError(RequestFilePath(f).string() + " belongs to another review key");
    }
    keys.push_back(std::move(key));
    requests.push_back(std::move(request));
  }
  // 1. The issuer's answers: the blind signature whose hash the issue leaf holds.
  TESSERA_RETURN_IF_ERROR(WaitFor("the issuer's blind signatures", [&]() -> Result<bool> {
    std::vector<ledger::Hash256> leaves;
    for (const KeyRequestFile& r : requests) leaves.push_back(leaf::KeyIssue(r.epoch, r.citizen));
    TESSERA_ASSIGN_OR_RETURN(auto l, ProvedLeaves(leaves));
    bool all = true;
    for (size_t i = 0; i < keys.size(); ++i) {
      ReviewKeyFile& key = keys[i];
      if (key.issued()) continue;
      const PostedIssue* answer = nullptr;
      const std::vector<PostedIssue> issues =
          index_.IssueCandidates(key.epoch, requests[i].citizen);
      for (const PostedIssue& issue : issues) {
        if (l[i] && ledger::Sha256(issue.blind_sig) == *l[i]) answer = &issue;
      }
      if (answer == nullptr) {  // not answered yet, or in a block not indexed yet
        all = false;
        continue;
      }
      // Finalize verifies the signature under issuer_public: a wrong answer is refused here.
      TESSERA_ASSIGN_OR_RETURN(key.signature,
                               blind::Finalize(params_.issuer, kCredentialVariant, key.input_msg,
                                               answer->blind_sig, requests[i].inv));
      TESSERA_RETURN_IF_ERROR(WriteKeyFile(key_files[i], key));
    }
    return all;
  }));
  // 2. Anonymous registrations, at a height the client draws at random (registration_delay.h),
  // all submitted before waiting for any.
  if (!keys.empty()) {
    uint64_t close = params_.RegistrationClose(keys[0].epoch);
    for (const ReviewKeyFile& k : keys) close = std::min(close, params_.RegistrationClose(k.epoch));
    std::random_device rd;
    std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
    const uint64_t target =
        DrawRegistrationHeight(index_.height(), close, options_.register_delay_blocks, rng);
    if (target > index_.height()) {
      TESSERA_RETURN_IF_ERROR(WaitFor("the registration delay",
                                      [&]() -> Result<bool> { return index_.height() >= target; }));
    }
  }
  std::vector<ledger::Hash256> key_leaves;
  for (const ReviewKeyFile& k : keys)
    key_leaves.push_back(leaf::ReviewKey(k.epoch, k.review.public_key));
  TESSERA_RETURN_IF_ERROR(RefreshLocked(nullptr));
  TESSERA_ASSIGN_OR_RETURN(auto before, ProvedLeaves(key_leaves));
  for (size_t i = 0; i < keys.size(); ++i) {
    const ReviewKeyFile& key = keys[i];
    if (before[i]) continue;
    if (index_.height() + 1 >= params_.RegistrationClose(key.epoch)) {
      return FailedPreconditionError("key registration for " + E(key.epoch) + " closed at height " +
                                     std::to_string(params_.RegistrationClose(key.epoch)));
    }
    TESSERA_ASSIGN_OR_RETURN(bool front_run, EpochIsFull(key.epoch));
    if (front_run) {
      // Every request of the epoch has a registered key, yet ours is not among them: the issuer
      // registered keys of its own. Prove it on the ledger, which registers ours anyway.
      TESSERA_RETURN_IF_ERROR(Submit(MakeFrontRunProof(key, requests[i])));
      continue;
    }
    RegisterKey reg{key.epoch, key.review.public_key, {}, key.signature};
    std::copy_n(key.input_msg.begin(), reg.msg_prefix.size(), reg.msg_prefix.begin());
    TESSERA_RETURN_IF_ERROR(Submit(reg));
  }
  TESSERA_RETURN_IF_ERROR(WaitFor("the key registrations", [&]() -> Result<bool> {
    TESSERA_ASSIGN_OR_RETURN(auto l, ProvedLeaves(key_leaves));
    return std::all_of(l.begin(), l.end(), [](const auto& v) { return v.has_value(); });
  }));
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i].registered = true;
    TESSERA_RETURN_IF_ERROR(WriteKeyFile(key_files[i], keys[i]));
  }
  return Status::Ok();
}

Status ReviewsClient::PostReview(const std::filesystem::path& key_file, const ItemId& item,
                                 int rating, std::string_view text, const PostOptions& options) {
  auto key = ReadKeyFile(key_file);
  if (!key.ok()) {
    Status st = key.status();
    // A key file that is not there or not readable is the caller's argument, not a state.
    return st.code() == StatusCode::kPermissionDenied ? InvalidArgumentError(st.message()) : st;
  }
  return PostReview(*key, item, rating, text, options);
}

Status ReviewsClient::PostReview(const ReviewKeyFile& key, const ItemId& item, int rating,
                                 std::string_view text, const PostOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(ReviewBatch signed_review, SignReview(key, item, rating, text, options));
  return SubmitSignedReview(signed_review, options);
}

Result<ReviewBatch> ReviewsClient::SignReview(const ReviewKeyFile& key, const ItemId& item,
                                              int rating, std::string_view text,
                                              const PostOptions& options) {
  Lock lock(mu_);
  if (!key.registered) {
    return FailedPreconditionError(
        "the review key is not registered yet (run reviews-net get-key to finish it)");
  }
  if (rating < kMinRating || rating > kMaxRating) {
    return InvalidArgumentError("rating must be 1..5");
  }
  if (text.size() > kMaxReviewText) {
    return InvalidArgumentError("review text has " + std::to_string(text.size()) +
                                " bytes, at most " + std::to_string(kMaxReviewText));
  }
  TESSERA_RETURN_IF_ERROR(RefreshLocked(nullptr));
  TESSERA_ASSIGN_OR_RETURN(ItemRecord rec, ItemRecordLocked(item));
  TESSERA_RETURN_IF_ERROR(CheckKeyForItem(rec, key.epoch));
  const uint64_t opens = key.epoch * params_.epoch_blocks;
  if (options.wait && index_.height() < opens) {
    TESSERA_RETURN_IF_ERROR(WaitFor("the item's review window",
                                    [&]() -> Result<bool> { return index_.height() >= opens; }));
  }
  TESSERA_RETURN_IF_ERROR(CheckWindowOpen(key.epoch));
  // The ring is the ledger's: the eligible set it computed from every registered key.
  TESSERA_ASSIGN_OR_RETURN(urs::Ring ring, OpenRingLocked(item, key.epoch));
  if (!ring.IndexOf(key.review.public_key)) {
    return PermissionDeniedError(
        "this review key is not eligible for the item: the DRAC lottery of " + E(key.epoch) +
        " did not draw it (expected ring size " + std::to_string(params_.ring_size) + " of " +
        std::to_string(ring.size()) + " drawn)");
  }
  const std::string item_bytes = ItemBytes(item);
  TESSERA_ASSIGN_OR_RETURN(urs::Point tag,
                           urs::ComputeTag(key.review.secret, ReviewScope(item_bytes, key.epoch)));
  if (!options.skip_local_checks) {
    TESSERA_ASSIGN_OR_RETURN(auto used, ProvedLeaves({leaf::Tag(item, key.epoch, tag)}));
    if (used[0]) return AlreadyExistsError("this key already reviewed the item (tag used)");
  }
  TESSERA_ASSIGN_OR_RETURN(Review signed_review, reviews::SignReview(key.review, ring, item_bytes,
                                                                     key.epoch, rating, text));
  return ReviewBatch{item,
                     key.epoch,
                     static_cast<uint16_t>(ring.size()),
                     {ReviewEntry{rating, std::string(text), signed_review.signature}}};
}

Status ReviewsClient::SubmitSignedReview(const ReviewBatch& review, const PostOptions& options) {
  Lock lock(mu_);
  if (review.reviews.size() != 1) {
    return InvalidArgumentError("a signed review holds exactly one review");
  }
  const ReviewEntry& entry = review.reviews[0];
  TESSERA_RETURN_IF_ERROR(RefreshLocked(nullptr));
  TESSERA_ASSIGN_OR_RETURN(ItemRecord rec, ItemRecordLocked(review.item));
  TESSERA_RETURN_IF_ERROR(CheckKeyForItem(rec, review.epoch));
  TESSERA_RETURN_IF_ERROR(CheckWindowOpen(review.epoch));
  // The ring is the item's whole eligible set as the ledger holds it (the payload does not
  // carry it); the ledger verifies over the same ring.
  TESSERA_ASSIGN_OR_RETURN(auto ledger_ring, LedgerRingLocked(review.item, review.epoch));
  if (!ledger_ring) {
    return FailedPreconditionError("the item's ring for " + E(review.epoch) +
                                   " is not open yet (the signer's client opens it: reviews-net "
                                   "sign-review)");
  }
  const urs::Ring& ring = *ledger_ring;
  if (ring.size() != review.ring_size) {
    return InvalidArgumentError("the review is not signed over the item's eligible ring of " +
                                E(review.epoch) + " (" + std::to_string(ring.size()) +
                                " keys); sign it again with reviews-net sign-review");
  }
  const ledger::Hash256 tag_leaf = leaf::Tag(review.item, review.epoch, entry.signature.tag);
  if (!options.skip_local_checks) {
    TESSERA_ASSIGN_OR_RETURN(auto used, ProvedLeaves({tag_leaf}));
    if (used[0]) return AlreadyExistsError("this key already reviewed the item (tag used)");
  }
  // Checked here, before anything reaches a politician: a relay forwards only reviews that
  // verify, so a forger costs the relay one verification and the network none.
  Review check{ItemBytes(review.item), review.epoch, entry.rating, entry.text, entry.signature};
  if (Status st = VerifyReview(ring, check); !st.ok()) {
    return InvalidArgumentError("the review's ring signature does not verify: " + st.message());
  }
  TESSERA_RETURN_IF_ERROR(Submit(review));
  if (!options.wait) return Status::Ok();
  const ledger::Hash256 record = ReviewRecordHash(review.item, review.epoch, entry);
  return WaitFor("the review to be committed", [&]() -> Result<bool> {
    TESSERA_ASSIGN_OR_RETURN(auto l, ProvedLeaves({tag_leaf}));
    if (l[0] && *l[0] != record) {
      return AlreadyExistsError("another review by this key was committed first");
    }
    return l[0].has_value();
  });
}

Result<bool> ReviewsClient::EpochIsFull(uint64_t epoch) {
  TESSERA_ASSIGN_OR_RETURN(auto l,
                           ProvedLeaves({leaf::KeyCount(epoch), leaf::RequestCount(epoch)}));
  TESSERA_ASSIGN_OR_RETURN(uint64_t registered, DecodeCounter(l[0]));
  TESSERA_ASSIGN_OR_RETURN(uint64_t requested, DecodeCounter(l[1]));
  return registered >= requested;
}

FrontRunProof MakeFrontRunProof(const ReviewKeyFile& key, const KeyRequestFile& request) {
  FrontRunProof proof{key.epoch,   request.citizen, request.blinded_msg,
                      request.inv, request.salt,    key.review.public_key,
                      {},          key.signature};
  std::copy_n(key.input_msg.begin(), proof.msg_prefix.size(), proof.msg_prefix.begin());
  return proof;
}

Result<uint64_t> ReviewsClient::FrontRunProofs(uint64_t epoch) {
  Lock lock(mu_);
  TESSERA_ASSIGN_OR_RETURN(auto l, ProvedLeaves({leaf::FrontRunCount(epoch)}));
  return DecodeCounter(l[0]);
}

Result<ItemRecord> ReviewsClient::ItemRecordLocked(const ItemId& item) {
  TESSERA_ASSIGN_OR_RETURN(auto item_leaf, ProvedLeaves({leaf::Item(item)}));
  if (!item_leaf[0]) return NotFoundError("no item " + ToHex(item));
  return DecodeItemRecord(*item_leaf[0]);
}

Status ReviewsClient::CheckKeyForItem(const ItemRecord& rec, uint64_t epoch) const {
  if (epoch < rec.first_review_epoch()) {
    return FailedPreconditionError("this key is for " + E(epoch) + ", the item's reviews open in " +
                                   E(rec.first_review_epoch()));
  }
  return Status::Ok();
}

uint64_t ReviewsClient::WindowEpoch(uint64_t created_height) const {
  return std::max(params_.EpochOf(created_height) + 2, CurrentEpoch());
}

Result<ItemId> ReviewsClient::ResolveItem(std::string_view text) {
  Lock lock(mu_);
  if (text.size() == 64) {
    auto id = ArrayFromHex<32>(text);
    if (id.ok()) return *id;
  }
  std::vector<const ItemCreation*> found;
  for (const ItemCreation& c : index_.creations()) {
    if (c.name == text) found.push_back(&c);
  }
  if (found.empty()) {
    return NotFoundError("no item named '" + std::string(text) + "' as of height " +
                         std::to_string(index_.height()));
  }
  if (found.size() > 1) {
    std::string ids;
    for (const ItemCreation* c : found) ids += " " + ToHex(c->id);
    return InvalidArgumentError("several items are named '" + std::string(text) +
                                "' (one per creator); name one by its id:" + ids);
  }
  return found[0]->id;
}

Status ReviewsClient::CheckWindowOpen(uint64_t epoch) const {
  if (CurrentEpoch() != epoch) {
    const uint64_t opens = epoch * params_.epoch_blocks;
    return FailedPreconditionError("reviews with a key of " + E(epoch) +
                                   " are accepted in that epoch's review window only "
                                   "(heights " +
                                   std::to_string(opens) + ".." +
                                   std::to_string(opens + params_.epoch_blocks - 1) +
                                   "), the next block is " + std::to_string(index_.height() + 1) +
                                   (CurrentEpoch() > epoch ? "; get a key for a later epoch" : ""));
  }
  return Status::Ok();
}

}  // namespace tessera::reviews::client
