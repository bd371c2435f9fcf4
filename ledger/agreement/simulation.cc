#include "ledger/agreement/simulation.h"

#include <algorithm>
#include <map>
#include <memory>
#include <queue>
#include <set>

#include "ledger/crypto/hash.h"
#include "ledger/vote_sortition.h"

namespace tessera::ledger::agreement {

namespace {

// Adversary behaviours; each schedule draws a subset.
enum Behaviour : uint32_t {
  kEquivocateProposal = 1 << 0,
  kLateProposal = 1 << 1,
  kInvalidProposal = 1 << 2,
  kReplayTicket = 1 << 3,
  kSplitVotes = 1 << 4,
  kWithholdVotes = 1 << 5,
  kBottomVotes = 1 << 6,
  kVoteEverything = 1 << 7,  // two votes per step to everyone: counts for every value
  kAllBehaviours = (1 << 8) - 1,
};

// splitmix64: a tiny deterministic generator whose output does not depend on the standard
// library's distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool Chance(double p) { return static_cast<double>(Next() >> 11) * 0x1.0p-53 < p; }

 private:
  uint64_t state_;
};

struct ProposalMsg {
  uint64_t height = 0;
  uint32_t period = 0;         // the period the proposal claims
  uint32_t ticket_period = 0;  // the period whose ticket it carries (differs when replayed)
  int proposer = 0;
  Value value;
};

struct Message {
  enum Kind { kVote, kBundle, kProposal } kind = kVote;
  std::vector<Vote> votes;  // one for kVote
  ProposalMsg proposal;
  uint64_t height() const { return kind == kProposal ? proposal.height : votes.front().height; }
};
using MessagePtr = std::shared_ptr<const Message>;

struct Event {
  uint64_t time;
  uint64_t seq;
  enum Kind { kDeliver, kTick, kCrash, kRestart } kind;
  int to = 0;
  MessagePtr message;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct Node {
  PublicKey key{};
  bool malicious = false;
  bool up = true;
  std::unique_ptr<Player> player;
  std::vector<Value> chain;            // decided values, heights 1..
  std::vector<JournalRecord> journal;  // durable
  std::map<uint64_t, std::vector<Vote>> certificates;
  std::vector<MessagePtr> future;  // messages for heights not reached yet
  std::set<std::pair<uint64_t, uint32_t>> proposed;
  uint64_t last_proposal_resend = 0;
};

class Simulation {
 public:
  explicit Simulation(const SimOptions& o) : o_(o), rng_(o.seed * 0x2545F4914F6CDD1Dull + 1) {
    params_.threshold = o.threshold;
    params_.filter_ms = o.filter_ms;
    params_.next_ms = o.next_ms;
    params_.resend_ms = o.resend_ms;
    params_.recovery = o.recovery;
    int n = o.honest + o.malicious;
    nodes_.resize(n);
    for (int i = 0; i < n; ++i) {
      Hash256 h = Sha256("sim-key " + std::to_string(i));
      std::copy(h.begin(), h.end(), nodes_[i].key.begin());
      nodes_[i].malicious = i >= o.honest;
      index_[nodes_[i].key] = i;
    }
    draw_seed_ = Sha256("sim draw seed " + std::to_string(o.seed));
    result_.gst_ms = rng_.Below(o.gst_max_ms + 1);
    if (o.adversary) result_.adversary_mix = static_cast<uint32_t>(rng_.Below(kAllBehaviours + 1));
    for (int i = 0; i < o.honest; ++i) StartHeight(i, 1, 0);
    if (o.honest > 0 && rng_.Chance(o.crash_probability)) {
      result_.crashed = true;
      int victim = static_cast<int>(rng_.Below(o.honest));
      uint64_t at = rng_.Below(result_.gst_ms + 1500);
      Push(Event{at, 0, Event::kCrash, victim, nullptr});
      Push(Event{at + 1 + rng_.Below(1500), 0, Event::kRestart, victim, nullptr});
    }
    Push(Event{0, 0, Event::kTick, 0, nullptr});
  }

  SimResult Run() {
    const uint64_t deadline = result_.gst_ms + o_.liveness_ms;
    while (!queue_.empty() && result_.safe) {
      Event e = queue_.top();
      queue_.pop();
      now_ = e.time;
      if (now_ > deadline) break;
      switch (e.kind) {
        case Event::kDeliver:
          Deliver(e.to, e.message);
          break;
        case Event::kTick:
          TickAll();
          break;
        case Event::kCrash:
          Crash(e.to);
          break;
        case Event::kRestart:
          Restart(e.to);
          break;
      }
      if (AllDecided()) break;
    }
    if (result_.safe && !AllDecided()) {
      result_.live = false;
      std::string states;
      for (int i = 0; i < o_.honest; ++i) {
        const Node& n = nodes_[i];
        states += "\n  player " + std::to_string(i) + (n.up ? "" : " (down)") + ": " +
                  (n.player ? n.player->DebugString() : "decided all");
      }
      Fail(false, "stall: not every honest player decided " + std::to_string(o_.heights) +
                      " heights by GST + " + std::to_string(o_.liveness_ms) + " ms (GST " +
                      std::to_string(result_.gst_ms) + ", adversary mix " +
                      std::to_string(result_.adversary_mix) + ")" + states);
    }
    return result_;
  }

 private:
  void Push(Event e) {
    e.seq = seq_++;
    queue_.push(std::move(e));
  }

  void Fail(bool safety, const std::string& what) {
    if (safety) result_.safe = false;
    if (result_.failure.empty()) {
      result_.failure =
          "seed " + std::to_string(o_.seed) + " at " + std::to_string(now_) + " ms: " + what;
    }
  }

  bool AllDecided() const {
    for (int i = 0; i < o_.honest; ++i) {
      if (static_cast<int>(nodes_[i].chain.size()) < o_.heights) return false;
    }
    return true;
  }

  // --- Vote committees per (height, period, step), drawn as vote_sortition.h draws them. ----
  bool Drawn() const { return o_.committee > 0 && o_.committee < nodes_.size(); }
  bool Member(int node, uint64_t height, uint32_t period, Step step) {
    if (!Drawn()) return true;
    if (o_.per_height_draw) {
      period = 0;
      step = Step::kSoft;
    }
    auto key = std::make_tuple(node, height, period, static_cast<uint8_t>(step));
    auto it = members_.find(key);
    if (it != members_.end()) return it->second;
    // SHA-256 of (key, input) twice stands in for the VRF output beta (64 bytes).
    std::string input = VoteSortitionInput(height, period, static_cast<uint8_t>(step), draw_seed_);
    input.insert(0, reinterpret_cast<const char*>(nodes_[node].key.data()), 32);
    Hash256 a = Sha256(input), b = Sha256(ByteSpan(a));
    VrfOutput beta{};
    std::copy(a.begin(), a.end(), beta.begin());
    std::copy(b.begin(), b.end(), beta.begin() + 32);
    bool selected = IsSelected(beta, o_.committee, nodes_.size());
    members_.emplace(key, selected);
    return selected;
  }
  bool Member(const Vote& v) {
    auto it = index_.find(v.voter);
    return it != index_.end() && Member(it->second, v.height, v.period, v.step);
  }
  // Counts the steps honest players reach whose committee holds fewer than T honest members.
  void NoteCommittee(const Vote& v) {
    if (!Drawn() || !slots_.emplace(v.height, v.period, v.step).second) return;
    size_t honest = 0;
    for (int i = 0; i < o_.honest; ++i) honest += Member(i, v.height, v.period, v.step);
    if (honest < o_.threshold) result_.short_committees++;
  }
  // Whether a height's first cert committee (period 0) holds fewer than T honest members: with
  // one committee per height that height could never be certified.
  void NoteFirstDraw(uint64_t height) {
    if (!Drawn() || !first_draws_.insert(height).second) return;
    size_t honest = 0;
    for (int i = 0; i < o_.honest; ++i) honest += Member(i, height, 0, Step::kCert);
    if (honest < o_.threshold) result_.short_first_draw = true;
  }

  // --- Sortition stand-in: a proposer ticket per (player, height, period). -------------------
  Hash256 Priority(int node, uint64_t height, uint32_t period) const {
    return Sha256("ticket " + std::to_string(o_.seed) + " " + std::to_string(node) + " " +
                  std::to_string(height) + " " + std::to_string(period));
  }
  bool IsProposer(int node, uint64_t height, uint32_t period) const {
    Hash256 p = Priority(node, height, period);
    return p[0] < static_cast<int>(o_.proposer_probability * 256);
  }

  Value BlockValue(uint64_t height, uint32_t period, int proposer, int variant, bool valid) {
    Value v = Value::Of(Sha256("block " + std::to_string(o_.seed) + " " + std::to_string(height) +
                               " " + std::to_string(period) + " " + std::to_string(proposer) + " " +
                               std::to_string(variant)));
    block_height_[v] = height;
    if (!valid) invalid_.insert(v);
    return v;
  }
  bool Valid(const Value& v, uint64_t height) const {
    auto it = block_height_.find(v);
    return it != block_height_.end() && it->second == height && !invalid_.contains(v);
  }

  // --- Network. -----------------------------------------------------------------------------
  void SendTo(int to, MessagePtr m, uint64_t extra_delay = 0) {
    uint64_t send_time = now_ + extra_delay;
    uint64_t delay;
    if (send_time < result_.gst_ms) {
      if (rng_.Chance(o_.pre_gst_drop)) return;
      delay = rng_.Below(o_.pre_gst_delay_ms + 1);
    } else {
      delay = rng_.Below(o_.delta_ms + 1);
    }
    Push(Event{send_time + delay, 0, Event::kDeliver, to, m});
    if (rng_.Chance(o_.duplicate)) {
      Push(Event{send_time + delay + rng_.Below(o_.delta_ms + 1), 0, Event::kDeliver, to, m});
    }
  }
  void Broadcast(int from, const MessagePtr& m) {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (i != from) SendTo(i, m);
    }
  }

  // --- Honest players. ----------------------------------------------------------------------
  void StartHeight(int i, uint64_t height, uint64_t now) {
    Node& n = nodes_[i];
    std::vector<JournalRecord> records;
    if (o_.restore_journal) {
      for (const JournalRecord& r : n.journal) {
        if (r.vote.height == height) records.push_back(r);
      }
    }
    NoteFirstDraw(height);
    Params params = params_;
    if (Drawn()) {
      params.member = [this, i, height](uint32_t period, Step step) {
        return Member(i, height, period, step);
      };
      params.next_repeat_ms = o_.next_repeat_ms;
      params.cert_on_soft_quorum = o_.cert_on_soft_quorum;
    }
    n.player = std::make_unique<Player>(params, height, n.key, records, now);
    std::vector<MessagePtr> pending;
    pending.swap(n.future);
    for (const MessagePtr& m : pending) Deliver(i, m);
  }

  void Handle(int i, Actions a) {
    Node& n = nodes_[i];
    for (const JournalRecord& r : a.votes) {
      // The journal write happens before the send (player.h); the check below sees every vote
      // any incarnation of this player ever sent.
      n.journal.push_back(r);
      auto key = std::make_tuple(i, r.vote.height, r.vote.period, r.vote.step);
      auto [it, fresh] = sent_votes_.emplace(key, r.vote.value);
      if (!fresh && it->second != r.vote.value) {
        Fail(true, "player " + std::to_string(i) + " voted twice: " + VoteName(r.vote) + " after " +
                       ValueName(it->second));
        return;
      }
      NoteCommittee(r.vote);
      if (!r.sent) continue;  // off this step's committee: journaled, not sent
      if (!Member(i, r.vote.height, r.vote.period, r.vote.step)) {
        Fail(true,
             "player " + std::to_string(i) + " sent a vote off its committee: " + VoteName(r.vote));
        return;
      }
      auto m = std::make_shared<Message>();
      m->kind = Message::kVote;
      m->votes = {r.vote};
      Broadcast(i, m);
    }
    for (auto& bundle : a.bundles) {
      if (bundle.empty()) continue;
      auto m = std::make_shared<Message>();
      m->kind = Message::kBundle;
      m->votes = std::move(bundle);
      Broadcast(i, m);
    }
    if (a.commit) Decide(i, *a.commit);
  }

  void Decide(int i, const Commit& c) {
    Node& n = nodes_[i];
    uint64_t height = n.player->height();
    if (!Valid(c.value, height)) {
      Fail(true, "player " + std::to_string(i) + " decided invalid value " + ValueName(c.value) +
                     " at height " + std::to_string(height));
      return;
    }
    auto [it, fresh] = decided_.emplace(height, c.value);
    if (!fresh && it->second != c.value) {
      Fail(true, "fork at height " + std::to_string(height) + ": " + ValueName(it->second) +
                     " and " + ValueName(c.value) + " (player " + std::to_string(i) + ", period " +
                     std::to_string(c.period) + ")");
      return;
    }
    n.chain.push_back(c.value);
    n.certificates[height] = c.certificate;
    result_.decided_ms = now_;
    std::erase_if(n.journal, [&](const JournalRecord& r) { return r.vote.height < height; });
    if (static_cast<int>(n.chain.size()) < o_.heights) {
      StartHeight(i, height + 1, now_);
    }
  }

  void Deliver(int i, const MessagePtr& m) {
    Node& n = nodes_[i];
    result_.deliveries++;
    if (n.malicious) return;  // the adversary sees everything anyway (it reads honest state)
    if (!n.up) return;
    uint64_t height = n.chain.size() + 1;
    if (m->height() < height) return;
    if (m->height() > height || static_cast<int>(n.chain.size()) >= o_.heights) {
      if (m->height() > height && n.future.size() < 20000) n.future.push_back(m);
      return;
    }
    switch (m->kind) {
      case Message::kVote:
        // A vote counts only with a winning ticket for its step (the daemons verify the
        // credential); the adversary's other votes are dropped here.
        if (Member(m->votes.front())) Handle(i, n.player->OnVote(m->votes.front(), now_));
        break;
      case Message::kBundle: {
        std::vector<Vote> members;
        for (const Vote& v : m->votes) {
          if (Member(v)) members.push_back(v);
        }
        if (!members.empty()) Handle(i, n.player->OnBundle(members, now_));
        break;
      }
      case Message::kProposal: {
        const ProposalMsg& p = m->proposal;
        // Tickets are bound to their period: one of another period does not verify.
        if (p.ticket_period != p.period || !IsProposer(p.proposer, p.height, p.period)) {
          result_.replayed_tickets_rejected++;
          return;
        }
        Proposal prop{.period = p.period,
                      .value = p.value,
                      .priority = Priority(p.proposer, p.height, p.period),
                      .valid = Valid(p.value, p.height)};
        Handle(i, n.player->OnProposal(prop, now_));
        break;
      }
    }
  }

  void ProposeIfSelected(int i) {
    Node& n = nodes_[i];
    if (!n.player || n.player->decided()) return;
    uint64_t h = n.player->height();
    uint32_t p = n.player->period();
    if (!IsProposer(i, h, p)) return;
    bool fresh = n.proposed.emplace(h, p).second;
    bool resend = now_ - n.last_proposal_resend >= o_.resend_ms;
    if (!fresh && !resend) return;
    n.last_proposal_resend = now_;
    auto m = std::make_shared<Message>();
    m->kind = Message::kProposal;
    std::optional<Value> again = n.player->ReproposalValue();
    m->proposal = ProposalMsg{h, p, p, i, again ? *again : BlockValue(h, p, i, 0, true)};
    Proposal own{.period = p,
                 .value = m->proposal.value,
                 .priority = Priority(i, h, p),
                 .valid = Valid(m->proposal.value, h)};
    Handle(i, n.player->OnProposal(own, now_));
    Broadcast(i, m);
  }

  void TickAll() {
    for (int i = 0; i < o_.honest; ++i) {
      Node& n = nodes_[i];
      if (!n.up || !result_.safe) continue;
      if (static_cast<int>(n.chain.size()) >= o_.heights) {
        ResendCertificates(i);
        continue;
      }
      ProposeIfSelected(i);
      Handle(i, n.player->Tick(now_));
      result_.max_period = std::max(result_.max_period, n.player->period());
      if (now_ % o_.resend_ms < o_.tick_ms) ResendCertificates(i);
    }
    if (o_.adversary) AdversaryTick();
    Push(Event{now_ + o_.tick_ms, 0, Event::kTick, 0, nullptr});
  }

  // Players that decided help laggards: the certificates of the last heights, re-sent.
  void ResendCertificates(int i) {
    if (now_ % o_.resend_ms >= o_.tick_ms) return;
    Node& n = nodes_[i];
    for (auto it = n.certificates.rbegin(); it != n.certificates.rend(); ++it) {
      if (it->first + 2 <= n.chain.size()) break;
      auto m = std::make_shared<Message>();
      m->kind = Message::kBundle;
      m->votes = it->second;
      Broadcast(i, m);
    }
  }

  void Crash(int i) {
    Node& n = nodes_[i];
    n.up = false;
    n.player.reset();
    n.future.clear();
  }

  void Restart(int i) {
    Node& n = nodes_[i];
    n.up = true;
    n.proposed.clear();
    if (static_cast<int>(n.chain.size()) < o_.heights) StartHeight(i, n.chain.size() + 1, now_);
  }

  // --- The adversary: all malicious players act together with a global view. ---------------
  struct AdversaryRound {
    Value a, b, invalid;
    std::vector<int> side;  // per honest player: 0 or 1
    std::set<std::pair<int, Step>> voted;
    std::set<int> proposed;
  };

  AdversaryRound& Round(uint64_t h, uint32_t p) {
    auto key = std::make_pair(h, p);
    auto it = adversary_rounds_.find(key);
    if (it != adversary_rounds_.end()) return it->second;
    AdversaryRound r;
    r.a = BlockValue(h, p, -1, 1, true);
    r.b = BlockValue(h, p, -1, 2, true);
    r.invalid = BlockValue(h, p, -1, 3, false);
    for (int i = 0; i < o_.honest; ++i) r.side.push_back(static_cast<int>(rng_.Below(2)));
    return adversary_rounds_.emplace(key, std::move(r)).first->second;
  }

  bool Has(uint32_t behaviour) const { return result_.adversary_mix & behaviour; }

  void AdversaryTick() {
    // The (height, period) pairs honest players are in now.
    std::set<std::pair<uint64_t, uint32_t>> live;
    for (int i = 0; i < o_.honest; ++i) {
      const Node& n = nodes_[i];
      if (n.up && n.player && !n.player->decided()) {
        live.emplace(n.player->height(), n.player->period());
      }
    }
    for (const auto& [h, p] : live) {
      AdversaryRound& r = Round(h, p);
      for (int m = o_.honest; m < static_cast<int>(nodes_.size()); ++m) {
        AdversaryPropose(m, h, p, r);
        if (!Has(kWithholdVotes)) AdversaryVote(m, h, p, r);
      }
    }
  }

  void SendProposal(int m, uint64_t h, uint32_t p, uint32_t ticket_period, const Value& v, int to,
                    uint64_t extra_delay) {
    auto msg = std::make_shared<Message>();
    msg->kind = Message::kProposal;
    msg->proposal = ProposalMsg{h, p, ticket_period, m, v};
    SendTo(to, msg, extra_delay);
  }

  void AdversaryPropose(int m, uint64_t h, uint32_t p, AdversaryRound& r) {
    if (r.proposed.contains(m)) return;
    r.proposed.insert(m);
    if (Has(kReplayTicket) && p > 0 && IsProposer(m, h, 0)) {
      for (int i = 0; i < o_.honest; ++i) SendProposal(m, h, p, 0, r.a, i, 0);
    }
    if (!IsProposer(m, h, p)) return;
    uint64_t late = Has(kLateProposal) ? o_.filter_ms - rng_.Below(o_.filter_ms / 4 + 1) : 0;
    for (int i = 0; i < o_.honest; ++i) {
      Value v = r.a;
      if (Has(kEquivocateProposal) && r.side[i]) v = r.b;
      if (Has(kInvalidProposal) && rng_.Chance(0.5)) v = r.invalid;
      if (Has(kLateProposal) && rng_.Chance(0.3)) continue;  // some never get it
      SendProposal(m, h, p, p, v, i, late);
    }
  }

  void AdversaryVote(int m, uint64_t h, uint32_t p, AdversaryRound& r) {
    for (Step step : {Step::kSoft, Step::kCert, Step::kNext, Step::kLateNext, Step::kDownNext,
                      NextRound(1), NextRound(2), NextRound(3)}) {
      if (r.voted.contains({m, step}) || !rng_.Chance(0.15)) continue;  // timing chosen by seed
      r.voted.insert({m, step});
      // Values honest players are voting for right now, so split votes can tip a quorum.
      std::vector<Value> candidates = {r.a, r.b, r.invalid};
      for (int i = 0; i < o_.honest; ++i) {
        const Node& n = nodes_[i];
        if (n.up && n.player && n.player->height() == h) {
          if (auto v = n.player->ReproposalValue()) candidates.push_back(*v);
        }
      }
      for (const auto& [key, value] : sent_votes_) {
        if (std::get<1>(key) == h && std::get<2>(key) == p) candidates.push_back(value);
      }
      if (Has(kBottomVotes)) candidates.push_back(Value::Bottom());
      Value first = candidates[rng_.Below(candidates.size())];
      Value second = Has(kSplitVotes) ? candidates[rng_.Below(candidates.size())] : first;
      if (Has(kVoteEverything) && first == second) {
        second = candidates[(rng_.Below(candidates.size() - 1) + 1 +
                             (std::find(candidates.begin(), candidates.end(), first) -
                              candidates.begin())) %
                            candidates.size()];
      }
      for (int i = 0; i < o_.honest; ++i) {
        auto msg = std::make_shared<Message>();
        msg->kind = Message::kVote;
        if (Has(kVoteEverything)) {
          msg->kind = Message::kBundle;
          msg->votes = {Vote{h, p, step, first, nodes_[m].key},
                        Vote{h, p, step, second, nodes_[m].key}};
        } else {
          msg->votes = {Vote{h, p, step, r.side[i] ? second : first, nodes_[m].key}};
        }
        SendTo(i, msg);
      }
    }
  }

  const SimOptions o_;
  Rng rng_;
  Params params_;
  std::vector<Node> nodes_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  uint64_t seq_ = 0;
  uint64_t now_ = 0;
  SimResult result_;
  std::map<Value, uint64_t> block_height_;
  std::set<Value> invalid_;
  std::map<uint64_t, Value> decided_;
  std::map<std::tuple<int, uint64_t, uint32_t, Step>, Value> sent_votes_;
  std::map<std::pair<uint64_t, uint32_t>, AdversaryRound> adversary_rounds_;
  std::map<PublicKey, int> index_;
  Hash256 draw_seed_{};
  std::map<std::tuple<int, uint64_t, uint32_t, uint8_t>, bool> members_;
  std::set<std::tuple<uint64_t, uint32_t, Step>> slots_;
  std::set<uint64_t> first_draws_;
};

}  // namespace

SimResult Simulate(const SimOptions& options) { return Simulation(options).Run(); }

}  // namespace tessera::ledger::agreement

namespace tessera::ledger::agreement {

SimSummary SimulateMany(SimOptions base, uint64_t first_seed, uint64_t count) {
  SimSummary s;
  for (uint64_t seed = first_seed; seed < first_seed + count; ++seed) {
    base.seed = seed;
    SimResult r = Simulate(base);
    s.schedules++;
    if (!r.safe) s.unsafe++;
    if (r.safe && !r.live) s.stalled++;
    if (r.max_period > 0) s.recovered++;
    if (r.crashed) s.crashed++;
    s.max_period = std::max(s.max_period, r.max_period);
    s.deliveries += r.deliveries;
    s.replayed_tickets_rejected += r.replayed_tickets_rejected;
    s.short_committees += r.short_committees;
    s.short_first_draw += r.short_first_draw;
    if (s.first_failure.empty() && !r.failure.empty()) s.first_failure = r.failure;
  }
  return s;
}

}  // namespace tessera::ledger::agreement
