#include "ledger/net/chain_replay.h"

#include <algorithm>

#include "ledger/net/registration.h"
#include "ledger/state/account.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {

ChainReplay::ChainReplay(const Genesis& g) : genesis_(g) {
  apps_ = LoadApps(g).value();  // the genesis file was written, and checked, by us
  for (const GenesisAccount& a : g.accounts) accounts_.insert(AccountKey(a.key));
  latest_ = g.GenesisHeader().value();
  tree_ = g.GenesisState().value();
  hashes_.push_back(BlockHash(latest_));
}

Result<std::vector<Transaction>> ChainReplay::Apply(const BlockReply& reply) {
  const CertifiedBlock& cb = reply.block();
  TESSERA_ASSIGN_OR_RETURN(CertifiedBlockData block,
                           DecodeCertifiedBlock(cb.header(), cb.certificate(),
                                                {cb.identities().begin(), cb.identities().end()}));
  TESSERA_RETURN_IF_ERROR(VerifyCertifiedBlock(genesis_, latest_, block, &tickets_));
  if (block.certificate.period > 0) ++recovered_blocks_;
  max_period_ = std::max(max_period_, block.certificate.period);
  // Independently of the check above: when did late-registered citizens sign?
  for (const CertificateSigner& s : block.certificate.signers) {
    for (const Identity& id : block.identities) {
      if (id.citizen != s.citizen || id.registered_at == 0) continue;
      if (block.header.height < id.registered_at + genesis_.registration_delay) {
        ++late_too_early_;
      } else if (late_first_ == 0) {
        late_first_ = block.header.height;
      }
    }
  }
  if (static_cast<size_t>(reply.pools_size()) != block.header.pool_hashes.size()) {
    return InvalidArgumentError("block is missing pools");
  }
  std::vector<LedgerTx> txs;
  for (size_t i = 0; i < block.header.pool_hashes.size(); ++i) {
    std::vector<LedgerTx> pool;
    for (const std::string& t : reply.pools(static_cast<int>(i)).txs()) {
      TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
      pool.push_back(std::move(tx));
    }
    if (PoolHash(pool) != block.header.pool_hashes[i]) {
      return InvalidArgumentError("pool does not match the header");
    }
    txs.insert(txs.end(), pool.begin(), pool.end());
  }
  // Every signature verified: a block certified with a forged transaction applied fails here.
  const BlockContext ctx{.height = latest_.height + 1, .prev_seed = latest_.seed};
  TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome, ApplyBlock(TreeLookup(tree_), txs, ctx, apps_));
  crypto_rejected_ += outcome.crypto_rejected.size();
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree next, tree_.Update(outcome.updates));
  if (next.root_hash() != block.header.state_root) {
    return DataLossError("certified state root of block " + std::to_string(block.header.height) +
                         " does not match the replay");
  }
  std::set<size_t> rejected;
  for (const auto& [index, reason] : outcome.rejected) rejected.insert(index);
  std::vector<Transaction> applied;
  for (size_t i = 0; i < txs.size(); ++i) {
    if (rejected.count(i)) continue;
    const auto* transfer = std::get_if<Transaction>(&txs[i]);
    if (transfer == nullptr) {
      ++app_applied_;
      continue;
    }
    // Independent of the transition's own nonce rule: a (sender, nonce) applied twice
    // anywhere in the chain is a committed double spend.
    if (!spent_.insert({transfer->from, transfer->nonce}).second) ++double_applied_;
    accounts_.insert(AccountKey(transfer->to));
    applied.push_back(*transfer);
  }
  const HeightParams params = ParamsAt(genesis_, latest_);
  last_population_ = params.sortition.population;
  last_cert_threshold_ = params.cert_threshold;
  registered_on_chain_ += block.header.registrations.size();
  tree_ = std::move(next);
  latest_ = block.header;
  hashes_.push_back(BlockHash(latest_));
  return applied;
}

}  // namespace tessera::ledger::net
