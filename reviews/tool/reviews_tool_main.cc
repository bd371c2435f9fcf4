// reviews-tool: the reviews system's cryptography on files. See reviews/tool/commands.h for the
// file formats and docs/reviews.md for a walk-through.
#include <iostream>

#include "core/cli.h"
#include "reviews/tool/commands.h"

int main(int argc, char** argv) {
  using namespace tessera;
  namespace t = reviews::tool;
  cli::Program program("reviews-tool",
                       "Anonymous review keys (RFC 9474 blind signatures), DRAC rings, unique "
                       "ring signatures and hijack-resistance, on files.");
  CLI::App& app = program.app();
  // At most one subcommand; none is a usage error reported by the body, so that an unknown
  // flag is reported as such (scripts/check_cli).
  app.require_subcommand(0, 1);
  std::function<Status()> action;

  int bits = 2048;
  std::string secret, pub, key, request, state, response, identity, log, credential, registry, item,
      seed, ring, review, text;
  uint64_t epoch = 0, k = 50, identities = 10000, honest = 100;
  int rating = 0;
  double mean = 4.0, delta = 0.5;
  bool fail_on_duplicate = false;
  std::vector<std::string> reviews_in;

  auto* c = app.add_subcommand("issuer-keygen", "Create the identity issuer's RSA key pair");
  c->add_option("--bits", bits, "Modulus size")->capture_default_str();
  c->add_option("--secret-out", secret, "Secret key (PEM, mode 0600)")->required();
  c->add_option("--public-out", pub, "Public key (PEM)")->required();
  c->callback([&] { action = [&] { return t::IssuerKeygen(bits, secret, pub, std::cout); }; });

  c = app.add_subcommand("review-keygen", "Create a fresh review key for an epoch");
  c->add_option("--epoch", epoch, "Epoch")->required();
  c->add_option("--out", key, "Review key file (mode 0600)")->required();
  c->callback([&] { action = [&] { return t::ReviewKeygen(epoch, key, std::cout); }; });

  c = app.add_subcommand("blind", "Client: blind a review key for the issuer");
  c->add_option("--issuer-public", pub, "Issuer public key (PEM)")->required();
  c->add_option("--key", key, "Review key file")->required();
  c->add_option("--request-out", request, "Blinded request for the issuer")->required();
  c->add_option("--state-out", state, "Client secret state (keep it)")->required();
  c->callback(
      [&] { action = [&] { return t::BlindRequest(pub, key, request, state, std::cout); }; });

  c = app.add_subcommand("blind-sign", "Issuer: sign a blinded request, once per identity");
  c->add_option("--issuer-secret", secret, "Issuer secret key (PEM)")->required();
  c->add_option("--request", request, "Blinded request")->required();
  c->add_option("--identity", identity, "The registered identity asking")->required();
  c->add_option("--issued-log", log, "Issuance log (created if missing)")->required();
  c->add_option("--response-out", response, "Blind signature for the client")->required();
  c->callback([&] {
    action = [&] {
      return t::BlindSignRequest(secret, request, identity, log, response, std::cout);
    };
  });

  c = app.add_subcommand("finalize", "Client: unblind and verify, producing a credential");
  c->add_option("--issuer-public", pub, "Issuer public key (PEM)")->required();
  c->add_option("--state", state, "Client state from 'blind'")->required();
  c->add_option("--response", response, "Issuer response")->required();
  c->add_option("--credential-out", credential, "Credential to register")->required();
  c->callback([&] {
    action = [&] { return t::FinalizeCredential(pub, state, response, credential, std::cout); };
  });

  c = app.add_subcommand("register", "Verify a credential and add it to the registry");
  c->add_option("--issuer-public", pub, "Issuer public key (PEM)")->required();
  c->add_option("--credential", credential, "Credential")->required();
  c->add_option("--registry", registry, "Registry file (created if missing)")->required();
  c->callback([&] { action = [&] { return t::Register(pub, credential, registry, std::cout); }; });

  c = app.add_subcommand("ring", "Compute an item's eligible ring (DRAC lottery)");
  c->add_option("--issuer-public", pub, "Issuer public key (PEM)")->required();
  c->add_option("--registry", registry, "Registry file")->required();
  c->add_option("--item", item, "Item id")->required();
  c->add_option("--seed", seed, "Epoch seed, 64 hex characters")->required();
  c->add_option("--k", k, "Expected ring size")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--out", ring, "Ring file")->required();
  c->callback([&] {
    action = [&] { return t::ComputeRing(pub, registry, item, seed, k, ring, std::cout); };
  });

  c = app.add_subcommand("sign", "Sign a review with a unique ring signature");
  c->add_option("--key", key, "Review key file")->required();
  c->add_option("--ring", ring, "Ring file of the item")->required();
  c->add_option("--rating", rating, "Rating 1-5")->required()->check(CLI::Range(1, 5));
  c->add_option("--text", text, "Review text");
  c->add_option("--out", review, "Review file")->required();
  c->callback([&] {
    action = [&] { return t::SignReviewFile(key, ring, rating, text, review, std::cout); };
  });

  c = app.add_subcommand("verify", "Verify a review against its ring");
  c->add_option("--ring", ring, "Ring file")->required();
  c->add_option("--review", review, "Review file")->required();
  c->add_option("--registry", registry, "Also recompute the ring from this registry");
  c->add_option("--issuer-public", pub, "Issuer public key (needed with --registry)");
  c->callback([&] {
    action = [&]() -> Status {
      if (!registry.empty() && pub.empty()) {
        return cli::UsageError("usage: --registry needs --issuer-public");
      }
      return t::VerifyReviewFile(ring, review, pub, registry, std::cout);
    };
  });

  c = app.add_subcommand("duplicates", "Detect double reviews (same item, same tag)");
  c->add_option("reviews", reviews_in, "Review files")->required();
  c->add_flag("--fail-on-duplicate", fail_on_duplicate, "Exit 1 when a double review is found");
  c->callback([&] {
    action = [&] { return t::FindDuplicates(reviews_in, fail_on_duplicate, std::cout); };
  });

  c = app.add_subcommand("tally", "Tally an item's reviews (double reviews rejected)");
  c->add_option("--ring", ring, "Ring file of the item")->required();
  c->add_option("reviews", reviews_in, "Review files")->required();
  c->callback([&] { action = [&] { return t::Tally(ring, reviews_in, std::cout); }; });

  c = app.add_subcommand("hijack", "Hijack-resistance of an item from live parameters");
  c->add_option("--identities", identities, "Registered identities N")->capture_default_str();
  c->add_option("--k", k, "Expected ring size")->capture_default_str();
  c->add_option("--honest-reviews", honest, "Reviews so far")->capture_default_str();
  c->add_option("--mean", mean, "Their mean rating")->capture_default_str();
  c->add_option("--delta", delta, "Shift to resist")->capture_default_str();
  c->callback(
      [&] { action = [&] { return t::Hijack(identities, k, honest, mean, delta, std::cout); }; });

  return program.Run(argc, argv, [&]() -> Status {
    if (!action) return cli::UsageError("usage: a subcommand is required (see --help)");
    return action();
  });
}
