// The reviews client: everything a user, the issuer daemon or the web page does with reviews
// on a running ledger, through a light client that trusts only the genesis file.
//
// Reads are verified: headers are followed with their committee certificates, block bodies are
// checked against the certified headers (LightClient::BlockTxs), and every value shown is a
// leaf proved against the synced state root (LightClient::ReadLeaves). Lists read from blocks
// (items, review keys, reviews) are checked for completeness against proved counters and, for
// reviews, against the item's proved hash chain (item_audit.h).
//
//   ClientOptions o{.genesis = "genesis.toml", .checkpoint = "client.ckpt"};
//   TESSERA_ASSIGN_OR_RETURN(auto client, ReviewsClient::Open(o));
//   TESSERA_RETURN_IF_ERROR(client->Refresh());
//   TESSERA_ASSIGN_OR_RETURN(auto items, client->ListItems());   // tallies + hijack resistance
//   TESSERA_ASSIGN_OR_RETURN(ItemView v, client->GetItem(items[0].id));
//   if (!v.verified.ok()) ...                                     // never shown as verified
//   client->PostReview("alice.key.json", v.summary.id, 5, "great", {});   // sign + submit
//   // or, split between the user's own client and a relay (the web page):
//   TESSERA_ASSIGN_OR_RETURN(auto r, client->SignReview(key, id, 5, "great", {}));  // user
//   relay->SubmitSignedReview(r, {});                                               // relay
//
// Getting a review key (an identity, once per epoch; docs/reviews.md "On the ledger"):
//   client->RequestKey(identity, citizen_keys, epoch, "alice.key.json");  // KeyRequest, committed
//   client->CompleteKey("alice.key.json");  // waits for the issuer, unblinds, registers
//
// Every method is thread-safe (calls are serialized). Methods that wait for a commit poll
// every `poll` for at most `timeout` and then fail with DEADLINE_EXCEEDED; a web server should
// pass wait = false.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/net/identity.h"
#include "ledger/net/wallet.h"
#include "reviews/client/chain_index.h"
#include "reviews/client/item_audit.h"
#include "reviews/client/key_file.h"
#include "reviews/ledger/reviews_app.h"
#include "reviews/ledger/state_layout.h"
#include "reviews/metric/hijack.h"

namespace tessera::reviews::client {

struct ClientOptions {
  std::filesystem::path genesis;     // the chain's genesis file, with [apps.reviews]
  std::filesystem::path checkpoint;  // the light client's checkpoint (created when absent)
  // Politicians each transaction is submitted to, chosen at random; 0 = the genesis file's
  // safe_sample (Blockene's safe sample: enough that one is honest with high probability).
  size_t fanout = 0;
  std::chrono::milliseconds poll{200};
  std::chrono::milliseconds timeout{120000};
  double hijack_delta = 0.5;  // the rating shift the hijack resistance is computed for
  // CompleteKey registers at a height drawn uniformly up to the registration close (default),
  // or at most this many blocks after the issuer's answer; 0 registers at once, which links the
  // key to the identity by timing (registration_delay.h).
  std::optional<uint64_t> register_delay_blocks;
};

struct ItemSummary {
  ItemId id{};
  std::string name;
  ledger::PublicKey creator{};  // the identity whose namespace holds the name
  uint64_t created_height = 0;
  uint64_t first_review_epoch = 0;  // reviews are accepted in every epoch from this one
  // The epoch of the window shown: the current epoch once the item is open, else the first.
  uint64_t review_epoch = 0;
  onchain::Tally tally;          // proved
  uint64_t registered_keys = 0;  // N_e of the review epoch, proved (0: none yet)
  // From the live N_e, k and the tally (metric/hijack.h); nullopt while N_e = 0.
  std::optional<metric::HijackResistance> hijack;
};

struct ItemView {
  ItemSummary summary;
  std::vector<PostedReview> reviews;  // committed reviews, in commit order
  ledger::LeafValue chain{};          // the proved chain leaf
  Status verified;  // OK iff `reviews` replay exactly to the proved tally and chain
};

struct PostOptions {
  bool wait = false;  // return once the review is committed
  // Submit even if this client sees the key already reviewed the item: lets the ledger's
  // politicians reject the double review (tests and demos of the ledger's own check).
  bool skip_local_checks = false;
};

class ReviewsClient {
 public:
  static Result<std::unique_ptr<ReviewsClient>> Open(ClientOptions options);

  const ReviewsParams& params() const { return params_; }
  const ledger::net::Genesis& genesis() const { return genesis_; }
  uint64_t height() const;        // the last synced (and indexed) block
  uint64_t CurrentEpoch() const;  // the epoch of the next block
  // The first epoch whose key requests stay open for at least `margin_blocks` more blocks.
  uint64_t NextKeyEpoch(uint64_t margin_blocks) const;

  // Follows the chain to the politicians' head and indexes the new blocks' transactions.
  // `on_block` sees each new block's reviews payloads (the issuer daemon uses it).
  Status Refresh(const std::function<void(uint64_t height, const std::vector<onchain::Payload>&)>&
                     on_block = nullptr);

  // ---- Reading (as of the last Refresh) ----
  // Every item, with its proved tally; DATA_LOSS if the blocks and the proved item count
  // disagree.
  Result<std::vector<ItemSummary>> ListItems();
  // NOT_FOUND for an item not created as of the last Refresh.
  Result<ItemView> GetItem(const ItemId& item);
  // The registered review keys of `epoch`, checked complete against the proved N_e.
  Result<std::vector<urs::Point>> RegisteredKeys(uint64_t epoch);
  // The item's DRAC ring for `epoch` from proved N_e, seed_e and keys.
  Result<urs::Ring> EligibleRing(const ItemId& item, uint64_t epoch);
  // The item's ring for `epoch` as the ledger holds it (proved ring size and member leaves),
  // nullopt while it is not open.
  Result<std::optional<urs::Ring>> LedgerRing(const ItemId& item, uint64_t epoch);
  // The same, opening it first if nobody has: submits the RingOpen parts (payload.h) that list
  // every registered key of the epoch, one after the other, waiting for each to commit.
  Result<urs::Ring> OpenRing(const ItemId& item, uint64_t epoch);
  // Replays `reviews` (e.g. a local copy) against the item's proved tally and chain: OK, or
  // DATA_LOSS saying what differs.
  Status VerifyReviews(const ItemId& item, const std::vector<PostedReview>& reviews);

  // ---- Writing ----
  // Creates `name` in the identity's namespace (ItemIdOf(creator, name)), signed by it.
  Result<ItemId> CreateItem(const ledger::net::Identity& identity, const ledger::KeyPair& creator,
                            std::string_view name, bool wait);
  // An item by its id (64 hex digits) or its name when one creator uses it; INVALID_ARGUMENT
  // when several do (the message lists their ids), NOT_FOUND when none.
  Result<ItemId> ResolveItem(std::string_view text);
  // Errors: INVALID_ARGUMENT (rating, text, key file), NOT_FOUND (unknown item),
  // FAILED_PRECONDITION (key not registered, not for the item's window, window not open),
  // PERMISSION_DENIED (the key is not in the item's DRAC ring), ALREADY_EXISTS (this key
  // already reviewed the item), UNAVAILABLE (no politician reachable); a rejection by the
  // politicians themselves is FAILED_PRECONDITION with their reasons.
  Status PostReview(const std::filesystem::path& key_file, const ItemId& item, int rating,
                    std::string_view text, const PostOptions& options);
  // The same with the key already in memory: SignReview, then SubmitSignedReview.
  Status PostReview(const ReviewKeyFile& key, const ItemId& item, int rating, std::string_view text,
                    const PostOptions& options);
  // The user's side: checks the key against the item (the errors of PostReview), opens the
  // item's ring for the key's epoch if nobody has (OpenRing: this waits for commits), and signs
  // a review over it, without submitting the review. The result is what a
  // relay (the web page) receives (signed_review.h): no identity and no secret.
  Result<onchain::ReviewBatch> SignReview(const ReviewKeyFile& key, const ItemId& item, int rating,
                                          std::string_view text, const PostOptions& options);
  // The relay's side: a review signed elsewhere is checked (item, open window, the item's ring
  // open on the ledger and of the stated size, tag unused, the ring signature verifies over
  // it) and then submitted.
  // INVALID_ARGUMENT for a review that does not verify or is over another ring; the other
  // errors as PostReview.
  Status SubmitSignedReview(const onchain::ReviewBatch& review, const PostOptions& options);
  // Writes a fresh review key file (refuses to overwrite one), submits the identity's signed
  // KeyRequest for `epoch` and, with `wait`, waits until it is committed.
  Status RequestKey(const ledger::net::Identity& identity, const ledger::KeyPair& citizen,
                    uint64_t epoch, const std::filesystem::path& key_file, bool wait = true);
  // Waits for the issuer's blind signature, unblinds and verifies it (saving the credential),
  // then registers the key anonymously and waits until the registration is committed.
  Status CompleteKey(const std::filesystem::path& key_file);
  // The same for many key files at once: one wait for all issues, then every registration
  // submitted before one wait for all of them (how a load generator gets many keys quickly).
  Status CompleteKeys(const std::vector<std::filesystem::path>& key_files);

  // How many front-run proofs the ledger holds for `epoch`: each is evidence that the issuer
  // registered a key no request asked for (payload.h FrontRunProof). CompleteKey submits one
  // when it finds the epoch full without its key.
  Result<uint64_t> FrontRunProofs(uint64_t epoch);

  // ---- Building blocks for daemons ----
  Result<std::vector<std::optional<ledger::LeafValue>>> ReadLeaves(
      const std::vector<ledger::Hash256>& keys);
  Status Submit(const onchain::Payload& payload);

 private:
  ReviewsClient(ClientOptions options, ledger::net::Genesis genesis, ReviewsParams params);
  // light_->ReadLeaves, caught up and retried once when the client is still at the genesis
  // header (see client.cc). Requires mu_.
  Result<std::vector<std::optional<ledger::LeafValue>>> ProvedLeaves(
      const std::vector<ledger::Hash256>& keys);
  Status RefreshLocked(
      const std::function<void(uint64_t, const std::vector<onchain::Payload>&)>& on_block);
  Result<std::vector<urs::Point>> RegisteredKeysLocked(uint64_t epoch);
  Result<urs::Ring> EligibleRingLocked(const ItemId& item, uint64_t epoch);
  Result<std::optional<urs::Ring>> LedgerRingLocked(const ItemId& item, uint64_t epoch);
  Result<urs::Ring> OpenRingLocked(const ItemId& item, uint64_t epoch);
  Result<ItemView> GetItemLocked(const ItemId& item);
  Result<onchain::ItemRecord> ItemRecordLocked(const ItemId& item);
  // FAILED_PRECONDITION unless a key of `epoch` may review the item / the window is open now.
  Status CheckKeyForItem(const onchain::ItemRecord& rec, uint64_t epoch) const;
  Status CheckWindowOpen(uint64_t epoch) const;
  // Whether every key request of `epoch` has a registered key (proved counters).
  Result<bool> EpochIsFull(uint64_t epoch);
  // The epoch whose window an item created at `created_height` shows now.
  uint64_t WindowEpoch(uint64_t created_height) const;
  std::optional<metric::HijackResistance> Hijack(uint64_t keys, const onchain::Tally& t) const;
  // Polls (Refresh, then `done`) until `done` yields true or the timeout passes.
  Status WaitFor(std::string_view what, const std::function<Result<bool>()>& done);

  ClientOptions options_;
  ledger::net::Genesis genesis_;
  ReviewsParams params_;
  std::unique_ptr<ledger::net::LightClient> light_;
  ChainIndex index_;
  mutable std::recursive_mutex mu_;
};

// The proof a requester whose key the issuer front-ran submits (payload.h): opens the request's
// commitment with the request file's inverse and salt.
onchain::FrontRunProof MakeFrontRunProof(const ReviewKeyFile& key, const KeyRequestFile& request);

// The [apps.reviews] parameters of a genesis file, with the registrar taken from
// [chain] registrar when the table does not name one.
Result<ReviewsParams> ReviewsParamsFromGenesis(const ledger::net::Genesis& genesis);

}  // namespace tessera::reviews::client
