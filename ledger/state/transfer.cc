#include "ledger/state/transfer.h"

#include <algorithm>
#include <limits>
#include <map>

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

Result<TransferOutcome> ApplyTransfers(const LeafLookup& lookup, std::span<const Transaction> txs,
                                       bool check_signatures) {
  // Working copies of every account touched so far (nullopt: does not exist yet).
  std::map<Hash256, std::optional<Account>> accounts;
  auto load = [&](const Hash256& key) -> Result<std::optional<Account>*> {
    auto it = accounts.find(key);
    if (it != accounts.end()) return &it->second;
    TESSERA_ASSIGN_OR_RETURN(std::optional<LeafValue> leaf, lookup(key));
    std::optional<Account> account;
    if (leaf) {
      TESSERA_ASSIGN_OR_RETURN(account, DecodeAccount(*leaf));
    }
    return &accounts.emplace(key, account).first->second;
  };

  TransferOutcome out;
  std::map<Hash256, bool> dirty;
  for (size_t i = 0; i < txs.size(); ++i) {
    const Transaction& tx = txs[i];
    auto reject = [&](std::string why) { out.rejected.emplace_back(i, std::move(why)); };
    if (tx.amount == 0) {
      reject("zero amount");
      continue;
    }
    if (tx.from == tx.to) {
      reject("transfer to self");
      continue;
    }
    if (check_signatures && !VerifyTransaction(tx)) {
      reject("bad signature");
      continue;
    }
    Hash256 from_key = AccountKey(tx.from), to_key = AccountKey(tx.to);
    TESSERA_ASSIGN_OR_RETURN(std::optional<Account> * from, load(from_key));
    TESSERA_ASSIGN_OR_RETURN(std::optional<Account> * to, load(to_key));
    if (!from->has_value()) {
      reject("unknown sender");
      continue;
    }
    if ((*from)->nonce != tx.nonce) {
      reject("nonce " + std::to_string(tx.nonce) + ", expected " + std::to_string((*from)->nonce));
      continue;
    }
    if ((*from)->balance < tx.amount) {
      reject("insufficient balance");
      continue;
    }
    uint64_t to_balance = to->has_value() ? (*to)->balance : 0;
    if (to_balance > std::numeric_limits<uint64_t>::max() - tx.amount) {
      reject("receiver balance would overflow");
      continue;
    }
    (*from)->balance -= tx.amount;
    (*from)->nonce += 1;
    if (!to->has_value()) *to = Account{};
    (*to)->balance += tx.amount;
    dirty[from_key] = true;
    dirty[to_key] = true;
    ++out.applied;
  }
  out.updates.reserve(dirty.size());
  for (const auto& [key, unused] : dirty) {
    out.updates.push_back({key, EncodeAccount(*accounts.at(key))});
  }
  return out;
}

}  // namespace tessera::ledger
