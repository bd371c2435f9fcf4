#include "ledger/net/mempool.h"

#include <algorithm>

#include "ledger/state/account.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {
namespace {

Result<Account> SenderAccount(const PublicKey& key, const SparseMerkleTree& state) {
  std::optional<LeafValue> leaf = state.Get(AccountKey(key));
  if (!leaf) return NotFoundError("sender account " + ToHex(key).substr(0, 16) + " does not exist");
  return DecodeAccount(*leaf);
}

}  // namespace

Status Mempool::Room() const {
  if (weight() >= capacity_) {
    return ResourceExhaustedError("mempool full (" + std::to_string(weight()) + " pending)");
  }
  if (waiting_capacity_ > 0 && waiting() >= waiting_capacity_) {
    return ResourceExhaustedError("next pool full (" + std::to_string(waiting()) +
                                  " waiting for a pool of " + std::to_string(waiting_capacity_) +
                                  ")");
  }
  return Status::Ok();
}

Status Mempool::Admit(const Transaction& tx, const SparseMerkleTree& state) {
  if (!VerifyTransaction(tx)) return InvalidArgumentError("bad signature");
  if (tx.amount == 0) return InvalidArgumentError("amount must be positive");
  if (tx.from == tx.to) return InvalidArgumentError("transfer to oneself");
  TESSERA_ASSIGN_OR_RETURN(Account sender, SenderAccount(tx.from, state));
  if (tx.nonce < sender.nonce) {
    return FailedPreconditionError("nonce " + std::to_string(tx.nonce) + " already used (next is " +
                                   std::to_string(sender.nonce) + ")");
  }
  if (tx.nonce >= sender.nonce + kMaxNonceGap) {
    return FailedPreconditionError("nonce " + std::to_string(tx.nonce) +
                                   " too far ahead (next is " + std::to_string(sender.nonce) + ")");
  }
  if (sender.balance < tx.amount) {
    return FailedPreconditionError("insufficient balance: " + std::to_string(sender.balance) +
                                   " < " + std::to_string(tx.amount));
  }
  auto key = std::make_pair(tx.from, tx.nonce);
  auto it = pending_.find(key);
  if (it != pending_.end()) {
    if (it->second.first == tx) return AlreadyExistsError("transaction already pending");
    return AlreadyExistsError("conflicts with a pending transaction of the same sender and nonce");
  }
  TESSERA_RETURN_IF_ERROR(Room());
  pending_.emplace(key, std::make_pair(tx, next_arrival_));
  arrivals_.emplace(next_arrival_++, key);
  ++weight_;
  return Status::Ok();
}

Status Mempool::CheckApp(const AppTransaction& tx, const SparseMerkleTree& state,
                         const AppRegistry& apps, const BlockContext& next) {
  std::vector<LedgerTx> block{tx};
  TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome, ApplyBlock(TreeLookup(state), block, next, apps));
  if (outcome.rejected.empty()) return Status::Ok();
  return FailedPreconditionError(outcome.rejected[0].second);
}

Status Mempool::AppRoom(const AppTransaction& tx, const AppRegistry& apps) const {
  const Application* app = apps.Find(tx.app);
  if (app == nullptr) return Status::Ok();  // CheckApp refuses it
  const size_t quota = std::max<size_t>(
      1, static_cast<size_t>(app->MempoolShare() * static_cast<double>(capacity_)));
  auto waiting = app_waiting_.find(tx.app);
  if (waiting != app_waiting_.end() && waiting->second >= quota) {
    return ResourceExhaustedError("mempool quota of application '" + std::string(app->name()) +
                                  "' reached (" + std::to_string(quota) + " waiting for a pool)");
  }
  return Status::Ok();
}

Status Mempool::AdmitApp(const AppTransaction& tx, const SparseMerkleTree& state,
                         const AppRegistry& apps, const BlockContext& next) {
  TESSERA_RETURN_IF_ERROR(AppAdmissible(tx, apps));
  TESSERA_RETURN_IF_ERROR(CheckApp(tx, state, apps, next));
  return InsertApp(tx, apps);
}

Status Mempool::AdmitCheckedApp(const AppTransaction& tx, const AppRegistry& apps) {
  TESSERA_RETURN_IF_ERROR(AppAdmissible(tx, apps));
  return InsertApp(tx, apps);
}

Status Mempool::AppAdmissible(const AppTransaction& tx, const AppRegistry& apps) const {
  if (pending_apps_.contains(LedgerTxId(tx))) {
    return AlreadyExistsError("transaction already pending");
  }
  // The application's quota first: cheap, before any signature.
  return AppRoom(tx, apps);
}

Status Mempool::InsertApp(const AppTransaction& tx, const AppRegistry& apps) {
  TESSERA_RETURN_IF_ERROR(Room());
  // Its weight (Application::Weight: cheap, no signature), read once and kept with the entry.
  const Application* app = apps.Find(tx.app);
  const size_t weight = app != nullptr ? std::max<size_t>(1, app->Weight(AsBytes(tx.payload))) : 1;
  const Hash256 id = LedgerTxId(tx);
  pending_apps_.emplace(id, AppEntry{tx, weight});
  app_order_.push_back(id);
  app_waiting_[tx.app] += weight;
  weight_ += weight;
  return Status::Ok();
}

Mempool::Selection Mempool::Choose(size_t max) const {
  Selection s;
  for (const auto& [arrival, key] : arrivals_) {
    if (s.weight >= max) break;
    s.transfers.push_back(key);
    ++s.weight;
  }
  for (const Hash256& id : app_order_) {
    if (s.weight >= max) break;
    s.apps.push_back(id);
    s.weight += pending_apps_.at(id).weight;
  }
  return s;
}

std::vector<LedgerTx> Mempool::Build(Selection chosen, const AppRegistry& apps) const {
  std::vector<LedgerTx> out;
  std::sort(chosen.transfers.begin(), chosen.transfers.end());
  for (const TransferKey& key : chosen.transfers) out.push_back(pending_.at(key).first);
  std::map<uint8_t, std::vector<std::string>> by_app;
  for (const Hash256& id : chosen.apps) {
    const AppTransaction& tx = pending_apps_.at(id).tx;
    by_app[tx.app].push_back(tx.payload);
  }
  for (auto& [app_id, payloads] : by_app) {
    const Application* app = apps.Find(app_id);
    if (app != nullptr) payloads = app->Coalesce(std::move(payloads));
    for (std::string& p : payloads) out.push_back(AppTransaction{app_id, std::move(p)});
  }
  return out;
}

std::vector<LedgerTx> Mempool::Snapshot(size_t max, const AppRegistry& apps) const {
  return Build(Choose(max), apps);
}

std::vector<LedgerTx> Mempool::Freeze(size_t max, const AppRegistry& apps, size_t* weight) {
  Selection chosen = Choose(max);
  for (const TransferKey& key : chosen.transfers) {
    if (frozen_.insert(key).second) ++frozen_weight_;
  }
  for (const Hash256& id : chosen.apps) {
    if (!frozen_apps_.insert(id).second) continue;
    const AppEntry& e = pending_apps_.at(id);
    frozen_weight_ += e.weight;
    app_waiting_[e.tx.app] -= e.weight;
  }
  if (weight != nullptr) *weight = chosen.weight;
  return Build(std::move(chosen), apps);
}

void Mempool::Prune(const SparseMerkleTree& state, const AppRegistry& apps,
                    const BlockContext& next) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto account = SenderAccount(it->first.first, state);
    bool used = account.ok() && it->first.second < account->nonce;
    if (used) arrivals_.erase(it->second.second);
    it = used ? pending_.erase(it) : std::next(it);
  }
  // The frozen pool is settled: everything kept is waiting again.
  std::deque<Hash256> kept;
  app_waiting_.clear();
  weight_ = pending_.size();
  for (const Hash256& id : app_order_) {
    const AppEntry& e = pending_apps_.at(id);
    if (CheckApp(e.tx, state, apps, next).ok()) {
      kept.push_back(id);
      app_waiting_[e.tx.app] += e.weight;
      weight_ += e.weight;
    } else {
      pending_apps_.erase(id);
    }
  }
  app_order_ = std::move(kept);
  frozen_.clear();
  frozen_apps_.clear();
  frozen_weight_ = 0;
}

}  // namespace tessera::ledger::net
