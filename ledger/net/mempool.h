// A politician's pending transactions, admitted with clear reasons for every rejection.
//
// Admission checks a transaction against the latest committed state: a valid signature,
// amount > 0, sender != receiver, the sender exists, its nonce is not already used
// (nonce >= account nonce, and below nonce + kMaxNonceGap so nobody parks junk far ahead),
// its balance covers the amount, and no pending transaction here already uses the same
// (sender, nonce). The last rule only stops a double spend at this politician; one sent to two
// politicians is stopped by the state transition, which applies at most one transaction per
// (sender, nonce).
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger::net {

inline constexpr uint64_t kMaxNonceGap = 64;

class Mempool {
 public:
  explicit Mempool(size_t capacity) : capacity_(capacity) {}

  Status Admit(const Transaction& tx, const SparseMerkleTree& state);
  // Up to `max` pending transactions, ordered by (sender, nonce) so that a sender's transfers
  // apply in order within a pool.
  std::vector<Transaction> Snapshot(size_t max) const;
  // Drops every transaction whose nonce the committed `state` has used up.
  void Prune(const SparseMerkleTree& state);
  size_t size() const { return pending_.size(); }

 private:
  size_t capacity_;
  std::map<std::pair<PublicKey, uint64_t>, Transaction> pending_;  // (sender, nonce) -> tx
};

}  // namespace tessera::ledger::net
