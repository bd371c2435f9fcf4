#include "ledger/net/testing/pool_fixtures.h"

#include <string>

#include "ledger/crypto/hash.h"

namespace tessera::ledger::net::testing {

KeyPair TestKey(std::string_view salt, int i) {
  return KeyPair::FromSeed(Sha256(std::string(salt) + std::to_string(i)));
}

Genesis TestGenesis(const TestGenesisSpec& spec) {
  Genesis g;
  g.registrar = TestKey(spec.salt, 100).public_key();
  g.sortition.population = g.sortition.committee_size = g.sortition.proposers = spec.citizens;
  g.sortition.seed_lookback = 1;
  g.cert_threshold = g.soft_threshold = spec.threshold;
  if (spec.witness_threshold != 0) g.witness_threshold = spec.witness_threshold;
  if (spec.max_pool_txs != 0) g.max_pool_txs = spec.max_pool_txs;
  for (uint32_t i = 0; i < spec.politicians; ++i) {
    g.politicians.push_back({i, TestKey(spec.salt, 200 + static_cast<int>(i)).public_key(),
                             "127.0.0.1:" + std::to_string(1 + i)});
  }
  return g;
}

std::vector<LedgerTx> Transfers(const KeyPair& from, const PublicKey& to, int count) {
  std::vector<LedgerTx> txs;
  for (int i = 0; i < count; ++i) {
    Transaction tx{.to = to, .amount = 1, .nonce = static_cast<uint64_t>(i)};
    SignTransaction(tx, from);
    txs.push_back(tx);
  }
  return txs;
}

Pool SignedPool(uint32_t politician, uint64_t height, const std::vector<LedgerTx>& txs,
                const KeyPair& signer, int claimed) {
  TxPoolCommitment c{.politician_id = politician,
                     .height = height,
                     .tx_count = static_cast<uint32_t>(claimed >= 0 ? claimed : txs.size()),
                     .pool_hash = PoolHash(txs)};
  SignTxPoolCommitment(c, signer);
  Pool pool;
  pool.set_commitment(EncodeTxPoolCommitment(c));
  for (const LedgerTx& tx : txs) pool.add_txs(EncodeLedgerTx(tx));
  return pool;
}

}  // namespace tessera::ledger::net::testing
