// Background pre-verification of the application transactions in pools gossiped by other
// politicians.
//
// Why: a politician verifies an application transaction's signatures when it admits it, and
// an application may remember what it verified (the reviews application keeps a
// verified-review cache; the ledger's SignatureCache does the same for Ed25519). A transaction
// admitted by another politician reaches this one only inside that politician's pool, and was
// verified here for the first time when the committee asked this politician to execute the
// block carrying it (PoliticianNode::Execute): on the round's critical path. With ring
// signatures of k = 50 that made rounds carrying reviews take about twice as long as idle ones
// (docs/reviews.md, "Reviews committed per second on a local network").
//
// What: a PoolPreverifier executes a peer's pool's application transactions once, on
// background threads, as soon as the pool arrives, against the latest committed state and the
// next block's context, and throws the outcome away. What remains is the side effect on the
// caches the execution fills, so that the round's execution only hits them. Nothing here knows
// any application: it runs the ledger's own state transition (block_transition.h) over
// ApplyBlock's usual inputs, and an application without a cache simply gains nothing.
//
// Bounds: at most max_pending pools wait (the oldest is dropped first); a pool whose height is
// already committed when its turn comes is skipped (its block was executed without it); the
// work is cut into chunks of chunk_txs transactions so that a stop or a commit is noticed
// between chunks. `threads` workers take chunks in queue order, so the chunks of one pool, and
// the pools of different peers, are checked in parallel: the pools of a height arrive together
// at the start of its round, and the block's execution waits on what is still in flight
// (docs/reviews.md, session 19). Transfers are left out (their Ed25519 check is ~40 us; only
// applications may carry expensive cryptography), and a pool without application transactions
// costs nothing.
//
// The verdicts are not used: a chunk runs over the committed state without the effects of the
// block's earlier pools (or of earlier chunks), so a transaction that depends on them fails a
// state rule here and is simply verified again at execution, as before. Correctness never
// depends on this class: it only decides when a cache is filled.
//
// Thread safety: Offer, Wait and stats may be called from any thread. The threads start with
// the first Offer and are joined by the destructor.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ledger/codec/messages.h"
#include "ledger/crypto/signature_cache.h"
#include "ledger/state/application.h"
#include "ledger/state/sparse_merkle_tree.h"

namespace tessera::ledger::net {

class PoolPreverifier {
 public:
  struct Options {
    size_t max_pending = 8;  // pools waiting; about two heights' worth of peers' pools
    size_t chunk_txs = 4;    // transactions executed between checks for stop and commit
    size_t threads = 2;      // workers (at least 1)
  };
  struct Stats {
    uint64_t pools = 0;    // pools whose application transactions were executed
    uint64_t txs = 0;      // application transactions executed
    uint64_t dropped = 0;  // pools dropped over max_pending
    uint64_t stale = 0;    // pools skipped (or cut short) because their height was committed
  };

  // `apps` and `signatures` (may be null) must outlive this object; `committed_height` names the
  // latest committed height (called with no lock of this class held).
  PoolPreverifier(const AppRegistry* apps, SignatureCache* signatures,
                  std::function<uint64_t()> committed_height, Options options);
  PoolPreverifier(const AppRegistry* apps, SignatureCache* signatures,
                  std::function<uint64_t()> committed_height)
      : PoolPreverifier(apps, signatures, std::move(committed_height), Options{}) {}
  ~PoolPreverifier();
  PoolPreverifier(const PoolPreverifier&) = delete;
  PoolPreverifier& operator=(const PoolPreverifier&) = delete;

  // Queues the application transactions of `txs`, a pool for block `height`, to be executed
  // over `state` (the state `ctx` follows). Returns false, queuing nothing, when `txs` holds no
  // application transaction.
  bool Offer(uint64_t height, const std::vector<LedgerTx>& txs, SparseMerkleTree state,
             BlockContext ctx);

  // Blocks until every pool offered so far has been executed, skipped or dropped (for tests
  // and measurements; a politician never waits on it).
  void Wait();

  Stats stats() const;

 private:
  struct Job {
    uint64_t height = 0;
    std::vector<LedgerTx> txs;  // application transactions only
    SparseMerkleTree state;
    BlockContext ctx;
    // mu_: the next chunk to hand out, chunks executing, transactions done, whether a chunk
    // found the height committed (the rest of the job is then skipped), and whether the job
    // was dropped over max_pending.
    size_t next = 0;
    size_t running = 0;
    uint64_t done = 0;
    bool stale = false;
    bool dropped = false;
  };
  void Run();
  // Accounts for a job none of whose chunks is left to hand out or running (mu_ held).
  void Finish(const Job& job);

  const AppRegistry* apps_;
  SignatureCache* signatures_;
  std::function<uint64_t()> committed_height_;
  Options options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;       // work queued, or stopping
  std::condition_variable idle_cv_;  // the queue ran empty with nothing executing
  // mu_: jobs with chunks left to hand out; a job leaves the queue when its last chunk is
  // taken, and is accounted for when its last running chunk ends.
  std::deque<std::shared_ptr<Job>> queue_;
  size_t running_ = 0;                // mu_: chunks executing
  bool stop_ = false;                 // mu_
  Stats stats_;                       // mu_
  std::vector<std::thread> threads_;  // started by the first Offer (mu_)
};

}  // namespace tessera::ledger::net
