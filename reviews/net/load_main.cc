// reviews-load: review load on a running local network; prints a JSON report (load.h).
#include <iostream>

#include "core/cli.h"
#include "core/file.h"
#include "reviews/net/load.h"

int main(int argc, char** argv) {
  using namespace tessera::reviews;
  tessera::cli::Program program("reviews-load",
                                "Gets review keys for many identities, creates items, posts every "
                                "allowed review and measures reviews committed per second.");
  net::LoadOptions o;
  std::string genesis, key_dir, work_dir = "reviews-load", report_path;
  int poll_ms = 100;
  double timeout_s = 300;
  program.app().add_option("--genesis", genesis, "The chain's genesis file")->required();
  program.app().add_option("--keys", key_dir, "ledger-localnet's keys directory")->required();
  program.app().add_option("--work", work_dir, "Directory for review key files");
  program.app()
      .add_option("--identities", o.identities, "Identities that get keys")
      ->check(CLI::Range(1, 100000));
  program.app().add_option("--items", o.items, "Items to create")->check(CLI::Range(1, 100000));
  program.app()
      .add_option("--poll-ms", poll_ms, "Commit polling interval")
      ->check(CLI::Range(10, 10000));
  program.app()
      .add_option("--timeout-s", timeout_s, "Longest wait for any phase")
      ->check(CLI::Range(1.0, 86400.0));
  program.app()
      .add_option("--fanout", o.fanout,
                  "Politicians each review is sent to (the transfer load generator's fanout)")
      ->check(CLI::Range(1, 1000));
  program.app()
      .add_option("--submitters", o.submitters, "Threads submitting reviews")
      ->check(CLI::Range(1, 256));
  program.app()
      .add_option("--transfers", o.transfers,
                  "Transfers sent right before and right after the reviews on this network, "
                  "each phase from its own genesis accounts (0: none)")
      ->check(CLI::Range(0, 1000000));
  program.app().add_option("--report", report_path, "Also write the JSON report here");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    o.client.genesis = genesis;
    o.client.checkpoint = std::filesystem::path(work_dir) / "client.ckpt";
    o.client.poll = std::chrono::milliseconds(poll_ms);
    o.client.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    o.key_dir = key_dir;
    o.work_dir = work_dir;
    TESSERA_ASSIGN_OR_RETURN(net::LoadReport r, net::RunReviewLoad(o, std::cerr));
    std::cout << r.ToJson() << "\n";
    if (!report_path.empty()) {
      TESSERA_RETURN_IF_ERROR(tessera::WriteFileAtomically(report_path, r.ToJson() + "\n"));
    }
    return tessera::Status::Ok();
  });
}
