// The genesis file: everything every node must agree on before block 1.
//
// A TOML file (written by ledger-localnet, read by every binary):
//
//   [chain]
//   name = "localnet"                 # seed_0 = SHA-256("tessera/genesis" || name)
//   registrar = "<64 hex>"            # the identity registrar's public key (identity.h)
//   population = 64                   # citizens registered at genesis (registration.h: later
//                                     # registrations are counted on the chain)
//   committee_size = 64               # expected committee size C
//   proposers = 4                     # expected proposer candidates
//   witness_threshold = 3             # T_w: witnesses that make a pool eligible
//   soft_threshold = 44               # T_soft: soft votes before a cert vote
//   cert_threshold = 44               # T_cert: committee signatures that commit a block
//   registration_delay = 2
//   safe_sample = 5                   # k politicians per citizen read or upload
//   max_pool_txs = 2000               # transactions a politician freezes per block
//   validation_sample = 1.0           # fraction of signatures a citizen verifies itself
//   vote_committees = "per-height"    # or "per-step": who votes in BA* (VoteCommittees below)
//   state_root = "<64 hex>"           # optional: the root the accounts below build
//   [politicians]
//   keys = ["<hex>", ...]             # politician i has id i
//   addresses = ["127.0.0.1:7000", ...]
//   [accounts]
//   keys = ["<hex>", ...]
//   balances = [1000, ...]
//   [apps.reviews]                    # optional: applications and their parameters
//   ring_size = 8                     # (string or integer values; application.h)
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/sortition.h"
#include "ledger/state/application.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger::net {

struct PoliticianInfo {
  uint32_t id = 0;
  PublicKey key{};
  std::string address;
};

// Who votes in BA* (ledger/agreement/player.h):
//   kPerHeight: the height's committee (sortition.h, one VRF draw per block, Blockene's) votes
//     in every period and step; a draw with fewer than T honest members stalls the height.
//   kPerStep: every eligible citizen plays the height, and votes in step s of period p iff its
//     ticket for (height, p, s) wins (vote_sortition.h, Algorand's committees per step); votes
//     and certificate signers carry that ticket, and a member of a soft or cert committee may
//     call Execute with it. Witness lists, proposals and the proposer's Execute stay with the
//     height's committee.
enum class VoteCommittees { kPerHeight, kPerStep };
const char* VoteCommitteesName(VoteCommittees v);  // "per-height", "per-step"

struct GenesisAccount {
  PublicKey key{};
  uint64_t balance = 0;
};

struct Genesis {
  std::string name = "localnet";
  PublicKey registrar{};
  SortitionParams sortition;  // seed_lookback is always 1 here (identity.h says why)
  uint32_t witness_threshold = 1;
  uint32_t soft_threshold = 1;
  uint32_t cert_threshold = 1;
  uint64_t registration_delay = 2;
  uint32_t safe_sample = 5;
  uint32_t max_pool_txs = 2000;
  // Blockene's sampled validation: each citizen verifies this fraction of a block's
  // signatures itself, chosen at random, and takes the executing politician's word for the
  // rest (block_transition.h says what that risks).
  double validation_sample = 1.0;
  VoteCommittees vote_committees = VoteCommittees::kPerHeight;
  std::vector<PoliticianInfo> politicians;
  std::vector<GenesisAccount> accounts;
  // The genesis state root as the file states it (chain.state_root; SealStateRoot sets it).
  // A node that never reads the genesis state itself -- a citizen, which re-executes blocks
  // through multi-proofs -- loads the file without its accounts (GenesisAccounts::kSkip) and
  // takes the root from here, as it takes the registrar key: with 1M accounts that saved
  // every citizen two builds of a 1M-leaf tree and the parse of a 77 MB list. A node that
  // builds the state (a politician, the auditor) checks the accounts against it.
  std::optional<Hash256> state_root;
  std::vector<AppParams> apps;  // in file order

  // The genesis accounts as leaf updates of an empty state, and the tree holding them (built
  // from them every call).
  std::vector<LeafUpdate> GenesisUpdates() const;
  Result<SparseMerkleTree> GenesisState() const;
  // Block 0: no parent, no proposer, seed_0, the genesis state root: the stated one if set
  // (no tree is built), else built from the accounts.
  Result<BlockHeader> GenesisHeader() const;
  // Builds the tree once and states its root (what the writer of a genesis file does).
  Status SealStateRoot();
  // DATA_LOSS if a root is stated and `built` (the accounts' root) is another one.
  Status CheckStateRoot(const Hash256& built) const;
  const PoliticianInfo* Politician(uint32_t id) const;
};

Result<Genesis> ParseGenesis(const Config& config);
// The [apps.<name>] tables of a config (genesis or local-network), in file order.
Result<std::vector<AppParams>> ParseAppParams(const Config& config);
// The applications named in the genesis file, built by the application factories registered
// in this binary (app_factories.h). Each application's parameters also get "registrar" (hex of the
// chain's identity registrar key) unless its table sets one. INVALID_ARGUMENT for an application
// this build does not have.
Result<AppRegistry> LoadApps(const Genesis& genesis);
// kSkip: the [accounts] table is cut from the text before it is parsed, when the file states
// its state root (else the accounts are loaded: the root must come from somewhere).
enum class GenesisAccounts { kLoad, kSkip };
Result<Genesis> LoadGenesis(const std::filesystem::path& path,
                            GenesisAccounts accounts = GenesisAccounts::kLoad);
// The TOML text ParseGenesis reads back to the same value.
std::string GenesisToToml(const Genesis& genesis);

}  // namespace tessera::ledger::net
