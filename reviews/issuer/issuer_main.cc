// reviews-issuer: the key issuer daemon (issuer.h). Runs until SIGINT/SIGTERM.
#include "core/cli.h"
#include "core/stop_signal.h"
#include "reviews/issuer/issuer.h"

int main(int argc, char** argv) {
  using namespace tessera::reviews;
  tessera::cli::Program program(
      "reviews-issuer",
      "Answers every committed review-key request with an RFC 9474 blind signature.");
  issuer::IssuerOptions options;
  std::string genesis, key, checkpoint = "reviews-issuer.ckpt";
  int poll_ms = 300;
  program.app().add_option("--genesis", genesis, "The chain's genesis file")->required();
  program.app().add_option("--issuer-key", key, "RSA secret key (PEM)")->required();
  program.app().add_option("--checkpoint", checkpoint, "Light-client checkpoint file");
  program.app()
      .add_option("--poll-ms", poll_ms, "Milliseconds between steps")
      ->check(CLI::Range(10, 60000));
  return program.Run(argc, argv, [&]() -> tessera::Status {
    options.client.genesis = genesis;
    options.client.checkpoint = checkpoint;
    options.secret_key = key;
    options.poll = std::chrono::milliseconds(poll_ms);
    TESSERA_ASSIGN_OR_RETURN(auto issuer, issuer::Issuer::Open(options));
    return issuer->Run(tessera::StopOnSignals());
  });
}
