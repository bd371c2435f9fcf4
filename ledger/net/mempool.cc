#include "ledger/net/mempool.h"

#include "ledger/state/account.h"

namespace tessera::ledger::net {
namespace {

Result<Account> SenderAccount(const PublicKey& key, const SparseMerkleTree& state) {
  std::optional<LeafValue> leaf = state.Get(AccountKey(key));
  if (!leaf) return NotFoundError("sender account " + ToHex(key).substr(0, 16) + " does not exist");
  return DecodeAccount(*leaf);
}

}  // namespace

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
    if (it->second == tx) return AlreadyExistsError("transaction already pending");
    return AlreadyExistsError("conflicts with a pending transaction of the same sender and nonce");
  }
  if (pending_.size() >= capacity_) return ResourceExhaustedError("mempool full");
  pending_.emplace(key, tx);
  return Status::Ok();
}

std::vector<Transaction> Mempool::Snapshot(size_t max) const {
  std::vector<Transaction> out;
  for (const auto& [key, tx] : pending_) {
    if (out.size() >= max) break;
    out.push_back(tx);
  }
  return out;
}

void Mempool::Prune(const SparseMerkleTree& state) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto account = SenderAccount(it->first.first, state);
    bool used = account.ok() && it->first.second < account->nonce;
    it = used ? pending_.erase(it) : std::next(it);
  }
}

}  // namespace tessera::ledger::net
