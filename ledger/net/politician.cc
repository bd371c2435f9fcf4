#include "ledger/net/politician.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "ledger/crypto/hash.h"
#include "ledger/net/request_auth.h"
#include "ledger/net/round_item.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {
namespace {

constexpr size_t kMaxPeerQueue = 20000;

Result<Hash256> HashFromBytes(const std::string& bytes, const char* what) {
  if (bytes.size() != 32) return InvalidArgumentError(std::string(what) + " must be 32 bytes");
  Hash256 h;
  std::copy(bytes.begin(), bytes.end(), h.begin());
  return h;
}

// Checks the signatures a round item carries, for their effect on the signature cache: the
// verdicts themselves are AcceptItem's. Malformed items are left to AcceptItem.
void VerifyItemSignatures(const RoundItem& item) {
  const std::string& payload = item.payload();
  if (payload.empty()) return;
  switch (static_cast<MessageType>(static_cast<uint8_t>(payload[0]))) {
    case MessageType::kWitnessList:
      if (auto w = DecodeWitnessList(AsBytes(payload)); w.ok()) (void)VerifyWitnessList(*w);
      break;
    case MessageType::kVote:
      if (auto v = DecodeVote(AsBytes(payload)); v.ok()) {
        (void)VerifyVote(*v);
        Signature sig{};
        if (v->step == VoteStep::kCert && item.block_signature().size() == sig.size()) {
          std::copy(item.block_signature().begin(), item.block_signature().end(), sig.begin());
          (void)VerifyBlockSignature(v->height, v->period, v->value, v->citizen, sig);
        }
      }
      break;
    default:
      break;
  }
}

}  // namespace

PoliticianNode::PoliticianNode(PoliticianOptions options)
    : options_(std::move(options)),
      mempool_(0),
      budget_({.max_pool_txs = options_.genesis.max_pool_txs,
               .min_pool_txs = options_.min_pool_txs,
               .target_round_s = options_.target_round_s,
               .backlog_pools = options_.backlog_pools}),
      signatures_(options_.signature_cache_entries),
      execute_limiter_(options_.execute_per_s, options_.execute_burst),
      read_limiter_(options_.reads_per_s, options_.reads_burst),
      anonymous_limiter_(options_.anonymous_reads_per_s, options_.anonymous_reads_burst, 1) {
  mempool_.set_capacity(budget_.mempool_capacity());
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
  StateStoreOptions so;
  so.cached_versions = std::max<uint64_t>(options_.served_versions, 2);
  TESSERA_ASSIGN_OR_RETURN(state_, StateStore::Open(options_.dir / "state", so));
  TESSERA_ASSIGN_OR_RETURN(blocks_, BlockStore::Open(options_.dir / "blocks"));
  TESSERA_ASSIGN_OR_RETURN(BlockHeader genesis, options_.genesis.GenesisHeader());
  if (state_->version() == 0) {
    TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree g, options_.genesis.GenesisState());
    std::vector<LeafUpdate> updates;
    g.ForEach([&](const Hash256& k, const LeafValue& v) { updates.push_back({k, v}); });
    TESSERA_RETURN_IF_ERROR(state_->Commit(std::move(updates)).status());
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
    peer->client = std::make_unique<PoliticianClient>(p.address, 1000);
    peers_.push_back(std::move(peer));
  }
  for (auto& peer : peers_) peer->thread = std::thread([this, p = peer.get()] { PeerLoop(p); });
  catch_up_ = std::thread([this] { CatchUpLoop(); });
}

void PoliticianNode::Stop() {
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  peers_cv_.notify_all();
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
    // Before latest_ moves: the pool frozen for the next height must not carry these.
    std::lock_guard<std::mutex> lock(mempool_mu_);
    mempool_.Prune(next, apps_, {.height = h + 1, .prev_seed = block.header.seed});
    budget_.BlockCommitted(h);
    mempool_.set_capacity(budget_.mempool_capacity());
  }
  const double commit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    latest_ = block.header;
    latest_reply_ = reply;
    RememberHead(reply.block());
    head_cv_.notify_all();
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

// ---- Pools ----------------------------------------------------------------------------------

Status PoliticianNode::AddPool(const Pool& pool, const std::vector<Hash256>* certified) {
  TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment c, DecodeTxPoolCommitment(AsBytes(pool.commitment())));
  const PoliticianInfo* owner = options_.genesis.Politician(c.politician_id);
  if (owner == nullptr || !VerifyTxPoolCommitment(c, owner->key)) {
    return InvalidArgumentError("pool commitment signature is invalid");
  }
  if (pools_.count(c.pool_hash)) return Status::Ok();
  const bool named = certified != nullptr && std::find(certified->begin(), certified->end(),
                                                       c.pool_hash) != certified->end();
  if (static_cast<size_t>(pool.txs_size()) != c.tx_count) {
    return InvalidArgumentError("pool has " + std::to_string(pool.txs_size()) +
                                " transactions, its commitment says " + std::to_string(c.tx_count));
  }
  // Flood limits (a politician may sign as many pools as it likes): bounded size, heights
  // being agreed only, and at most two pools per politician and height -- two are the
  // equivocation evidence citizens need, a third adds nothing.
  std::set<Hash256>& owned = pools_by_owner_[{c.height, c.politician_id}];
  if (!named) {
    if (c.tx_count > options_.genesis.max_pool_txs) {
      return InvalidArgumentError("pool of " + std::to_string(c.tx_count) +
                                  " transactions is over max_pool_txs " +
                                  std::to_string(options_.genesis.max_pool_txs));
    }
    if (c.height > latest_.height + 2) {
      return FailedPreconditionError("pool for height " + std::to_string(c.height) +
                                     " is too far ahead (latest " + std::to_string(latest_.height) +
                                     ")");
    }
    if (owned.size() >= 2) {
      return ResourceExhaustedError("politician " + std::to_string(c.politician_id) +
                                    " already signed two pools for height " +
                                    std::to_string(c.height) + " (equivocation); no more kept");
    }
  }
  StoredPool stored;
  for (const std::string& t : pool.txs()) {
    TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
    stored.txs.push_back(std::move(tx));
  }
  if (stored.txs.size() != c.tx_count || PoolHash(stored.txs) != c.pool_hash) {
    return InvalidArgumentError("pool transactions do not match the commitment");
  }
  stored.commitment = pool.commitment();
  stored.wire = pool;
  pools_.emplace(c.pool_hash, std::move(stored));
  owned.insert(c.pool_hash);
  return Status::Ok();
}

void PoliticianNode::FreezePool(uint64_t h) {
  RelayEvidence(h);
  if (my_commitments_.count(h) || h <= pool_floor_) return;
  std::vector<std::vector<LedgerTx>> variants(1);
  {
    std::lock_guard<std::mutex> lock(mempool_mu_);
    variants[0] = mempool_.Snapshot(budget_.pool_txs(), apps_);
    budget_.PoolFrozen(h, variants[0].size());
  }
  if (options_.faults.forge && !options_.genesis.accounts.empty()) {
    const PublicKey& victim = options_.genesis.accounts[0].key;
    auto leaf = state_->tree().Get(AccountKey(victim));
    auto account = leaf ? DecodeAccount(*leaf) : Result<Account>(Account{});
    Transaction forged{.from = victim,
                       .to = options_.keys.public_key(),
                       .amount = 1,
                       .nonce = account.ok() ? account->nonce : 0};
    forged.signature[0] = 1;  // not the victim's signature
    if (variants[0].size() >= options_.genesis.max_pool_txs) variants[0].pop_back();
    variants[0].insert(variants[0].begin(), forged);
  }
  if (options_.faults.equivocate && variants[0].size() >= 2) {
    variants.emplace_back(variants[0].begin(), variants[0].begin() + variants[0].size() / 2);
  }
  for (const auto& txs : variants) {
    TxPoolCommitment c{.politician_id = options_.id,
                       .height = h,
                       .tx_count = static_cast<uint32_t>(txs.size()),
                       .pool_hash = PoolHash(txs)};
    SignTxPoolCommitment(c, options_.keys);
    Pool pool;
    pool.set_commitment(EncodeTxPoolCommitment(c));
    for (const LedgerTx& tx : txs) pool.add_txs(EncodeLedgerTx(tx));
    if (!AddPool(pool).ok()) continue;
    my_commitments_[h].push_back(pool.commitment());
    RoundItem item;
    item.set_payload(pool.commitment());
    RoundLog& log = rounds_[h];
    if (log.seen.emplace(RoundItemHash(item), log.items.size()).second) log.items.push_back(item);
    if (!options_.faults.withhold) {
      if (!options_.faults.withhold_data) {
        Gossip([pool](PoliticianClient& c) { (void)c.PostPool(pool); });
      }
      Gossip([item, h](PoliticianClient& c) { (void)c.Post(h, item); });
    }
  }
  if (options_.faults.flood) Flood(h);
}

// ---- Round items ----------------------------------------------------------------------------

Status PoliticianNode::AcceptItem(uint64_t h, const RoundItem& item) {
  if (h <= latest_.height || h > latest_.height + 2) {
    return FailedPreconditionError("height " + std::to_string(h) + " is not being agreed (latest " +
                                   std::to_string(latest_.height) + ")");
  }
  const std::string& payload = item.payload();
  if (payload.empty()) return InvalidArgumentError("empty payload");
  RoundLog& log = rounds_[h];
  Hash256 key = RoundItemHash(item);
  if (log.seen.count(key)) return Status::Ok();
  auto identity = [&](const PublicKey& who) -> Result<Identity> {
    TESSERA_ASSIGN_OR_RETURN(Identity id, DecodeIdentity(AsBytes(item.identity())));
    TESSERA_RETURN_IF_ERROR(CheckIdentity(options_.genesis, id, who, h));
    return id;
  };
  // Witness lists and votes come only from committee members. The ticket can be checked once
  // the seed it is drawn on (that of block h - 1) is known, i.e. for the next block; items for
  // the block after it are taken on identity alone (citizens check every ticket themselves).
  auto committee = [&](const PublicKey& who, const VrfProof& credential) -> Status {
    if (h != latest_.height + 1 ||
        tickets_.Selected(options_.genesis, who, h, latest_.seed, credential)) {
      return Status::Ok();
    }
    return PermissionDeniedError("not on the committee of block " + std::to_string(h));
  };
  switch (static_cast<MessageType>(static_cast<uint8_t>(payload[0]))) {
    case MessageType::kTxPoolCommitment: {
      TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment c, DecodeTxPoolCommitment(AsBytes(payload)));
      const PoliticianInfo* owner = options_.genesis.Politician(c.politician_id);
      if (c.height != h || owner == nullptr || !VerifyTxPoolCommitment(c, owner->key)) {
        return InvalidArgumentError("invalid pool commitment");
      }
      // One commitment per politician and height; a second is equivocation evidence and is
      // kept (citizens leave such a politician out); more are refused (flooding).
      std::set<Hash256>& signed_pools = log.commitments[c.politician_id];
      if (!signed_pools.count(c.pool_hash) && signed_pools.size() >= 2) {
        return ResourceExhaustedError("politician " + std::to_string(c.politician_id) +
                                      " already has two commitments for height " +
                                      std::to_string(h));
      }
      signed_pools.insert(c.pool_hash);
      break;
    }
    case MessageType::kWitnessList: {
      TESSERA_ASSIGN_OR_RETURN(WitnessList w, DecodeWitnessList(AsBytes(payload)));
      if (w.height != h || !VerifyWitnessList(w))
        return InvalidArgumentError("invalid witness list");
      TESSERA_RETURN_IF_ERROR(identity(w.citizen).status());
      TESSERA_RETURN_IF_ERROR(committee(w.citizen, w.credential));
      break;
    }
    case MessageType::kBlockHeader: {
      TESSERA_ASSIGN_OR_RETURN(BlockHeader p, DecodeBlockHeader(AsBytes(payload)));
      if (p.height != h) return InvalidArgumentError("proposal for another height");
      TESSERA_ASSIGN_OR_RETURN(Identity id, identity(p.proposer));
      log.proposals[BlockHash(p)] = {p, id};
      break;
    }
    case MessageType::kVote: {
      TESSERA_ASSIGN_OR_RETURN(Vote v, DecodeVote(AsBytes(payload)));
      if (v.height != h || !VerifyVote(v)) return InvalidArgumentError("invalid vote");
      TESSERA_ASSIGN_OR_RETURN(Identity id, identity(v.citizen));
      TESSERA_RETURN_IF_ERROR(committee(v.citizen, v.credential));
      Signature sig{};
      if (v.step == VoteStep::kCert) {
        if (item.block_signature().size() != sig.size()) {
          return InvalidArgumentError("cert vote without block signature");
        }
        std::copy(item.block_signature().begin(), item.block_signature().end(), sig.begin());
        if (!VerifyBlockSignature(h, v.period, v.value, v.citizen, sig)) {
          return InvalidArgumentError("invalid block signature");
        }
      }
      Status admitted = log.votes.Admit(v, options_.genesis.cert_threshold);
      if (admitted.code() == StatusCode::kAlreadyExists) return Status::Ok();
      TESSERA_RETURN_IF_ERROR(admitted);
      if (v.step == VoteStep::kCert) {
        log.votes.AddCertSigner(
            v,
            CertificateSigner{.citizen = v.citizen, .credential = v.credential, .signature = sig},
            id);
      }
      break;
    }
    case MessageType::kEvidence:
      // Verified before it is kept or relayed: forged evidence never travels (blacklist.h).
      TESSERA_RETURN_IF_ERROR(evidence_.AddEncoded(AsBytes(payload), h).status());
      break;
    default:
      return InvalidArgumentError("unknown round item type " +
                                  std::to_string(static_cast<uint8_t>(payload[0])));
  }
  log.seen.emplace(key, log.items.size());
  log.items.push_back(item);
  if (!options_.faults.withhold) {
    Gossip([item, h](PoliticianClient& c) { (void)c.Post(h, item); });
  }
  return Status::Ok();
}

std::vector<CertifiedBlockData> PoliticianNode::CertifiableBlocks() {
  const uint64_t h = latest_.height + 1;
  std::vector<CertifiedBlockData> out;
  auto it = rounds_.find(h);
  if (it == rounds_.end()) return out;
  RoundLog& log = it->second;
  for (const VoteRelay::Certifiable& c :
       log.votes.CertifiableValues(options_.genesis.cert_threshold)) {
    auto proposal = log.proposals.find(c.value);
    if (proposal == log.proposals.end()) continue;
    CertifiedBlockData block;
    block.header = proposal->second.first;
    block.certificate.height = h;
    block.certificate.period = c.period;
    block.certificate.block_hash = c.value;
    block.identities.push_back(proposal->second.second);
    for (const auto& [signer, id] : c.signers) {  // already in key order
      block.certificate.signers.push_back(signer);
      if (signer.citizen != block.header.proposer) block.identities.push_back(id);
    }
    out.push_back(std::move(block));
  }
  return out;
}

void PoliticianNode::CommitFromVotes() {
  // A commit is running (it will publish the block these votes certify, or fail and the
  // catch-up tick calls again): do not queue every request thread behind it.
  if (!commit_mu_.try_lock()) return;
  commit_mu_.unlock();
  std::vector<CertifiedBlockData> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks = CertifiableBlocks();
  }
  for (const CertifiedBlockData& block : blocks) {
    Status s = CommitBlock(block, {}, /*from_votes=*/true);
    if (s.ok()) return;
    spdlog::debug("politician {}: cannot commit block {} yet: {}", options_.id, block.header.height,
                  s.ToString());
  }
}

// ---- Gossip and catch-up --------------------------------------------------------------------

void PoliticianNode::Gossip(std::function<void(PoliticianClient&)> task) {
  if (Drop()) return;
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    for (auto& peer : peers_) {
      if (peer->queue.size() >= kMaxPeerQueue) peer->queue.pop_front();
      peer->queue.push_back(task);
    }
  }
  peers_cv_.notify_all();
}

void PoliticianNode::PeerLoop(Peer* peer) {
  for (;;) {
    std::function<void(PoliticianClient&)> task;
    {
      std::unique_lock<std::mutex> lock(peers_mu_);
      peers_cv_.wait(lock, [&] { return stopping_ || !peer->queue.empty(); });
      if (stopping_) return;
      task = std::move(peer->queue.front());
      peer->queue.pop_front();
    }
    task(*peer->client);
  }
}

void PoliticianNode::CatchUpLoop() {
  uint64_t tick = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(peers_mu_);
      if (peers_cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; })) {
        return;
      }
    }
    CommitFromVotes();
    if (++tick % 3 != 0) continue;
    std::vector<PoliticianClient*> order;
    for (auto& p : peers_) order.push_back(p->client.get());
    std::shuffle(order.begin(), order.end(), rng_);
    for (PoliticianClient* peer : order) {
      auto status = peer->GetStatus();
      if (!status.ok() || status->height() <= height()) continue;
      // Fetch and verify every missing block from this peer; stop at its first bad answer.
      while (height() < status->height()) {
        auto reply = peer->GetBlock(height() + 1);
        if (!reply.ok()) break;
        const CertifiedBlock& cb = reply->block();
        auto block = DecodeCertifiedBlock(cb.header(), cb.certificate(),
                                          {cb.identities().begin(), cb.identities().end()});
        if (!block.ok()) break;
        Status s = CommitBlock(*block, {reply->pools().begin(), reply->pools().end()},
                               /*from_votes=*/false);
        if (!s.ok()) {
          spdlog::warn("politician {}: block {} from {} rejected: {}", options_.id,
                       block->header.height, peer->address(), s.ToString());
          break;
        }
      }
    }
  }
}

// ---- RPC handlers ---------------------------------------------------------------------------

void PoliticianNode::SubmitTransaction(const TxRequest& req, TxReply* rep) {
  Delay();
  SignatureCache::Scope scope(&signatures_);
  auto tx = DecodeLedgerTx(AsBytes(req.tx()));
  if (!tx.ok()) {
    rep->set_error(tx.status().message());
    return;
  }
  auto answer = [&](const Status& s) {  // mempool_mu_ held
    rep->set_accepted(s.ok());
    if (s.ok()) return;
    rep->set_error(s.ToString());
    if (s.code() == StatusCode::kResourceExhausted) {
      rep->set_retry_after_ms(static_cast<uint32_t>(budget_.retry_after().count()));
    }
  };
  {
    // Turned away before any work when full: overload costs a lookup, not a verification.
    std::lock_guard<std::mutex> lock(mempool_mu_);
    if (mempool_.size() >= mempool_.capacity()) {
      return answer(
          ResourceExhaustedError("mempool full (" + std::to_string(mempool_.size()) + " pending)"));
    }
  }
  // The signature check, the expensive part, runs under no lock and fills the cache that the
  // mempool's own check (and later execution and commit) then hit.
  if (const auto* transfer = std::get_if<Transaction>(&*tx);
      transfer != nullptr && !VerifyTransaction(*transfer)) {
    rep->set_error(InvalidArgumentError("bad signature").ToString());
    return;
  }
  BlockContext next;
  Result<SparseMerkleTree> state = NotFoundError("");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Drop()) {  // a dropping politician claims to accept and forgets
      rep->set_accepted(true);
      return;
    }
    next = NextContext();
    state = state_->CachedTreeAt(latest_.height + 1);  // the state `next` follows
  }
  if (!state.ok()) {
    rep->set_error(state.status().ToString());
    return;
  }
  std::lock_guard<std::mutex> lock(mempool_mu_);
  answer(std::holds_alternative<Transaction>(*tx)
             ? mempool_.Admit(std::get<Transaction>(*tx), *state)
             : mempool_.AdmitApp(std::get<AppTransaction>(*tx), *state, apps_, next));
}

void PoliticianNode::GetStatus(StatusReply* rep) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  rep->set_politician_id(options_.id);
  rep->set_height(latest_.height);
  *rep->mutable_latest() = latest_reply_.block();
  std::lock_guard<std::mutex> pending(mempool_mu_);
  rep->set_mempool(mempool_.size());
}

namespace {

// A certified block's canonical header and its proposer's identity (GetHeads' answer for it).
std::pair<std::string, std::string> HeadOf(const CertifiedBlock& block) {
  auto header = DecodeBlockHeader(AsBytes(block.header()));
  if (!header.ok()) return {};
  for (const std::string& bytes : block.identities()) {
    auto id = DecodeIdentity(AsBytes(bytes));
    if (id.ok() && id->citizen == header->proposer) return {block.header(), bytes};
  }
  return {block.header(), ""};
}

}  // namespace

void PoliticianNode::RememberHead(const CertifiedBlock& block) {
  auto head = HeadOf(block);
  auto header = DecodeBlockHeader(AsBytes(head.first));
  if (!header.ok()) return;
  recent_heads_[header->height] = std::move(head);
  while (recent_heads_.size() > kRecentHeads) recent_heads_.erase(recent_heads_.begin());
}

void PoliticianNode::GetHeads(const HeadsRequest& req, HeadsReply* rep,
                              const std::function<bool()>& cancelled) {
  Delay();
  const uint64_t after = req.after_height();
  const uint64_t max = req.max_headers() == 0
                           ? kMaxHeadsPerReply
                           : std::min<uint64_t>(req.max_headers(), kMaxHeadsPerReply);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::min(req.wait_ms(), kMaxHeadsWaitMs));
  std::vector<std::pair<uint64_t, std::pair<std::string, std::string>>> heads;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (latest_.height <= after && head_waiters_ < kMaxHeadWaiters) {
      ++head_waiters_;
      // Short slices: a cancelled call or a server shutting down ends the wait within 100 ms.
      while (latest_.height <= after && std::chrono::steady_clock::now() < deadline &&
             !(cancelled && cancelled())) {
        head_cv_.wait_for(lock, std::chrono::milliseconds(100));
      }
      --head_waiters_;
    }
    rep->set_height(latest_.height);
    if (options_.faults.withhold) return;  // claims the height, hands out nothing
    for (uint64_t h = after + 1; h <= latest_.height && h <= after + max; ++h) {
      auto it = recent_heads_.find(h);
      heads.push_back(
          {h, it == recent_heads_.end() ? std::pair<std::string, std::string>{} : it->second});
    }
  }
  for (auto& [h, head] : heads) {
    if (head.first.empty()) {  // older than the in-memory window: from the block store
      auto stored = blocks_->Get(h);
      if (!stored.ok()) return;
      head = HeadOf(stored->block());
    }
    rep->add_headers(std::move(head.first));
    rep->add_proposer_identities(std::move(head.second));
  }
}

void PoliticianNode::GetBlock(const BlockRequest& req, BlockReply* rep) {
  Delay();
  if (options_.faults.withhold) return;
  auto block = blocks_->Get(req.height());
  if (block.ok()) *rep = std::move(*block);
  if (req.header_only()) rep->clear_pools();
}

namespace {

ByteSpan Span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

Status BudgetExhausted(std::string_view what, RateLimiter& limiter, const std::string& key) {
  return ResourceExhaustedError(std::string(what) + " over its rate budget; retry after " +
                                std::to_string(limiter.RetryAfterMs(key)) + " ms");
}

}  // namespace

Status PoliticianNode::AuthorizeRead(const StateRequest& req) {
  if (req.identity().empty()) {
    if (anonymous_limiter_.Allow("")) return Status::Ok();
    return BudgetExhausted(
        "unauthenticated ReadState (all anonymous callers share one budget; sign the request "
        "with a registered identity for your own)",
        anonymous_limiter_, "");
  }
  TESSERA_ASSIGN_OR_RETURN(Identity id, DecodeIdentity(Span(req.identity())));
  if (!VerifyIdentity(id, options_.genesis.registrar)) {
    return PermissionDeniedError("ReadState: identity not signed by the registrar");
  }
  Signature sig{};
  if (req.signature().size() != sig.size() ||
      !Verify(id.citizen, kStateDomain, Span(StateSigningBytes(req)),
              *reinterpret_cast<const Signature*>(req.signature().data()))) {
    return PermissionDeniedError("ReadState: bad request signature");
  }
  const std::string key(AsChars(id.citizen));
  if (!read_limiter_.Allow(key)) return BudgetExhausted("ReadState caller", read_limiter_, key);
  return Status::Ok();
}

Status PoliticianNode::AuthorizeExecute(const ExecuteRequest& req) {
  if (req.identity().empty()) {
    return PermissionDeniedError(
        "Execute is for committee members: the request needs an identity, committee credential "
        "and signature (request_auth.h)");
  }
  TESSERA_ASSIGN_OR_RETURN(Identity id, DecodeIdentity(Span(req.identity())));
  TESSERA_RETURN_IF_ERROR(CheckIdentity(options_.genesis, id, id.citizen, req.height()));
  VrfProof credential{};
  Signature sig{};
  if (req.credential().size() != credential.size() || req.signature().size() != sig.size()) {
    return PermissionDeniedError("Execute: malformed committee credential or signature");
  }
  std::copy(req.credential().begin(), req.credential().end(), credential.begin());
  std::copy(req.signature().begin(), req.signature().end(), sig.begin());
  if (!Verify(id.citizen, kExecuteDomain, Span(ExecuteSigningBytes(req)), sig)) {
    return PermissionDeniedError("Execute: bad request signature");
  }
  bool member;
  {
    std::lock_guard<std::mutex> lock(mu_);  // tickets_ is not thread-safe
    member =
        req.height() == latest_.height + 1 &&
        tickets_.Selected(options_.genesis, id.citizen, req.height(), latest_.seed, credential);
  }
  if (!member) {
    return PermissionDeniedError("Execute: caller is not on the committee of block " +
                                 std::to_string(req.height()));
  }
  const std::string key(AsChars(id.citizen));
  if (!execute_limiter_.Allow(key)) {
    return BudgetExhausted("Execute caller", execute_limiter_, key);
  }
  return Status::Ok();
}

Status PoliticianNode::ReadState(const StateRequest& req, StateReply* rep) {
  Delay();
  TESSERA_RETURN_IF_ERROR(AuthorizeRead(req));
  std::vector<Hash256> keys;
  for (const std::string& k : req.keys()) {
    TESSERA_ASSIGN_OR_RETURN(Hash256 key, HashFromBytes(k, "state key"));
    keys.push_back(key);
  }
  SparseMerkleTree tree;
  uint64_t h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Height 0 is the genesis state, not "latest": a light client still at the genesis header
    // must get a proof against the genesis root (it read "latest" once and refused the proof).
    h = req.height();
    if (h > latest_.height) {
      return NotFoundError("height " + std::to_string(h) + " not committed yet (latest " +
                           std::to_string(latest_.height) + ")");
    }
    uint64_t version = h + 1;
    if (options_.faults.stale_state && version > 1) --version;
    // Only versions in memory: an old height costs no rebuild (state_store.h).
    TESSERA_ASSIGN_OR_RETURN(tree, state_->CachedTreeAt(version));
  }
  rep->set_height(h);
  rep->set_root(std::string(AsChars(tree.root_hash())));
  rep->set_proof(tree.Prove(keys).Encode());
  return Status::Ok();
}

Status PoliticianNode::Execute(const ExecuteRequest& req, ExecuteReply* rep) {
  Delay();
  // The withholding adversary refuses every caller, members included.
  if (options_.faults.withhold_data) return UnavailableError("execution refused");
  TESSERA_RETURN_IF_ERROR(AuthorizeExecute(req));
  if (options_.faults.slow_execute_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.faults.slow_execute_ms));
  }
  SignatureCache::Scope scope(&signatures_);  // the pool's signatures were checked on arrival
  std::vector<Hash256> hashes;
  std::string cache_key = std::to_string(req.height()) + ":";
  for (const std::string& b : req.pool_hashes()) {
    TESSERA_ASSIGN_OR_RETURN(Hash256 ph, HashFromBytes(b, "pool hash"));
    hashes.push_back(ph);
    cache_key += b;
  }
  SparseMerkleTree tree;
  std::vector<LedgerTx> txs;
  BlockContext ctx;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Citizens of one committee ask for the same body at about the same time: execute it once.
    executed_cv_.wait_for(lock, std::chrono::seconds(20),
                          [&] { return !executing_.count(cache_key); });
    if (req.height() != latest_.height + 1) {
      return FailedPreconditionError("can only execute block " +
                                     std::to_string(latest_.height + 1));
    }
    auto cached = execute_cache_.find(cache_key);
    if (cached != execute_cache_.end()) {
      *rep = cached->second;
      return Status::Ok();
    }
    TESSERA_ASSIGN_OR_RETURN(txs, CollectTxs(hashes, {}));
    ctx = NextContext();
    for (const Hash256& ph : hashes) *rep->add_pools() = pools_[ph].wire;
    uint64_t version = latest_.height + 1;  // a commit may have stored the next one already
    if (options_.faults.stale_state && version > 1) --version;
    TESSERA_ASSIGN_OR_RETURN(tree, state_->CachedTreeAt(version));
    executing_.insert(cache_key);  // erased below on every path
  }
  // The heavy part runs outside the lock, on an immutable tree.
  Status status = [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome,
                             ledger::ApplyBlock(TreeLookup(tree), txs, ctx, apps_));
    TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree next, tree.Update(outcome.updates));
    rep->set_proof(tree.Prove(BlockKeys(txs, ctx, apps_)).Encode());
    for (uint32_t i : outcome.crypto_rejected) rep->add_crypto_rejected(i);
    if (options_.faults.forge && !outcome.crypto_rejected.empty()) {
      rep->clear_crypto_rejected();  // claims every signature checks out
    }
    Hash256 root = next.root_hash();
    if (options_.faults.wrong_state) root[0] ^= 0x5a;
    rep->set_new_root(std::string(AsChars(root)));
    return Status::Ok();
  }();
  std::lock_guard<std::mutex> lock(mu_);
  executing_.erase(cache_key);
  executed_cv_.notify_all();
  if (status.ok() && req.height() == latest_.height + 1) execute_cache_[cache_key] = *rep;
  return status;
}

void PoliticianNode::GetRound(const RoundRequest& req, RoundReply* rep) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  rep->set_height(latest_.height);
  auto add = [&](const RoundItem& item) {
    if (req.hashes_only()) {
      rep->add_item_hashes(std::string(AsChars(RoundItemHash(item))));
    } else {
      *rep->add_items() = item;
    }
  };
  if (options_.faults.withhold) {
    // Serves only its own pool commitment, so that it still looks alive.
    if (req.height() == latest_.height + 1) FreezePool(req.height());
    if (req.offset() == 0 && my_commitments_.count(req.height())) {
      RoundItem own;
      own.set_payload(my_commitments_[req.height()][0]);
      add(own);
    }
    rep->set_next_offset(1);
    return;
  }
  if (req.height() == latest_.height + 1) FreezePool(req.height());
  auto it = rounds_.find(req.height());
  if (it == rounds_.end()) {
    rep->set_next_offset(req.offset());
    return;
  }
  const std::vector<RoundItem>& items = it->second.items;
  const std::vector<std::string>* mine =
      my_commitments_.count(req.height()) ? &my_commitments_[req.height()] : nullptr;
  bool alternate = mine && mine->size() > 1 && (round_requests_++ % 2 == 1);
  for (size_t i = req.offset(); i < items.size(); ++i) {
    // An equivocating politician hides whichever of its two pools this caller should not see.
    if (mine && mine->size() > 1 && items[i].payload() == (*mine)[alternate ? 0 : 1]) {
      continue;
    }
    add(items[i]);
  }
  rep->set_next_offset(items.size());
}

void PoliticianNode::GetItems(const ItemsRequest& req, RoundReply* rep) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  rep->set_height(latest_.height);
  auto it = rounds_.find(req.height());
  if (it == rounds_.end()) return;
  const RoundLog& log = it->second;
  for (const std::string& bytes : req.hashes()) {
    auto hash = HashFromBytes(bytes, "item hash");
    if (!hash.ok()) return;
    auto found = log.seen.find(*hash);
    if (found == log.seen.end()) continue;
    const RoundItem& item = log.items[found->second];
    if (options_.faults.withhold) {  // as in GetRound: nothing but its own commitment
      const auto& mine = my_commitments_[req.height()];
      if (std::find(mine.begin(), mine.end(), item.payload()) == mine.end()) continue;
    }
    *rep->add_items() = item;
  }
}

void PoliticianNode::Post(const PostRequest& req, PostReply* rep) {
  Delay();
  SignatureCache::Scope scope(&signatures_);
  VerifyItemSignatures(req.item());  // no lock: AcceptItem's own checks then hit the cache
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Drop()) {
      rep->set_accepted(true);
      return;
    }
    Status s = AcceptItem(req.height(), req.item());
    rep->set_accepted(s.ok());
    if (!s.ok()) {
      rep->set_error(s.ToString());
      return;
    }
    // Ask a cert voter for the voted block's pools we lack (see PostReply.missing_pools).
    auto v = DecodeVote(AsBytes(req.item().payload()));
    auto round = rounds_.find(req.height());
    if (v.ok() && v->step == VoteStep::kCert && round != rounds_.end()) {
      auto proposal = round->second.proposals.find(v->value);
      if (proposal != round->second.proposals.end()) {
        for (const Hash256& ph : proposal->second.first.pool_hashes) {
          if (!pools_.count(ph)) rep->add_missing_pools(std::string(AsChars(ph)));
        }
      }
    }
  }
  CommitFromVotes();  // this item may complete a certificate
}

Status PoliticianNode::GetPools(const PoolsRequest& req, PoolsReply* rep) {
  Delay();
  if (req.pool_hashes_size() > static_cast<int>(kMaxPoolsPerRequest)) {
    return InvalidArgumentError("at most " + std::to_string(kMaxPoolsPerRequest) +
                                " pools per request");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.faults.withhold_data) return Status::Ok();  // has them, serves none
  for (const std::string& bytes : req.pool_hashes()) {
    TESSERA_ASSIGN_OR_RETURN(Hash256 ph, HashFromBytes(bytes, "pool hash"));
    auto it = pools_.find(ph);
    if (it != pools_.end()) *rep->add_pools() = it->second.wire;
  }
  return Status::Ok();
}

void PoliticianNode::PostPool(const Pool& pool, PostReply* rep) {
  Delay();
  SignatureCache::Scope scope(&signatures_);
  std::lock_guard<std::mutex> lock(mu_);
  auto c = DecodeTxPoolCommitment(AsBytes(pool.commitment()));
  if (c.ok() && c->height <= latest_.height) {
    rep->set_accepted(true);  // too late to matter
    return;
  }
  Status s = AddPool(pool);
  rep->set_accepted(s.ok());
  if (!s.ok()) rep->set_error(s.ToString());
}

}  // namespace tessera::ledger::net
