#include "ledger/agreement/player.h"

#include <algorithm>

namespace tessera::ledger::agreement {

Player::Player(const Params& params, uint64_t height, const PublicKey& self,
               std::span<const JournalRecord> journal, uint64_t now_ms)
    : params_(params),
      height_(height),
      self_(self),
      period_start_ms_(now_ms),
      next_due_ms_(now_ms + params.next_ms),
      last_resend_ms_(now_ms) {
  for (const JournalRecord& r : journal) {
    if (r.vote.height != height_ || r.vote.voter != self_) continue;
    Key key{r.vote.period, r.vote.step};
    mine_[key] = r.vote.value;
    if (!r.sent) unsent_.insert(key);
    if (r.vote.period >= period_) {
      period_ = r.vote.period;
      starting_value_ = r.starting_value;
      previous_bottom_quorum_ = r.previous_bottom_quorum;
    }
  }
  // Own votes count towards our own tallies, as if received.
  for (const auto& [key, value] : mine_) {
    if (!unsent_.contains(key))
      tallies_[key].Add(Vote{height_, key.period, key.step, value, self_});
  }
  Prune();
}

size_t Player::Tally::Count(const Value& v) const {
  auto it = count.find(v);
  return (it == count.end() ? 0 : it->second) + second.size();
}

size_t Player::Tally::Signed(const Value& v) const {
  auto it = count.find(v);
  size_t n = it == count.end() ? 0 : it->second;
  for (const auto& [voter, second_value] : second) {
    if (second_value == v || by_voter.at(voter) == v) ++n;
  }
  return n;
}

bool Player::Tally::Add(const Vote& vote) {
  auto [it, fresh] = by_voter.emplace(vote.voter, vote.value);
  if (fresh) {
    if (!second.contains(vote.voter)) count[vote.value]++;
    return true;
  }
  if (it->second == vote.value || second.contains(vote.voter)) return false;
  second.emplace(vote.voter, vote.value);
  count[it->second]--;  // now counted through `second`, for every value
  count.try_emplace(vote.value, 0);
  return true;
}

const Value* Player::Mine(uint32_t period, Step step) const {
  auto it = mine_.find(Key{period, step});
  return it == mine_.end() ? nullptr : &it->second;
}

std::optional<Value> Player::Quorum(uint32_t period, Step step) const {
  auto it = tallies_.find(Key{period, step});
  if (it == tallies_.end()) return std::nullopt;
  for (const auto& [value, count] : it->second.count) {
    if (it->second.Count(value) >= params_.threshold) return value;
  }
  return std::nullopt;
}

std::vector<Value> Player::Quorums(uint32_t period, Step step) const {
  std::vector<Value> out;
  auto it = tallies_.find(Key{period, step});
  if (it == tallies_.end()) return out;
  for (const auto& [value, count] : it->second.count) {
    if (it->second.Count(value) >= params_.threshold) out.push_back(value);
  }
  return out;
}

std::vector<Step> Player::NextStepsSeen(uint32_t period) const {
  std::vector<Step> steps;
  for (auto it = tallies_.lower_bound(Key{period, Step::kNext});
       it != tallies_.end() && it->first.period == period; ++it) {
    if (IsNextStep(it->first.step)) steps.push_back(it->first.step);
  }
  return steps;
}

bool Player::NextVoted(uint32_t period) const {
  auto it = mine_.lower_bound(Key{period, Step::kNext});
  return it != mine_.end() && it->first.period == period;
}

bool Player::NextQuorumFor(uint32_t period, bool bottom, Value* value) const {
  for (Step step : NextStepsSeen(period)) {
    auto it = tallies_.find(Key{period, step});
    if (it == tallies_.end()) continue;
    for (const auto& [v, count] : it->second.count) {
      if (it->second.Count(v) >= params_.threshold && v.bottom == bottom) {
        if (value) *value = v;
        return true;
      }
    }
  }
  return false;
}

std::vector<Vote> Player::BundleFor(uint32_t period, Step step, const Value& value) const {
  std::vector<Vote> bundle;
  auto it = tallies_.find(Key{period, step});
  if (it == tallies_.end()) return bundle;
  const Tally& t = it->second;
  for (const auto& [voter, v] : t.by_voter) {
    auto eq = t.second.find(voter);
    if (v == value || eq != t.second.end()) bundle.push_back(Vote{height_, period, step, v, voter});
    // Both votes of an equivocator, so the receiver counts it for every value as well.
    if (eq != t.second.end()) bundle.push_back(Vote{height_, period, step, eq->second, voter});
  }
  return bundle;
}

void Player::Accept(const Vote& vote, bool any_period, Actions& out) {
  (void)out;
  if (vote.height != height_) return;
  if (vote.period + 1 < period_) return;  // too old to matter (see Prune)
  if (!any_period && vote.period > period_ + params_.max_periods_ahead) return;
  tallies_[Key{vote.period, vote.step}].Add(vote);
}

void Player::CastVote(Step step, const Value& value, Actions& out) {
  Vote v{height_, period_, step, value, self_};
  const bool sent = !params_.member || params_.member(period_, step);
  mine_[Key{period_, step}] = value;
  if (sent) {
    tallies_[Key{period_, step}].Add(v);
  } else {
    unsent_.insert(Key{period_, step});
  }
  out.votes.push_back(JournalRecord{v, starting_value_, previous_bottom_quorum_, sent});
}

void Player::EnterPeriod(uint32_t period, uint64_t now_ms) {
  period_ = period;
  period_start_ms_ = now_ms;
  next_due_ms_ = now_ms + params_.next_ms;
  Prune();
}

void Player::Prune() {
  uint32_t low = period_ == 0 ? 0 : period_ - 1;
  uint64_t high = uint64_t{period_} + params_.max_periods_ahead;
  std::erase_if(tallies_,
                [&](const auto& kv) { return kv.first.period < low || kv.first.period > high; });
  std::erase_if(proposals_, [&](const auto& kv) { return kv.first < period_ || kv.first > high; });
  std::erase_if(relayed_, [&](const auto& kv) { return kv.first.period < low; });
  std::erase_if(unsent_, [&](const Key& k) { return k.period < low; });
}

void Player::Evaluate(uint64_t now_ms, Actions& out) {
  auto relay_once = [&](uint32_t period, Step step, const Value& value) {
    // Keyed by the value itself: a bundle's first vote may be an equivocator's other value
    // (an earlier version compared that and re-relayed on every event: a message storm the
    // 9 + 3 simulation found).
    if (!relayed_[Key{period, step}].insert(value).second) return;
    std::vector<Vote> bundle = BundleFor(period, step, value);
    if (!bundle.empty()) out.bundles.push_back(std::move(bundle));
  };

  for (int round = 0; round < 64 && !decided_; ++round) {
    // Commit: T cert votes for one value in one period (any period still tracked).
    for (const auto& [key, tally] : tallies_) {
      if (key.step != Step::kCert) continue;
      for (const auto& [value, count] : tally.count) {
        if (tally.Signed(value) < params_.threshold || value.bottom) continue;
        decided_ = Commit{value, key.period, BundleFor(key.period, Step::kCert, value)};
        out.bundles.push_back(decided_->certificate);
        out.commit = decided_;
        return;
      }
    }

    // Period change: a next quorum in any period >= ours moves us past it.
    if (params_.recovery) {
      std::optional<uint32_t> done;
      for (auto it = tallies_.rbegin(); it != tallies_.rend(); ++it) {
        const Key& key = it->first;
        if (key.period < period_) break;
        if (!IsNextStep(key.step)) continue;
        if (Quorum(key.period, key.step)) {
          done = key.period;
          break;
        }
      }
      if (done) {
        Value v;
        bool value_quorum = NextQuorumFor(*done, /*bottom=*/false, &v);
        bool bottom_quorum = NextQuorumFor(*done, /*bottom=*/true, nullptr);
        for (Step step : NextStepsSeen(*done)) {
          for (const Value& q : Quorums(*done, step)) relay_once(*done, step, q);
        }
        starting_value_ = value_quorum ? v : Value::Bottom();
        previous_bottom_quorum_ = bottom_quorum;
        EnterPeriod(*done + 1, now_ms);
        continue;
      }
    }

    // The previous period's quorums may reach us after we entered this period (we entered on
    // one of them): a bottom quorum or a starting value learned late still counts. Safe: if a
    // value was certified in period_ - 1, no bottom (nor other value) quorum exists there.
    if (period_ > 0 && params_.recovery) {
      if (!previous_bottom_quorum_ && NextQuorumFor(period_ - 1, /*bottom=*/true, nullptr)) {
        previous_bottom_quorum_ = true;
      }
      Value late_start;
      if (starting_value_.bottom && NextQuorumFor(period_ - 1, /*bottom=*/false, &late_start)) {
        starting_value_ = late_start;
      }
    }

    const uint32_t p = period_;
    const uint64_t elapsed = now_ms - period_start_ms_;
    bool changed = false;
    std::optional<Value> soft_quorum = Quorum(p, Step::kSoft);
    if (soft_quorum && soft_quorum->bottom) soft_quorum.reset();  // honest never soft-vote bottom
    if (soft_quorum) relay_once(p, Step::kSoft, *soft_quorum);

    // Soft vote (filtering).
    if (!Mine(p, Step::kSoft) && elapsed >= params_.filter_ms &&
        (now_ms < next_due_ms_ || !params_.recovery)) {
      std::optional<Value> choice;
      if (p == 0 || previous_bottom_quorum_ || !params_.recovery) {
        const Proposal* leader = nullptr;
        auto it = proposals_.find(p);
        if (it != proposals_.end()) {
          for (const Proposal& prop : it->second) {
            if (prop.valid && (!leader || prop.priority < leader->priority)) leader = &prop;
          }
        }
        if (leader) choice = leader->value;
      } else if (!starting_value_.bottom) {
        choice = starting_value_;
      }
      if (choice) {
        CastVote(Step::kSoft, *choice, out);
        changed = true;
      }
    }

    // Cert vote: a soft quorum for a value we validated, and only before we next-vote. Off
    // the cert committee the vote is never sent, so the soft quorum alone binds the player
    // (a citizen off the soft and cert committees cannot validate -- Execute is for members
    // -- and safety with committees per step needs every honest player that saw the soft
    // quorum in time bound to it, not only validators: thresholds.h CrossStepForkProbability).
    // With cert_on_soft_quorum a cert member votes the soft quorum's value unless its own
    // validation rejected it (Params::cert_on_soft_quorum says why that is sound).
    const bool sends_cert = !params_.member || params_.member(p, Step::kCert);
    auto holds = [&](const std::vector<Value>& values) {
      return soft_quorum && std::find(values.begin(), values.end(), *soft_quorum) != values.end();
    };
    const bool may_cert =
        !sends_cert || holds(validated_) || (params_.cert_on_soft_quorum && !holds(refuted_));
    if (!Mine(p, Step::kCert) && !NextVoted(p) && soft_quorum && may_cert) {
      CastVote(Step::kCert, *soft_quorum, out);
      changed = true;
    }

    if (params_.recovery) {
      // Next vote (period completing 1) at the period's deadline.
      if (!Mine(p, Step::kNext) && now_ms >= next_due_ms_) {
        Value choice;
        if (const Value* cert = Mine(p, Step::kCert)) {
          choice = *cert;
        } else if (p > 0 && previous_bottom_quorum_) {
          choice = Value::Bottom();
        } else {
          choice = starting_value_;
        }
        CastVote(Step::kNext, choice, out);
        changed = true;
      }
      // Period completing 2, after the next vote: late-next for a soft quorum's value as soon
      // as one is seen; down-next for bottom if the previous period ended on bottom and we did
      // not cert-vote. Separate steps, so a player that went down first can still follow a
      // soft quorum that reaches it late.
      if (Mine(p, Step::kNext)) {
        if (soft_quorum && !Mine(p, Step::kLateNext)) {
          CastVote(Step::kLateNext, *soft_quorum, out);
          changed = true;
        }
        if (p > 0 && previous_bottom_quorum_ && !Mine(p, Step::kCert) &&
            !Mine(p, Step::kDownNext)) {
          CastVote(Step::kDownNext, Value::Bottom(), out);
          changed = true;
        }
      }
      // Repeated next steps (committees per step): the latest round due, if not cast yet.
      // Its value: the cert value; else a soft quorum's value (as late-next); else bottom
      // after a bottom period; else st. A player that cert-voted v repeats only v, so the
      // safety argument above covers every round.
      if (params_.next_repeat_ms > 0 && Mine(p, Step::kNext) && elapsed >= params_.next_ms) {
        const uint64_t round = std::min<uint64_t>(
            (elapsed - params_.next_ms) / params_.next_repeat_ms, kMaxNextRounds);
        const Step step = NextRound(static_cast<uint32_t>(round));
        if (round > 0 && !Mine(p, step)) {
          Value choice = starting_value_;
          if (const Value* cert = Mine(p, Step::kCert)) {
            choice = *cert;
          } else if (soft_quorum) {
            choice = *soft_quorum;
          } else if (p > 0 && previous_bottom_quorum_) {
            choice = Value::Bottom();
          }
          CastVote(step, choice, out);
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
}

Actions Player::OnVote(const Vote& vote, uint64_t now_ms) {
  Actions out;
  Accept(vote, /*any_period=*/false, out);
  Evaluate(now_ms, out);
  Prune();
  return out;
}

Actions Player::OnBundle(std::span<const Vote> votes, uint64_t now_ms) {
  Actions out;
  for (const Vote& v : votes) Accept(v, /*any_period=*/true, out);
  Evaluate(now_ms, out);
  Prune();
  return out;
}

Actions Player::OnProposal(const Proposal& proposal, uint64_t now_ms) {
  Actions out;
  if (proposal.value.bottom) return out;
  if (proposal.period >= period_ && proposal.period <= period_ + params_.max_periods_ahead) {
    auto& list = proposals_[proposal.period];
    bool known = false;
    for (Proposal& p : list) {
      if (p.value == proposal.value && p.priority == proposal.priority) {
        p.valid = p.valid || proposal.valid;
        known = true;
      }
    }
    // A period's proposers are few (sortition); a bound keeps a flood of checked but useless
    // proposals from growing memory: keep the lowest priorities.
    if (!known) {
      list.push_back(proposal);
      std::sort(list.begin(), list.end(),
                [](const Proposal& a, const Proposal& b) { return a.priority < b.priority; });
      if (list.size() > 16) list.resize(16);
    }
  }
  if (proposal.valid) return OnValidated(proposal.value, now_ms);
  Evaluate(now_ms, out);
  return out;
}

Actions Player::OnValidated(const Value& value, uint64_t now_ms) {
  Actions out;
  if (!value.bottom && std::find(validated_.begin(), validated_.end(), value) == validated_.end()) {
    validated_.push_back(value);
    if (validated_.size() > 64) validated_.erase(validated_.begin());
  }
  for (auto& [period, list] : proposals_) {
    for (Proposal& p : list) {
      if (p.value == value) p.valid = true;
    }
  }
  Evaluate(now_ms, out);
  return out;
}

Actions Player::OnRefuted(const Value& value, uint64_t now_ms) {
  Actions out;
  if (!value.bottom && std::find(refuted_.begin(), refuted_.end(), value) == refuted_.end()) {
    refuted_.push_back(value);
    if (refuted_.size() > 64) refuted_.erase(refuted_.begin());
  }
  Evaluate(now_ms, out);
  return out;
}

Actions Player::ExpediteNextVote(uint64_t now_ms) {
  Actions out;
  if (!decided_ && params_.recovery && !ReproposalValue()) {
    next_due_ms_ = std::min(next_due_ms_, now_ms);
  }
  Evaluate(now_ms, out);
  return out;
}

Actions Player::Tick(uint64_t now_ms) {
  Actions out;
  Evaluate(now_ms, out);
  if (now_ms - last_resend_ms_ >= params_.resend_ms) {
    last_resend_ms_ = now_ms;
    if (decided_) {
      out.bundles.push_back(decided_->certificate);
      return out;
    }
    std::vector<Vote> own;
    for (const auto& [key, value] : mine_) {
      if (key.period + 1 >= period_ && !unsent_.contains(key))
        own.push_back(Vote{height_, key.period, key.step, value, self_});
    }
    if (!own.empty()) out.bundles.push_back(std::move(own));
    if (period_ > 0) {
      for (Step step : NextStepsSeen(period_ - 1)) {
        for (const Value& q : Quorums(period_ - 1, step)) {
          out.bundles.push_back(BundleFor(period_ - 1, step, q));
        }
      }
    }
    if (auto q = Quorum(period_, Step::kSoft); q && !q->bottom) {
      out.bundles.push_back(BundleFor(period_, Step::kSoft, *q));
    }
  }
  return out;
}

std::optional<Value> Player::ReproposalValue() const {
  if (period_ > 0 && !previous_bottom_quorum_ && !starting_value_.bottom) return starting_value_;
  return std::nullopt;
}

uint64_t Player::NextDeadline() const {
  uint64_t next = last_resend_ms_ + params_.resend_ms;
  if (decided_) return next;
  // The soft vote is due at filter_ms while its window is open: until the next vote.
  if (!Mine(period_, Step::kSoft) && !(params_.recovery && Mine(period_, Step::kNext))) {
    next = std::min(next, period_start_ms_ + params_.filter_ms);
  }
  if (params_.recovery && !Mine(period_, Step::kNext)) {
    next = std::min(next, next_due_ms_);
  } else if (params_.recovery && params_.next_repeat_ms > 0) {
    uint32_t last = 0;  // the latest round cast (rounds missed while late are skipped)
    for (uint32_t k = kMaxNextRounds; k > 0 && last == 0; --k) {
      if (Mine(period_, NextRound(k))) last = k;
    }
    if (last < kMaxNextRounds) {
      next =
          std::min(next, period_start_ms_ + params_.next_ms + (last + 1) * params_.next_repeat_ms);
    }
  }
  return next;
}

std::string Player::DebugString() const {
  std::string out = "h";  // appends, not operator+ chains (GCC 12 -Wrestrict false positive)
  out += std::to_string(height_);
  out += " period ";
  out += std::to_string(period_);
  out += " st ";
  out += ValueName(starting_value_);
  if (previous_bottom_quorum_) out += " (bottom quorum before)";
  if (decided_) out += " decided " + ValueName(decided_->value);
  out += "; mine:";
  for (const auto& [key, value] : mine_) {
    out += " p" + std::to_string(key.period) + "/" + StepName(key.step) + "=" + ValueName(value);
    if (unsent_.contains(key)) out += "(unsent)";
  }
  out += "; seen:";
  for (const auto& [key, tally] : tallies_) {
    out += " p" + std::to_string(key.period) + "/" + StepName(key.step) + "{";
    for (const auto& [value, count] : tally.count) {
      out += ValueName(value) + ":" + std::to_string(tally.Count(value)) + " ";
    }
    if (!tally.second.empty()) out += "equivocators:" + std::to_string(tally.second.size());
    out += "}";
  }
  return out;
}

}  // namespace tessera::ledger::agreement
