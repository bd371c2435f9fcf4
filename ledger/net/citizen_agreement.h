// A committee citizen's side of BA* for one block height in the live network: the pure player
// (ledger/agreement/player.h) wired to signed vote messages, the vote journal and the
// politicians' relay (vote_relay.h).
//
// The citizen (citizen.cc) reads round items from its safe sample of politicians, checks each
// vote's signature, identity and committee ticket, and hands it here; it validates the
// proposals this object asks for (WantValidation) and posts the items Step() returns. This
// object decides what to vote:
//   * proposals are bound to their period: the player of period p considers only proposals
//     whose proposer ticket is for period min(p, kMaxProposerPeriods - 1) (chain.h), so a
//     replayed ticket of another period is never a candidate;
//   * every vote is appended to the journal and fsync'd BEFORE it is returned for posting
//     (the player, rebuilt from the journal after a restart, never contradicts it);
//   * a cert vote carries the voter's block signature over (height, period, value): T of them
//     of one period are the block's certificate (politician.cc assembles it).
// Who votes (genesis.h VoteCommittees): with per-height committees, the citizen's committee
// ticket for the height (one VRF draw per height, Blockene's per-block committee), the same
// members in every period and step. With per-step committees (`vote_ticket` set) every
// eligible citizen plays; its vote in step s of period p is sent only if its ticket for
// (height, p, s) wins, and carries that ticket; off a step's committee the player's would-be
// vote is journaled and not sent (player.h Params::member), and the player repeats its next
// vote in fresh next rounds (Params::next_repeat_ms), so a short committee does not stall.
//
// Soft-vote timing. The player soft-votes the best valid proposal it knows once filter_ms has
// passed, so the proposals it is shown decide the vote. In the daemons a period-0 proposal is
// built only after its proposer holds T_soft witness lists and a politician executed it, so
// the proposals of a period arrive together in a burst, well after filter_ms; shown the
// first valid one at once, members that saw the burst in different orders split their soft
// votes, and with H = T (8 citizens, 2 malicious) a split costs the period (measured: the
// 80/25 runs, docs/ledger-network.md). As in Algorand, a proposer announces its ticket
// (ProposerTicket, OnProposerTicket) when it starts to build, so members know which
// proposals are coming. Valid proposals are handed to the player only (a) proposal_grace_ms
// after the period's first proposal was seen (the rest of the burst), (a') while a proposal
// announced above the best valid one has not arrived, up to announced_proposal_wait_ms after
// the first proposal (a proposer that announces and never proposes costs that long), and
// (b) while a proposal ranked above the best valid one still waits for its verdict, not
// before better_proposal_wait_ms into the period: a member does not soft-vote the empty block
// in place of a full one whose pools are not yet eligible for it (issue #13's committee-64
// finding). All only delay the vote; after them the best valid proposal is voted as before.
// Before the announcements (session 25) (a) alone waited a quarter of the next-vote deadline
// (2.5 s at the benches' 20 s round timeout) on every round.
//
// Proposer-less periods. Period 0 of a height, if silent_period_ms after it started no
// proposer has announced a ticket and no proposal has arrived, is given up: the player
// next-votes at once (agreement::Player::ExpediteNextVote: safe at any time) instead of at
// the next-vote deadline. Honest proposers announce as they start to build, so with the
// expected 4 proposers about e^-4 = 1.8% of heights have none in period 0; each such height
// waited the whole deadline (10 s at the benches' 20 s round timeout, on rounds of ~6 s), the
// p99 of every run long enough to contain one. A proposer slower to announce than
// silent_period_ms costs the period, as a proposer that never proposes always did. Only
// period 0: its proposers start with the height, while in a later period a proposer may still
// be building for the period before (a slow Execute) and announce late; giving those up too
// could let periods cascade (the CI of 6efc929 failed slow_execute at 47.5% of honest with one
// height of 24.5 s; that this was the cause is not confirmed, see docs/ledger-network.md).
//
//   CitizenAgreement ba(config, now_ms);
//   ba.OnVote(vote, item);  ba.OnProposal(value, ticket_period, beta);
//   for (Hash256 v : ba.WantValidation()) ba.SetVerdict(v, Validate(...));
//   TESSERA_ASSIGN_OR_RETURN(std::vector<RoundItem> out, ba.Step(now_ms));  // post them
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/agreement/player.h"
#include "ledger/agreement/vote_journal.h"
#include "ledger/codec/messages.h"
#include "ledger/net/blockene.pb.h"
#include "ledger/net/faults.h"
#include "ledger/sortition.h"

namespace tessera::ledger::net {

// Conversions between the signed wire vote and the player's vote.
agreement::Vote ToAgreementVote(const Vote& v);
// Unsigned: the caller adds credential and signature (SignVote).
Vote ToWireVote(const agreement::Vote& v);

// This citizen's ticket proof for (period, step) of one height if it wins, else nullopt.
using VoteTicketFn = std::function<std::optional<VrfProof>(uint32_t period, agreement::Step step)>;

// The per-step tickets of `keys` at `height` on `seed` (the seed of block height - 1) under
// `params` (the block's live sortition): each (period, step) drawn once (vote_sortition.h
// DrawVote) and remembered. A draw that fails (empty population) is a loss.
VoteTicketFn MakeVoteTickets(const KeyPair* keys, uint64_t height, const Hash256& seed,
                             const SortitionParams& params);

struct CitizenAgreementConfig {
  agreement::Params params;
  uint64_t height = 0;
  const KeyPair* keys = nullptr;
  VrfProof credential{};  // this citizen's committee ticket for `height` (per-height votes)
  // Per-step committees: set, this citizen votes in (period, step) only with the ticket it
  // returns (and params.member is set from it); null, every vote carries `credential`.
  VoteTicketFn vote_ticket;
  std::string identity;                       // its encoded registrar-signed identity
  agreement::VoteJournal* journal = nullptr;  // null: votes are not persisted
  CitizenFault fault = CitizenFault::kNone;
  // When the player may soft-vote (see "Soft-vote timing" above): not before this long after
  // the first proposal of the period was seen...
  uint64_t proposal_grace_ms = 0;
  // ... nor, while a proposal announced with a better ticket than the best valid one has not
  // arrived, before this long after it...
  uint64_t announced_proposal_wait_ms = 0;
  // ... and, while a proposal ranked above the best valid one has no verdict yet (its pools
  // not yet eligible here, or its execution not yet answered), not before this long after the
  // period started.
  uint64_t better_proposal_wait_ms = 0;
  // Period 0 with no announced proposer and no proposal this long after it started is given
  // up ("Proposer-less periods" above). 0: never; the next vote waits for params.next_ms.
  uint64_t silent_period_ms = 0;
};

class CitizenAgreement {
 public:
  CitizenAgreement(CitizenAgreementConfig config, uint64_t now_ms);

  // A vote of this height whose signature, identity and committee ticket the caller checked;
  // `item` is the round item it came in (kept for re-sends of own votes).
  void OnVote(const Vote& vote, uint64_t now_ms);
  // A proposal whose proposer ticket the caller checked; `ticket_period` is the period the
  // ticket is for (VerifyProposal).
  void OnProposal(const Hash256& value, uint32_t ticket_period, const VrfOutput& beta,
                  uint64_t now_ms);
  // A proposer's announced ticket whose proof the caller checked (VerifyProposerTicket): its
  // proposal is on the way. The best kMaxAnnouncedTickets of each period are kept.
  void OnProposerTicket(uint32_t ticket_period, const VrfOutput& beta, uint64_t now_ms);
  static constexpr size_t kMaxAnnouncedTickets = 16;
  // Values this player needs a verdict on: the best not-yet-judged proposal of the current
  // period (lowest VRF output first, until one is valid) and values with a soft quorum.
  std::vector<Hash256> WantValidation() const;
  void SetVerdict(const Hash256& value, bool valid, uint64_t now_ms);

  // Advances the player; returns the items to post: new votes (already journaled and fsync'd)
  // and, every resend_ms, this citizen's own votes of the current and previous period again.
  // An error means the journal could not be written: nothing is returned, and the caller must
  // stop voting.
  Result<std::vector<RoundItem>> Step(uint64_t now_ms);

  uint32_t period() const { return player_.period(); }
  uint32_t ticket_period() const;
  // Whether this citizen should build a fresh proposal in the current period (the previous
  // period ended on bottom, or it is period 0) -- BA*'s re-proposal of the starting value is
  // implicit: honest members soft-vote it without a proposal.
  bool FreshProposalsWanted() const { return !player_.ReproposalValue().has_value(); }
  bool decided() const { return player_.decided(); }
  const std::optional<agreement::Commit>& decision() const { return player_.decision(); }
  std::string DebugString() const { return player_.DebugString(); }
  uint64_t votes_cast() const { return votes_cast_; }
  // Per-step committees: this citizen's winning ticket for (period, step), nullopt if it lost
  // or votes per height (what an Execute call of a soft or cert member carries).
  std::optional<VrfProof> VoteTicket(uint32_t period, agreement::Step step) const {
    return config_.vote_ticket ? config_.vote_ticket(period, step) : std::nullopt;
  }

 private:
  struct Candidate {
    uint32_t ticket_period = 0;
    VrfOutput beta{};
    std::optional<bool> valid;
  };
  void Absorb(agreement::Actions a);
  RoundItem Sign(const agreement::Vote& v) const;
  void FeedProposals(uint64_t now_ms);  // candidates of the current period to the player
  std::vector<RoundItem> Adversary();   // the votes of a kInconsistent / kCollude member

  // Whether valid proposals are held back from the player now (see "Soft-vote timing").
  bool HoldProposals(uint64_t now_ms) const;
  // Whether the current period is to be given up ("Proposer-less periods").
  bool PeriodIsSilent(uint64_t now_ms) const;

  CitizenAgreementConfig config_;
  agreement::Player player_;
  uint32_t period_seen_ = 0;                        // the player's period at the last Step
  uint64_t period_start_ms_ = 0;                    // when this object saw it start
  std::map<uint32_t, uint64_t> first_proposal_ms_;  // ticket period -> first proposal seen
  std::map<Hash256, Candidate> candidates_;
  std::map<uint32_t, std::set<Hash256>> announced_;  // ticket period -> announced priorities
  std::set<std::pair<uint32_t, Hash256>> fed_;       // (player period, value) given to the player
  // Soft voters per (period, value), to know which values need a verdict for a cert vote.
  std::map<std::pair<uint32_t, Hash256>, std::set<PublicKey>> soft_;
  agreement::Actions pending_;
  std::vector<agreement::JournalRecord> own_;  // every vote this citizen cast at this height
  uint64_t last_resend_ms_ = 0;
  uint64_t votes_cast_ = 0;
  std::set<agreement::Vote> adversary_sent_;
};

// The block value colluding citizens (CitizenFault::kCollude) all vote for at `height`.
Hash256 AdversaryValue(uint64_t height);

}  // namespace tessera::ledger::net
