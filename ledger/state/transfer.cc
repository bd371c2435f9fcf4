#include "ledger/state/transfer.h"

#include <algorithm>
#include <limits>

#include "ledger/state/block_transition.h"

namespace tessera::ledger {

LeafLookup TreeLookup(const SparseMerkleTree& tree) {
  return [&tree](const Hash256& key) -> Result<std::optional<LeafValue>> { return tree.Get(key); };
}

LeafLookup ProofLookup(const StateProof& proof, const Hash256& root) {
  return [&proof, root](const Hash256& key) -> Result<std::optional<LeafValue>> {
    TESSERA_ASSIGN_OR_RETURN(auto values, proof.Verify(root, std::span(&key, 1)));
    return values[0];
  };
}

std::vector<Hash256> TouchedKeys(std::span<const Transaction> txs) {
  std::vector<Hash256> keys;
  keys.reserve(2 * txs.size());
  for (const Transaction& tx : txs) {
    keys.push_back(AccountKey(tx.from));
    keys.push_back(AccountKey(tx.to));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

namespace {
Result<std::optional<Account>> LoadAccount(const LeafReader& state, const Hash256& key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<LeafValue> leaf, state.Get(key));
  if (!leaf) return std::optional<Account>();
  TESSERA_ASSIGN_OR_RETURN(Account account, DecodeAccount(*leaf));
  return std::optional<Account>(account);
}
}  // namespace

Result<AppVerdict> ApplyTransfer(const Transaction& tx, const LeafReader& state,
                                 bool check_signature) {
  if (tx.amount == 0) return AppVerdict::Reject("zero amount");
  if (tx.from == tx.to) return AppVerdict::Reject("transfer to self");
  if (check_signature && !VerifyTransaction(tx)) return AppVerdict::RejectCrypto("bad signature");
  Hash256 from_key = AccountKey(tx.from), to_key = AccountKey(tx.to);
  TESSERA_ASSIGN_OR_RETURN(std::optional<Account> from, LoadAccount(state, from_key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<Account> to, LoadAccount(state, to_key));
  if (!from) return AppVerdict::Reject("unknown sender");
  if (from->nonce != tx.nonce) {
    return AppVerdict::Reject("nonce " + std::to_string(tx.nonce) + ", expected " +
                              std::to_string(from->nonce));
  }
  if (from->balance < tx.amount) return AppVerdict::Reject("insufficient balance");
  uint64_t to_balance = to ? to->balance : 0;
  if (to_balance > std::numeric_limits<uint64_t>::max() - tx.amount) {
    return AppVerdict::Reject("receiver balance would overflow");
  }
  from->balance -= tx.amount;
  from->nonce += 1;
  Account receiver = to.value_or(Account{});
  receiver.balance += tx.amount;
  return AppVerdict::Accept({{from_key, EncodeAccount(*from)}, {to_key, EncodeAccount(receiver)}});
}

Result<TransferOutcome> ApplyTransfers(const LeafLookup& lookup, std::span<const Transaction> txs,
                                       bool check_signatures) {
  std::vector<LedgerTx> block(txs.begin(), txs.end());
  CryptoPolicy policy;
  const std::vector<uint32_t> none;
  if (!check_signatures) {
    policy.claimed_failures = &none;
    policy.verify = [](size_t) { return false; };
  }
  TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome,
                           ApplyBlock(lookup, block, BlockContext{}, AppRegistry{}, policy));
  return TransferOutcome{std::move(outcome.updates), outcome.applied, std::move(outcome.rejected)};
}

}  // namespace tessera::ledger
