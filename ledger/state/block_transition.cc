#include "ledger/state/block_transition.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessera::ledger {

namespace {

// The pre-block state plus the updates of the transactions applied so far.
class Overlay : public LeafReader {
 public:
  explicit Overlay(const LeafLookup& lookup) : lookup_(lookup) {}

  Result<std::optional<LeafValue>> Get(const Hash256& key) const override {
    auto it = written_.find(key);
    if (it != written_.end()) return std::optional<LeafValue>(it->second);
    return lookup_(key);
  }
  void Put(const LeafUpdate& update) { written_[update.key] = update.value; }
  std::vector<LeafUpdate> Updates() const {
    std::vector<LeafUpdate> out;
    out.reserve(written_.size());
    for (const auto& [key, value] : written_) out.push_back({key, value});
    return out;
  }

 private:
  const LeafLookup& lookup_;
  std::map<Hash256, LeafValue> written_;
};

std::vector<Hash256> TransferKeys(const Transaction& tx) {
  return {AccountKey(tx.from), AccountKey(tx.to)};
}

// The read set of one transaction; an error means the transaction cannot apply at all.
Result<std::vector<Hash256>> ReadSetOf(const LedgerTx& tx, const BlockContext& ctx,
                                       const AppRegistry& apps) {
  if (const auto* transfer = std::get_if<Transaction>(&tx)) return TransferKeys(*transfer);
  const auto& app_tx = std::get<AppTransaction>(tx);
  const Application* app = apps.Find(app_tx.app);
  if (app == nullptr) {
    return InvalidArgumentError("unknown application " + std::to_string(app_tx.app));
  }
  return app->ReadSet(AsBytes(app_tx.payload), ctx);
}

std::vector<LeafUpdate> BeginBlockUpdates(const BlockContext& ctx, const AppRegistry& apps) {
  std::vector<LeafUpdate> updates;
  for (const auto& [id, app] : apps.apps()) {
    for (LeafUpdate& u : app->BeginBlock(ctx)) updates.push_back(u);
  }
  return updates;
}

}  // namespace

std::vector<Hash256> BlockKeys(std::span<const LedgerTx> txs, const BlockContext& ctx,
                               const AppRegistry& apps) {
  std::vector<Hash256> keys;
  for (const LeafUpdate& u : BeginBlockUpdates(ctx, apps)) keys.push_back(u.key);
  for (const LedgerTx& tx : txs) {
    auto read_set = ReadSetOf(tx, ctx, apps);
    if (!read_set.ok()) continue;  // skipped in the block, reads nothing
    keys.insert(keys.end(), read_set->begin(), read_set->end());
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

Result<BlockOutcome> ApplyBlock(const LeafLookup& lookup, std::span<const LedgerTx> txs,
                                const BlockContext& ctx, const AppRegistry& apps,
                                const CryptoPolicy& policy) {
  Overlay state(lookup);
  for (const LeafUpdate& u : BeginBlockUpdates(ctx, apps)) state.Put(u);

  BlockOutcome out;
  for (size_t i = 0; i < txs.size(); ++i) {
    const LedgerTx& tx = txs[i];
    auto read_set = ReadSetOf(tx, ctx, apps);
    if (!read_set.ok()) {
      out.rejected.emplace_back(i, read_set.status().message());
      continue;
    }

    bool claimed_bad = false;
    bool verify = true;
    if (policy.claimed_failures != nullptr) {
      claimed_bad = std::binary_search(policy.claimed_failures->begin(),
                                       policy.claimed_failures->end(), static_cast<uint32_t>(i));
      verify = !policy.verify || policy.verify(i);
    }
    if (!verify && claimed_bad) {
      out.rejected.emplace_back(i, "signature check failed (executor's claim, not sampled)");
      out.crypto_rejected.push_back(static_cast<uint32_t>(i));
      continue;
    }

    Result<AppVerdict> verdict = InternalError("unreachable");
    if (const auto* transfer = std::get_if<Transaction>(&tx)) {
      verdict = ApplyTransfer(*transfer, state, verify);
    } else {
      const auto& app_tx = std::get<AppTransaction>(tx);
      verdict = apps.Find(app_tx.app)->Apply(AsBytes(app_tx.payload), ctx, state, verify);
    }
    if (!verdict.ok()) return verdict.status().WithContext("transaction " + std::to_string(i));
    if (verify) {
      ++out.crypto_checked;
      if (policy.claimed_failures != nullptr && verdict->crypto_failure != claimed_bad) {
        return PermissionDeniedError("transaction " + std::to_string(i) +
                                     ": the executor claimed its signature check " +
                                     (claimed_bad ? "fails" : "passes") + ", but it " +
                                     (verdict->crypto_failure ? "fails" : "passes"));
      }
    }
    if (verdict->rejected) {
      out.rejected.emplace_back(i, *verdict->rejected);
      if (verdict->crypto_failure) out.crypto_rejected.push_back(static_cast<uint32_t>(i));
      continue;
    }
    std::set<Hash256> readable(read_set->begin(), read_set->end());
    for (const LeafUpdate& u : verdict->updates) {
      if (!readable.contains(u.key)) {
        return InternalError("transaction " + std::to_string(i) +
                             " wrote a leaf outside its read set (application bug)");
      }
    }
    for (const LeafUpdate& u : verdict->updates) state.Put(u);
    ++out.applied;
  }
  out.updates = state.Updates();
  return out;
}

}  // namespace tessera::ledger
