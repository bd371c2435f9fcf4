#include "ledger/net/chain.h"

#include <algorithm>

#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/registration.h"
#include "ledger/vote_sortition.h"

namespace tessera::ledger::net {

Result<CertifiedBlockData> DecodeCertifiedBlock(const std::string& header,
                                                const std::string& certificate,
                                                const std::vector<std::string>& identities) {
  CertifiedBlockData b;
  TESSERA_ASSIGN_OR_RETURN(b.header, DecodeBlockHeader(AsBytes(header)));
  TESSERA_ASSIGN_OR_RETURN(b.certificate, DecodeCommitteeCertificate(AsBytes(certificate)));
  for (const std::string& id : identities) {
    TESSERA_ASSIGN_OR_RETURN(Identity i, DecodeIdentity(AsBytes(id)));
    b.identities.push_back(i);
  }
  return b;
}

Status CheckIdentity(const Genesis& genesis, const Identity& identity, const PublicKey& key,
                     uint64_t height) {
  if (identity.citizen != key) return InvalidArgumentError("identity is for another key");
  if (!VerifyIdentity(identity, genesis.registrar)) {
    return PermissionDeniedError("identity of " + ToHex(key).substr(0, 16) +
                                 " is not signed by the registrar");
  }
  if (!EligibleAt(identity, height, genesis.registration_delay)) {
    return FailedPreconditionError("citizen " + ToHex(key).substr(0, 16) + " registered at " +
                                   std::to_string(identity.registered_at) +
                                   " is not yet eligible at height " + std::to_string(height));
  }
  return Status::Ok();
}

Hash256 ProposerSeed(const Hash256& prev_seed, uint32_t period) {
  if (period == 0) return prev_seed;
  CanonicalWriter w;
  w.Raw(AsBytes("tessera/proposer-period")).Array(prev_seed).U32(period);
  return Sha256(AsBytes(w.bytes()));
}

SortitionParams ProposerParams(const SortitionParams& params, uint32_t period) {
  SortitionParams p = params;
  p.proposers = std::min<uint64_t>(p.population, p.proposers << std::min<uint32_t>(period, 40));
  return p;
}

namespace {
// The ticket `proof` of `key` if it verifies and wins proposer period `period` of block
// prev.height + 1, whose sortition is `params` (SortitionAt(genesis, prev)).
std::optional<Ticket> WinningProposerTicket(const BlockHeader& prev, const SortitionParams& params,
                                            const PublicKey& key, const VrfProof& proof,
                                            uint32_t period) {
  auto t = VerifyTicket(key, Role::kProposer, prev.height + 1, ProposerSeed(prev.seed, period),
                        proof, ProposerParams(params, period));
  if (!t.ok() || !t->selected) return std::nullopt;
  return *t;
}
}  // namespace

Result<VrfOutput> VerifyProposerTicket(const Genesis& genesis, const BlockHeader& prev,
                                       const ProposerTicket& ticket, const Identity& proposer) {
  const uint64_t h = prev.height + 1;
  if (ticket.height != h) {
    return InvalidArgumentError("proposer ticket for height " + std::to_string(ticket.height) +
                                ", expected " + std::to_string(h));
  }
  if (ticket.period >= kMaxProposerPeriods) {
    return InvalidArgumentError("proposer ticket for period " + std::to_string(ticket.period) +
                                ", past the last " + std::to_string(kMaxProposerPeriods - 1));
  }
  TESSERA_RETURN_IF_ERROR(CheckIdentity(genesis, proposer, ticket.proposer, h));
  auto won = WinningProposerTicket(prev, SortitionAt(genesis, prev), ticket.proposer,
                                   ticket.credential, ticket.period);
  if (!won) return PermissionDeniedError("proposer ticket is invalid or does not win");
  return won->output;
}

Result<VrfOutput> VerifyProposal(const Genesis& genesis, const BlockHeader& prev,
                                 const BlockHeader& proposal, const Identity& proposer,
                                 uint32_t* period_out) {
  const uint64_t h = prev.height + 1;
  if (proposal.height != h) {
    return InvalidArgumentError("proposal height " + std::to_string(proposal.height) +
                                ", expected " + std::to_string(h));
  }
  if (proposal.prev_hash != BlockHash(prev)) {
    return InvalidArgumentError("proposal for height " + std::to_string(h) +
                                " does not extend the certified block " +
                                std::to_string(prev.height));
  }
  TESSERA_RETURN_IF_ERROR(CheckRegistrations(genesis, prev, proposal));
  TESSERA_RETURN_IF_ERROR(CheckIdentity(genesis, proposer, proposal.proposer, h));
  const SortitionParams params = SortitionAt(genesis, prev);
  std::optional<Ticket> won;
  for (uint32_t period = 0; period < kMaxProposerPeriods && !won; ++period) {
    won = WinningProposerTicket(prev, params, proposal.proposer, proposal.proposer_credential,
                                period);
    if (won && period_out) *period_out = period;
  }
  if (!won) return PermissionDeniedError("proposer ticket is invalid or does not win");
  const Ticket& t = *won;
  if (proposal.seed != NextSeed(prev.seed, t.output)) {
    return InvalidArgumentError("proposal seed is not NextSeed(prev seed, proposer output)");
  }
  return t.output;
}

std::vector<size_t> ProposalOrder(const std::vector<ProposalRank>& candidates, uint32_t period) {
  std::vector<size_t> order;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].period <= period) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ProposalRank& x = candidates[a];
    const ProposalRank& y = candidates[b];
    return x.period != y.period ? x.period < y.period : x.beta < y.beta;
  });
  return order;
}

void TicketCache::Reset(const SortitionParams& params, uint64_t height, const Hash256& seed) {
  if (height != height_ || seed != seed_ || params.population != population_) {
    verdicts_.clear();
    vote_verdicts_.clear();
    height_ = height;
    seed_ = seed;
    population_ = params.population;
  }
}

bool TicketCache::Selected(const SortitionParams& params, const PublicKey& key, uint64_t height,
                           const Hash256& seed, const VrfProof& proof) {
  Reset(params, height, seed);
  auto [it, inserted] = verdicts_.try_emplace({key, proof}, false);
  if (inserted) {
    auto t = VerifyTicket(key, Role::kCommittee, height, seed, proof, params);
    it->second = t.ok() && t->selected;
  }
  return it->second;
}

bool TicketCache::Voter(VoteCommittees committees, const SortitionParams& params,
                        const PublicKey& key, uint64_t height, uint32_t period, uint8_t step,
                        const Hash256& seed, const VrfProof& proof) {
  if (committees == VoteCommittees::kPerHeight) return Selected(params, key, height, seed, proof);
  Reset(params, height, seed);
  auto [it, inserted] = vote_verdicts_.try_emplace({key, period, step, proof}, false);
  if (inserted) {
    auto t = VerifyVoteTicket(key, height, period, step, seed, proof, params);
    it->second = t.ok() && t->selected;
  }
  return it->second;
}

Status VerifyCertifiedBlock(const Genesis& genesis, const BlockHeader& prev,
                            const CertifiedBlockData& block, TicketCache* cache) {
  const uint64_t h = prev.height + 1;
  std::map<PublicKey, const Identity*> ids;
  for (const Identity& i : block.identities) ids[i.citizen] = &i;
  auto proposer = ids.find(block.header.proposer);
  if (proposer == ids.end()) return InvalidArgumentError("block carries no proposer identity");
  TESSERA_RETURN_IF_ERROR(VerifyProposal(genesis, prev, block.header, *proposer->second).status());
  if (block.certificate.height != h || block.certificate.block_hash != BlockHash(block.header)) {
    return InvalidArgumentError("certificate is for another block");
  }
  auto registered = [&](const PublicKey& key) {
    auto it = ids.find(key);
    return it != ids.end() && CheckIdentity(genesis, *it->second, key, h).ok();
  };
  const HeightParams params = ParamsAt(genesis, prev);
  TicketCache local;
  if (cache == nullptr) cache = &local;
  size_t valid = 0;
  const PublicKey* last = nullptr;
  for (const CertificateSigner& s : block.certificate.signers) {
    if (last != nullptr && !(*last < s.citizen)) {
      return InvalidArgumentError("certificate signers are not strictly ordered");
    }
    last = &s.citizen;
    if (!registered(s.citizen)) continue;
    if (!VerifyBlockSignature(h, block.certificate.period, block.certificate.block_hash, s.citizen,
                              s.signature))
      continue;
    if (cache->Voter(genesis.vote_committees, params.sortition, s.citizen, h,
                     block.certificate.period, static_cast<uint8_t>(VoteStep::kCert), prev.seed,
                     s.credential)) {
      ++valid;
    }
  }
  if (valid < params.cert_threshold) {
    return FailedPreconditionError("certificate for block " + std::to_string(h) + " has " +
                                   std::to_string(valid) + " valid signers, quorum is " +
                                   std::to_string(params.cert_threshold) + " (population " +
                                   std::to_string(params.sortition.population) + ")");
  }
  return Status::Ok();
}

}  // namespace tessera::ledger::net
