// A politician: an untrusted, resource-heavy server that stores the chain and the state,
// keeps a mempool, freezes a signed transaction pool per block, relays the committee's
// witness lists, proposals and votes, gossips everything to the other politicians, executes
// candidate blocks with Merkle proofs for citizens, and commits a block once it holds a
// valid committee certificate for it.
//
// Nothing a politician says is trusted by anyone: citizens check pools by signature, state by
// multi-proof against a certified root, and blocks by committee certificate (chain.h). A
// politician therefore verifies what it receives only as far as it needs to avoid storing or
// gossiping junk (signatures, identities, and the committee tickets of witness lists and votes
// for the next block), and fully verifies certified blocks before applying them.
//
// Durable state under `dir`: "state" (StateStore; version v holds the state after block v - 1,
// so version 1 is the genesis state; the newest keep_versions are kept) and "blocks"
// (BlockStore, every block). A politician restarted after
// kill -9 reopens both, re-applies any block stored but not yet applied, and catches up from
// its peers by fetching and verifying every missing certified block.
//
// The RPC handlers are plain methods so that the gRPC glue (politician_server.h) stays thin.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/status.h"
#include "ledger/crypto/signature_cache.h"
#include "ledger/net/blacklist.h"
#include "ledger/net/block_budget.h"
#include "ledger/net/block_store.h"
#include "ledger/net/chain.h"
#include "ledger/net/client.h"
#include "ledger/net/faults.h"
#include "ledger/net/flood_fetcher.h"
#include "ledger/net/mempool.h"
#include "ledger/net/pool_preverifier.h"
#include "ledger/net/rate_limiter.h"
#include "ledger/net/vote_relay.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/state_store.h"

namespace tessera::ledger::net {

struct PoliticianOptions {
  uint32_t id = 0;
  Genesis genesis;
  KeyPair keys = KeyPair::Generate();
  std::filesystem::path dir;
  PoliticianFaults faults;
  // Back-pressure (block_budget.h): the pool size starts at the genesis file's max_pool_txs
  // and adapts to the measured round time; the mempool holds backlog_pools pools' worth, at
  // most waiting_pools pools' worth of it not yet frozen into a pool (0: no such bound), and
  // answers RESOURCE_EXHAUSTED with a retry hint beyond either.
  double target_round_s = 10.0;
  double backlog_pools = 2;
  double waiting_pools = 1;
  // Not empty: the block budget's round timeline file (round_timeline.h), for measurements.
  std::filesystem::path round_timeline;
  size_t min_pool_txs = 50;
  // State versions kept: proofs can be served for the newest keep_versions - 1 blocks; older
  // versions are pruned after each commit (the chain itself is never pruned).
  uint64_t keep_versions = 64;
  // State versions kept in memory (sharing unchanged nodes): ReadState serves heights within
  // the newest served_versions - 1 blocks and never rebuilds an older tree from disk.
  uint64_t served_versions = 16;
  // Verified signatures remembered (signature_cache.h; about 80 bytes each).
  size_t signature_cache_entries = 1 << 18;
  // Request budgets (request_auth.h, rate_limiter.h), requests per second and burst: per
  // committee member for Execute, per registered identity for ReadState, and one budget
  // shared by every unauthenticated ReadState caller.
  double execute_per_s = 20, execute_burst = 40;
  double reads_per_s = 50, reads_burst = 100;
  double anonymous_reads_per_s = 50, anonymous_reads_burst = 100;
  // Long-polled round listings (GetRound with wait_ms): at most this many calls held at once,
  // and at most round_waiters_per_peer per peer (connection and listener key); beyond either
  // a call answers at once, as a poll.
  size_t round_waiters = 512;
  size_t round_waiters_per_peer = 2;
  // Round items between politicians (flood_fetcher.h, politician_flood.cc): pulled -- each
  // peer's hash listing long-polled, the missing items fetched in batches from one announcer
  // -- rather than pushed as one Post per item per peer. `flood` bounds the pull.
  bool pull_gossip = true;
  FloodFetcher::Limits flood;
  // Pushes (Post and PostPool RPCs) per transport connection, requests per second and burst
  // (AdmitPush). An honest caller pushes a few items per height: a citizen daemon its
  // citizens' witness lists, proposals, votes and evidence (about five per citizen and height),
  // a politician its pool (one per height), the registrar at most kMaxRegistrationsPerBlock
  // registrations at once; the burst holds two such blocks of registrations, and the rate
  // covers a daemon of 64 citizens (one connection) at 3 blocks/s (64 x 5 x 3 = 960).
  double pushes_per_s = 1000, pushes_burst = 2 * kMaxRegistrationsPerBlock;
};

class PoliticianNode {
 public:
  static Result<std::unique_ptr<PoliticianNode>> Open(PoliticianOptions options);
  ~PoliticianNode();

  // Starts the gossip senders and the catch-up loop; Stop() joins them.
  void Start();
  void Stop();

  uint64_t height() const;
  SignatureCache::Stats signature_stats() const { return signatures_.stats(); }

  void SubmitTransaction(const TxRequest& req, TxReply* rep);
  void GetStatus(StatusReply* rep);
  void GetBlock(const BlockRequest& req, BlockReply* rep);
  Status ReadState(const StateRequest& req, StateReply* rep);
  // Compact following (chain_follower.h): headers after req.after_height, long-polled for at
  // most kMaxHeadsWaitMs; `cancelled` (the caller went away, or the server shuts down) ends
  // the wait early. Beyond kMaxHeadWaiters concurrent waiters a request answers at once, so
  // long-polls cannot pin an unbounded number of server threads.
  void GetHeads(const HeadsRequest& req, HeadsReply* rep,
                const std::function<bool()>& cancelled = {});
  static constexpr uint32_t kMaxHeadsWaitMs = 5000;
  static constexpr uint32_t kMaxHeadsPerReply = 64;
  static constexpr size_t kMaxHeadWaiters = 512;
  Status Execute(const ExecuteRequest& req, ExecuteReply* rep);
  // The round items of req.height after req.offset. With req.wait_ms the call is held (a
  // long-poll, politician_round.cc) until an item arrives, block req.height commits, the wait
  // ends, or `cancelled`; within the bounds of PoliticianOptions::round_waiters*, counted per
  // `peer` (the transport peer) and req.listener.
  void GetRound(const RoundRequest& req, RoundReply* rep, const std::string& peer = {},
                const std::function<bool()>& cancelled = {});
  static constexpr uint32_t kMaxRoundWaitMs = 5000;
  // A listener is a public key (32 bytes); the server refuses a longer one (INVALID_ARGUMENT)
  // before the call is held, since a held call keys its per-peer count by it.
  static constexpr size_t kMaxListenerBytes = 64;
  // How held round listings ended, and how many were answered at once over a bound.
  struct RoundWaitStats {
    uint64_t woken = 0;       // an item arrived or the block committed
    uint64_t expired = 0;     // the wait ended with nothing new
    uint64_t over_bound = 0;  // not held: too many held calls (in all, or of this peer)
    size_t held = 0;          // held now
  };
  RoundWaitStats round_wait_stats() const;
  // At most kMaxItemsPerRequest hashes looked at and kMaxItemsReplyBytes of items (the item
  // that crosses it is the last); rep->next_offset() = hashes looked at (ItemsRequest).
  void GetItems(const ItemsRequest& req, RoundReply* rep);
  static constexpr size_t kMaxItemsPerRequest = 4096;
  static constexpr size_t kMaxItemsReplyBytes = 4 << 20;
  void Post(const PostRequest& req, PostReply* rep);
  void PostPool(const Pool& pool, PostReply* rep);
  // Whether a push from transport connection `peer` (ServerContext::peer()) is taken at all,
  // before anything in it is decoded or verified (politician_flood.cc): RESOURCE_EXHAUSTED
  // once that connection has spent its pushes_per_s budget, and with pull_gossip on
  // FAILED_PRECONDITION for a pushed pool commitment (`item`, if a Post: no honest caller
  // pushes one; peers pull them from the listing). The gRPC service calls it before Post and
  // PostPool; in-process calls (the fetcher's own Post) are not charged.
  Status AdmitPush(const std::string& peer, const RoundItem* item);
  struct PushStats {
    uint64_t over_budget = 0;         // refused by the per-connection budget
    uint64_t pushed_commitments = 0;  // commitments refused because they were pushed
  };
  PushStats push_stats() const;
  // Connections whose push budgets are remembered (least recently seen forgotten first).
  static constexpr size_t kMaxPushSources = 4096;
  // The pools named in `req` that this politician holds (see PoolsRequest).
  Status GetPools(const PoolsRequest& req, PoolsReply* rep);

  const PoliticianFaults& faults() const { return options_.faults; }

  // The pull gossip of round items (politician_flood.cc): the fetcher's counters and pending
  // set, and the RPCs this politician made for it.
  struct FloodStats {
    FloodFetcher::Stats fetcher;
    size_t pending = 0;
    uint64_t listing_rpcs = 0, fetch_rpcs = 0;
    uint64_t listing_errors = 0;  // failed listing calls (unreachable, or over the reply cap)
    uint64_t accepted = 0, refused = 0;  // fetched items AcceptItem took / refused
    uint64_t surplus_dropped = 0;        // fetched, dropped before Post (surplus_filter.h)
  };
  FloodStats flood_stats() const;

 private:
  struct StoredPool {
    std::string commitment;
    std::vector<LedgerTx> txs;
    Pool wire;
  };
  struct RoundLog {
    std::vector<RoundItem> items;
    std::map<Hash256, size_t> seen;  // RoundItemHash -> index in items
    std::map<Hash256, std::pair<BlockHeader, Identity>> proposals;  // by block hash
    VoteRelay votes;  // BA* votes: bounds, dedupe, per-period cert signers
    std::map<uint32_t, std::set<Hash256>> commitments;  // politician id -> pools it signed
    size_t registrations = 0;  // registration items (registration.h), at most a block's worth
    bool first_period_ticket = false;  // a proposer announced a ticket of proposer period 0
  };
  struct Peer {
    std::unique_ptr<PoliticianClient> client;
    std::deque<std::function<void(PoliticianClient&)>> queue;
    std::thread thread;
  };

  explicit PoliticianNode(PoliticianOptions options);
  Status Init();
  // Verifies, stores and applies a certified block on top of the latest one (no lock held;
  // see the phases in politician.cc). `pools` may supply pool data not received by gossip.
  // `from_votes`: assembled from cert votes whose tickets are in tickets_.
  Status CommitBlock(const CertifiedBlockData& block, const std::vector<Pool>& pools,
                     bool from_votes);
  // The context of the block after the latest one (mu_ held).
  BlockContext NextContext() const {
    return {.height = latest_.height + 1, .prev_seed = latest_.seed};
  }
  Result<std::vector<LedgerTx>> CollectTxs(const std::vector<Hash256>& hashes,
                                           const std::vector<Pool>& extra);
  // mu_ held; verifies the commitment and applies the flood limits (size, height window, two
  // pools per politician and height) unless the pool is one of `certified` (a certified
  // block's pools, which must stay appliable).
  Status AddPool(const Pool& pool, const std::vector<Hash256>* certified = nullptr);
  // A peer's pool just stored by AddPool (mu_ held): its application transactions are handed
  // to preverifier_, so that executing the block that carries them hits the verified caches
  // (pool_preverifier.h). Own pools (admitted here) and a certified block's pools (executed
  // at once) are not.
  void PreverifyPool(const TxPoolCommitment& c, const std::vector<LedgerTx>& txs);
  // The caller of a ReadState (request_auth.h): OK if it may be served now.
  Status AuthorizeRead(const StateRequest& req);
  // The caller of an Execute: a committee member of the next height with budget left (takes
  // mu_ only for the ticket check).
  Status AuthorizeExecute(const ExecuteRequest& req);
  void FreezePool(uint64_t height);  // mu_ held
  void Flood(uint64_t height);       // the flood adversary (politician_flood.cc; mu_ held)
  // Round `height`'s pool commitment `c` passes the per-politician cap (one, a second kept as
  // equivocation evidence, more refused) before its signature is checked, so that a flooding
  // politician costs at most two verifications per height (politician_flood.cc; mu_ held).
  Status AdmitCommitment(uint64_t height, const TxPoolCommitment& c, RoundLog& log);
  // Adds the verified evidence of every politician blacklisted at `height` to round `height`'s
  // items, so that its committee reads it (politician_evidence.cc; mu_ held).
  void RelayEvidence(uint64_t height);
  Status AcceptItem(uint64_t height, const RoundItem& item);  // mu_ held
  // Holds a GetRound long-poll while round req.height has nothing after req.offset (mu_ held
  // through `lock`; see GetRound).
  void WaitForRoundItems(const RoundRequest& req, const std::string& peer,
                         const std::function<bool()>& cancelled,
                         std::unique_lock<std::mutex>& lock);
  // The blocks of the next height that hold a cert-vote quorum (mu_ held).
  std::vector<CertifiedBlockData> CertifiableBlocks();
  void CommitFromVotes();  // commits one of them, if any (no lock held)
  void Gossip(std::function<void(PoliticianClient&)> task);
  void PeerLoop(Peer* peer);
  // Pull gossip (politician_flood.cc): per peer, one thread long-polls its listing of the next
  // height and announces it to fetcher_; one runs the fetches planned for that peer.
  void ListenLoop(size_t peer);
  void FetchLoop(size_t peer);
  void PlanFetches();  // flood_mu_ held: fetcher_.NextFetches into the peers' mailboxes
  bool Stopping();
  static constexpr uint32_t kFloodListenWaitMs = 500;
  void CatchUpLoop();
  bool Drop();
  void Delay() const;

  PoliticianOptions options_;
  AppRegistry apps_;  // from the genesis file
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<BlockStore> blocks_;

  // Lock order: commit_mu_, then mu_, then mempool_mu_. mu_ guards the round and chain
  // bookkeeping below and is held only for bookkeeping, never for execution, hashing or disk
  // writes; mempool_mu_ guards admission; commit_mu_ serialises commits.
  std::mutex commit_mu_;
  mutable std::mutex mu_;
  BlockHeader latest_;
  BlockReply latest_reply_;
  std::mutex mempool_mu_;
  Mempool mempool_;                                                 // mempool_mu_
  BlockBudget budget_;                                              // mempool_mu_
  SignatureCache signatures_;                                       // thread-safe
  RateLimiter execute_limiter_, read_limiter_, anonymous_limiter_;  // thread-safe
  RateLimiter push_limiter_{options_.pushes_per_s, options_.pushes_burst, kMaxPushSources};
  std::atomic<uint64_t> pushes_over_budget_{0}, pushed_commitments_{0};
  std::map<Hash256, StoredPool> pools_;
  std::map<std::pair<uint64_t, uint32_t>, std::set<Hash256>> pools_by_owner_;  // (height, id)
  std::map<uint64_t, std::vector<std::string>> my_commitments_;  // height -> 1 (or 2) signed
  std::map<uint64_t, RoundLog> rounds_;
  // Evidence against lying politicians (evidence.h), verified before it is kept or relayed;
  // one per politician (mu_).
  Blacklist evidence_{options_.genesis, kBlacklistBlocks, &apps_};
  // A restarted politician may have signed a pool for latest + 1 before it crashed; it signs
  // none up to this height, so a crash never makes it sign two (FreezePool; evidence.h).
  uint64_t pool_floor_ = 0;
  TicketCache tickets_;  // committee tickets of relayed witness lists and votes
  // The newest kRecentHeads headers (canonical) and their proposers' identities, for
  // GetHeads without a disk read; head_cv_ wakes long-polls when latest_ moves.
  static constexpr size_t kRecentHeads = 256;
  void RememberHead(const CertifiedBlock& block);  // mu_ held
  std::map<uint64_t, std::pair<std::string, std::string>> recent_heads_;
  std::condition_variable head_cv_;
  size_t head_waiters_ = 0;
  // Executions of this height's bodies, without their pools (each caller gets the pools it
  // does not hold added to its copy); shared, so that a hit is copied outside mu_.
  std::map<std::string, std::shared_ptr<const ExecuteReply>> execute_cache_;
  std::set<std::string> executing_;  // bodies being executed: later callers wait for them
  std::condition_variable executed_cv_;
  uint64_t round_requests_ = 0;
  // Held GetRound long-polls (mu_): woken by every accepted item and every commit.
  std::condition_variable round_cv_;
  std::map<std::string, size_t> round_waiters_by_peer_;
  RoundWaitStats round_waits_;
  std::mt19937_64 rng_{std::random_device{}()};

  std::mutex peers_mu_;
  std::condition_variable peers_cv_;
  std::vector<std::unique_ptr<Peer>> peers_;
  // Pull gossip. Lock order: mu_, then flood_mu_.
  mutable std::mutex flood_mu_;
  std::condition_variable flood_cv_;
  std::unique_ptr<FloodFetcher> fetcher_;                   // flood_mu_
  std::vector<std::deque<FloodFetcher::Fetch>> mailboxes_;  // flood_mu_, one per peer
  FloodStats flood_counts_;                                 // flood_mu_
  std::vector<std::thread> flood_threads_;
  std::atomic<bool> flood_stop_{false};
  std::thread catch_up_;
  bool stopping_ = false;
  // Last: destroyed (and its thread joined) before the state, applications and caches it uses.
  PoolPreverifier preverifier_{&apps_, &signatures_, [this] { return height(); }};
};

}  // namespace tessera::ledger::net
