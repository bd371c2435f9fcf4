// The commands of ledger-tool, as library functions (the binary is a thin main over them).
// Each prints a human-readable report to `out` and returns an error Status on failure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

#include "core/status.h"

namespace tessera::ledger::tools {

// Writes PREFIX.key (mode 0600) and PREFIX.pub for a fresh key.
Status KeygenCommand(const std::filesystem::path& prefix, std::ostream& out);

// Loads a secret key file (refusing one readable by group or others) and prints its public key.
Status PubkeyCommand(const std::filesystem::path& key_file, std::ostream& out);

struct LotteryOptions {
  uint64_t citizens = 500;  // citizen keys derived from key_seed (deterministic)
  uint64_t committee = 50;  // expected committee size
  uint64_t proposers = 5;   // expected proposer candidates
  uint64_t height = 1;
  std::string seed_text = "tessera genesis";  // seed_{h-L} = SHA-256(seed_text)
  std::string key_seed = "demo citizens";
  size_t show = 10;  // committee members to list
};
// Every citizen draws committee and proposer tickets; every ticket is then checked from the
// public key and proof alone, the committee listed, the proposer chosen, and a tampered
// proof shown to fail.
Status LotteryCommand(const LotteryOptions& options, std::ostream& out);

struct StateOptions {
  uint64_t accounts = 100000;  // accounts in the genesis state
  uint64_t senders = 2000;     // accounts holding real keys, who sign the block's transfers
  uint64_t transfers = 10000;  // transfers in the block
  std::filesystem::path db;    // if set, commit genesis and the block to a RocksDB store here
};
// Builds the state, applies one block of signed transfers, prints the new root, proves the
// touched accounts with one multi-proof (size vs single proofs) and replays the block as a
// light client would, from the old root and the proof alone.
Status StateCommand(const StateOptions& options, std::ostream& out);

struct WriteBlocksOptions {
  std::filesystem::path db;
  uint64_t blocks = 100;       // blocks to commit after the store's current version
  uint64_t accounts = 10000;   // synthetic account universe
  uint64_t block_size = 1000;  // leaf updates per block
  uint64_t seed = 1;
  uint64_t keep =
      0;  // if > 0, prune after each commit so that only the newest `keep` versions stay
};
// Commits synthetic blocks (state/synthetic.h) to the store, printing "committed V ROOT" after
// each commit (and "pruned below V" after each prune); reopening an existing store continues
// from its version. The kill -9 test runs this and kills it mid-write.
Status WriteBlocksCommand(const WriteBlocksOptions& options, std::ostream& out);

// Prints "root HEX": the root that `versions` blocks of write-blocks' workload (same accounts,
// block size and seed) must produce, computed in memory without any store: an independent
// check of a store that was killed mid-write.
Status ReplayCommand(const WriteBlocksOptions& options, uint64_t versions, std::ostream& out);

// Prints a store's latest version, its root and the oldest kept version.
Status InspectCommand(const std::filesystem::path& db, std::ostream& out);

}  // namespace tessera::ledger::tools
