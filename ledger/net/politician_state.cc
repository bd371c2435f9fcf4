// State served to clients: ReadState (multi-proofs at a version in memory) and Execute (a block
// body executed for committee members), each authenticated (request_auth.h) and rate-limited
// (rate_limiter.h) before any proof work.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "ledger/net/execution_claim.h"
#include "ledger/net/politician.h"
#include "ledger/net/registration.h"
#include "ledger/net/request_auth.h"
#include "ledger/net/wire_bytes.h"

namespace tessera::ledger::net {

namespace {

// An execution at least this long is logged (the review rounds' proposals waited on it).
constexpr int64_t kSlowExecuteLogMs = 250;

ByteSpan Span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

Status BudgetExhausted(std::string_view what, RateLimiter& limiter, const std::string& key) {
  return ResourceExhaustedError(std::string(what) + " over its rate budget; retry after " +
                                std::to_string(limiter.RetryAfterMs(key)) + " ms");
}

// OUT_OF_RANGE is what a citizen still validating `height` takes as "stop asking and look
// for its certificate" (client.h, Citizen::ExecuteHedged).
Status AlreadyCommitted(uint64_t height, uint64_t latest) {
  return OutOfRangeError("block " + std::to_string(height) + " is already committed (latest " +
                         std::to_string(latest) + ")");
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
  const bool per_step = options_.genesis.vote_committees == VoteCommittees::kPerStep;
  if (per_step && req.vote_step() == static_cast<uint32_t>(VoteStep::kCert)) {
    // A cert ticket shown before the cert vote tells this politician who certifies; the
    // cross-step fork bound needs that secret (thresholds.h). Cert members vote on the soft
    // quorum without executing (agreement/player.h Params::cert_on_soft_quorum).
    return PermissionDeniedError(
        "Execute: cert tickets may not execute (they must stay secret until the cert vote); "
        "only the height's ticket or a soft ticket");
  }
  if (req.vote_step() != 0 &&
      (!per_step || req.vote_step() != static_cast<uint32_t>(VoteStep::kSoft))) {
    return PermissionDeniedError("Execute: vote_step " + std::to_string(req.vote_step()) +
                                 " names no ticket that may execute on this chain");
  }
  bool member;
  {
    std::lock_guard<std::mutex> lock(mu_);  // tickets_ and rounds_ are under mu_
    if (req.height() <= latest_.height) return AlreadyCommitted(req.height(), latest_.height);
    // Behind the caller (another politician committed first): worth asking again shortly. Its
    // ticket cannot be checked here yet (the seed is block h - 1's).
    if (req.height() > latest_.height + 1) {
      return UnavailableError("Execute: block " + std::to_string(req.height() - 1) +
                              " is not committed here yet (latest " +
                              std::to_string(latest_.height) + ")");
    }
    if (req.vote_step() == 0) {
      member = tickets_.Selected(SortitionAt(options_.genesis, latest_), id.citizen, req.height(),
                                 latest_.seed, credential);
    } else {
      // A soft or cert member of a period not far past what this politician has seen.
      auto round = rounds_.find(req.height());
      const uint64_t floor = round == rounds_.end() ? 0 : round->second.votes.floor_period();
      member = req.vote_period() <= floor + kExecutePeriodsAhead &&
               tickets_.Voter(VoteCommittees::kPerStep, SortitionAt(options_.genesis, latest_),
                              id.citizen, req.height(), req.vote_period(),
                              static_cast<uint8_t>(req.vote_step()), latest_.seed, credential);
    }
  }
  if (!member) {
    return PermissionDeniedError(
        "Execute: caller is not on the committee of block " + std::to_string(req.height()) +
        (req.vote_step() == 0 ? std::string()
                              : " for period " + std::to_string(req.vote_period()) + " step " +
                                    std::to_string(req.vote_step())));
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
  // Bounds the proof (and so the caller's reply cap, reply_caps.h) before any is built.
  if (req.keys_size() > static_cast<int>(kMaxReadKeys)) {
    return InvalidArgumentError("at most " + std::to_string(kMaxReadKeys) + " keys per read");
  }
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
  // The withholding adversary refuses every caller, members included, with the refusal that
  // ends a member's execution if taken on trust: "already committed" (the member fetches the
  // block from it first, Citizen::ExecuteHedged).
  if (options_.faults.withhold_data) return AlreadyCommitted(req.height(), req.height());
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
  std::vector<bool> held(hashes.size(), false);
  for (int k = 0; k < req.held_pools_size(); ++k) {
    const uint32_t i = req.held_pools(k);
    if (i >= hashes.size() || (k > 0 && i <= req.held_pools(k - 1))) {
      return InvalidArgumentError("held_pools must be strictly ascending indices into the body");
    }
    held[i] = true;
  }
  // The pools the caller does not hold, copied under mu_ (pools_ changes at commit).
  auto add_pools = [&]() -> Status {
    for (size_t i = 0; i < hashes.size(); ++i) {
      Pool* pool = rep->add_pools();
      if (held[i]) continue;
      auto it = pools_.find(hashes[i]);
      if (it == pools_.end()) return UnavailableError("a pool of the body is no longer held");
      *pool = it->second.wire;
    }
    return Status::Ok();
  };
  SparseMerkleTree tree;
  std::vector<LedgerTx> txs;
  BlockContext ctx;
  {
    std::shared_ptr<const ExecuteReply> cached;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Citizens of one committee ask for the same body at about the same time: execute it
      // once.
      executed_cv_.wait_for(lock, std::chrono::seconds(20),
                            [&] { return !executing_.count(cache_key); });
      // Committed while this call waited for the lock or a concurrent execution.
      if (req.height() <= latest_.height) return AlreadyCommitted(req.height(), latest_.height);
      if (req.height() != latest_.height + 1) {
        return FailedPreconditionError("can only execute block " +
                                       std::to_string(latest_.height + 1));
      }
      auto hit = execute_cache_.find(cache_key);
      if (hit == execute_cache_.end()) {
        TESSERA_ASSIGN_OR_RETURN(txs, CollectTxs(hashes, {}));
        ctx = NextContext();
        uint64_t version = latest_.height + 1;  // a commit may have stored the next one already
        if (options_.faults.stale_state && version > 1) --version;
        TESSERA_ASSIGN_OR_RETURN(tree, state_->CachedTreeAt(version));
        executing_.insert(cache_key);  // erased below on every path
      } else {
        cached = hit->second;
        TESSERA_RETURN_IF_ERROR(add_pools());
      }
    }
    if (cached) {
      // The pools are in place; the rest of the reply (the cached one has no pools) is copied
      // outside mu_, whole, and the pools moved back in.
      google::protobuf::RepeatedPtrField<Pool> pools;
      pools.Swap(rep->mutable_pools());
      *rep = *cached;
      rep->mutable_pools()->Swap(&pools);
      return Status::Ok();
    }
  }
  // The heavy part runs outside the lock, on an immutable tree.
  using SteadyClock = std::chrono::steady_clock;
  const auto started = SteadyClock::now();
  SteadyClock::time_point applied, updated;
  Status status = [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome,
                             ledger::ApplyBlock(TreeLookup(tree), txs, ctx, apps_));
    applied = SteadyClock::now();
    TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree next, tree.Update(outcome.updates));
    updated = SteadyClock::now();
    rep->set_proof(tree.Prove(BlockKeys(txs, ctx, apps_)).Encode());
    for (uint32_t i : outcome.crypto_rejected) rep->add_crypto_rejected(i);
    if (options_.faults.forge && !outcome.crypto_rejected.empty()) {
      rep->clear_crypto_rejected();  // claims every signature checks out
    }
    Hash256 root = next.root_hash();
    if (options_.faults.wrong_state) root[0] ^= 0x5a;
    rep->set_new_root(std::string(AsChars(root)));
    // Signed, so that a false claim proves itself to anyone (execution_claim.h).
    ExecutionClaim claim =
        ClaimOfReply(options_.id, req.height(), tree.root_hash(), ctx.prev_seed, hashes, *rep);
    SignExecutionClaim(claim, options_.keys);
    rep->set_signature(std::string(AsChars(claim.signature)));
    return Status::Ok();
  }();
  auto ms = [](SteadyClock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  const auto ended = SteadyClock::now();
  if (status.ok() && ms(ended - started) >= kSlowExecuteLogMs) {
    spdlog::info(
        "politician {}: executed block {} ({} pools, {} txs) in {} ms: apply {} ms, tree update "
        "{} ms, proof and claim {} ms",
        options_.id, req.height(), hashes.size(), txs.size(), ms(ended - started),
        ms(applied - started), ms(updated - applied), ms(ended - updated));
  }
  // The cache's copy (the proof is most of it) is made before mu_ is taken.
  std::shared_ptr<const ExecuteReply> to_cache;
  if (status.ok()) to_cache = std::make_shared<const ExecuteReply>(*rep);
  std::lock_guard<std::mutex> lock(mu_);
  executing_.erase(cache_key);
  executed_cv_.notify_all();
  if (status.ok() && req.height() == latest_.height + 1) {
    execute_cache_[cache_key] = std::move(to_cache);
  }
  if (status.ok()) status = add_pools();
  return status;
}

}  // namespace tessera::ledger::net
