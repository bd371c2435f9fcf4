// A politician's admission control and transaction pools: SubmitTransaction (the mempool and its
// block budget), freezing this politician's pool for a height, accepting gossiped pools and
// handing them out (GetPools, PostPool).
#include <algorithm>

#include "ledger/net/politician.h"
#include "ledger/net/round_item.h"
#include "ledger/net/wire_bytes.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {

// ---- Pools ----------------------------------------------------------------------------------

Status PoliticianNode::AddPool(const Pool& pool, const std::vector<Hash256>* certified) {
  TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment c, DecodeTxPoolCommitment(AsBytes(pool.commitment())));
  const PoliticianInfo* owner = options_.genesis.Politician(c.politician_id);
  if (owner == nullptr || !VerifyTxPoolCommitment(c, owner->key)) {
    return InvalidArgumentError("pool commitment signature is invalid");
  }
  if (pools_.count(c.pool_hash)) return Status::Ok();
  const bool named = certified != nullptr && std::find(certified->begin(), certified->end(),
                                                       c.pool_hash) != certified->end();
  if (static_cast<size_t>(pool.txs_size()) != c.tx_count) {
    return InvalidArgumentError("pool has " + std::to_string(pool.txs_size()) +
                                " transactions, its commitment says " + std::to_string(c.tx_count));
  }
  // Flood limits (a politician may sign as many pools as it likes): bounded size, heights
  // being agreed only, and at most two pools per politician and height -- two are the
  // equivocation evidence citizens need, a third adds nothing.
  std::set<Hash256>& owned = pools_by_owner_[{c.height, c.politician_id}];
  if (!named) {
    if (c.tx_count > options_.genesis.max_pool_txs) {
      return InvalidArgumentError("pool of " + std::to_string(c.tx_count) +
                                  " transactions is over max_pool_txs " +
                                  std::to_string(options_.genesis.max_pool_txs));
    }
    if (pool.ByteSizeLong() > kMaxPoolBytes) {
      return InvalidArgumentError("pool of " + std::to_string(pool.ByteSizeLong()) +
                                  " bytes is over kMaxPoolBytes " + std::to_string(kMaxPoolBytes));
    }
    if (c.height > latest_.height + 2) {
      return FailedPreconditionError("pool for height " + std::to_string(c.height) +
                                     " is too far ahead (latest " + std::to_string(latest_.height) +
                                     ")");
    }
    if (owned.size() >= 2) {
      return ResourceExhaustedError("politician " + std::to_string(c.politician_id) +
                                    " already signed two pools for height " +
                                    std::to_string(c.height) + " (equivocation); no more kept");
    }
  }
  StoredPool stored;
  for (const std::string& t : pool.txs()) {
    TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
    stored.txs.push_back(std::move(tx));
  }
  if (stored.txs.size() != c.tx_count || PoolHash(stored.txs) != c.pool_hash) {
    return InvalidArgumentError("pool transactions do not match the commitment");
  }
  stored.commitment = pool.commitment();
  stored.wire = pool;
  auto [it, added] = pools_.emplace(c.pool_hash, std::move(stored));
  owned.insert(c.pool_hash);
  if (added && certified == nullptr) PreverifyPool(c, it->second.txs);
  return Status::Ok();
}

void PoliticianNode::FreezePool(uint64_t h) {
  RelayEvidence(h);
  if (my_commitments_.count(h) || h <= pool_floor_) return;
  std::vector<std::vector<LedgerTx>> variants(1);
  {
    std::lock_guard<std::mutex> lock(mempool_mu_);
    size_t weight = 0;  // kept with the mempool's entries: no payload is read again
    variants[0] = mempool_.Freeze(budget_.next_pool_txs(), apps_, &weight);
    // At most kMaxPoolBytes (client.h) on the wire, with room for the commitment and a
    // transaction the forge fault adds: what is cut stays in the mempool and is waiting again
    // once this height commits (Mempool::Prune).
    size_t bytes = 1024;
    for (size_t k = 0; k < variants[0].size(); ++k) {
      bytes += EncodeLedgerTx(variants[0][k]).size() + 5;
      if (bytes > kMaxPoolBytes) {
        variants[0].resize(k);
        weight = BlockWeight(variants[0], apps_);  // what is left of the pool
        break;
      }
    }
    // In transactions as submitted (a batch of merged reviews counts its reviews), the unit
    // Freeze chose them in: a full pool must read as full.
    budget_.PoolFrozen(h, weight);
  }
  if (options_.faults.forge && !options_.genesis.accounts.empty()) {
    const PublicKey& victim = options_.genesis.accounts[0].key;
    auto leaf = state_->tree().Get(AccountKey(victim));
    auto account = leaf ? DecodeAccount(*leaf) : Result<Account>(Account{});
    Transaction forged{.from = victim,
                       .to = options_.keys.public_key(),
                       .amount = 1,
                       .nonce = account.ok() ? account->nonce : 0};
    forged.signature[0] = 1;  // not the victim's signature
    if (variants[0].size() >= options_.genesis.max_pool_txs) variants[0].pop_back();
    variants[0].insert(variants[0].begin(), forged);
  }
  if (options_.faults.equivocate && variants[0].size() >= 2) {
    variants.emplace_back(variants[0].begin(), variants[0].begin() + variants[0].size() / 2);
  }
  for (const auto& txs : variants) {
    TxPoolCommitment c{.politician_id = options_.id,
                       .height = h,
                       .tx_count = static_cast<uint32_t>(txs.size()),
                       .pool_hash = PoolHash(txs)};
    SignTxPoolCommitment(c, options_.keys);
    Pool pool;
    pool.set_commitment(EncodeTxPoolCommitment(c));
    for (const LedgerTx& tx : txs) pool.add_txs(EncodeLedgerTx(tx));
    if (!AddPool(pool).ok()) continue;
    my_commitments_[h].push_back(pool.commitment());
    RoundItem item;
    item.set_payload(pool.commitment());
    RoundLog& log = rounds_[h];
    if (log.seen.emplace(RoundItemHash(item), log.items.size()).second) log.items.push_back(item);
    if (!options_.faults.withhold) {
      if (!options_.faults.withhold_data) {
        Gossip([pool](PoliticianClient& c) { (void)c.PostPool(pool); });
      }
      if (!options_.pull_gossip) Gossip([item, h](PoliticianClient& c) { (void)c.Post(h, item); });
    }
  }
  if (options_.faults.flood) Flood(h);
}

void PoliticianNode::SubmitTransaction(const TxRequest& req, TxReply* rep) {
  Delay();
  SignatureCache::Scope scope(&signatures_);
  auto tx = DecodeLedgerTx(AsBytes(req.tx()));
  if (!tx.ok()) {
    rep->set_error(tx.status().message());
    return;
  }
  auto answer = [&](const Status& s) {  // mempool_mu_ held
    rep->set_accepted(s.ok());
    if (s.ok()) return;
    rep->set_error(s.ToString());
    if (s.code() == StatusCode::kResourceExhausted) {
      rep->set_retry_after_ms(static_cast<uint32_t>(budget_.retry_after().count()));
    }
  };
  const auto* app_tx = std::get_if<AppTransaction>(&*tx);
  {
    // Turned away before any work when full, when the next pool is already spoken for
    // (mempool.h), or over its application's quota: overload costs a lookup, not a
    // verification.
    std::lock_guard<std::mutex> lock(mempool_mu_);
    if (Status room = mempool_.Room(); !room.ok()) return answer(room);
    if (app_tx != nullptr) {
      if (Status room = mempool_.AppRoom(*app_tx, apps_); !room.ok()) return answer(room);
    }
  }
  // The signature check, the expensive part, runs under no lock and fills the cache that the
  // mempool's own check (and later execution and commit) then hit.
  if (const auto* transfer = std::get_if<Transaction>(&*tx);
      transfer != nullptr && !VerifyTransaction(*transfer)) {
    rep->set_error(InvalidArgumentError("bad signature").ToString());
    return;
  }
  BlockContext next;
  Result<SparseMerkleTree> state = NotFoundError("");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Drop()) {  // a dropping politician claims to accept and forgets
      rep->set_accepted(true);
      return;
    }
    next = NextContext();
    state = state_->CachedTreeAt(latest_.height + 1);  // the state `next` follows
  }
  if (!state.ok()) {
    rep->set_error(state.status().ToString());
    return;
  }
  // An application's check (a review's ring signature: milliseconds) runs here, under no lock,
  // once; admission under the lock then skips it (AdmitCheckedApp: same state, same context).
  // Under mempool_mu_ it held up FreezePool, which takes mempool_mu_ with mu_ held, and so
  // every request of this politician behind it (session 19: rounds with reviews arriving ran
  // into BA* period 1; PoliticianAdmissionTest).
  if (app_tx != nullptr) {
    if (Status checked = Mempool::CheckApp(*app_tx, *state, apps_, next); !checked.ok()) {
      rep->set_error(checked.ToString());
      return;
    }
  }
  std::lock_guard<std::mutex> lock(mempool_mu_);
  answer(app_tx == nullptr ? mempool_.Admit(std::get<Transaction>(*tx), *state)
                           : mempool_.AdmitCheckedApp(*app_tx, apps_));
}

Status PoliticianNode::GetPools(const PoolsRequest& req, PoolsReply* rep) {
  Delay();
  if (req.pool_hashes_size() > static_cast<int>(kMaxPoolsPerRequest)) {
    return InvalidArgumentError("at most " + std::to_string(kMaxPoolsPerRequest) +
                                " pools per request");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.faults.withhold_data) return Status::Ok();  // has them, serves none
  // The pool that crosses kMaxPoolsReplyBytes is the last (client.h): the caller's reply cap
  // is this plus one pool, and it asks again for what is missing.
  size_t bytes_out = 0;
  for (const std::string& bytes : req.pool_hashes()) {
    if (bytes_out >= kMaxPoolsReplyBytes) break;
    TESSERA_ASSIGN_OR_RETURN(Hash256 ph, HashFromBytes(bytes, "pool hash"));
    auto it = pools_.find(ph);
    if (it == pools_.end()) continue;
    *rep->add_pools() = it->second.wire;
    bytes_out += it->second.wire.ByteSizeLong();
  }
  return Status::Ok();
}

void PoliticianNode::PostPool(const Pool& pool, PostReply* rep) {
  Delay();
  SignatureCache::Scope scope(&signatures_);
  std::lock_guard<std::mutex> lock(mu_);
  auto c = DecodeTxPoolCommitment(AsBytes(pool.commitment()));
  if (c.ok() && c->height <= latest_.height) {
    rep->set_accepted(true);  // too late to matter
    return;
  }
  Status s = AddPool(pool);
  rep->set_accepted(s.ok());
  if (!s.ok()) rep->set_error(s.ToString());
}

}  // namespace tessera::ledger::net
