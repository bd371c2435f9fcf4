// ledger-localnet: starts a Blockene network on loopback from a TOML config, drives it with a
// load generator, audits the result and prints a report (localnet.h).
#include <unistd.h>

#include <iostream>

#include "core/cli.h"
#include "core/stop_signal.h"
#include "ledger/net/localnet.h"

int main(int argc, char** argv) {
  using namespace tessera::ledger::net;
  tessera::cli::Program program(
      "ledger-localnet",
      "Runs N politicians and M citizens as processes on loopback under load, then audits the "
      "chain (agreement, certificates, state roots, conservation, double spends, proofs).");
  std::string config_path, out = "localnet-out", bin;
  bool check = false;
  program.app().add_option("--config", config_path, "Network/load/adversary TOML")->required();
  program.app().add_option("--out", out, "Output directory (wiped first)");
  program.app().add_option("--bin", bin,
                           "Directory of ledger-politician/ledger-citizen "
                           "(default: this binary's directory)");
  program.app().add_flag("--check", check,
                         "Exit 1 unless every safety check passed (no fork, no invalid block, "
                         "balances conserved, no double spend, honest nodes agree)");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    TESSERA_ASSIGN_OR_RETURN(tessera::Config config, tessera::Config::LoadFile(config_path));
    TESSERA_ASSIGN_OR_RETURN(LocalnetConfig cfg, ParseLocalnetConfig(config));
    if (bin.empty()) {
      std::error_code ec;
      bin = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string();
    }
    // SIGINT/SIGTERM end the run early (still audited and reported): with a long
    // load.duration_s and load.rate = 0 the network simply serves until interrupted.
    TESSERA_ASSIGN_OR_RETURN(LocalnetReport r,
                             RunLocalnet(cfg, bin, out, std::cout, &tessera::StopOnSignals()));
    std::cout << r.ToJson() << "\n";
    bool safe = r.forks == 0 && r.invalid_blocks == 0 && r.balances_conserved &&
                r.double_spends_committed == 0 && r.politicians_agree && r.citizens_agree &&
                r.proofs_ok;
    if (check && !safe) return tessera::FailedPreconditionError("safety checks failed");
    return tessera::Status::Ok();
  });
}
