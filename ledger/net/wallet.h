// The wallet: a light client that trusts nothing but the genesis file.
//
// It keeps a checkpoint -- the latest certified header it has verified -- in a small file and
// moves it forward by fetching headers with their committee certificates (no transactions)
// from any politician and checking each against its parent (chain.h). Balances are read with
// a Merkle proof checked against the checkpoint's state root, so a lying politician can at
// worst refuse to answer.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <vector>

#include "core/status.h"
#include "ledger/net/chain.h"
#include "ledger/net/client.h"
#include "ledger/state/account.h"

namespace tessera::ledger::net {

class LightClient {
 public:
  // `checkpoint_file` may not exist yet (then the client starts from genesis).
  LightClient(Genesis genesis, std::filesystem::path checkpoint_file);

  // Loads the checkpoint, then follows the chain to the highest height any politician
  // reports, verifying every header; saves the new checkpoint. `on_block` sees each new one.
  Status Sync(const std::function<void(const CertifiedBlockData&)>& on_block = nullptr);
  const BlockHeader& head() const { return head_; }

  // The account's state at the checkpoint, proved against its root (nullopt: no account).
  Result<std::optional<Account>> Balance(const PublicKey& account);

  // Leaves of the state at the checkpoint (nullopt: absent), each proved against its root;
  // politicians are tried in turn until one gives a proof that verifies.
  Result<std::vector<std::optional<LeafValue>>> ReadLeaves(const std::vector<Hash256>& keys);

  // Signs and submits a transfer with the account's next nonce (from a proved read) to
  // `fanout` politicians chosen at random; OK if at least one accepted, else the politicians'
  // reasons.
  Result<Transaction> Send(const KeyPair& from, const PublicKey& to, uint64_t amount,
                           size_t fanout);

  // Submits any transaction (e.g. an application's) to `fanout` politicians chosen at random;
  // OK if at least one accepted, else FAILED_PRECONDITION with every politician's reason.
  Status Submit(const LedgerTx& tx, size_t fanout);

  // The transactions of committed block `height` (<= head().height), in block order, checked
  // against the header: the header's hash is linked to the checkpoint through prev_hash and
  // every pool matches its hash in the header.
  Result<std::vector<LedgerTx>> BlockTxs(uint64_t height);
  // The verified header of block `height` (<= head().height).
  Result<BlockHeader> HeaderAt(uint64_t height);

 private:
  Status LoadCheckpoint();
  std::vector<PoliticianClient*> RandomOrder();
  Genesis genesis_;
  std::filesystem::path checkpoint_file_;
  std::vector<std::unique_ptr<PoliticianClient>> politicians_;
  BlockHeader head_;
  TicketCache tickets_;
  std::map<uint64_t, Hash256> known_hashes_;  // verified header hashes by height
};

}  // namespace tessera::ledger::net
