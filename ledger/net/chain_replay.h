// The localnet's auditor: replays certified blocks from genesis with the shared state
// transition, verifying every certificate (tickets included) and state root, and recording
// what no honest chain may contain: a (sender, nonce) applied twice, a late-registered
// citizen signing before it is eligible.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "ledger/net/blockene.pb.h"
#include "ledger/net/chain.h"
#include "ledger/net/genesis.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger::net {

class ChainReplay {
 public:
  explicit ChainReplay(const Genesis& genesis);
  uint64_t height() const { return latest_.height; }
  const SparseMerkleTree& tree() const { return tree_; }
  const BlockHeader& latest() const { return latest_; }
  const std::vector<Hash256>& hashes() const { return hashes_; }
  uint64_t double_applied() const { return double_applied_; }
  uint64_t late_first() const { return late_first_; }
  uint64_t late_too_early() const { return late_too_early_; }
  // Live population (registration.h): registrations carried by the replayed blocks, and the
  // population and T_cert the latest block was verified with.
  uint64_t registered_on_chain() const { return registered_on_chain_; }
  uint64_t last_population() const { return last_population_; }
  uint64_t last_cert_threshold() const { return last_cert_threshold_; }
  uint64_t app_applied() const { return app_applied_; }
  // Every account that exists: the genesis accounts and every receiver of a transfer. (Other
  // leaves belong to applications and are not money.)
  const std::set<Hash256>& accounts() const { return accounts_; }
  uint64_t crypto_rejected() const { return crypto_rejected_; }
  // Blocks whose certificate is of a BA* period above 0 (the height needed recovery), and
  // the highest such period.
  uint64_t recovered_blocks() const { return recovered_blocks_; }
  uint32_t max_period() const { return max_period_; }

  // Verifies and applies the next block; returns the transactions it applied.
  Result<std::vector<Transaction>> Apply(const BlockReply& reply);

 private:
  Genesis genesis_;
  AppRegistry apps_;
  BlockHeader latest_;
  SparseMerkleTree tree_;
  TicketCache tickets_;
  uint64_t app_applied_ = 0, crypto_rejected_ = 0;
  std::vector<Hash256> hashes_;
  std::set<std::pair<PublicKey, uint64_t>> spent_;
  std::set<Hash256> accounts_;
  uint64_t double_applied_ = 0;
  uint64_t late_first_ = 0, late_too_early_ = 0;
  uint64_t registered_on_chain_ = 0, last_population_ = 0, last_cert_threshold_ = 0;
  uint64_t recovered_blocks_ = 0;
  uint32_t max_period_ = 0;
};

}  // namespace tessera::ledger::net
