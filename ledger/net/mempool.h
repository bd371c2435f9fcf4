// A politician's pending transactions, admitted with clear reasons for every rejection.
//
// Admission checks a transaction against the latest committed state: a valid signature,
// amount > 0, sender != receiver, the sender exists, its nonce is not already used
// (nonce >= account nonce, and below nonce + kMaxNonceGap so nobody parks junk far ahead),
// its balance covers the amount, and no pending transaction here already uses the same
// (sender, nonce). The last rule only stops a double spend at this politician; one sent to two
// politicians is stopped by the state transition, which applies at most one transaction per
// (sender, nonce).
//
// Application transactions (application.h) are admitted iff their application applies them,
// with every signature checked, to the latest committed state in the context of the next
// block; they are kept in arrival order and dropped once the committed state no longer
// accepts them (because they were included, or were overtaken by a conflicting one). Each
// application's transactions *waiting* for a pool (see below) are limited to its
// Application::MempoolShare() of the capacity, checked before the transaction is applied (no
// signature is verified past it). The transactions in the frozen pool do not count: they are
// in the block being agreed, not ahead of anybody. (Until session 16 they did, so an
// application whose quota was one pool and whose pool was frozen full could not fill the next
// one: blocks of 150, 0, 150 reviews, docs/reviews.md.)
//
// Units: every bound, the pool size and the quota count weight, transactions as clients
// submitted them (block_budget.h): 1 per transfer, Application::Weight for an application
// transaction, read once at admission and kept with the entry (a client's batch of n reviews
// weighs n). size() alone counts entries.
//
// Two bounds (block_budget.h sets both from the measured round time): at most capacity()
// pending in all, and at most waiting_capacity() *waiting* -- admitted but not in the pool
// this politician froze for the block being agreed (Freeze). A transaction admitted beyond what
// the next pool can carry would only age: it misses that pool, waits a whole round more, and a
// client resends it. Admission answers RESOURCE_EXHAUSTED past either bound.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/state/application.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger::net {

inline constexpr uint64_t kMaxNonceGap = 64;

class Mempool {
 public:
  explicit Mempool(size_t capacity) : capacity_(capacity) {}

  Status Admit(const Transaction& tx, const SparseMerkleTree& state);
  // `next` is the context of the block after `state`. Runs CheckApp, the expensive part (the
  // reviews' ring signatures): a caller holding a lock others need runs CheckApp first,
  // without it, and then AdmitCheckedApp under it.
  Status AdmitApp(const AppTransaction& tx, const SparseMerkleTree& state, const AppRegistry& apps,
                  const BlockContext& next);
  // AdmitApp for a transaction whose CheckApp passed (on the state and context the caller
  // would pass AdmitApp): every check but CheckApp.
  Status AdmitCheckedApp(const AppTransaction& tx, const AppRegistry& apps);
  // Why `state` would not apply `tx` in block `next` with every signature checked (OK: it
  // would). Reads no mempool state: needs no lock.
  static Status CheckApp(const AppTransaction& tx, const SparseMerkleTree& state,
                         const AppRegistry& apps, const BlockContext& next);
  // RESOURCE_EXHAUSTED when `tx`'s application has its quota (Application::MempoolShare) of
  // the mempool waiting for a pool: cheap, checked before any signature.
  Status AppRoom(const AppTransaction& tx, const AppRegistry& apps) const;
  // Pending transactions of weight up to `max`, the oldest first (first come, first served:
  // under sustained overload no sender starves; the last application transaction taken may
  // carry the pool past `max` by less than its own weight, so a heavy one is never passed over):
  // the chosen transfers ordered by (sender, nonce) so that a sender's transfers apply in order
  // within a pool, then application transactions in arrival order, merged per application by
  // Application::Coalesce.
  std::vector<LedgerTx> Snapshot(size_t max, const AppRegistry& apps) const;
  // Snapshot(max, apps), and the transactions it took count as frozen (no longer waiting)
  // until the next Prune: the pool of the block being agreed. `weight` (if given) receives the
  // pool's weight, the sum of its entries' (what BlockWeight would read from the pool).
  std::vector<LedgerTx> Freeze(size_t max, const AppRegistry& apps, size_t* weight = nullptr);
  // Drops every transfer whose nonce the committed `state` has used up, and every application
  // transaction that `state` no longer accepts. Called when a block commits: the pool frozen
  // for it is settled, so what it carried and the block did not is waiting again.
  void Prune(const SparseMerkleTree& state, const AppRegistry& apps, const BlockContext& next);
  size_t size() const { return pending_.size() + app_order_.size(); }  // entries
  size_t weight() const { return weight_; }                            // their weight
  // The weight pending and not in the frozen pool: what the next pool would take.
  size_t waiting() const { return weight_ - frozen_weight_; }
  // Admission answers RESOURCE_EXHAUSTED while weight() >= capacity() or, if waiting_capacity()
  // is not 0, while waiting() >= waiting_capacity(). Lowering either drops nothing admitted.
  size_t capacity() const { return capacity_; }
  void set_capacity(size_t capacity) { capacity_ = capacity; }
  size_t waiting_capacity() const { return waiting_capacity_; }
  void set_waiting_capacity(size_t capacity) { waiting_capacity_ = capacity; }
  // OK while both bounds leave room; else RESOURCE_EXHAUSTED saying which bound is reached.
  Status Room() const;

 private:
  using TransferKey = std::pair<PublicKey, uint64_t>;  // (sender, nonce)
  struct Selection {
    std::vector<TransferKey> transfers;
    std::vector<Hash256> apps;
    size_t weight = 0;
  };
  struct AppEntry {
    AppTransaction tx;
    size_t weight;  // Application::Weight at admission, at least 1
  };
  // Not pending already, and AppRoom.
  Status AppAdmissible(const AppTransaction& tx, const AppRegistry& apps) const;
  // Room(), then `tx` pending with its weight.
  Status InsertApp(const AppTransaction& tx, const AppRegistry& apps);
  // The oldest transfers and then application transactions in arrival order, up to weight max.
  Selection Choose(size_t max) const;
  // The selection as a pool: transfers in (sender, nonce) order, then each application's
  // transactions as its Coalesce merges them.
  std::vector<LedgerTx> Build(Selection chosen, const AppRegistry& apps) const;

  size_t capacity_;
  size_t waiting_capacity_ = 0;
  std::map<TransferKey, std::pair<Transaction, uint64_t>> pending_;  // -> (tx, arrival)
  std::map<uint64_t, TransferKey> arrivals_;                         // arrival -> transfer
  uint64_t next_arrival_ = 0;
  std::map<Hash256, AppEntry> pending_apps_;  // by LedgerTxId
  std::deque<Hash256> app_order_;             // arrival order
  std::map<uint8_t, size_t> app_waiting_;     // weight waiting per app id (the quota's count)
  std::set<TransferKey> frozen_;              // in the frozen pool (all pending)
  std::set<Hash256> frozen_apps_;
  size_t weight_ = 0;         // of everything pending
  size_t frozen_weight_ = 0;  // of the frozen pool
};

}  // namespace tessera::ledger::net
