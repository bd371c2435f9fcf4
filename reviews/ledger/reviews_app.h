// The reviews application: TrustRate's anonymous, hijack-resistant reviews executed inside
// the ledger's state transition (ledger/state/application.h). Payloads: payload.h; leaves:
// state_layout.h; the whole design: docs/reviews.md, "On the ledger".
//
// Parameters, from the genesis file's [apps.reviews] table:
//   issuer_public = "<hex>"   the key issuer's RSA public key, DER SubjectPublicKeyInfo
//   registrar     = "<hex>"   the chain's identity registrar (Ed25519), who vouches for the
//                             identities that may ask for review keys
//   ring_size     = 50        k: expected DRAC ring size
//   epoch_blocks  = 100       E: blocks per epoch; the epoch of height h is h / E
//   items_per_epoch = 16      items one identity may create per epoch
//   mempool_percent = 50      the share of a politician's mempool reviews transactions may take
//
// Rules (each is a unit test in reviews_app_test.cc):
//   CreateItem   identity signed by the registrar and registered by now, creation signed by the
//                identity, the name new in the identity's namespace (ItemIdOf(creator, name)),
//                at most items_per_epoch creations by the identity this epoch; records the
//                creation epoch c. The item is reviewable in every epoch e >= c + 2 (rolling
//                windows, a fresh DRAC ring per epoch): seed_e comes from block e*E - 1, after
//                every item reviewable in e was created, so nobody can grind names against a
//                known seed.
//   KeyRequest   identity signed by the registrar and registered by now, request signed by
//                the identity, height < RegistrationClose(e), one per (identity, epoch).
//   KeyIssue     a request exists with this blinded message and none was answered, and
//                blind_sig^e = blinded_msg (mod n) under issuer_public.
//   RegisterKey  height < RegistrationClose(e), credential verifies under issuer_public (RFC
//                9474 PSS-Randomized), key new for e, registered(e) < requested(e).
//   FrontRunProof  a committed, answered request of this identity for e, not proven before;
//                the key is not registered and registered(e) >= requested(e); the opening
//                matches the request's commitment and the credential signs the committed
//                message. Records the evidence (front-run count of e) and, before the close,
//                registers the key beyond the count (payload.h explains why this is sound).
//   RingOpen     (anyone) e is the current epoch and the item's window; seed_e recorded; the
//                ring not open yet; the part continues the opening where the last one stopped
//                (keys listed, keys strictly above the last listed); every listed key is
//                registered for e; `member_offset` and `members` are the ring's size before and
//                after the part, min(k, keys listed). Rewrites the ring member leaves with the
//                k lowest DRAC lottery values (drac::Rank, seed_e) among the ring so far and the
//                part's keys; the part that lists the N_e-th key records the ring's size,
//                min(k, N_e). N_e distinct registered keys listed = every registered key, so
//                the ring is exactly the k-key draw (drac::EligibleKeys), computed by the ledger.
//   Reviews      epoch e is the current epoch and e >= c + 2 (the item's rolling window), the
//                item's ring for e is open and has exactly ring_size members, each signature
//                verifies over that ring (read from state, not from the payload), each tag
//                unused. A review signed over any other ring (one key fewer, one more) fails
//                its signature check. Reviews of a batch are applied one by one: one failing a
//                state rule is skipped, the others count (so Coalesce is exact).
// Signature checks (registrar, identity, RSA, URS) are skipped when verify_crypto is false and
// reported with crypto_failure when they fail. BeginBlock records seed_e at height e * E.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <variant>

#include "core/once_cache.h"
#include "core/status.h"
#include "ledger/state/application.h"
#include "reviews/blind/blind_rsa.h"
#include "reviews/ledger/payload.h"
#include "reviews/ledger/state_layout.h"

namespace tessera::reviews {

inline constexpr uint8_t kReviewsAppId = 1;  // name "reviews"
inline constexpr std::string_view kReviewsAppName = "reviews";

struct ReviewsParams {
  blind::PublicKey issuer;
  ledger::PublicKey registrar{};
  uint64_t ring_size = 50;      // k
  uint64_t epoch_blocks = 100;  // E
  uint64_t items_per_epoch = 16;
  uint64_t mempool_percent = 50;

  uint64_t EpochOf(uint64_t height) const { return height / epoch_blocks; }
  // Requests and registrations for epoch e are accepted at heights below this: one full epoch
  // before e starts, so seed_e (from block e*E - 1) is drawn after the key set is fixed.
  uint64_t RegistrationClose(uint64_t epoch) const {
    return epoch == 0 ? 0 : (epoch - 1) * epoch_blocks;
  }
};

// INVALID_ARGUMENT naming the missing or malformed parameter.
Result<ReviewsParams> ParseReviewsParams(const ledger::AppParams& params);

// hex of the DER SubjectPublicKeyInfo of an issuer key (what issuer_public holds), and back.
Result<std::string> IssuerPublicToHex(const blind::PublicKey& key);
Result<blind::PublicKey> IssuerPublicFromHex(std::string_view hex);

// How much ring-signature work a node's reviews application did.
struct ReviewsAppStats {
  uint64_t ring_verifications = 0;  // URS verifications run
  uint64_t cache_hits = 0;          // reviews found already verified (no verification run)
  uint64_t joined = 0;              // reviews another thread was verifying: its result taken
};

// The reviews this node already verified (bounded, oldest forgotten first), so a node verifies
// a review once although it checks it at admission, again when it builds and executes the
// block, on every re-admission after a failed round, and in each of its citizens' sampled
// validations (a citizen daemon runs many citizens over one application). Only successful
// verifications are kept, keyed by the review's record hash (everything the signature covers,
// and the signature): a hit is exactly the verdict verifying again would give. Verifications
// in flight are shared too: a thread asking for a review another thread is verifying waits for
// that result (success or failure) instead of verifying it a second time.
class VerifiedReviewCache {
 public:
  explicit VerifiedReviewCache(size_t capacity = 1 << 16) : verified_(capacity) {}

  // OK at once when `record` was verified before; else the result of the verification of it
  // in flight in another thread, if any; else runs `verify` (outside the lock), keeps `record`
  // when it succeeds and returns its result.
  Status VerifyOnce(const ledger::Hash256& record, const std::function<Status()>& verify);
  ReviewsAppStats stats() const;

 private:
  OnceCache<ledger::Hash256, std::monostate> verified_;
};

// The stats of a reviews application (zeros for another application).
ReviewsAppStats StatsOf(const ledger::Application& app);

// The RingOpen parts that open `item`'s ring for `epoch`, given every key registered for the
// epoch (any order) and seed_e, resuming after `done` (the ring progress leaf). Parts list at
// most `keys_per_part` keys each and must be committed in order. Empty when nothing is left.
Result<std::vector<onchain::RingOpen>> PlanRingOpen(
    const ReviewsParams& params, const onchain::ItemId& item, uint64_t epoch,
    std::vector<urs::Point> registered, const ledger::Hash256& seed,
    const onchain::RingProgress& done = {}, size_t keys_per_part = onchain::kMaxRingOpenKeys);

std::shared_ptr<const ledger::Application> MakeReviewsApp(ReviewsParams params);
Result<std::shared_ptr<const ledger::Application>> MakeReviewsApp(const ledger::AppParams& params);

}  // namespace tessera::reviews
