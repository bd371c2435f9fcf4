// ledger-citizen: hosts a range of citizens of a network in one process.
#include "core/cli.h"
#include "core/stop_signal.h"
#include "ledger/net/citizen_daemon.h"

int main(int argc, char** argv) {
  using namespace tessera::ledger::net;
  tessera::cli::Program program("ledger-citizen",
                                "Runs many Blockene citizens (committee members) in one process.");
  std::string genesis_path, key_dir, stats, fault = "none";
  uint32_t first = 0, count = 1;
  CitizenTiming timing;
  program.app().add_option("--genesis", genesis_path, "Genesis TOML file")->required();
  program.app().add_option("--keys", key_dir, "Directory of citizen-<i>.key / .id")->required();
  program.app().add_option("--first", first, "First citizen index");
  program.app().add_option("--count", count, "Number of citizens")->check(CLI::Range(1u, 100000u));
  program.app().add_option("--fault", fault, "Citizen behaviour: none, silent, inconsistent");
  program.app().add_option("--stats", stats, "JSON stats file, rewritten every second");
  program.app().add_option("--poll-ms", timing.poll_ms, "Delay between sample reads");
  program.app()
      .add_option("--round-wait-ms", timing.round_wait_ms,
                  "Long-poll wait of a round listing (0: poll every --poll-ms)")
      ->check(CLI::Range(0, 5000));
  program.app().add_option("--witness-ms", timing.witness_ms, "Pool-collection window");
  program.app().add_option("--proposal-ms", timing.proposal_ms, "Proposal-collection window");
  program.app().add_option("--round-timeout-ms", timing.round_timeout_ms, "Round retry timeout");
  program.app()
      .add_option("--follow-wait-ms", timing.follow.wait_ms, "Long-poll wait for new heads")
      ->check(CLI::Range(0, 5000));
  program.app()
      .add_option("--certify-every", timing.follow.certify_every,
                  "Followed headers before the head's certificate is checked")
      ->check(CLI::Range(1u, 1000000u));
  program.app().add_flag("--split-proposals", timing.split_proposals,
                         "Test fault: see only the period-0 proposals of this citizen's half");
  program.app().add_flag(
      "--no-recovery", [&](int64_t) { timing.recovery = false; },
      "Test switch: BA* without next votes and periods");
  bool separate_checks = false;
  program.app().add_flag("--separate-checks", separate_checks,
                         "Each citizen verifies every VRF ticket and signature itself, as on a "
                         "phone of its own (default: the citizens of this process verify each "
                         "one once between them)");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    CitizenDaemonOptions o;
    o.share_checks = !separate_checks;
    // A citizen needs no account list (it re-executes through multi-proofs): only the stated
    // state root, when the file has one (genesis.h).
    TESSERA_ASSIGN_OR_RETURN(o.genesis, LoadGenesis(genesis_path, GenesisAccounts::kSkip));
    auto f = ParseCitizenFault(fault);
    if (!f.ok()) return tessera::cli::UsageError(f.status().message());
    o.fault = *f;
    o.key_dir = key_dir;
    o.first = first;
    o.count = count;
    o.timing = timing;
    o.stats_file = stats;
    return RunCitizens(o, tessera::StopOnSignals());
  });
}
