// ledger-politician: runs one politician of a network described by a genesis file.
#include "core/cli.h"
#include "core/stop_signal.h"
#include "ledger/crypto/key_file.h"
#include "ledger/net/politician_server.h"

int main(int argc, char** argv) {
  using namespace tessera::ledger::net;
  tessera::cli::Program program("ledger-politician",
                                "Runs one Blockene politician (gRPC server, RocksDB state).");
  std::string genesis_path, key_path, dir;
  uint32_t id = 0;
  std::vector<std::string> faults;
  program.app().add_option("--genesis", genesis_path, "Genesis TOML file")->required();
  program.app().add_option("--id", id, "This politician's index in the genesis file")->required();
  program.app().add_option("--key", key_path, "Secret key file of this politician")->required();
  program.app().add_option("--dir", dir, "Data directory (state and blocks)")->required();
  uint64_t keep_versions = 64;
  program.app().add_option("--fault", faults,
                           "Adversary behaviour: drop, delay, withhold, stale, wrong, "
                           "equivocate, forge");
  program.app()
      .add_option("--keep-versions", keep_versions,
                  "State versions kept for proofs at past heights (older ones are pruned)")
      ->check(CLI::Range(uint64_t{2}, uint64_t{1} << 40));
  double target_round_s = PoliticianOptions().target_round_s;
  double backlog_pools = PoliticianOptions().backlog_pools;
  program.app()
      .add_option("--target-round-s", target_round_s,
                  "Back-pressure: pools shrink when a round (pool frozen -> block committed) "
                  "takes longer than this")
      ->check(CLI::Range(0.1, 3600.0));
  program.app()
      .add_option("--backlog-pools", backlog_pools,
                  "Back-pressure: the mempool holds this many pools' worth of transactions")
      ->check(CLI::Range(1.0, 1000.0));
  double waiting_pools = PoliticianOptions().waiting_pools;
  program.app()
      .add_option("--waiting-pools", waiting_pools,
                  "Back-pressure: at most this many pools' worth of admitted transactions wait "
                  "for a pool (0: no such bound, --backlog-pools only)")
      ->check(CLI::Range(0.0, 1000.0));
  std::string round_timeline;
  program.app().add_option("--round-timeline", round_timeline,
                           "Append when each pool is frozen and each block committed to this "
                           "file (round_timeline.h; for the localnet's latency breakdown)");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    PoliticianOptions o;
    o.id = id;
    o.dir = dir;
    o.keep_versions = keep_versions;
    o.target_round_s = target_round_s;
    o.backlog_pools = backlog_pools;
    o.waiting_pools = waiting_pools;
    o.round_timeline = round_timeline;
    TESSERA_ASSIGN_OR_RETURN(o.genesis, LoadGenesis(genesis_path));
    TESSERA_ASSIGN_OR_RETURN(o.keys, tessera::ledger::ReadSecretKeyFile(key_path));
    for (const std::string& f : faults) {
      tessera::Status s = o.faults.Add(f);
      if (!s.ok()) return tessera::cli::UsageError(s.message());
    }
    TESSERA_RETURN_IF_ERROR(UseMallocForLargeRequests());
    return RunPolitician(std::move(o), tessera::StopOnSignals());
  });
}
