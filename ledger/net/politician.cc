// A politician's life cycle (open, start, stop) and its commit path: the one place the chain and
// the state advance. The RPC handlers live beside it by purpose: politician_pools.cc (admission
// and pools), politician_round.cc (round items and agreement), politician_chain.cc (gossip,
// catch-up, serving blocks and heads), politician_state.cc (authenticated state reads and
// execution).
#include "ledger/net/politician.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "ledger/crypto/hash.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {

PoliticianNode::PoliticianNode(PoliticianOptions options)
    : options_(std::move(options)),
      mempool_(0),
      budget_({.max_pool_txs = options_.genesis.max_pool_txs,
               .min_pool_txs = options_.min_pool_txs,
               .target_round_s = options_.target_round_s,
               .backlog_pools = options_.backlog_pools,
               .waiting_pools = options_.waiting_pools,
               .timeline = options_.round_timeline}),
      signatures_(options_.signature_cache_entries),
      execute_limiter_(options_.execute_per_s, options_.execute_burst),
      read_limiter_(options_.reads_per_s, options_.reads_burst),
      anonymous_limiter_(options_.anonymous_reads_per_s, options_.anonymous_reads_burst, 1) {
  mempool_.set_capacity(budget_.mempool_capacity());
  mempool_.set_waiting_capacity(budget_.waiting_capacity());
}

PoliticianNode::~PoliticianNode() { Stop(); }

Result<std::unique_ptr<PoliticianNode>> PoliticianNode::Open(PoliticianOptions options) {
  if (options.genesis.Politician(options.id) == nullptr) {
    return InvalidArgumentError("politician id " + std::to_string(options.id) +
                                " is not in the genesis file");
  }
  if (options.genesis.Politician(options.id)->key != options.keys.public_key()) {
    return InvalidArgumentError("this key is not politician " + std::to_string(options.id) +
                                "'s key in the genesis file");
  }
  std::unique_ptr<PoliticianNode> node(new PoliticianNode(std::move(options)));
  TESSERA_RETURN_IF_ERROR(node->Init());
  return node;
}

Status PoliticianNode::Init() {
  TESSERA_ASSIGN_OR_RETURN(apps_, LoadApps(options_.genesis));
  std::filesystem::create_directories(options_.dir);
  // Evidence survives a restart (blacklist.h); an unreadable file only loses evidence.
  if (Status s = evidence_.Persist(options_.dir / "evidence"); !s.ok()) {
    spdlog::warn("politician: {}", s.ToString());
  }
  StateStoreOptions so;
  so.cached_versions = std::max<uint64_t>(options_.served_versions, 2);
  TESSERA_ASSIGN_OR_RETURN(state_, StateStore::Open(options_.dir / "state", so));
  TESSERA_ASSIGN_OR_RETURN(blocks_, BlockStore::Open(options_.dir / "blocks"));
  // With the root stated in the genesis file no tree is built here: the store builds the
  // genesis state once, and its root is checked against the stated one (1M accounts: this
  // was three builds of a 1M-leaf tree before the first answer).
  TESSERA_ASSIGN_OR_RETURN(BlockHeader genesis, options_.genesis.GenesisHeader());
  if (state_->version() == 0) {
    TESSERA_ASSIGN_OR_RETURN(Hash256 built, state_->Commit(options_.genesis.GenesisUpdates()));
    TESSERA_RETURN_IF_ERROR(options_.genesis.CheckStateRoot(built));
  }
  // The data must come from this genesis file: the genesis state (version 1) if it is not
  // pruned yet, else the stored block 0 (written with the genesis state, never pruned).
  if (state_->oldest_version() <= 1) {
    TESSERA_ASSIGN_OR_RETURN(Hash256 genesis_root, state_->RootAt(1));
    if (genesis_root != genesis.state_root) {
      return DataLossError("state store in " + options_.dir.string() +
                           " was not created from this genesis file");
    }
  }
  // Restarted: this politician may have signed a pool for the height after its latest block.
  if (blocks_->Latest()) pool_floor_ = std::numeric_limits<uint64_t>::max();
  if (!blocks_->Latest()) {
    BlockReply b;
    b.set_found(true);
    b.mutable_block()->set_header(EncodeBlockHeader(genesis));
    TESSERA_RETURN_IF_ERROR(blocks_->Put(0, b));
  }
  TESSERA_ASSIGN_OR_RETURN(BlockReply stored_genesis, blocks_->Get(0));
  auto stored_header = DecodeBlockHeader(AsBytes(stored_genesis.block().header()));
  if (!stored_header.ok() || BlockHash(*stored_header) != BlockHash(genesis)) {
    return DataLossError("block store in " + options_.dir.string() +
                         " was not created from this genesis file");
  }
  // The state may lag the chain by one block if we were killed between the two writes.
  uint64_t applied = state_->version() - 1;
  TESSERA_ASSIGN_OR_RETURN(latest_reply_, blocks_->Get(applied));
  TESSERA_ASSIGN_OR_RETURN(latest_, DecodeBlockHeader(AsBytes(latest_reply_.block().header())));
  if (latest_.state_root != state_->root()) {
    return DataLossError("state root does not match block " + std::to_string(applied));
  }
  for (uint64_t h = applied + 1; h <= blocks_->Latest().value_or(0); ++h) {
    TESSERA_ASSIGN_OR_RETURN(BlockReply stored, blocks_->Get(h));
    const CertifiedBlock& cb = stored.block();
    TESSERA_ASSIGN_OR_RETURN(
        CertifiedBlockData block,
        DecodeCertifiedBlock(cb.header(), cb.certificate(),
                             {cb.identities().begin(), cb.identities().end()}));
    TESSERA_RETURN_IF_ERROR(
        CommitBlock(block, {stored.pools().begin(), stored.pools().end()}, /*from_votes=*/false)
            .WithContext("re-applying stored block " + std::to_string(h)));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    RememberHead(latest_reply_.block());
  }
  if (pool_floor_ != 0) pool_floor_ = latest_.height + 1;
  spdlog::info("politician {} open at height {} root {}", options_.id, latest_.height,
               ToHex(latest_.state_root).substr(0, 16));
  return Status::Ok();
}

void PoliticianNode::Start() {
  for (const PoliticianInfo& p : options_.genesis.politicians) {
    if (p.id == options_.id) continue;
    auto peer = std::make_unique<Peer>();
    // Gossip (Post, PostPool) and catch-up (GetStatus, whole blocks) replies, each capped at
    // the largest an honest peer sends (reply_caps.h).
    peer->client = std::make_unique<PoliticianClient>(
        p.address, 1000, ReplyCaps::Peer(options_.genesis.politicians.size()));
    peers_.push_back(std::move(peer));
  }
  for (auto& peer : peers_) peer->thread = std::thread([this, p = peer.get()] { PeerLoop(p); });
  if (options_.pull_gossip) {  // politician_flood.cc
    fetcher_ = std::make_unique<FloodFetcher>(peers_.size(), options_.flood);
    mailboxes_.resize(peers_.size());
    for (size_t i = 0; i < peers_.size(); ++i) {
      flood_threads_.emplace_back([this, i] { ListenLoop(i); });
      flood_threads_.emplace_back([this, i] { FetchLoop(i); });
    }
  }
  catch_up_ = std::thread([this] { CatchUpLoop(); });
}

void PoliticianNode::Stop() {
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  peers_cv_.notify_all();
  {
    std::lock_guard<std::mutex> lock(flood_mu_);
    flood_stop_ = true;
  }
  flood_cv_.notify_all();
  for (std::thread& t : flood_threads_) t.join();
  for (auto& peer : peers_) {
    if (peer->thread.joinable()) peer->thread.join();
  }
  if (catch_up_.joinable()) catch_up_.join();
}

uint64_t PoliticianNode::height() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_.height;
}

bool PoliticianNode::Drop() {
  if (options_.faults.unresponsive) return true;
  if (options_.faults.drop <= 0) return false;
  return std::uniform_real_distribution<double>(0, 1)(rng_) < options_.faults.drop;
}

void PoliticianNode::Delay() const {
  if (options_.faults.unresponsive) {
    // Answers normally until block 1 is committed (so that it is seen to start), then never
    // within any caller's deadline. Every caller of Delay() holds no lock.
    if (height() >= 1) std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  if (options_.faults.delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.faults.delay_ms));
  }
}

// ---- Blocks ---------------------------------------------------------------------------------

Result<std::vector<LedgerTx>> PoliticianNode::CollectTxs(const std::vector<Hash256>& hashes,
                                                         const std::vector<Pool>& extra) {
  for (const Pool& p : extra) {
    // Certified blocks name pools by hash; bad extras are ignored. The pools a certified block
    // names are taken whatever the flood limits say (they must stay appliable).
    auto added = AddPool(p, &hashes);
    (void)added;
  }
  std::vector<LedgerTx> txs;
  for (const Hash256& h : hashes) {
    auto it = pools_.find(h);
    if (it == pools_.end()) return NotFoundError("pool " + ToHex(h).substr(0, 16) + " unknown");
    txs.insert(txs.end(), it->second.txs.begin(), it->second.txs.end());
  }
  return txs;
}

// A commit runs in three phases so that its heavy work holds no lock a request handler needs:
//   1. under mu_: check that the block extends latest_, gather its pools, take the parent;
//   2. under commit_mu_ only: verify the certificate (unless its tickets were checked under
//      mu_ as votes arrived), execute, hash the new tree, write block and state (synced), and
//      prune old state versions now and then;
//   3. under mempool_mu_: prune the mempool; then under mu_: publish latest_ and drop the
//      finished round's data.
// commit_mu_ serialises commits (there is one chain, and StateStore has one writer). While a
// commit is in phase 2, readers see the previous block everywhere: latest_ moves only in
// phase 3, and state versions up to latest_ stay in memory.
Status PoliticianNode::CommitBlock(const CertifiedBlockData& block, const std::vector<Pool>& pools,
                                   bool from_votes) {
  SignatureCache::Scope scope(&signatures_);
  std::lock_guard<std::mutex> commit(commit_mu_);
  const auto started = std::chrono::steady_clock::now();
  BlockHeader parent;
  std::vector<LedgerTx> txs;
  BlockReply reply;
  bool round_measures_size = true;  // BlockBudget::BlockCommitted
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (block.header.height != latest_.height + 1) {
      return FailedPreconditionError("block " + std::to_string(block.header.height) +
                                     " is not the next block (" +
                                     std::to_string(latest_.height + 1) + ")");
    }
    parent = latest_;
    // Votes arrive with their tickets checked into tickets_ (mu_): the check is cheap here.
    if (from_votes) {
      TESSERA_RETURN_IF_ERROR(VerifyCertifiedBlock(options_.genesis, parent, block, &tickets_));
    }
    TESSERA_ASSIGN_OR_RETURN(txs, CollectTxs(block.header.pool_hashes, pools));
    // Certified after its first BA* period with no proposer ticket announced for that period:
    // the round waited out a period nobody proposed in, whatever the block's size.
    if (block.certificate.period > 0) {
      auto round = rounds_.find(block.header.height);
      round_measures_size = round != rounds_.end() && round->second.first_period_ticket;
    }
    reply.set_found(true);
    CertifiedBlock* cb = reply.mutable_block();
    cb->set_header(EncodeBlockHeader(block.header));
    cb->set_certificate(EncodeCommitteeCertificate(block.certificate));
    for (const Identity& id : block.identities) cb->add_identities(EncodeIdentity(id));
    for (const Hash256& ph : block.header.pool_hashes) *reply.add_pools() = pools_[ph].wire;
  }
  const uint64_t h = block.header.height;
  if (!from_votes) {  // a block from a peer or the disk: every ticket checked afresh
    TicketCache tickets;
    TESSERA_RETURN_IF_ERROR(VerifyCertifiedBlock(options_.genesis, parent, block, &tickets));
  }
  // Only commits advance the state, so its latest version is the parent's state.
  const SparseMerkleTree tree = state_->tree();
  const BlockContext ctx{.height = h, .prev_seed = parent.seed};
  TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome,
                           ledger::ApplyBlock(TreeLookup(tree), txs, ctx, apps_));
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree next, tree.Update(outcome.updates));
  if (next.root_hash() != block.header.state_root) {
    return DataLossError("certified block " + std::to_string(h) +
                         " has a state root this politician does not reproduce");
  }
  if (blocks_->Latest().value_or(0) < h) TESSERA_RETURN_IF_ERROR(blocks_->Put(h, reply));
  TESSERA_RETURN_IF_ERROR(state_->CommitTree(next, outcome.updates).status());
  // Pruning scans every leaf record, so it runs once per keep_versions / 2 blocks.
  const uint64_t keep = options_.keep_versions;
  if (state_->version() - state_->oldest_version() >= keep + keep / 2) {
    TESSERA_RETURN_IF_ERROR(state_->Prune(state_->version() - keep + 1));
  }
  {
    // The block's weight: its pools are mostly other politicians', whose entries this mempool
    // never held, so it is read from the payloads, before the lock.
    const size_t block_weight = BlockWeight(txs, apps_);
    // Before latest_ moves: the pool frozen for the next height must not carry these.
    std::lock_guard<std::mutex> lock(mempool_mu_);
    mempool_.Prune(next, apps_, {.height = h + 1, .prev_seed = block.header.seed});
    budget_.BlockCommitted(h, block_weight, round_measures_size);
    mempool_.set_capacity(budget_.mempool_capacity());  // the budget moves only here
    mempool_.set_waiting_capacity(budget_.waiting_capacity());
  }
  const double commit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    latest_ = block.header;
    latest_reply_ = reply;
    RememberHead(reply.block());
    head_cv_.notify_all();
    round_cv_.notify_all();
    rounds_.erase(rounds_.begin(), rounds_.upper_bound(h));
    my_commitments_.erase(my_commitments_.begin(), my_commitments_.upper_bound(h));
    execute_cache_.clear();
    for (auto it = pools_.begin(); it != pools_.end();) {
      auto c = DecodeTxPoolCommitment(AsBytes(it->second.commitment));
      it = (c.ok() && c->height <= h) ? pools_.erase(it) : std::next(it);
    }
    pools_by_owner_.erase(pools_by_owner_.begin(),
                          pools_by_owner_.upper_bound({h, std::numeric_limits<uint32_t>::max()}));
  }
  SignatureCache::Stats sigs = signatures_.stats();
  spdlog::info(
      "politician {} committed block {} ({} txs applied, {} skipped, {:.0f} ms) root {}; "
      "signature cache {} hits / {} misses, {} entries",
      options_.id, h, outcome.applied, outcome.rejected.size(), commit_s * 1e3,
      ToHex(block.header.state_root).substr(0, 16), sigs.hits, sigs.misses, sigs.size);
  return Status::Ok();
}

// ---- Pre-verification of peers' pools (pool_preverifier.h) ------------------------------------

// A pool for the height after next (a peer that committed first froze it) runs over the latest
// state with that height and the latest seed: only a cache is filled, so an approximate
// context costs at most a verification at execution, as before.
void PoliticianNode::PreverifyPool(const TxPoolCommitment& c, const std::vector<LedgerTx>& txs) {
  if (c.politician_id == options_.id || c.height <= latest_.height) return;
  // Transfer-only pools (every chain without applications) stop here, before any state access.
  if (std::none_of(txs.begin(), txs.end(),
                   [](const LedgerTx& tx) { return std::holds_alternative<AppTransaction>(tx); })) {
    return;
  }
  auto state = state_->CachedTreeAt(latest_.height + 1);  // the state after block latest_
  if (!state.ok()) return;
  preverifier_.Offer(c.height, txs, *std::move(state),
                     {.height = c.height, .prev_seed = latest_.seed});
}

}  // namespace tessera::ledger::net
