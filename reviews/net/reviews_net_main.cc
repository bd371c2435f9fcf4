// reviews-net: reviews on a running ledger (commands.h).
#include <iostream>

#include "core/cli.h"
#include "reviews/net/commands.h"

int main(int argc, char** argv) {
  using namespace tessera::reviews;
  tessera::cli::Program program(
      "reviews-net", "Anonymous, hijack-resistant reviews on a running ledger (TrustRate).");
  CLI::App& app = program.app();
  client::ClientOptions options;
  std::string genesis, checkpoint = "reviews-net.ckpt";
  double timeout_s = 120;
  app.add_option("--genesis", genesis, "The chain's genesis file")->required();
  app.add_option("--checkpoint", checkpoint, "Light-client checkpoint file");
  app.add_option("--timeout-s", timeout_s, "How long to wait for a commit")
      ->check(CLI::Range(1.0, 3600.0));
  app.require_subcommand(1);

  std::string name;
  bool no_wait = false, json = false;
  net::IdentityFiles creator;
  auto* create = app.add_subcommand("create-item", "Create an item in an identity's namespace");
  create->add_option("--name", name, "Item name (1..128 bytes UTF-8)")->required();
  create->add_option("--citizen-key", creator.citizen_key, "The creator's ledger key file")
      ->required();
  create->add_option("--identity", creator.identity, "The creator's registrar-signed identity")
      ->required();
  create->add_flag("--no-wait", no_wait, "Return once submitted");

  net::GetKeyArgs key_args;
  std::string citizen_key, identity, key_out;
  uint64_t epoch = 0;
  auto* get_key = app.add_subcommand("get-key", "Get a review key for an identity");
  get_key->add_option("--citizen-key", citizen_key, "The identity's ledger key file")->required();
  get_key->add_option("--identity", identity, "The registrar-signed identity (hex file)")
      ->required();
  get_key->add_option("--out", key_out, "Review key file to write (resumed if it exists)")
      ->required();
  auto* epoch_opt = get_key->add_option("--epoch", epoch, "Epoch (default: next open one)");
  uint64_t delay_blocks = 0;
  auto* delay_opt = get_key->add_option(
      "--register-delay-blocks", delay_blocks,
      "Register at most N blocks after the issuer's answer (default: at a height drawn "
      "uniformly up to the registration close; 0 registers at once and is linkable by timing)");

  net::ReviewArgs review_args;
  auto* review = app.add_subcommand("review", "Review an item");
  review->add_option("--key", review_args.key, "Review key file")->required();
  review->add_option("--item", review_args.item, "Item name or id")->required();
  review->add_option("--rating", review_args.rating, "1..5")->required()->check(CLI::Range(1, 5));
  review->add_option("--text", review_args.text, "Review text (at most 1000 bytes)");
  review->add_flag("--no-wait", no_wait, "Return once submitted");
  review->add_flag("--force", review_args.force,
                   "Submit even if this key already reviewed the item (the ledger rejects it)");

  net::SignReviewArgs sign_args;
  auto* sign = app.add_subcommand(
      "sign-review", "Sign a review with your key, on your side only (for a web page to relay)");
  sign->add_option("--key", sign_args.key, "Review key file")->required();
  auto* sign_item = sign->add_option("--item", sign_args.item, "Item name");
  sign->add_option("--item-id", sign_args.item_id, "Item id (64 hex digits)")->excludes(sign_item);
  sign->add_option("--rating", sign_args.rating, "1..5")->required()->check(CLI::Range(1, 5));
  sign->add_option("--text", sign_args.text, "Review text (at most 1000 bytes)");
  sign->add_option("--out", sign_args.out, "The signed review file to write")->required();

  std::string signed_path;
  auto* submit = app.add_subcommand("submit", "Submit a signed review (what a relay does)");
  submit->add_option("--signed", signed_path, "Signed review file")->required();
  submit->add_flag("--no-wait", no_wait, "Return once submitted");

  auto* list = app.add_subcommand("list", "List items with proved tallies");
  list->add_flag("--json", json, "JSON output");

  auto* show = app.add_subcommand("show", "Show an item's verified reviews");
  show->add_option("--item", name, "Item name or id")->required();
  show->add_flag("--json", json, "JSON output (input of verify-tally --reviews)");

  std::string local;
  auto* verify = app.add_subcommand("verify-tally", "Verify an item's reviews against proofs");
  verify->add_option("--item", name, "Item name or id")->required();
  verify->add_option("--reviews", local, "A local copy (show --json) to verify instead");

  return program.Run(argc, argv, [&]() -> tessera::Status {
    options.genesis = genesis;
    options.checkpoint = checkpoint;
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    if (delay_opt->count() > 0) options.register_delay_blocks = delay_blocks;
    TESSERA_ASSIGN_OR_RETURN(auto c, client::ReviewsClient::Open(options));
    if (create->parsed()) return net::CreateItemCommand(*c, creator, name, !no_wait, std::cout);
    if (get_key->parsed()) {
      key_args.citizen_key = citizen_key;
      key_args.identity = identity;
      key_args.out = key_out;
      if (epoch_opt->count() > 0) key_args.epoch = epoch;
      return net::GetKeyCommand(*c, key_args, std::cout);
    }
    if (review->parsed()) {
      review_args.wait = !no_wait;
      return net::ReviewCommand(*c, review_args, std::cout);
    }
    if (sign->parsed()) {
      if (sign_args.item.empty() == sign_args.item_id.empty()) {
        return tessera::cli::UsageError("usage: sign-review needs --item or --item-id");
      }
      return net::SignReviewCommand(*c, sign_args, std::cout);
    }
    if (submit->parsed()) return net::SubmitCommand(*c, signed_path, !no_wait, std::cout);
    if (list->parsed()) return net::ListCommand(*c, json, std::cout);
    if (show->parsed()) return net::ShowCommand(*c, name, json, std::cout);
    std::optional<std::filesystem::path> copy;
    if (!local.empty()) copy = local;
    return net::VerifyTallyCommand(*c, name, copy, std::cout);
  });
}
