#include "ledger/net/citizen.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "core/file.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/round_item.h"
#include "ledger/net/validation_sample.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t NowMs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
          .count());
}

uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Hash256 FromBytes(const std::string& s) {
  Hash256 h{};
  if (s.size() == h.size()) std::copy(s.begin(), s.end(), h.begin());
  return h;
}

}  // namespace

struct Citizen::Round {
  struct Proposal {
    BlockHeader header;
    VrfOutput beta{};
    std::optional<Status> verdict;  // set once known for sure (valid or invalid)
    uint32_t period = 0;            // of the proposer's ticket
  };
  uint64_t h = 0;
  uint32_t period = 0;  // the proposer period this round plays
  std::vector<PoliticianClient*> sample;
  std::map<PoliticianClient*, uint64_t> offsets;
  std::set<Hash256> seen;
  std::map<std::string, bool> identities;  // encoded identity -> valid for this height
  std::map<uint32_t, std::set<Hash256>> commitments;
  std::map<PublicKey, WitnessList> witnesses;
  std::map<Hash256, Proposal> proposals;
  std::vector<Vote> votes;                   // checked votes not yet handed to the BA* player
  std::set<Hash256> fed;                     // proposals handed to the BA* player
  PoliticianClient* committed_at = nullptr;  // the politician we got certified block h from
  std::set<PoliticianClient*> unreliable;    // claimed block h but could not serve it
  std::string my_identity;
  VrfProof credential{};  // this member's committee ticket: authenticates its Execute calls
};

Citizen::Citizen(CitizenOptions options, std::vector<std::shared_ptr<PoliticianClient>> politicians)
    : options_(std::move(options)),
      politicians_(std::move(politicians)),
      rng_(options_.rng_seed),
      sample_fraction_(EffectiveValidationSample(options_.genesis)),
      follower_(options_.genesis, options_.timing.follow,
                options_.genesis.GenesisHeader().value()) {
  latest_ = options_.genesis.GenesisHeader().value();
  if (!options_.head_file.empty() && std::filesystem::exists(options_.head_file)) {
    // Written by this citizen after verifying the block; a damaged file means a fresh start.
    auto text = ReadFile(options_.head_file);
    std::string hex = text.ok() ? *text : "";
    while (!hex.empty() && hex.back() == '\n') hex.pop_back();
    auto bytes = FromHex(hex);
    auto header = bytes.ok() ? DecodeBlockHeader(*bytes) : Result<BlockHeader>(bytes.status());
    if (header.ok()) latest_ = *header;
  }
  stats_.head = BlockHash(latest_);
  follower_.Reset(latest_);
  if (!options_.vote_journal.empty()) {
    auto journal = agreement::VoteJournal::Open(options_.vote_journal);
    if (journal.ok()) {
      for (const agreement::JournalRecord& r : journal->records()) {
        if (r.vote.step == agreement::Step::kCert && !r.vote.value.bottom) {
          cert_voted_.try_emplace(r.vote.height, r.vote.value.hash);
        }
      }
      journal_ = std::move(*journal);
    } else {
      // Without its journal this citizen might contradict a vote it sent before a crash.
      journal_failed_ = true;
      spdlog::error("citizen: vote journal unusable, not voting: {}", journal.status().ToString());
    }
  }
}

std::optional<Hash256> Citizen::CertVote(uint64_t height) const {
  auto it = cert_voted_.find(height);
  if (it == cert_voted_.end()) return std::nullopt;
  return it->second;
}

void Citizen::SaveHead() {
  if (options_.head_file.empty()) return;
  Status s =
      WriteFileAtomically(options_.head_file, ToHex(AsBytes(EncodeBlockHeader(latest_))) + "\n");
  if (!s.ok()) spdlog::warn("citizen: {}", s.ToString());
}

CitizenStats Citizen::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void Citizen::UpdateStats() {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.height = latest_.height;
  stats_.head = BlockHash(latest_);
  stats_.bytes_up = traffic_.up;
  stats_.bytes_down = traffic_.down;
  stats_.cpu_ns = ThreadCpuNs() - cpu_start_ns_;
}

std::vector<PoliticianClient*> Citizen::SafeSample() {
  std::vector<PoliticianClient*> all;
  for (auto& p : politicians_) all.push_back(p.get());
  std::shuffle(all.begin(), all.end(), rng_);
  all.resize(std::min<size_t>(all.size(), options_.genesis.safe_sample));
  return all;
}

Status Citizen::SyncTo(uint64_t target, PoliticianClient& source) {
  while (latest_.height < target) {
    TESSERA_ASSIGN_OR_RETURN(BlockReply reply,
                             source.GetBlock(latest_.height + 1, &traffic_, /*header_only=*/true));
    const CertifiedBlock& cb = reply.block();
    TESSERA_ASSIGN_OR_RETURN(
        CertifiedBlockData block,
        DecodeCertifiedBlock(cb.header(), cb.certificate(),
                             {cb.identities().begin(), cb.identities().end()}));
    TESSERA_RETURN_IF_ERROR(VerifyCertifiedBlock(options_.genesis, latest_, block, &tickets_));
    latest_ = block.header;
    follower_.Reset(latest_);
    SaveHead();
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.blocks_followed;
  }
  return Status::Ok();
}

bool Citizen::TryAdvance(const std::vector<PoliticianClient*>& sample, bool wait) {
  const uint64_t before = latest_.height, bad_before = follower_.bad_answers();
  follower_.Advance(sample, wait, &traffic_, &tickets_);
  latest_ = follower_.tip();
  if (follower_.tip_verified() && latest_.height != before) SaveHead();
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (latest_.height > before) stats_.blocks_followed += latest_.height - before;
  stats_.bad_politician_answers += follower_.bad_answers() - bad_before;
  return latest_.height > before;
}

bool Citizen::CertifyHead() {
  if (follower_.tip_verified()) return true;
  const uint64_t bad_before = follower_.bad_answers();
  Status s = follower_.CertifyTip(SafeSample(), &traffic_, &tickets_);
  latest_ = follower_.tip();
  SaveHead();
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.bad_politician_answers += follower_.bad_answers() - bad_before;
  if (!s.ok()) spdlog::warn("citizen: {}", s.ToString());
  return s.ok();
}

void Citizen::Run(const std::atomic<bool>& stop) {
  cpu_start_ns_ = ThreadCpuNs();
  while (!stop.load()) {
    const uint64_t bytes_before = traffic_.up + traffic_.down, height_before = latest_.height;
    TryAdvance(SafeSample());
    const uint64_t h = latest_.height + 1;
    auto ticket =
        Draw(options_.keys, Role::kCommittee, h, latest_.seed, options_.genesis.sortition);
    if (ticket.ok() && ticket->selected &&
        EligibleAt(options_.identity, h, options_.genesis.registration_delay) && CertifyHead()) {
      if (attempts_height_ != h) {
        attempts_height_ = h;
        attempts_ = 0;
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.committee_rounds;
      }
      PlayRound(h, *ticket, std::min(attempts_++, kMaxProposerPeriods - 1), stop);
    } else {
      auto until = Clock::now() + std::chrono::milliseconds(options_.timing.round_timeout_ms);
      while (!stop.load() && Clock::now() < until && !TryAdvance(SafeSample(), /*wait=*/true)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(options_.timing.poll_ms * 2));
      }
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.following_bytes += traffic_.up + traffic_.down - bytes_before;
      stats_.following_blocks += latest_.height - height_before;
    }
    UpdateStats();
  }
  UpdateStats();
}

// ---- One committee round ----------------------------------------------------------------------

void Citizen::Poll(Round& r) {
  // Every politician of the sample is read (any of them may withhold), but by hash first: an
  // item is downloaded once, from the first politician that lists it, instead of once per
  // politician. A politician that lists an item and then does not serve it only delays it:
  // the next one that lists it is asked.
  for (PoliticianClient* p : r.sample) {
    auto listing = p->GetRound(r.h, r.offsets[p], &traffic_, /*hashes_only=*/true);
    if (!listing.ok()) continue;
    r.offsets[p] = listing->next_offset();
    std::vector<Hash256> wanted;
    std::set<Hash256> asked;
    for (const std::string& bytes : listing->item_hashes()) {
      if (bytes.size() != 32) continue;
      Hash256 hash = FromBytes(bytes);
      if (!r.seen.count(hash) && asked.insert(hash).second) wanted.push_back(hash);
    }
    if (!wanted.empty()) {
      auto items = p->GetItems(r.h, wanted, &traffic_);
      if (items.ok()) {
        for (const RoundItem& item : items->items()) {
          if (asked.count(RoundItemHash(item))) Process(r, item);
        }
      }
      // Listed but not served: read the listing again next time.
      for (const Hash256& hash : wanted) {
        if (!r.seen.count(hash)) {
          r.offsets[p] = 0;
          break;
        }
      }
    }
    const auto& reply = listing;
    if (reply->height() >= r.h && !r.committed_at && !r.unreliable.count(p)) {
      // It says block h is certified: fetch and check it; a politician that cannot back the
      // claim is ignored for the rest of the round.
      if (SyncTo(r.h, *p).ok()) {
        r.committed_at = p;
      } else {
        r.unreliable.insert(p);
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.bad_politician_answers;
      }
    }
  }
}

void Citizen::Process(Round& r, const RoundItem& item) {
  const std::string& payload = item.payload();
  if (payload.empty()) return;
  if (!r.seen.insert(RoundItemHash(item)).second) return;
  auto registered = [&](const PublicKey& who) {
    auto [it, inserted] = r.identities.try_emplace(item.identity(), false);
    if (inserted) {
      auto id = DecodeIdentity(AsBytes(item.identity()));
      it->second = id.ok() && CheckIdentity(options_.genesis, *id, id->citizen, r.h).ok();
    }
    if (!it->second) return false;
    return DecodeIdentity(AsBytes(item.identity()))->citizen == who;
  };
  auto member = [&](const PublicKey& who, const VrfProof& proof) {
    return registered(who) && tickets_.Selected(options_.genesis, who, r.h, latest_.seed, proof);
  };
  switch (static_cast<MessageType>(static_cast<uint8_t>(payload[0]))) {
    case MessageType::kTxPoolCommitment: {
      auto c = DecodeTxPoolCommitment(AsBytes(payload));
      if (!c.ok() || c->height != r.h) return;
      const PoliticianInfo* owner = options_.genesis.Politician(c->politician_id);
      if (owner && VerifyTxPoolCommitment(*c, owner->key)) {
        r.commitments[c->politician_id].insert(c->pool_hash);
      }
      return;
    }
    case MessageType::kWitnessList: {
      auto w = DecodeWitnessList(AsBytes(payload));
      if (!w.ok() || w->height != r.h || !VerifyWitnessList(*w)) return;
      if (member(w->citizen, w->credential)) r.witnesses.try_emplace(w->citizen, *w);
      return;
    }
    case MessageType::kBlockHeader: {
      auto p = DecodeBlockHeader(AsBytes(payload));
      if (!p.ok()) return;
      auto id = DecodeIdentity(AsBytes(item.identity()));
      if (!id.ok()) return;
      uint32_t period = 0;
      auto beta = VerifyProposal(options_.genesis, latest_, *p, *id, &period);
      if (beta.ok()) r.proposals[BlockHash(*p)] = {*p, *beta, std::nullopt, period};
      return;
    }
    case MessageType::kVote: {
      auto v = DecodeVote(AsBytes(payload));
      if (!v.ok() || v->height != r.h || !VerifyVote(*v)) return;
      if (!member(v->citizen, v->credential)) return;
      r.votes.push_back(*v);
      return;
    }
    default:
      return;
  }
}

void Citizen::PostAll(Round& r, const RoundItem& item) {
  auto vote = DecodeVote(AsBytes(item.payload()));
  bool cert = vote.ok() && vote->step == VoteStep::kCert;
  for (PoliticianClient* p : r.sample) {
    std::vector<Hash256> missing;
    if (!p->Post(r.h, item, &traffic_, &missing).ok() || !cert || missing.empty()) continue;
    // The politician lacks pools of the block we vote for: upload the ones we validated.
    auto body = bodies_.find(vote->value);
    if (body == bodies_.end()) continue;
    std::set<Hash256> want(missing.begin(), missing.end());
    for (const Pool& pool : body->second.pools()) {
      auto c = DecodeTxPoolCommitment(AsBytes(pool.commitment()));
      if (c.ok() && want.count(c->pool_hash)) (void)p->PostPool(pool, &traffic_);
    }
  }
}

Result<std::vector<Hash256>> Citizen::EligiblePools(const Round& r) const {
  std::map<std::pair<uint32_t, Hash256>, size_t> count;
  for (const auto& [who, w] : r.witnesses) {
    for (const WitnessEntry& e : w.entries) ++count[{e.politician_id, e.pool_hash}];
  }
  const Hash256 empty = PoolHash({});
  std::map<uint32_t, std::vector<Hash256>> winners;
  for (const auto& [entry, n] : count) {
    if (n >= options_.genesis.witness_threshold) winners[entry.first].push_back(entry.second);
  }
  std::vector<Hash256> pools;
  std::set<Hash256> distinct;
  for (const auto& [pid, hashes] : winners) {
    // Two eligible pools of one politician: it equivocated, and neither is used.
    if (hashes.size() == 1 && hashes[0] != empty && distinct.insert(hashes[0]).second) {
      pools.push_back(hashes[0]);
    }
  }
  return pools;
}

Result<Hash256> Citizen::CheckExecution(const ExecuteReply& reply,
                                        const std::vector<Hash256>& pools) {
  if (static_cast<size_t>(reply.pools_size()) != pools.size()) {
    return InvalidArgumentError("execution returned the wrong number of pools");
  }
  std::vector<LedgerTx> txs;
  for (size_t i = 0; i < pools.size(); ++i) {
    std::vector<LedgerTx> pool;
    for (const std::string& t : reply.pools(static_cast<int>(i)).txs()) {
      TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
      pool.push_back(std::move(tx));
    }
    if (PoolHash(pool) != pools[i]) return InvalidArgumentError("pool does not match its hash");
    txs.insert(txs.end(), pool.begin(), pool.end());
  }
  std::vector<uint32_t> claimed(reply.crypto_rejected().begin(), reply.crypto_rejected().end());
  if (!std::is_sorted(claimed.begin(), claimed.end()) ||
      std::adjacent_find(claimed.begin(), claimed.end()) != claimed.end()) {
    return InvalidArgumentError("execution's crypto_rejected is not strictly ascending");
  }
  TESSERA_ASSIGN_OR_RETURN(StateProof proof, StateProof::Decode(AsBytes(reply.proof())));
  // Every transaction is re-executed (nonce, balance, application rules) against the previous
  // certified root through the proof; a random sample of signatures is verified here and the
  // politician's claim is taken for the others (block_transition.h). The new root is then
  // recomputed from the same proof.
  // At least the sound fraction, from a seed the politician cannot know (validation_sample.h).
  const std::vector<bool> sample =
      ValidationSampleFor(options_.keys, latest_.height + 1, pools, txs.size(), sample_fraction_);
  CryptoPolicy policy{.claimed_failures = &claimed, .verify = [&](size_t i) { return sample[i]; }};
  const BlockContext ctx{.height = latest_.height + 1, .prev_seed = latest_.seed};
  TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome, ApplyBlock(ProofLookup(proof, latest_.state_root),
                                                            txs, ctx, *options_.apps, policy));
  TESSERA_ASSIGN_OR_RETURN(Hash256 root, proof.RootAfter(latest_.state_root, outcome.updates));
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.txs_validated += txs.size();
  stats_.signatures_checked += outcome.crypto_checked;
  if (FromBytes(reply.new_root()) != root) {
    ++stats_.bad_politician_answers;  // its claimed root was wrong; ours is from the proof
  }
  return root;
}

Status Citizen::Validate(Round& r, const BlockHeader& proposal) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<Hash256> eligible, EligiblePools(r));
  std::set<Hash256> ok(eligible.begin(), eligible.end());
  for (const Hash256& p : proposal.pool_hashes) {
    if (!ok.count(p))
      return UnavailableError("pool " + ToHex(p).substr(0, 12) + " not (yet) eligible");
  }
  // Another politician's execution (with its own claims, and a fresh signature sample) may
  // reproduce the proposed root where the first did not, so every member of the sample is
  // tried before the proposal is judged wrong.
  bool mismatch = false;
  for (PoliticianClient* p : r.sample) {
    const RequestSigner signer{options_.keys, r.my_identity, r.credential};
    auto reply = p->Execute(r.h, proposal.pool_hashes, &traffic_, &signer);
    if (!reply.ok()) continue;
    auto root = CheckExecution(*reply, proposal.pool_hashes);
    if (!root.ok()) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.bad_politician_answers;
      continue;
    }
    if (*root != proposal.state_root) {
      mismatch = true;
      continue;
    }
    bodies_[BlockHash(proposal)] = std::move(*reply);
    return Status::Ok();
  }
  if (mismatch) return InvalidArgumentError("proposed state root is wrong");
  return UnavailableError("no politician in the sample could execute the proposal");
}

Result<BlockHeader> Citizen::BuildProposal(Round& r, const Ticket& proposer) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<Hash256> pools, EligiblePools(r));
  BlockHeader h;
  h.height = r.h;
  h.prev_hash = BlockHash(latest_);
  h.seed = NextSeed(latest_.seed, proposer.output);
  h.proposer = options_.keys.public_key();
  h.proposer_credential = proposer.proof;
  // The full body if some politician can execute it, else the empty block (always possible).
  for (const std::vector<Hash256>& body : {pools, std::vector<Hash256>{}}) {
    for (PoliticianClient* p : r.sample) {
      const RequestSigner signer{options_.keys, r.my_identity, r.credential};
      auto reply = p->Execute(r.h, body, &traffic_, &signer);
      if (!reply.ok()) continue;
      auto root = CheckExecution(*reply, body);
      if (!root.ok()) continue;
      h.pool_hashes = body;
      h.state_root = *root;
      return h;
    }
  }
  return UnavailableError("no politician could execute a body");
}

Result<BlockHeader> Citizen::BuildEmptyProposal(Round& r, const Ticket& proposer) {
  BlockHeader h;
  h.height = r.h;
  h.prev_hash = BlockHash(latest_);
  h.seed = NextSeed(latest_.seed, proposer.output);
  h.proposer = options_.keys.public_key();
  h.proposer_credential = proposer.proof;
  for (PoliticianClient* p : r.sample) {
    auto reply = p->Execute(r.h, {}, &traffic_);
    if (!reply.ok()) continue;
    auto root = CheckExecution(*reply, {});
    if (!root.ok()) continue;
    h.state_root = *root;
    return h;
  }
  return UnavailableError("no politician could execute the empty block");
}

void Citizen::PlayRound(uint64_t h, const Ticket& ticket, uint32_t period,
                        const std::atomic<bool>& stop) {
  Round r;
  r.h = h;
  r.period = period;
  bodies_.clear();
  r.sample = SafeSample();
  r.my_identity = EncodeIdentity(options_.identity);
  r.credential = ticket.proof;
  const CitizenTiming& t = options_.timing;
  const bool silent = options_.fault == CitizenFault::kSilent;
  const bool liar = options_.fault == CitizenFault::kInconsistent;
  auto start = Clock::now();
  auto ms = [](int n) { return std::chrono::milliseconds(n); };
  auto poll_until = [&](Clock::time_point until, const std::function<bool()>& done) {
    while (!stop.load() && !r.committed_at && Clock::now() < until && !done()) {
      std::this_thread::sleep_for(ms(t.poll_ms));
      Poll(r);
    }
  };
  auto item_of = [&](std::string payload, std::string block_sig = {}) {
    RoundItem item;
    item.set_payload(std::move(payload));
    item.set_identity(r.my_identity);
    item.set_block_signature(std::move(block_sig));
    return item;
  };

  // 1. Witness the pools.
  Poll(r);
  poll_until(start + ms(t.witness_ms), [] { return false; });
  if (!silent) {
    WitnessList w;
    w.height = h;
    w.credential = ticket.proof;
    for (const auto& [pid, hashes] : r.commitments) {
      if (hashes.size() == 1) w.entries.push_back({pid, *hashes.begin()});
    }
    SignWitnessList(w, options_.keys);
    PostAll(r, item_of(EncodeWitnessList(w)));
  }

  // 2-4. BA* (citizen_agreement.h): propose when our ticket for the period wins, soft, cert
  // and next votes from the player, journaled before they are posted.
  {
    if (agreement_height_ != h || !agreement_) {
      const uint64_t now = NowMs();
      agreement::Params params{
          .threshold = options_.genesis.cert_threshold,
          .filter_ms = static_cast<uint64_t>(t.witness_ms + t.proposal_ms),
          .next_ms = static_cast<uint64_t>(
              std::max(t.round_timeout_ms / 2, 2 * (t.witness_ms + t.proposal_ms))),
          .resend_ms = static_cast<uint64_t>(std::max(t.round_timeout_ms / 4, 500)),
      };
      agreement_ = std::make_unique<CitizenAgreement>(
          CitizenAgreementConfig{.params = params,
                                 .height = h,
                                 .keys = &options_.keys,
                                 .credential = ticket.proof,
                                 .identity = r.my_identity,
                                 .journal = journal_ ? &*journal_ : nullptr,
                                 .fault = options_.fault},
          now);
      agreement_height_ = h;
      proposed_periods_.clear();
    }
  }
  CitizenAgreement& ba = *agreement_;
  if (journal_failed_) return;  // cannot persist votes: follow the chain only
  const CitizenFault fault = options_.fault;
  std::vector<std::pair<Clock::time_point, RoundItem>> held;  // late proposals
  auto propose = [&]() {
    const uint32_t tp = ba.ticket_period();
    if (silent || !ba.FreshProposalsWanted() || proposed_periods_.count(tp)) return;
    // A replaying adversary proposes at once with its winning ticket of any period.
    std::optional<Ticket> win;
    for (uint32_t q = 0; q < kMaxProposerPeriods; ++q) {
      if (fault != CitizenFault::kReplayTicket && q != tp) continue;
      auto d = Draw(options_.keys, Role::kProposer, h, ProposerSeed(latest_.seed, q),
                    ProposerParams(options_.genesis, q));
      if (d.ok() && d->selected) {
        win = *d;
        break;
      }
    }
    proposed_periods_.insert(tp);
    if (!win) return;
    poll_until(Clock::now() + ms(2 * t.witness_ms),
               [&] { return r.witnesses.size() >= options_.genesis.soft_threshold; });
    std::vector<BlockHeader> headers;
    if (fault != CitizenFault::kProposeEmpty) {
      auto header = BuildProposal(r, *win);
      if (header.ok()) headers.push_back(*header);
    }
    if (fault == CitizenFault::kProposeEmpty || fault == CitizenFault::kEquivocateProposal) {
      auto empty = BuildEmptyProposal(r, *win);
      if (empty.ok() && (headers.empty() || BlockHash(headers[0]) != BlockHash(*empty))) {
        headers.push_back(*empty);
      }
    }
    for (size_t i = 0; i < headers.size(); ++i) {
      BlockHeader& header = headers[i];
      if (liar) header.state_root[0] ^= 1;  // a lying proposer: honest members must refuse it
      RoundItem item = item_of(EncodeBlockHeader(header));
      if (fault == CitizenFault::kLateProposal) {
        // Held back until just before the next-vote deadline of this period.
        held.push_back(
            {Clock::now() + ms(std::max(t.round_timeout_ms / 2 - t.proposal_ms, 0)), item});
      } else if (fault == CitizenFault::kEquivocateProposal && headers.size() == 2) {
        // Each block to a different half of the sample: honest members see different first
        // proposals under one ticket.
        for (size_t j = 0; j < r.sample.size(); ++j) {
          if (j % 2 == i) (void)r.sample[j]->Post(h, item, &traffic_);
        }
      } else {
        PostAll(r, item);
      }
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.proposals;
    }
  };
  while (!stop.load() && !r.committed_at && Clock::now() < start + ms(t.round_timeout_ms)) {
    Poll(r);
    const uint64_t now = NowMs();
    for (const Vote& v : r.votes) ba.OnVote(v, now);
    r.votes.clear();
    for (const auto& [value, p] : r.proposals) {
      if (r.fed.insert(value).second) ba.OnProposal(value, p.period, p.beta, now);
    }
    for (const Hash256& value : ba.WantValidation()) {
      auto it = r.proposals.find(value);
      if (it == r.proposals.end()) continue;  // the header has not reached us yet
      if (!it->second.verdict) {
        Status s = Validate(r, it->second.header);
        if (s.code() == StatusCode::kUnavailable) continue;  // ask again later
        it->second.verdict = s;
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(stats_mu_);
          ++stats_.rejected_proposals;
        }
      }
      ba.SetVerdict(value, it->second.verdict->ok(), now);
    }
    auto items = ba.Step(now);
    if (!items.ok()) {
      journal_failed_ = true;
      spdlog::error("citizen: cannot persist votes, not voting: {}", items.status().ToString());
      return;
    }
    for (const RoundItem& item : *items) {
      auto v = DecodeVote(AsBytes(item.payload()));
      if (v.ok() && v->step == VoteStep::kCert && !cert_voted_.count(h)) {
        cert_voted_[h] = v->value;
      }
      PostAll(r, item);
    }
    if (Clock::now() >= start + ms(t.witness_ms)) propose();
    for (auto it = held.begin(); it != held.end();) {
      if (Clock::now() < it->first) {
        ++it;
        continue;
      }
      PostAll(r, it->second);
      it = held.erase(it);
    }
    std::this_thread::sleep_for(ms(t.poll_ms));
  }
  // 5. The certified block was fetched and checked by Poll (or the round timed out).
  cert_voted_.erase(cert_voted_.begin(), cert_voted_.lower_bound(latest_.height));
  if (journal_ && !journal_failed_) {
    Status s = journal_->PruneBelow(latest_.height);
    if (!s.ok()) spdlog::warn("citizen: vote journal prune: {}", s.ToString());
  }
}

}  // namespace tessera::ledger::net
