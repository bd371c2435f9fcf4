// A politician's part in a round: the round log of witness lists, proposals and votes it relays
// (Post, GetRound, GetItems), the checks an item passes before it is kept, and the commit of a
// block once its certificate's votes have arrived.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "ledger/net/politician.h"
#include "ledger/net/registration.h"
#include "ledger/net/round_item.h"
#include "ledger/net/wire_bytes.h"

namespace tessera::ledger::net {
namespace {

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
    if (h != latest_.height + 1 || tickets_.Selected(SortitionAt(options_.genesis, latest_), who, h,
                                                     latest_.seed, credential)) {
      return Status::Ok();
    }
    return PermissionDeniedError("not on the committee of block " + std::to_string(h));
  };
  // A vote's ticket: the height's committee ticket, or with per-step committees its ticket for
  // the vote's (period, step) (TicketCache::Voter).
  auto voter = [&](const Vote& v) -> Status {
    if (h != latest_.height + 1 ||
        tickets_.Voter(options_.genesis.vote_committees, SortitionAt(options_.genesis, latest_),
                       v.citizen, h, v.period, static_cast<uint8_t>(v.step), latest_.seed,
                       v.credential)) {
      return Status::Ok();
    }
    return PermissionDeniedError("not on the committee of block " + std::to_string(h) + " period " +
                                 std::to_string(v.period) + " step " +
                                 std::to_string(static_cast<int>(v.step)));
  };
  switch (static_cast<MessageType>(static_cast<uint8_t>(payload[0]))) {
    case static_cast<MessageType>(kIdentityMessageType): {
      // A registration for block h (registration.h): the registrar's identity for that height.
      TESSERA_ASSIGN_OR_RETURN(Identity id, DecodeIdentity(AsBytes(payload)));
      if (id.registered_at != h || !VerifyIdentity(id, options_.genesis.registrar)) {
        return InvalidArgumentError("registration is not the registrar's for height " +
                                    std::to_string(h));
      }
      if (log.registrations >= kMaxRegistrationsPerBlock) {
        return ResourceExhaustedError("round " + std::to_string(h) + " already has " +
                                      std::to_string(kMaxRegistrationsPerBlock) + " registrations");
      }
      ++log.registrations;
      break;
    }
    case MessageType::kTxPoolCommitment: {
      TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment c, DecodeTxPoolCommitment(AsBytes(payload)));
      TESSERA_RETURN_IF_ERROR(AdmitCommitment(h, c, log));  // politician_flood.cc
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
    case MessageType::kProposerTicket: {
      // Checked as a witness list's ticket is: in full once the seed of block h - 1 is known,
      // on identity alone for the block after it.
      TESSERA_ASSIGN_OR_RETURN(ProposerTicket t, DecodeProposerTicket(AsBytes(payload)));
      if (t.height != h) return InvalidArgumentError("proposer ticket for another height");
      TESSERA_ASSIGN_OR_RETURN(Identity id, identity(t.proposer));
      if (h == latest_.height + 1) {
        TESSERA_RETURN_IF_ERROR(VerifyProposerTicket(options_.genesis, latest_, t, id).status());
      }
      if (t.period == 0) log.first_period_ticket = true;
      break;
    }
    case MessageType::kVote: {
      TESSERA_ASSIGN_OR_RETURN(Vote v, DecodeVote(AsBytes(payload)));
      if (v.height != h || !VerifyVote(v)) return InvalidArgumentError("invalid vote");
      TESSERA_ASSIGN_OR_RETURN(Identity id, identity(v.citizen));
      TESSERA_RETURN_IF_ERROR(voter(v));
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
      Status admitted = log.votes.Admit(v, ParamsAt(options_.genesis, latest_).cert_threshold);
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
  round_cv_.notify_all();  // held GetRound long-polls
  // Pulled by the peers from this round's listing (flood_fetcher.h), or pushed to each.
  if (!options_.faults.withhold && !options_.pull_gossip) {
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
       log.votes.CertifiableValues(ParamsAt(options_.genesis, latest_).cert_threshold)) {
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

void PoliticianNode::WaitForRoundItems(const RoundRequest& req, const std::string& peer,
                                       const std::function<bool()>& cancelled,
                                       std::unique_lock<std::mutex>& lock) {
  const uint64_t h = req.height();
  // Something to answer now: the block is committed (the caller fetches it), the height is not
  // being agreed, or the round has items after the caller's offset.
  auto news = [&] {
    if (latest_.height >= h || h > latest_.height + 2) return true;
    auto it = rounds_.find(h);
    return it != rounds_.end() && it->second.items.size() > req.offset();
  };
  if (news()) return;
  // A withholding politician hands out nothing new anyway: it answers at once, as it did.
  if (options_.faults.withhold) return;
  const std::string key = peer + "/" + req.listener();
  size_t& mine = round_waiters_by_peer_[key];
  if (round_waits_.held >= options_.round_waiters || mine >= options_.round_waiters_per_peer) {
    ++round_waits_.over_bound;
    if (mine == 0) round_waiters_by_peer_.erase(key);
    return;
  }
  ++mine;
  ++round_waits_.held;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::min(req.wait_ms(), kMaxRoundWaitMs));
  // Slices: a cancelled call or a server shutting down ends the wait within 250 ms. Each slice
  // wakes the call under mu_, and at committee 64 a politician holds ~64 of them: slices are
  // not shorter than that needs.
  bool woken = false;
  while (!(woken = news()) && std::chrono::steady_clock::now() < deadline &&
         !(cancelled && cancelled())) {
    round_cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                      std::chrono::milliseconds(250)));
  }
  ++(woken ? round_waits_.woken : round_waits_.expired);
  --round_waits_.held;
  auto it = round_waiters_by_peer_.find(key);  // `mine` may dangle: the map changed meanwhile
  if (--it->second == 0) round_waiters_by_peer_.erase(it);
}

PoliticianNode::RoundWaitStats PoliticianNode::round_wait_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return round_waits_;
}

void PoliticianNode::GetRound(const RoundRequest& req, RoundReply* rep, const std::string& peer,
                              const std::function<bool()>& cancelled) {
  Delay();
  std::unique_lock<std::mutex> lock(mu_);
  // The pool is frozen on the first listing of the next height, before any wait: its
  // commitment is the round's first item.
  if (req.height() == latest_.height + 1 && !req.relay()) FreezePool(req.height());
  if (req.wait_ms() > 0) WaitForRoundItems(req, peer, cancelled, lock);
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
    if (req.offset() == 0 && my_commitments_.count(req.height())) {
      RoundItem own;
      own.set_payload(my_commitments_[req.height()][0]);
      add(own);
    }
    rep->set_next_offset(1);
    return;
  }
  auto it = rounds_.find(req.height());
  if (it == rounds_.end()) {
    rep->set_next_offset(req.offset());
    return;
  }
  const std::vector<RoundItem>& items = it->second.items;
  const std::vector<std::string>* mine =
      my_commitments_.count(req.height()) ? &my_commitments_[req.height()] : nullptr;
  bool alternate = mine && mine->size() > 1 && (round_requests_++ % 2 == 1);
  // A hash listing carries at most kMaxRoundListing items (client.h); the caller asks again
  // from next_offset for the rest.
  size_t i = req.offset();
  for (; i < items.size(); ++i) {
    if (req.hashes_only() && static_cast<size_t>(rep->item_hashes_size()) >= kMaxRoundListing) {
      break;
    }
    // An equivocating politician hides whichever of its two pools this caller should not see.
    if (mine && mine->size() > 1 && items[i].payload() == (*mine)[alternate ? 0 : 1]) {
      continue;
    }
    add(items[i]);
  }
  rep->set_next_offset(std::min(i, items.size()));
}

void PoliticianNode::GetItems(const ItemsRequest& req, RoundReply* rep) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  rep->set_height(latest_.height);
  auto it = rounds_.find(req.height());
  if (it == rounds_.end()) return;
  const RoundLog& log = it->second;
  // Bounded work and reply size (ItemsRequest): next_offset = hashes looked at.
  size_t looked = 0, bytes_out = 0;
  for (const std::string& bytes : req.hashes()) {
    if (looked >= kMaxItemsPerRequest || bytes_out >= kMaxItemsReplyBytes) break;
    ++looked;
    auto hash = HashFromBytes(bytes, "item hash");
    if (!hash.ok()) break;
    auto found = log.seen.find(*hash);
    if (found == log.seen.end()) continue;
    const RoundItem& item = log.items[found->second];
    if (options_.faults.withhold) {  // as in GetRound: nothing but its own commitment
      const auto& mine = my_commitments_[req.height()];
      if (std::find(mine.begin(), mine.end(), item.payload()) == mine.end()) continue;
    }
    bytes_out += item.ByteSizeLong();
    *rep->add_items() = item;
  }
  rep->set_next_offset(looked);
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

}  // namespace tessera::ledger::net
