// The agreement player: one citizen's side of Algorand's BA* for one block height, as a pure,
// deterministic state machine (events in, actions out; no clock, network, disk or crypto).
// The same code runs in the seeded simulation (simulation.h) and behind the citizen daemon.
// Modelled on go-algorand's agreement/player.go and on Chen, Gorbunov, Micali, Vlachos,
// "Algorand Agreement" (2018), whose steps it follows (periods numbered from 0 here):
//
//   period p starts when the player enters it (p = 0 at the height's start; p + 1 when it sees
//   a next quorum -- T votes of one next step for one value -- of any period >= p). The
//   *starting value* st is the non-bottom value of the previous period's next quorum, if any.
//   soft     at filter_ms after the period starts (once, until next_ms): if p == 0 or the
//            previous period had a bottom next quorum, the valid proposal of period p with the
//            lowest priority (the proposer's VRF output); otherwise st.
//   cert     once a soft quorum for value v of period p is seen and v was validated, but only
//            before this player next-votes in p (the cert-before-next rule the safety proof
//            needs). Off the cert committee (Params::member) the would-be vote needs only the
//            soft quorum: it is never sent, so it certifies nothing, and it binds every
//            player that saw the quorum in time, validator or not. With
//            Params::cert_on_soft_quorum a cert member, too, needs only the soft quorum (and
//            no own verdict against v).
//   next     at next_ms (once): the value it cert-voted in p; else bottom if p > 0 and the
//            previous period had a bottom quorum; else st (bottom when there is none). Earlier
//            when the caller knows that no proposal is coming in a period that wants fresh
//            ones (ExpediteNextVote): the rules above hold whenever the vote is cast.
//   late_next (once, after its next vote): v as soon as a soft quorum for v in p is seen.
//   down_next (once, after its next vote): bottom if p > 0, the previous period had a bottom
//            quorum and it did not cert-vote in p.
//   commit   T cert votes for one value in one period, each actually cast for it (an
//            equivocator counts for every value in quorums, but a certificate is made of
//            signatures for the value: Tally::Signed).
//
// Safety (no two values committed at one height) holds whenever, in every step's committee,
// honest H and malicious M satisfy H + 2M < 2T: two quorums of one step for different values
// would need an honest member to vote twice. Across periods: once v is certified in p, at
// least T - M honest members cert-voted v, so they next-vote only v in p, so no other value
// (nor bottom) reaches a next quorum, so every later period starts from v and honest players
// vote only v. Liveness after the network becomes synchronous needs H >= T in each committee
// and the bundles below: a player that sees a quorum relays it, and re-sends its own votes
// and the latest bundles every resend_ms, so a split period converges.
//
// Durable state: the caller must persist every vote in `Actions::votes` (vote_journal.h,
// fsync'd) BEFORE sending any of them; a player constructed from the journal never casts a
// different vote for a (period, step) it voted in, even after a crash.
//
//   Player p(params, height, pk, journal_records_for_height, now_ms);
//   Actions a = p.OnProposal({...}, now_ms);  a = p.OnVote(vote, now_ms);  a = p.Tick(now_ms);
//   journal.Append(a.votes); send(a.votes); relay(a.bundles); if (a.commit) ...
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "ledger/agreement/vote.h"

namespace tessera::ledger::agreement {

struct Params {
  size_t threshold = 1;            // T: votes of one (period, step, value) that make a quorum
  uint64_t filter_ms = 200;        // soft vote this long after a period starts (Algorand: 2 lambda)
  uint64_t next_ms = 400;          // next vote this long after a period starts (max(4 lambda, ...))
  uint64_t resend_ms = 300;        // re-send own votes and the latest bundles this often
  uint32_t max_periods_ahead = 8;  // single votes further ahead than this are dropped
  // Recovery: next votes and period changes. With false the player is the old protocol
  // (soft and cert once per height, nothing else): safe, but a split height never moves on.
  // Only the simulation test turns it off, to show that it is needed.
  bool recovery = true;
  // Committees per step (Algorand): whether this player sits on the committee of (period,
  // step) at its height (its VRF ticket for that step wins, vote_sortition.h DrawVote). Null: on
  // every committee (one committee votes every step). Off a step's committee, the player still
  // decides what it would vote there and acts on that decision (its cert-before-next rule and
  // next-vote value depend on it); the would-be vote is returned with JournalRecord::sent =
  // false, to be journaled but not sent, and never counted in a quorum.
  std::function<bool(uint32_t period, Step step)> member;
  // Repeated next steps (vote.h NextRound): after its next vote, the player casts NextRound(k)
  // at next_ms + k * next_repeat_ms, k = 1 .. kMaxNextRounds, each step with its own
  // committee, so a next step whose committee was short does not stall the period. 0: off
  // (with one committee for every step a repetition adds nothing).
  uint64_t next_repeat_ms = 0;
  // A cert member cert-votes a soft quorum's value without validating it itself (unless it
  // found the value invalid: OnRefuted). With committees per step the cert committee is
  // almost disjoint from the soft one, and a cert member may not execute -- an Execute call
  // would reveal its cert ticket before its cert vote, and the cross-step safety bound needs
  // that ticket secret (thresholds.h) -- so validity rests on the soft quorum: T soft votes,
  // of which the honest ones were cast only for a value they validated (or for the starting
  // value, itself a soft quorum's value in an earlier period). An invalid value is then
  // certified only if the honest soft members that missed the bad signature plus the
  // malicious ones reach T: the sound-sample bound, counted for the soft step instead of the
  // cert step. False (one committee per height): a cert vote needs the player's own verdict.
  bool cert_on_soft_quorum = false;
};

// What the player persists per vote: the vote and the period context it was cast in, so a
// restarted player resumes its period with the right starting value.
struct JournalRecord {
  Vote vote;
  Value starting_value;
  bool previous_bottom_quorum = false;
  bool sent = true;  // false: off this step's committee (Params::member); journal, never send
  friend bool operator==(const JournalRecord&, const JournalRecord&) = default;
};

// A proposal the caller has checked: the proposer's ticket is valid for (height, period) --
// tickets are bound to their period, so a replayed ticket of another period never gets here
// -- and `valid` says whether the block behind `value` validated.
struct Proposal {
  uint32_t period = 0;
  Value value;         // never bottom
  Hash256 priority{};  // lower wins (the proposer's VRF output, or a hash of it)
  bool valid = false;
};

struct Commit {
  Value value;
  uint32_t period = 0;
  std::vector<Vote> certificate;  // T cert votes for value, period
};

struct Actions {
  std::vector<JournalRecord> votes;        // persist, then send
  std::vector<std::vector<Vote>> bundles;  // relay (quorums seen, and re-sends)
  std::optional<Commit> commit;            // set once, when the height is decided
  bool empty() const { return votes.empty() && bundles.empty() && !commit; }
};

class Player {
 public:
  // `journal`: this voter's records for `height` (any order); the player resumes in the
  // highest period voted in, knows its own votes and never contradicts them.
  Player(const Params& params, uint64_t height, const PublicKey& self,
         std::span<const JournalRecord> journal, uint64_t now_ms);

  // A vote checked by the caller (signature, committee ticket for its step). Votes of other
  // heights are ignored; a voter that votes two values in one (period, step) counts for every
  // value from then on (see Tally).
  Actions OnVote(const Vote& vote, uint64_t now_ms);
  // A bundle (votes relayed together); each vote is taken as by OnVote, but a quorum of next
  // votes is taken at any period distance (catch-up).
  Actions OnBundle(std::span<const Vote> votes, uint64_t now_ms);
  Actions OnProposal(const Proposal& proposal, uint64_t now_ms);
  // A value validated after its proposal was seen (e.g. a carried-over value whose block
  // arrived later).
  Actions OnValidated(const Value& value, uint64_t now_ms);
  // A value this player's validation rejected: with Params::cert_on_soft_quorum it sends no
  // cert vote for it even after a soft quorum.
  Actions OnRefuted(const Value& value, uint64_t now_ms);
  Actions Tick(uint64_t now_ms);
  // The caller knows that no proposal is coming in the current period (the daemons: no
  // proposer announced a ticket for it in time, citizen_agreement.h): if the period wants
  // fresh proposals (period 0, or after a bottom quorum: ReproposalValue() is nullopt), the
  // next vote is due now instead of at next_ms, and the soft-vote window closes with it.
  // Safety does not depend on when a next vote is cast (the cert-before-next rule and the
  // next-vote value hold at any time; a vote cast early only gives up this player's soft and
  // cert votes in the period), so a wrong call costs at most the period. A proposer-less
  // period then ends as soon as T members have concluded the same, not at next_ms (committee
  // 64: a 10 s deadline on rounds of ~6 s).
  Actions ExpediteNextVote(uint64_t now_ms);

  uint64_t height() const { return height_; }
  uint32_t period() const { return period_; }
  bool decided() const { return decided_.has_value(); }
  // Whether this player cast (or journaled, off the committee) its `step` vote of `period`.
  bool Voted(uint32_t period, Step step) const { return Mine(period, step) != nullptr; }
  const std::optional<Commit>& decision() const { return decided_; }
  // The value an honest proposer of the current period proposes: st when the previous period
  // had a next quorum for it and no bottom quorum, else nullopt (propose a fresh block).
  std::optional<Value> ReproposalValue() const;
  // The earliest time a Tick can change anything (deadlines and re-sends).
  uint64_t NextDeadline() const;
  // Period, starting value, own votes and vote counts of the tracked periods (for failures).
  std::string DebugString() const;

 private:
  struct Key {
    uint32_t period;
    Step step;
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  // Votes of one (period, step). A voter seen with two different values is an equivocator
  // and counts towards EVERY value (as in go-algorand): an honest voter never equivocates
  // (journal), and the bound H + 2M < 2T already lets each malicious voter count on both
  // sides of a conflict, while counting equivocators only once would let a bundle that is a
  // quorum at its sender fall short at a receiver that saw the other vote first.
  struct Tally {
    std::map<PublicKey, Value> by_voter;  // first value of each voter
    std::map<PublicKey, Value> second;    // equivocators' second value
    std::map<Value, size_t> count;        // non-equivocating voters per value
    size_t Count(const Value& v) const;
    // Voters that did vote v (an equivocator only for the values it was seen voting): what a
    // certificate can be made of. A commit needs T of these -- counting equivocators for
    // every value let a player decide on 5 honest cert votes plus an equivocator that never
    // signed the value, while the politicians (which keep an equivocator's first two values,
    // vote_relay.h) could not assemble the certificate, and the height stalled for good.
    size_t Signed(const Value& v) const;
    bool Add(const Vote& vote);  // false if nothing new
  };

  void Accept(const Vote& vote, bool any_period, Actions& out);
  void Evaluate(uint64_t now_ms, Actions& out);
  void EnterPeriod(uint32_t period, uint64_t now_ms);
  void CastVote(Step step, const Value& value, Actions& out);
  std::vector<Vote> BundleFor(uint32_t period, Step step, const Value& value) const;
  std::optional<Value> Quorum(uint32_t period, Step step) const;  // first value at T
  std::vector<Value> Quorums(uint32_t period, Step step) const;   // every value at T
  bool NextQuorumFor(uint32_t period, bool bottom, Value* value) const;
  std::vector<Step> NextStepsSeen(uint32_t period) const;  // next steps with votes in `period`
  bool NextVoted(uint32_t period) const;  // any next step voted (sent or not) in `period`
  const Value* Mine(uint32_t period, Step step) const;
  void Prune();

  Params params_;
  uint64_t height_;
  PublicKey self_;
  uint32_t period_ = 0;
  uint64_t period_start_ms_ = 0;
  // When the current period's next vote is due: period_start_ms_ + next_ms, or earlier
  // (ExpediteNextVote).
  uint64_t next_due_ms_ = 0;
  uint64_t last_resend_ms_ = 0;
  Value starting_value_;  // st of the current period (bottom if none)
  bool previous_bottom_quorum_ = false;
  std::map<Key, Tally> tallies_;
  std::map<Key, Value> mine_;  // own votes (restored from the journal)
  std::set<Key> unsent_;       // those of mine_ cast off the step's committee (never sent)
  std::map<uint32_t, std::vector<Proposal>> proposals_;  // checked proposals per period
  std::vector<Value> validated_;
  std::vector<Value> refuted_;
  std::map<Key, std::set<Value>> relayed_;  // quorums already relayed, to relay each once
  std::optional<Commit> decided_;
};

}  // namespace tessera::ledger::agreement
