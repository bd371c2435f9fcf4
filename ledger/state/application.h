// Applications: state machines that live in the ledger's state tree beside the accounts.
//
// A block's body is a list of ledger transactions (messages.h LedgerTx): transfers, which the
// ledger itself executes (transfer.h), and application transactions, an (app id, payload)
// pair whose meaning belongs to the application registered under that id. The reviews system
// (reviews/ledger/) is one. Every node of a chain runs the same applications with the same
// parameters (they are part of the genesis file), so the state transition stays a pure
// function of (previous state, block) that politicians execute over their tree and citizens
// re-execute over a Merkle multi-proof (block_transition.h):
//
//   1. ReadSet(payload, ctx) names every leaf the transaction may read. It may depend only on
//      the payload and the context, never on state, so a politician can prove those leaves to
//      a citizen before anyone executes anything.
//   2. Apply(payload, ctx, state, verify_crypto) reads those leaves (seeing the effects of the
//      block's earlier transactions) and returns either the leaf updates or the reason the
//      transaction does not apply. A rejected transaction is skipped and the block stays
//      valid, exactly like a transfer with a stale nonce.
//
// Cryptographic checks (signatures, ring signatures) are separated from state checks so that a
// citizen can verify only a random sample of them (Blockene's sampled validation, research
// note §3 steps 3 and 6): with verify_crypto == false Apply must assume that every signature
// in the payload is valid and still perform every state check. A transaction rejected because
// a signature failed must say so in AppVerdict::crypto_failure; block_transition.h compares
// that against the politician's claim for the transactions a citizen samples.
//
// Keys: an application must keep its leaves apart from accounts (whose key is SHA-256 of a
// public key) and from other applications. Use AppLeafKey(app id, ...) for every key.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hex.h"
#include "core/status.h"
#include "ledger/crypto/bytes.h"
#include "ledger/state/account.h"

namespace tessera::ledger {

// What an application transaction may know about the block it executes in. Both fields are
// known before the block is proposed, so a politician can execute a candidate body for
// citizens (the seed of block `height` itself depends on the proposer's VRF).
struct BlockContext {
  uint64_t height = 0;  // the block being applied (>= 1)
  Hash256 prev_seed{};  // sortition seed of block height - 1
};

// Reads leaves of the state as of the transaction being applied: the pre-block state plus
// the updates of every earlier transaction in the block. An error means the leaf cannot be
// read at all (a citizen's proof does not cover it) and aborts the whole block.
class LeafReader {
 public:
  virtual ~LeafReader() = default;
  virtual Result<std::optional<LeafValue>> Get(const Hash256& key) const = 0;
};

// The result of applying one application transaction.
struct AppVerdict {
  std::optional<std::string> rejected;  // set: the transaction is skipped, for this reason
  bool crypto_failure = false;          // the rejection is a failed signature check
  std::vector<LeafUpdate> updates;      // applied iff !rejected

  static AppVerdict Accept(std::vector<LeafUpdate> updates) {
    return {{}, false, std::move(updates)};
  }
  static AppVerdict Reject(std::string why) { return {std::move(why), false, {}}; }
  static AppVerdict RejectCrypto(std::string why) { return {std::move(why), true, {}}; }
};

class Application {
 public:
  virtual ~Application() = default;

  // The id carried by this application's transactions (AppTransaction::app), and its name in
  // the genesis file ([apps.<name>]).
  virtual uint8_t id() const = 0;
  virtual std::string_view name() const = 0;

  // Every leaf Apply may read for this payload. INVALID_ARGUMENT for a payload that does not
  // decode: such a transaction is rejected at admission and skipped in a block.
  virtual Result<std::vector<Hash256>> ReadSet(ByteSpan payload, const BlockContext& ctx) const = 0;

  virtual Result<AppVerdict> Apply(ByteSpan payload, const BlockContext& ctx,
                                   const LeafReader& state, bool verify_crypto) const = 0;

  // Leaves written at the start of every block, before its transactions (e.g. recording an
  // epoch's seed). Must depend on the context only.
  virtual std::vector<LeafUpdate> BeginBlock(const BlockContext& ctx) const {
    (void)ctx;
    return {};
  }

  // The largest share of a politician's mempool capacity that this application's transactions
  // waiting for a pool may take (by Weight; those in the pool frozen for the block being agreed
  // do not count: ledger/net/mempool.h), in (0, 1]. Past it a new transaction of the
  // application is refused before Apply runs, so a flood of one application's transactions
  // (which may be expensive to verify) neither fills the mempool for the others nor costs a
  // signature check each. Default: no quota.
  virtual double MempoolShare() const { return 1.0; }

  // A politician freezing a pool may merge pending payloads of this application into fewer,
  // larger ones (TrustRate batches reviews of one item so its ring is read once). The result
  // must apply exactly as the inputs would in order. Default: no merging.
  virtual std::vector<std::string> Coalesce(std::vector<std::string> payloads) const {
    return payloads;
  }

  // How many of this application's transactions, as clients submit them, a payload carries:
  // the politicians' pool budget (ledger/net/block_budget.h, BlockWeight) counts a pool's and a
  // block's work in these units, as the mempool chooses a pool's transactions in them. A payload
  // that Coalesce merged from n payloads must weigh the sum of their weights (a batch of 50
  // reviews weighs 50, not 1), or a full pool of merged batches reads as a nearly empty one and
  // the budget never grows it. Called on payloads that may not decode (another politician's
  // pool): must be cheap (no signature check), at least 1, and bounded by the application.
  // Default: 1.
  virtual size_t Weight(ByteSpan payload) const {
    (void)payload;
    return 1;
  }
};

// An application's parameters from the genesis file: [apps.<name>] with string or integer
// values, kept as text.
struct AppParams {
  std::string name;
  std::map<std::string, std::string> values;

  Result<std::string> GetString(std::string_view key) const;
  Result<int64_t> GetInt(std::string_view key) const;
  Result<int64_t> GetIntOr(std::string_view key, int64_t fallback) const;
};

// The applications a node runs, by id.
class AppRegistry {
 public:
  // ALREADY_EXISTS when the id is taken.
  Status Add(std::shared_ptr<const Application> app);
  const Application* Find(uint8_t id) const;
  const std::map<uint8_t, std::shared_ptr<const Application>>& apps() const { return apps_; }

 private:
  std::map<uint8_t, std::shared_ptr<const Application>> apps_;
};

// SHA-256("tessera/app" || app id || part_1 || ... || part_n), each part length-prefixed
// (u32, big-endian), so distinct part lists never collide.
Hash256 AppLeafKey(uint8_t app, std::initializer_list<ByteSpan> parts);

}  // namespace tessera::ledger
