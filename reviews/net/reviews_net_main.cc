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
  auto* create = app.add_subcommand("create-item", "Create an item");
  create->add_option("--name", name, "Item name (1..128 bytes UTF-8)")->required();
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
  get_key->add_option("--register-delay-blocks", options.register_delay_blocks,
                      "Wait a random 0..N blocks between issuance and the anonymous "
                      "registration (timing unlinkability)");

  net::ReviewArgs review_args;
  auto* review = app.add_subcommand("review", "Review an item");
  review->add_option("--key", review_args.key, "Review key file")->required();
  review->add_option("--item", review_args.item, "Item name")->required();
  review->add_option("--rating", review_args.rating, "1..5")->required()->check(CLI::Range(1, 5));
  review->add_option("--text", review_args.text, "Review text (at most 1000 bytes)");
  review->add_flag("--no-wait", no_wait, "Return once submitted");
  review->add_flag("--force", review_args.force,
                   "Submit even if this key already reviewed the item (the ledger rejects it)");

  auto* list = app.add_subcommand("list", "List items with proved tallies");
  list->add_flag("--json", json, "JSON output");

  auto* show = app.add_subcommand("show", "Show an item's verified reviews");
  show->add_option("--item", name, "Item name")->required();
  show->add_flag("--json", json, "JSON output (input of verify-tally --reviews)");

  std::string local;
  auto* verify = app.add_subcommand("verify-tally", "Verify an item's reviews against proofs");
  verify->add_option("--item", name, "Item name")->required();
  verify->add_option("--reviews", local, "A local copy (show --json) to verify instead");

  return program.Run(argc, argv, [&]() -> tessera::Status {
    options.genesis = genesis;
    options.checkpoint = checkpoint;
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    TESSERA_ASSIGN_OR_RETURN(auto c, client::ReviewsClient::Open(options));
    if (create->parsed()) return net::CreateItemCommand(*c, name, !no_wait, std::cout);
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
    if (list->parsed()) return net::ListCommand(*c, json, std::cout);
    if (show->parsed()) return net::ShowCommand(*c, name, json, std::cout);
    std::optional<std::filesystem::path> copy;
    if (!local.empty()) copy = local;
    return net::VerifyTallyCommand(*c, name, copy, std::cout);
  });
}
