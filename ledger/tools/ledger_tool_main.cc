// ledger-tool: keys, VRF sortition, state blocks and store inspection from the command line.
#include <iostream>

#include "core/cli.h"
#include "ledger/tools/commands.h"

int main(int argc, char** argv) {
  using namespace tessera::ledger::tools;
  tessera::cli::Program program("ledger-tool",
                                "Ledger foundations: keys, VRF sortition, authenticated state.");
  CLI::App& app = program.app();
  // The subcommand is checked in the body, so that an unknown flag is reported as such.
  app.require_subcommand(0, 1);

  std::string prefix;
  CLI::App* keygen = app.add_subcommand("keygen", "Create a key pair (PREFIX.key, PREFIX.pub)");
  keygen->add_option("--out", prefix, "Path prefix for the key files")->required();

  std::string key_file;
  CLI::App* pubkey = app.add_subcommand("pubkey", "Print the public key of a secret key file");
  pubkey->add_option("--key", key_file, "Secret key file (must be mode 0600 or stricter)")
      ->required();

  LotteryOptions lottery;
  CLI::App* lot = app.add_subcommand("lottery", "Run a VRF committee/proposer lottery");
  lot->add_option("--citizens", lottery.citizens, "Number of citizens")
      ->check(CLI::Range(1, 1000000));
  lot->add_option("--committee", lottery.committee, "Expected committee size");
  lot->add_option("--proposers", lottery.proposers, "Expected proposer candidates");
  lot->add_option("--height", lottery.height, "Block height");
  lot->add_option("--seed", lottery.seed_text, "Seed text (seed = SHA-256 of it)");
  lot->add_option("--show", lottery.show, "Committee members to list");

  StateOptions state;
  CLI::App* st = app.add_subcommand("state", "Build a state, apply a block, prove and verify");
  st->add_option("--accounts", state.accounts, "Accounts in the genesis state")
      ->check(CLI::Range(2, 10000000));
  st->add_option("--senders", state.senders, "Accounts with keys that sign transfers");
  st->add_option("--transfers", state.transfers, "Transfers in the block");
  st->add_option("--db", state.db, "Also commit to a RocksDB store in this (new) directory");

  WriteBlocksOptions write;
  CLI::App* wb = app.add_subcommand("write-blocks", "Commit synthetic blocks to a store");
  wb->add_option("--db", write.db, "Store directory")->required();
  wb->add_option("--blocks", write.blocks, "Blocks to commit");
  wb->add_option("--accounts", write.accounts, "Synthetic accounts")
      ->check(CLI::Range(1, 100000000));
  wb->add_option("--block-size", write.block_size, "Leaf updates per block");
  wb->add_option("--seed", write.seed, "Workload seed");
  wb->add_option("--keep", write.keep, "Prune after each commit, keeping this many versions");

  WriteBlocksOptions replay;
  uint64_t replay_versions = 0;
  CLI::App* rp = app.add_subcommand("replay", "Root of write-blocks' workload, computed in memory");
  rp->add_option("--versions", replay_versions, "Blocks to replay")->required();
  rp->add_option("--accounts", replay.accounts, "Synthetic accounts")
      ->check(CLI::Range(1, 100000000));
  rp->add_option("--block-size", replay.block_size, "Leaf updates per block");
  rp->add_option("--seed", replay.seed, "Workload seed");

  std::string inspect_db;
  CLI::App* in = app.add_subcommand("inspect", "Print a store's version and root");
  in->add_option("--db", inspect_db, "Store directory")->required();

  return program.Run(argc, argv, [&]() -> tessera::Status {
    if (*keygen) return KeygenCommand(prefix, std::cout);
    if (*pubkey) return PubkeyCommand(key_file, std::cout);
    if (*lot) return LotteryCommand(lottery, std::cout);
    if (*st) return StateCommand(state, std::cout);
    if (*wb) return WriteBlocksCommand(write, std::cout);
    if (*rp) return ReplayCommand(replay, replay_versions, std::cout);
    if (*in) return InspectCommand(inspect_db, std::cout);
    return tessera::cli::UsageError(
        "usage: a subcommand is required (keygen, pubkey, lottery, state, write-blocks, replay, "
        "inspect)");
  });
}
