#include "ledger/net/pool_availability.h"

#include <string>

#include "ledger/net/client.h"

namespace tessera::ledger::net {

uint32_t RequiredWitnesses(const Genesis& genesis) {
  const uint64_t c = genesis.sortition.committee_size;
  const uint64_t slack = c > genesis.soft_threshold ? c - genesis.soft_threshold : 0;
  return static_cast<uint32_t>(genesis.witness_threshold + slack);
}

PoolTally TallyWitnesses(const std::map<PublicKey, WitnessList>& lists, const Genesis& genesis) {
  std::map<std::pair<uint32_t, Hash256>, uint32_t> count;
  for (const auto& [who, w] : lists) {
    std::set<std::pair<uint32_t, Hash256>> once;  // a list naming a pool twice counts once
    for (const WitnessEntry& e : w.entries) {
      if (once.insert({e.politician_id, e.pool_hash}).second)
        ++count[{e.politician_id, e.pool_hash}];
    }
  }
  const Hash256 empty = PoolHash({});
  const uint32_t must = RequiredWitnesses(genesis);
  std::map<uint32_t, std::vector<std::pair<Hash256, uint32_t>>> winners;
  for (const auto& [entry, n] : count) {
    if (n >= genesis.witness_threshold) winners[entry.first].push_back({entry.second, n});
  }
  PoolTally tally;
  std::set<Hash256> distinct;
  for (const auto& [pid, pools] : winners) {
    if (pools.size() != 1) continue;  // two eligible pools of one politician: equivocation
    const auto& [hash, n] = pools[0];
    if (hash == empty || !distinct.insert(hash).second) continue;
    tally.eligible.push_back(hash);
    if (n >= must) tally.required.insert(hash);
  }
  return tally;
}

std::vector<Hash256> PoolsAwaitingEligibility(const std::vector<WitnessEntry>& own,
                                              const PoolTally& tally) {
  const std::set<Hash256> eligible(tally.eligible.begin(), tally.eligible.end());
  const Hash256 empty = PoolHash({});
  std::vector<Hash256> out;
  for (const WitnessEntry& e : own) {
    if (e.pool_hash != empty && !eligible.count(e.pool_hash)) out.push_back(e.pool_hash);
  }
  return out;
}

Status CheckBody(const std::vector<Hash256>& body, const PoolTally& tally) {
  const std::set<Hash256> eligible(tally.eligible.begin(), tally.eligible.end());
  std::set<Hash256> seen;
  for (const Hash256& p : body) {
    if (!seen.insert(p).second) {
      return InvalidArgumentError("pool " + ToHex(p).substr(0, 12) + " appears twice");
    }
    if (!eligible.count(p)) {
      return UnavailableError("pool " + ToHex(p).substr(0, 12) + " not (yet) eligible");
    }
  }
  for (const Hash256& p : tally.required) {
    if (!seen.count(p)) {
      return InvalidArgumentError("proposal leaves out pool " + ToHex(p).substr(0, 12) +
                                  ", witnessed by enough members to be required");
    }
  }
  return Status::Ok();
}

Result<TxPoolCommitment> CheckPoolData(const Pool& pool, const Hash256& expected, uint64_t h,
                                       const Genesis& genesis) {
  TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment c, DecodeTxPoolCommitment(AsBytes(pool.commitment())));
  const PoliticianInfo* owner = genesis.Politician(c.politician_id);
  if (owner == nullptr || !VerifyTxPoolCommitment(c, owner->key)) {
    return InvalidArgumentError("pool commitment signature is invalid");
  }
  if (c.height != h || c.pool_hash != expected) {
    return InvalidArgumentError("pool is not the one asked for");
  }
  if (c.tx_count > genesis.max_pool_txs || static_cast<size_t>(pool.txs_size()) != c.tx_count) {
    return InvalidArgumentError("pool has " + std::to_string(pool.txs_size()) +
                                " transactions; commitment says " + std::to_string(c.tx_count) +
                                ", limit " + std::to_string(genesis.max_pool_txs));
  }
  if (pool.ByteSizeLong() > kMaxPoolBytes) {
    return InvalidArgumentError("pool of " + std::to_string(pool.ByteSizeLong()) +
                                " bytes is over kMaxPoolBytes " + std::to_string(kMaxPoolBytes));
  }
  std::vector<LedgerTx> txs;
  txs.reserve(c.tx_count);
  for (const std::string& t : pool.txs()) {
    TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
    txs.push_back(std::move(tx));
  }
  if (PoolHash(txs) != expected) return InvalidArgumentError("pool data does not match its hash");
  return c;
}

}  // namespace tessera::ledger::net
