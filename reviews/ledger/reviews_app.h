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
//
// Rules (each is a unit test in reviews_app_test.cc):
//   CreateItem   name new; records the creation epoch c; the item's review window is c + 1.
//   KeyRequest   identity signed by the registrar and registered by now, request signed by
//                the identity, height < RegistrationClose(e), one per (identity, epoch).
//   KeyIssue     a request exists with this blinded message and none was answered, and
//                blind_sig^e = blinded_msg (mod n) under issuer_public.
//   RegisterKey  height < RegistrationClose(e), credential verifies under issuer_public (RFC
//                9474 PSS-Randomized), key new for e, registered(e) < requested(e).
//   Reviews      epoch e is the current epoch and the item's window, every ring member is a
//                key registered for e that wins the DRAC lottery for (item, e, seed_e) with
//                N_e = registered(e), each signature verifies over the ring, each tag unused.
//                Reviews of a batch are applied one by one: one failing a state rule is
//                skipped, the others count (so Coalesce is exact).
// Signature checks (registrar, identity, RSA, URS) are skipped when verify_crypto is false and
// reported with crypto_failure when they fail. BeginBlock records seed_e at height e * E.
#pragma once

#include <cstdint>
#include <memory>

#include "core/status.h"
#include "ledger/state/application.h"
#include "reviews/blind/blind_rsa.h"

namespace tessera::reviews {

inline constexpr uint8_t kReviewsAppId = 1;  // name "reviews"
inline constexpr std::string_view kReviewsAppName = "reviews";

struct ReviewsParams {
  blind::PublicKey issuer;
  ledger::PublicKey registrar{};
  uint64_t ring_size = 50;      // k
  uint64_t epoch_blocks = 100;  // E

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

std::shared_ptr<const ledger::Application> MakeReviewsApp(ReviewsParams params);
Result<std::shared_ptr<const ledger::Application>> MakeReviewsApp(const ledger::AppParams& params);

}  // namespace tessera::reviews
