// What the reviews web server shows and does, as an interface: the server renders pages from
// these records and never talks to the ledger itself. The shipped binary plugs in
// LedgerBackend (ledger_backend.h); tests plug in an in-memory double.
//
// Every text field here may come from an attacker (item names and review texts are written by
// anyone who can submit a transaction): the server escapes all of them before rendering.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::reviews::web {

// How many identities an adversary needs to shift the item's mean rating by `delta`
// (reviews/metric/hijack.h has the definition).
struct HijackView {
  bool known = false;     // false: not computable yet (e.g. no registered identities)
  bool feasible = false;  // false: no number of identities that exist achieves the shift
  double delta = 0.5;
  uint64_t identities_with_drac = 0;     // A_min(delta) with randomized eligibility
  uint64_t identities_without_drac = 0;  // t(delta): what it would take with everyone eligible
};

// Where an item's review window stands: reviews are accepted in one epoch only.
enum class Window { kUpcoming, kOpen, kClosed };

// "upcoming", "open", "closed".
std::string_view WindowName(Window window);

struct ItemSummary {
  std::string id;    // the item id reviews are signed over
  std::string name;  // a display name; the id when the item has none
  uint64_t review_count = 0;
  double mean_rating = 0;               // 0 when review_count == 0
  std::array<uint64_t, 5> histogram{};  // reviews with rating 1..5
  HijackView hijack;
  uint64_t epoch = 0;  // the review window's epoch
  Window window = Window::kUpcoming;
  // Whether the numbers and the reviews were verified against the ledger's proofs (the ledger
  // backend: the reviews replay to the proved tally and review chain); when false,
  // `verification` says why, and the page shows them as not verified.
  bool verified = false;
  std::string verification;
  uint64_t height = 0;  // the ledger height the numbers are proved at (0: not from a ledger)
};

struct ReviewView {
  int rating = 0;
  std::string text;
  std::string tag_hex;  // the unique-ring-signature tag: one per (key, item, epoch)
  uint64_t height = 0;  // the block that committed it
};

struct ItemDetail {
  ItemSummary summary;
  std::vector<ReviewView> reviews;
};

// The item's ring for the epoch open now, as the ledger holds it: what a page script signs over.
struct RingView {
  std::string item;  // 64 hex digits
  uint64_t epoch = 0;
  std::vector<std::string> members;  // hex, in the ledger's (sorted) order
};

// Calls may come from several HTTP threads at once: implementations synchronize themselves.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual Result<std::vector<ItemSummary>> ListItems() = 0;

  // NOT_FOUND for an unknown item, INVALID_ARGUMENT for an id that cannot name one.
  virtual Result<ItemDetail> GetItem(std::string_view id) = 0;

  // Relays a review the user's own client signed (`signed_review`: the contents of the file
  // reviews-net sign-review writes; reviews/client/signed_review.h) for the item `item_id`.
  // The backend checks it (the item, the window, the ring, the signature) before it submits it:
  // the server never holds a key. Returns a message for the user. Errors the page explains:
  // INVALID_ARGUMENT (not a signed review, for another item, over another ring, a signature
  // that does not verify), NOT_FOUND (unknown item), ALREADY_EXISTS (this key already reviewed
  // the item), FAILED_PRECONDITION (the review window is not open), UNAVAILABLE (the ledger is
  // unreachable).
  virtual Result<std::string> PostSignedReview(std::string_view item_id,
                                               std::string_view signed_review) = 0;

  // The item's ring for the current epoch (opened on the ledger first if nobody has: a
  // RingOpen, which holds no secret). NOT_FOUND, INVALID_ARGUMENT as GetItem;
  // FAILED_PRECONDITION when the item's reviews are not open now.
  virtual Result<RingView> GetRing(std::string_view item_id) = 0;
};

}  // namespace tessera::reviews::web
