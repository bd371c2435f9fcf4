#include "reviews/net/commands.h"

#include <fmt/format.h>

#include "core/file.h"
#include "ledger/crypto/key_file.h"
#include "reviews/client/key_file.h"
#include "reviews/client/signed_review.h"
#include "reviews/net/item_json.h"

namespace tessera::reviews::net {
namespace {

std::string HijackText(const client::ItemSummary& s, uint64_t k) {
  if (!s.hijack) return "n/a (no review keys yet)";
  if (!s.hijack->feasible) {
    return fmt::format("infeasible with N={} keys (k={})", s.registered_keys, k);
  }
  return fmt::format("{} identities to shift by 0.5 (without DRAC {}; N={}, k={})",
                     s.hijack->identities_with_drac, s.hijack->identities_without_drac,
                     s.registered_keys, k);
}

}  // namespace

static Result<std::pair<ledger::net::Identity, ledger::KeyPair>> ReadIdentity(
    const IdentityFiles& files) {
  TESSERA_ASSIGN_OR_RETURN(ledger::KeyPair citizen, ledger::ReadSecretKeyFile(files.citizen_key));
  TESSERA_ASSIGN_OR_RETURN(std::string id_hex, ReadFile(files.identity));
  while (!id_hex.empty() && std::isspace(static_cast<unsigned char>(id_hex.back()))) {
    id_hex.pop_back();
  }
  TESSERA_ASSIGN_OR_RETURN(Bytes id_bytes, FromHex(id_hex));
  auto identity = ledger::net::DecodeIdentity(id_bytes);
  if (!identity.ok()) return identity.status().WithContext(files.identity.string());
  return std::make_pair(*identity, citizen);
}

Status CreateItemCommand(client::ReviewsClient& c, const IdentityFiles& creator,
                         const std::string& name, bool wait, std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(auto identity, ReadIdentity(creator));
  TESSERA_ASSIGN_OR_RETURN(onchain::ItemId id,
                           c.CreateItem(identity.first, identity.second, name, wait));
  out << (wait ? "created" : "submitted") << " item '" << name << "' " << ToHex(id) << "\n";
  return Status::Ok();
}

Status GetKeyCommand(client::ReviewsClient& c, const GetKeyArgs& args, std::ostream& out) {
  if (!std::filesystem::exists(args.out)) {
    TESSERA_ASSIGN_OR_RETURN(auto id_and_key, ReadIdentity({args.citizen_key, args.identity}));
    const ledger::net::Identity* identity = &id_and_key.first;
    const ledger::KeyPair& citizen = id_and_key.second;
    TESSERA_RETURN_IF_ERROR(c.Refresh());
    // Room for the issue and a registration drawn up to 4 blocks before the close.
    uint64_t epoch = args.epoch.value_or(c.NextKeyEpoch(/*margin_blocks=*/10));
    out << "requesting a review key for epoch " << epoch << " (requests close at height "
        << c.params().RegistrationClose(epoch) << ", now " << c.height() << ")\n";
    TESSERA_RETURN_IF_ERROR(c.RequestKey(*identity, citizen, epoch, args.out));
    out << "request committed; waiting for the issuer\n";
  } else {
    out << "resuming " << args.out.string() << "\n";
  }
  TESSERA_RETURN_IF_ERROR(c.CompleteKey(args.out));
  TESSERA_ASSIGN_OR_RETURN(client::ReviewKeyFile key, client::ReadKeyFile(args.out));
  out << "registered review key " << ToHex(key.review.public_key) << " for epoch " << key.epoch
      << " in " << args.out.string() << "\n";
  return Status::Ok();
}

Status ReviewCommand(client::ReviewsClient& c, const ReviewArgs& args, std::ostream& out) {
  client::PostOptions options{args.wait, args.force};
  TESSERA_RETURN_IF_ERROR(c.Refresh());
  TESSERA_ASSIGN_OR_RETURN(const onchain::ItemId id, c.ResolveItem(args.item));
  TESSERA_RETURN_IF_ERROR(c.PostReview(args.key, id, args.rating, args.text, options));
  out << (args.wait ? "committed" : "submitted") << " review of '" << args.item << "' ("
      << args.rating << "/5)\n";
  return Status::Ok();
}

Status SignReviewCommand(client::ReviewsClient& c, const SignReviewArgs& args, std::ostream& out) {
  onchain::ItemId id{};
  if (!args.item_id.empty()) {
    auto parsed = ArrayFromHex<32>(args.item_id);
    if (!parsed.ok()) return InvalidArgumentError("--item-id: " + parsed.status().message());
    id = *parsed;
  } else {
    TESSERA_RETURN_IF_ERROR(c.Refresh());
    TESSERA_ASSIGN_OR_RETURN(id, c.ResolveItem(args.item));
  }
  auto key = client::ReadKeyFile(args.key);
  if (!key.ok()) return key.status();
  TESSERA_ASSIGN_OR_RETURN(onchain::ReviewBatch review,
                           c.SignReview(*key, id, args.rating, args.text, {}));
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(args.out, client::EncodeSignedReview(review)));
  out << "signed review of " << ToHex(id) << " (" << args.rating << "/5, ring of "
      << review.ring_size << ") in " << args.out.string()
      << ": it holds no key; post it on the web page or with `submit`\n";
  return Status::Ok();
}

Status SubmitCommand(client::ReviewsClient& c, const std::filesystem::path& signed_review,
                     bool wait, std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(signed_review));
  auto review = client::DecodeSignedReview(text);
  if (!review.ok()) return review.status().WithContext(signed_review.string());
  TESSERA_RETURN_IF_ERROR(c.SubmitSignedReview(*review, client::PostOptions{.wait = wait}));
  out << (wait ? "committed" : "submitted") << " the signed review of " << ToHex(review->item)
      << "\n";
  return Status::Ok();
}

Status ListCommand(client::ReviewsClient& c, bool json, std::ostream& out) {
  TESSERA_RETURN_IF_ERROR(c.Refresh());
  TESSERA_ASSIGN_OR_RETURN(auto items, c.ListItems());
  const uint64_t k = c.params().ring_size;
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : items) list.push_back(SummaryToJson(s, k));
    out << nlohmann::json{{"height", c.height()}, {"items", list}}.dump(2) << "\n";
    return Status::Ok();
  }
  out << fmt::format("height {}, {} items (tallies proved against the certified state)\n",
                     c.height(), items.size());
  for (const auto& s : items) {
    out << fmt::format(
        "  {:<28} by {}  reviews {:>3}  mean {:.2f}  open from epoch {}  hijack: {}\n", s.name,
        ToHex(s.creator).substr(0, 8), s.tally.count(), s.tally.mean(), s.first_review_epoch,
        HijackText(s, k));
  }
  return Status::Ok();
}

Status ShowCommand(client::ReviewsClient& c, const std::string& item, bool json,
                   std::ostream& out) {
  TESSERA_RETURN_IF_ERROR(c.Refresh());
  TESSERA_ASSIGN_OR_RETURN(const onchain::ItemId id, c.ResolveItem(item));
  TESSERA_ASSIGN_OR_RETURN(client::ItemView v, c.GetItem(id));
  if (json) {
    out << ItemToJson(v, c.params().ring_size).dump(2) << "\n";
    return Status::Ok();
  }
  const auto& s = v.summary;
  out << fmt::format("{} ({})\n  {} reviews, mean {:.2f}, histogram 1..5: {} {} {} {} {}\n", s.name,
                     ToHex(s.id), s.tally.count(), s.tally.mean(), s.tally.histogram[0],
                     s.tally.histogram[1], s.tally.histogram[2], s.tally.histogram[3],
                     s.tally.histogram[4]);
  out << "  hijack resistance: " << HijackText(s, c.params().ring_size) << "\n";
  out << "  verified against the certified state: "
      << (v.verified.ok() ? "yes" : "NO: " + v.verified.message()) << "\n";
  for (const auto& r : v.reviews) {
    out << fmt::format("  [{}] {}/5  {}   (height {}, ring of {})\n",
                       ToHex(r.entry.signature.tag).substr(0, 8), r.entry.rating, r.entry.text,
                       r.height, r.ring_size);
  }
  return Status::Ok();
}

Status VerifyTallyCommand(client::ReviewsClient& c, const std::string& item,
                          const std::optional<std::filesystem::path>& local_copy,
                          std::ostream& out) {
  TESSERA_RETURN_IF_ERROR(c.Refresh());
  TESSERA_ASSIGN_OR_RETURN(const onchain::ItemId id, c.ResolveItem(item));
  if (local_copy) {
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(*local_copy));
    auto local = ReviewsFromJson(text);
    if (!local.ok()) return local.status().WithContext(local_copy->string());
    if (local->item != id) {
      return InvalidArgumentError(local_copy->string() + " holds reviews of another item");
    }
    TESSERA_RETURN_IF_ERROR(c.VerifyReviews(id, local->reviews));
    out << "OK: the " << local->reviews.size() << " reviews in " << local_copy->string()
        << " are exactly the committed reviews of '" << item << "' at height " << c.height()
        << "\n";
    return Status::Ok();
  }
  TESSERA_ASSIGN_OR_RETURN(client::ItemView v, c.GetItem(id));
  TESSERA_RETURN_IF_ERROR(v.verified);
  out << fmt::format(
      "OK: '{}' has {} reviews summing to {} (mean {:.2f}); the reviews in the blocks replay to "
      "the proved tally and chain at height {}\n",
      item, v.summary.tally.count(), v.summary.tally.sum(), v.summary.tally.mean(), c.height());
  return Status::Ok();
}

}  // namespace tessera::reviews::net
