// The commands of reviews-net, the command line of reviews on a running ledger. Each takes an
// open client (client.h) and writes its human or JSON output to `out`:
//
//   reviews-net --genesis G create-item --name "espresso machine" --citizen-key K --identity I
//               (in the identity's namespace; at most items_per_epoch per identity and epoch)
//   reviews-net --genesis G get-key --citizen-key keys/citizen-3.key
//               --identity keys/citizen-3.id --out alice.key.json [--epoch E]
//               (request, wait for the issuer, register)
//   reviews-net --genesis G review --key alice.key.json --item "espresso machine"
//               --rating 5 --text "great" [--force]
//   (--item takes an item's name when one creator uses it, or its id: 64 hex digits)
//   reviews-net --genesis G sign-review --key alice.key.json (--item NAME | --item-id HEX)
//               --rating 5 --text "great" --out review.json
//               (signs on the user's side only; review.json holds no key: hand it to a relay)
//   reviews-net --genesis G submit --signed review.json      (what a relay does with it)
//   reviews-net --genesis G list [--json]
//   reviews-net --genesis G show --item "espresso machine" [--json]
//   reviews-net --genesis G verify-tally --item "espresso machine" [--reviews copy.json]
//
// verify-tally fails (exit 1) unless the reviews (from the blocks, or the local copy) replay
// exactly to the tally and chain leaves proved against the certified state root.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "core/status.h"
#include "reviews/client/client.h"

namespace tessera::reviews::net {

// The identity of a citizen's key files (citizen-<i>.key, citizen-<i>.id).
struct IdentityFiles {
  std::filesystem::path citizen_key;  // ledger key file of the identity
  std::filesystem::path identity;     // hex of the registrar-signed identity (citizen-<i>.id)
};
Status CreateItemCommand(client::ReviewsClient& c, const IdentityFiles& creator,
                         const std::string& name, bool wait, std::ostream& out);

struct GetKeyArgs {
  std::filesystem::path citizen_key;  // ledger key file of the identity
  std::filesystem::path identity;     // hex of the registrar-signed identity (citizen-<i>.id)
  std::filesystem::path out;          // the review key file (resumed if it exists)
  std::optional<uint64_t> epoch;      // default: the next epoch still open for requests
};
Status GetKeyCommand(client::ReviewsClient& c, const GetKeyArgs& args, std::ostream& out);

struct ReviewArgs {
  std::filesystem::path key;
  std::string item;  // name
  int rating = 0;
  std::string text;
  bool wait = true;
  bool force = false;  // skip the client's own double-review check (the ledger still rejects)
};
Status ReviewCommand(client::ReviewsClient& c, const ReviewArgs& args, std::ostream& out);

struct SignReviewArgs {
  std::filesystem::path key;
  std::string item;     // name, or
  std::string item_id;  // 64 hex digits
  int rating = 0;
  std::string text;
  std::filesystem::path out;
};
Status SignReviewCommand(client::ReviewsClient& c, const SignReviewArgs& args, std::ostream& out);
Status SubmitCommand(client::ReviewsClient& c, const std::filesystem::path& signed_review,
                     bool wait, std::ostream& out);

Status ListCommand(client::ReviewsClient& c, bool json, std::ostream& out);
Status ShowCommand(client::ReviewsClient& c, const std::string& item, bool json, std::ostream& out);
Status VerifyTallyCommand(client::ReviewsClient& c, const std::string& item,
                          const std::optional<std::filesystem::path>& local_copy,
                          std::ostream& out);

}  // namespace tessera::reviews::net
