#include "ledger/net/citizen_agreement.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "ledger/crypto/hash.h"
#include "ledger/net/chain.h"
#include "ledger/vote_sortition.h"

namespace tessera::ledger::net {

agreement::Vote ToAgreementVote(const Vote& v) {
  return agreement::Vote{
      .height = v.height,
      .period = v.period,
      .step = static_cast<agreement::Step>(static_cast<uint8_t>(v.step)),
      .value = v.bottom ? agreement::Value::Bottom() : agreement::Value::Of(v.value),
      .voter = v.citizen};
}

Vote ToWireVote(const agreement::Vote& v) {
  return Vote{.height = v.height,
              .period = v.period,
              .step = static_cast<VoteStep>(static_cast<uint8_t>(v.step)),
              .bottom = v.value.bottom,
              .value = v.value.bottom ? Hash256{} : v.value.hash,
              .citizen = v.voter};
}

namespace {
// Proposals rank by their proposer's VRF output (lowest wins, as in chain.h); its first 32
// bytes order the same way.
Hash256 Priority(const VrfOutput& beta) {
  Hash256 p{};
  std::copy(beta.begin(), beta.begin() + p.size(), p.begin());
  return p;
}

std::vector<agreement::JournalRecord> RecordsOf(const CitizenAgreementConfig& c) {
  if (c.journal == nullptr) return {};
  return c.journal->RecordsFor(c.height);
}

// The votes this citizen sent (re-sent every resend_ms): never the would-be votes journaled
// off a step's committee.
std::vector<agreement::JournalRecord> SentOf(const CitizenAgreementConfig& c) {
  std::vector<agreement::JournalRecord> sent;
  for (agreement::JournalRecord& r : RecordsOf(c)) {
    if (r.sent) sent.push_back(std::move(r));
  }
  return sent;
}

// Per-step committees: the player sits on (period, step) iff its ticket there wins.
CitizenAgreementConfig WithMembership(CitizenAgreementConfig c) {
  if (c.vote_ticket) {
    c.params.member = [tickets = c.vote_ticket](uint32_t period, agreement::Step step) {
      return tickets(period, step).has_value();
    };
  }
  return c;
}
}  // namespace

static_assert(kMaxVoteStep ==
                  static_cast<uint8_t>(agreement::Step::kDownNext) + agreement::kMaxNextRounds,
              "the wire's VoteStep must carry every agreement step");

VoteTicketFn MakeVoteTickets(const KeyPair* keys, uint64_t height, const Hash256& seed,
                             const SortitionParams& params) {
  auto drawn = std::make_shared<std::map<std::pair<uint32_t, uint8_t>, std::optional<VrfProof>>>();
  return [keys, height, seed, params, drawn](uint32_t period, agreement::Step step) {
    const uint8_t s = static_cast<uint8_t>(step);
    auto [it, fresh] = drawn->try_emplace({period, s});
    if (fresh) {
      auto t = DrawVote(*keys, height, period, s, seed, params);
      if (t.ok() && t->selected) it->second = t->proof;
    }
    return it->second;
  };
}

CitizenAgreement::CitizenAgreement(CitizenAgreementConfig config, uint64_t now_ms)
    : config_(WithMembership(std::move(config))),
      player_(config_.params, config_.height, config_.keys->public_key(), RecordsOf(config_),
              now_ms),
      own_(SentOf(config_)),
      last_resend_ms_(now_ms) {
  period_seen_ = player_.period();
  period_start_ms_ = now_ms;
}

uint32_t CitizenAgreement::ticket_period() const {
  return std::min(player_.period(), kMaxProposerPeriods - 1);
}

void CitizenAgreement::Absorb(agreement::Actions a) {
  for (auto& v : a.votes) pending_.votes.push_back(std::move(v));
  // Bundles are not re-posted: the politicians store every vote and gossip it to each other,
  // and every citizen reads all of a height's votes from its safe sample (Blockene's
  // availability argument); re-posting others' votes would multiply citizen uploads by T.
  if (a.commit && !pending_.commit) pending_.commit = std::move(a.commit);
}

void CitizenAgreement::OnVote(const Vote& vote, uint64_t now_ms) {
  if (vote.height != config_.height) return;
  if (vote.step == VoteStep::kSoft && !vote.bottom) {
    auto& voters = soft_[{vote.period, vote.value}];
    if (voters.size() < 4 * config_.params.threshold) voters.insert(vote.citizen);
  }
  Absorb(player_.OnVote(ToAgreementVote(vote), now_ms));
}

void CitizenAgreement::OnProposal(const Hash256& value, uint32_t ticket_period,
                                  const VrfOutput& beta, uint64_t now_ms) {
  auto [it, fresh] = candidates_.try_emplace(value, Candidate{ticket_period, beta, std::nullopt});
  if (!fresh) return;
  first_proposal_ms_.try_emplace(ticket_period, now_ms);
  FeedProposals(now_ms);
}

void CitizenAgreement::OnProposerTicket(uint32_t ticket_period, const VrfOutput& beta,
                                        uint64_t now_ms) {
  std::set<Hash256>& best = announced_[ticket_period];
  if (!best.insert(Priority(beta)).second) return;
  if (best.size() > kMaxAnnouncedTickets) best.erase(std::prev(best.end()));
  FeedProposals(now_ms);
}

bool CitizenAgreement::HoldProposals(uint64_t now_ms) const {
  const uint32_t tp = ticket_period();
  auto first = first_proposal_ms_.find(tp);
  if (first == first_proposal_ms_.end()) return false;  // nothing to hold
  const uint64_t burst_start = std::max(first->second, period_start_ms_);
  // (a) The rest of the burst: from the first proposal seen in this period.
  if (now_ms < burst_start + config_.proposal_grace_ms) return true;
  std::optional<Hash256> best_valid, best_pending;
  std::set<Hash256> judged;  // priorities of proposals with a verdict
  for (const auto& [value, c] : candidates_) {
    if (c.ticket_period != tp) continue;
    const Hash256 priority = Priority(c.beta);
    if (!c.valid.has_value()) {
      if (!best_pending || priority < *best_pending) best_pending = priority;
      continue;
    }
    judged.insert(priority);
    if (*c.valid && (!best_valid || priority < *best_valid)) best_valid = priority;
  }
  // (a') An announced better proposal not yet arrived or judged, up to
  // announced_proposal_wait_ms.
  if (best_valid && now_ms < burst_start + config_.announced_proposal_wait_ms) {
    if (auto it = announced_.find(tp); it != announced_.end()) {
      for (const Hash256& priority : it->second) {
        if (!(priority < *best_valid)) break;  // ordered: no better one is left
        if (!judged.count(priority)) return true;
      }
    }
  }
  // (b) A better proposal without a verdict yet, up to better_proposal_wait_ms.
  if (now_ms >= period_start_ms_ + config_.better_proposal_wait_ms) return false;
  return best_valid && best_pending && *best_pending < *best_valid;
}

bool CitizenAgreement::PeriodIsSilent(uint64_t now_ms) const {
  // Period 0 only: its proposers start with the height, while in a later period a proposer
  // may still be building for the period before (a slow Execute) and announce late.
  if (config_.silent_period_ms == 0 || player_.decided() || player_.period() != 0) return false;
  if (now_ms < period_start_ms_ + config_.silent_period_ms) return false;
  const uint32_t tp = ticket_period();
  return !announced_.contains(tp) && !first_proposal_ms_.contains(tp);
}

void CitizenAgreement::FeedProposals(uint64_t now_ms) {
  const uint32_t p = player_.period();
  if (p != period_seen_) {
    period_seen_ = p;
    period_start_ms_ = now_ms;
  }
  if (HoldProposals(now_ms)) return;
  // Best first: past its filter deadline the player soft-votes the first valid proposal it is
  // handed, so handing them over in hash order would let a worse one take the vote.
  std::vector<std::pair<Hash256, Hash256>> order;  // (priority, value)
  for (const auto& [value, c] : candidates_) {
    // Bound to its period: a ticket of another period is no candidate in this one.
    if (c.ticket_period != ticket_period() || !c.valid.has_value()) continue;
    order.push_back({Priority(c.beta), value});
  }
  std::sort(order.begin(), order.end());
  for (const auto& [priority, value] : order) {
    const Candidate& c = candidates_.at(value);
    if (!fed_.insert({p, value}).second) continue;
    agreement::Proposal prop{.period = p,
                             .value = agreement::Value::Of(value),
                             .priority = Priority(c.beta),
                             .valid = *c.valid};
    Absorb(player_.OnProposal(prop, now_ms));
  }
}

std::vector<Hash256> CitizenAgreement::WantValidation() const {
  std::vector<Hash256> out;
  if (player_.decided()) return out;
  // The current period's proposals in priority order, up to the first valid one, until this
  // player soft-votes: they choose its soft vote and nothing else. A proposal that arrives
  // after it (a late release, or one its proposer held back) would only cost an execution --
  // up to the round timeout with slow politicians, during which the citizen misses the next
  // height's votes (`slow_execute`: a member validated a late proposal for 8.6 s after its cert
  // vote, and block 12 lacked its cert vote in period 0).
  std::vector<std::pair<Hash256, Hash256>> order;  // (priority, value)
  if (!player_.Voted(player_.period(), agreement::Step::kSoft)) {
    for (const auto& [value, c] : candidates_) {
      if (c.ticket_period == ticket_period()) order.push_back({Priority(c.beta), value});
    }
  }
  std::sort(order.begin(), order.end());
  for (const auto& [priority, value] : order) {
    const Candidate& c = candidates_.at(value);
    if (!c.valid.has_value()) {
      out.push_back(value);
      break;
    }
    if (*c.valid) break;
  }
  // Values with a soft quorum (this or the previous period): a cert vote needs a verdict,
  // unless the soft quorum alone decides it (player.h Params::cert_on_soft_quorum).
  if (config_.params.cert_on_soft_quorum) return out;
  for (const auto& [key, voters] : soft_) {
    if (key.first + 1 < player_.period() || voters.size() < config_.params.threshold) continue;
    auto c = candidates_.find(key.second);
    if (c == candidates_.end() || !c->second.valid.has_value()) {
      if (std::find(out.begin(), out.end(), key.second) == out.end()) out.push_back(key.second);
    }
  }
  return out;
}

void CitizenAgreement::SetVerdict(const Hash256& value, bool valid, uint64_t now_ms) {
  auto it = candidates_.find(value);
  if (it != candidates_.end()) {
    if (it->second.valid.has_value()) return;
    it->second.valid = valid;
  }
  const agreement::Value v = agreement::Value::Of(value);
  Absorb(valid ? player_.OnValidated(v, now_ms) : player_.OnRefuted(v, now_ms));
  FeedProposals(now_ms);
}

RoundItem CitizenAgreement::Sign(const agreement::Vote& v) const {
  Vote wire = ToWireVote(v);
  wire.credential = config_.credential;
  if (config_.vote_ticket) {
    // Only votes of steps this citizen won are signed (Step and Adversary check first).
    if (auto ticket = config_.vote_ticket(v.period, v.step)) wire.credential = *ticket;
  }
  SignVote(wire, *config_.keys);
  RoundItem item;
  item.set_payload(EncodeVote(wire));
  item.set_identity(config_.identity);
  if (wire.step == VoteStep::kCert) {
    Signature s = SignBlock(wire.height, wire.period, wire.value, *config_.keys);
    item.set_block_signature(std::string(AsChars(s)));
  }
  return item;
}

Result<std::vector<RoundItem>> CitizenAgreement::Step(uint64_t now_ms) {
  FeedProposals(now_ms);
  if (PeriodIsSilent(now_ms) && !player_.Voted(player_.period(), agreement::Step::kNext)) {
    spdlog::info("citizen: block {} period {}: no proposer announced in {} ms, next vote now",
                 config_.height, player_.period(), now_ms - period_start_ms_);
    Absorb(player_.ExpediteNextVote(now_ms));
  }
  Absorb(player_.Tick(now_ms));
  FeedProposals(now_ms);  // the tick may have moved to a new period
  std::vector<agreement::JournalRecord> votes = std::move(pending_.votes);
  pending_ = {};
  std::vector<RoundItem> out;
  if (config_.fault == CitizenFault::kSilent) return out;  // withholds every vote
  if (config_.fault == CitizenFault::kInconsistent || config_.fault == CitizenFault::kCollude) {
    return Adversary();
  }

  // Durable first (fsync'd), then sent: after a crash the player rebuilt from the journal
  // never casts a different vote for a (period, step) it may already have sent.
  if (!votes.empty() && config_.journal != nullptr) {
    TESSERA_RETURN_IF_ERROR(config_.journal->Append(votes));
  }
  for (const agreement::JournalRecord& r : votes) {
    // Off a step's committee (Params::member, per-step committees): journaled above, never
    // posted.
    if (!r.sent) continue;
    own_.push_back(r);
    ++votes_cast_;
    out.push_back(Sign(r.vote));
  }
  if (now_ms - last_resend_ms_ >= config_.params.resend_ms) {
    // Re-send own votes of the current and previous period (a politician may have dropped
    // them; the others dedupe by hash).
    last_resend_ms_ = now_ms;
    for (const agreement::JournalRecord& r : own_) {
      if (r.vote.period + 1 >= player_.period()) out.push_back(Sign(r.vote));
    }
  }
  return out;
}

Hash256 AdversaryValue(uint64_t height) {
  return Sha256("tessera/adversary/" + std::to_string(height));
}

std::vector<RoundItem> CitizenAgreement::Adversary() {
  // Malicious members ignore the protocol (their own player's votes are dropped, never
  // journaled) and vote, in every step of the period the honest members are in:
  //   collude:      only the adversary's common value (a block nobody can validate), so that
  //                 with a few honest votes it might reach a quorum;
  //   inconsistent: every value it has seen proposed plus the adversary's, and bottom in the
  //                 next steps -- equivocation in every step, to split honest quorums.
  std::vector<RoundItem> out;
  const uint32_t p = player_.period();
  std::vector<agreement::Value> values = {agreement::Value::Of(AdversaryValue(config_.height))};
  if (config_.fault == CitizenFault::kInconsistent) {
    for (const auto& [value, c] : candidates_) values.push_back(agreement::Value::Of(value));
  }
  for (uint8_t s = 1; s <= 5; ++s) {
    const auto step = static_cast<agreement::Step>(s);
    std::vector<agreement::Value> these = values;
    if (agreement::IsNextStep(step) && config_.fault == CitizenFault::kInconsistent) {
      these.push_back(agreement::Value::Bottom());
    }
    for (const agreement::Value& v : these) {
      // With per-step committees only in the steps it won: no politician or citizen takes a
      // vote without its step's ticket.
      if (config_.vote_ticket && !config_.vote_ticket(p, step)) continue;
      agreement::Vote vote{.height = config_.height,
                           .period = p,
                           .step = step,
                           .value = v,
                           .voter = config_.keys->public_key()};
      if (!adversary_sent_.insert(vote).second) continue;
      ++votes_cast_;
      out.push_back(Sign(vote));
    }
  }
  return out;
}

}  // namespace tessera::ledger::net
