// What makes a block part of the chain, checked the same way by politicians, citizens and
// wallets (a light client holds only the latest certified header and this code).
//
// Block h is valid on top of block h - 1 iff
//   * header.height = h and header.prev_hash = BlockHash(block h - 1);
//   * its registrations and registered_through follow block h - 1's (registration.h); the
//     population and thresholds below are the live ones, ParamsAt(genesis, block h - 1);
//   * the proposer holds a registered identity eligible at h and a valid, selected proposer
//     ticket for h on seed_{h-1}, and header.seed = NextSeed(seed_{h-1}, proposer's beta);
//   * the committee certificate names this header's hash and carries at least T_cert
//     signers with valid signatures, valid selected tickets for h on seed_{h-1} -- the
//     height's committee ticket, or with per-step committees (genesis.h VoteCommittees) the
//     ticket for the cert step of the certificate's period (vote_sortition.h) -- and
//     registered identities eligible at h (the identities travel with the block).
// The state root is not checked here: the committee checked it before signing (citizen.h).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/genesis.h"
#include "ledger/net/identity.h"

namespace tessera::ledger::net {

struct CertifiedBlockData {
  BlockHeader header;
  CommitteeCertificate certificate;
  std::vector<Identity> identities;
};

Result<CertifiedBlockData> DecodeCertifiedBlock(const std::string& header,
                                                const std::string& certificate,
                                                const std::vector<std::string>& identities);

// OK iff `identity` is for `key`, signed by the registrar and eligible at `height`.
Status CheckIdentity(const Genesis& genesis, const Identity& identity, const PublicKey& key,
                     uint64_t height);

// Proposer periods (ours): if no valid proposal gets certified in a round, the committee
// retries the height, and retry p draws proposer tickets on ProposerSeed(seed_{h-1}, p) with
// ProposerParams(params, p) (params: the block's sortition, registration.h), i.e. twice as many
// expected proposers per retry. Without this a height whose proposer tickets all went to silent or
// lying citizens would stall forever, since the tickets of a (height, seed) never change. Period 0
// is the plain sortition draw.
inline constexpr uint32_t kMaxProposerPeriods = 8;
Hash256 ProposerSeed(const Hash256& prev_seed, uint32_t period);
SortitionParams ProposerParams(const SortitionParams& params, uint32_t period);

// Checks a proposed header's link to `prev` and its proposer (first three bullets above; the
// proposer ticket may be of any period below kMaxProposerPeriods); returns the proposer's VRF
// output and, in `*period` if given, the period whose ticket it is (a VRF proof is bound to
// its input, so one credential wins at most one period).
Result<VrfOutput> VerifyProposal(const Genesis& genesis, const BlockHeader& prev,
                                 const BlockHeader& proposal, const Identity& proposer,
                                 uint32_t* period = nullptr);

// Checks a proposer's early announcement of its ticket (codec/messages.h ProposerTicket) for
// block prev.height + 1: the identity is the registrar's for the proposer, and the proof wins
// the stated proposer period. Returns the proposer's VRF output (its proposal's rank).
Result<VrfOutput> VerifyProposerTicket(const Genesis& genesis, const BlockHeader& prev,
                                       const ProposerTicket& ticket, const Identity& proposer);

// The order in which a committee member playing proposer period `period` considers proposals
// for its soft vote: only tickets of periods up to its own, the earliest period first, then
// the lowest VRF output. Tickets of later periods are far more plentiful (twice the expected
// winners per period), so ranking by output alone would let any citizen holding a late-period
// ticket outrank the period-0 proposers (issue #12). Returns indices into `candidates`.
struct ProposalRank {
  uint32_t period = 0;
  VrfOutput beta{};
};
std::vector<size_t> ProposalOrder(const std::vector<ProposalRank>& candidates, uint32_t period);

// Remembers committee tickets already checked for one (height, seed), so that a citizen who
// verified a member's ticket on its witness list does not verify it again on its votes and on
// the certificate (a VRF verification costs ~0.7 ms, and a committee member sees each ticket
// three or four times per block).
class TicketCache {
 public:
  // Whether `key` holds a selected committee ticket for (height, seed) under `params` (the
  // block's live sortition, registration.h SortitionAt): verified once.
  bool Selected(const SortitionParams& params, const PublicKey& key, uint64_t height,
                const Hash256& seed, const VrfProof& proof);

  // Whether `key` may vote in `step` of `period` at `height` with `proof`: under kPerHeight,
  // Selected() (one committee votes every step); under kPerStep, a selected vote ticket for
  // exactly (height, period, step) (vote_sortition.h VerifyVoteTicket), verified once.
  bool Voter(VoteCommittees committees, const SortitionParams& params, const PublicKey& key,
             uint64_t height, uint32_t period, uint8_t step, const Hash256& seed,
             const VrfProof& proof);

 private:
  void Reset(const SortitionParams& params, uint64_t height, const Hash256& seed);

  uint64_t height_ = 0;
  uint64_t population_ = 0;
  Hash256 seed_{};
  std::map<std::pair<PublicKey, VrfProof>, bool> verdicts_;
  // Vote tickets: (key, period, step, proof). A proof is bound to its VRF input, but a
  // verdict for one (period, step) must never answer for another.
  std::map<std::tuple<PublicKey, uint32_t, uint8_t, VrfProof>, bool> vote_verdicts_;
};

// Checks a certified block on top of `prev` (all bullets above). The certificate check is
// sortition.h's VerifyCommitteeCertificate rule, re-done here so it can use `cache`.
Status VerifyCertifiedBlock(const Genesis& genesis, const BlockHeader& prev,
                            const CertifiedBlockData& block, TicketCache* cache = nullptr);

}  // namespace tessera::ledger::net
