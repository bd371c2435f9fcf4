#include "ledger/net/citizen.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "core/file.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/pool_availability.h"
#include "ledger/net/registration.h"
#include "ledger/net/round_item.h"
#include "ledger/net/safe_sample.h"
#include "ledger/net/validation_sample.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Hedged requests (hedged_fetch.h). A healthy politician on the citizen's link answers a
// relay read in milliseconds; one that has not answered after kReadWait is left behind for
// this read (and skipped while its call is still in flight).
constexpr milliseconds kReadWait{300};
// ... unless none has answered by then: the first answer is waited for up to the client
// deadline (on a loaded machine the one honest politician may take longer than kReadWait).
constexpr milliseconds kReadPatience{1500};
constexpr milliseconds kPoolHedge{500};     // before a pool download also asks the next one
constexpr milliseconds kExecuteHedge{600};  // ... an execution
// ... an execution, by a citizen that has not asked the first politician of its ranking yet (a
// fresh committee member knows nobody): an honest execution of a block answers in tens of
// milliseconds on an idle box, and a fresh member facing four slow executors of five walked
// past them at 600 ms each -- 2.4 s in which it neither voted nor proposed, while the soft
// quorum of an 8-member committee with 2 malicious needs every honest member (`slow_execute`).
// What a hedge fired too early costs is one duplicate download, once per politician learned.
constexpr milliseconds kFreshExecuteHedge{200};
constexpr milliseconds kRetryPause{100};  // between two rounds of asking the sample
// Every 4th execution asks first a politician of the sample this citizen never asked to
// execute (MoveFirstUnaskedToFront, hedged_fetch.h), so that one that signs wrong executions is
// caught even if no first call reached it; each costs at most one kFreshExecuteHedge, once.
constexpr uint64_t kExploreEvery = 4;
// An execution slower than this is logged with the order its politicians were asked in.
constexpr int64_t kSlowExecuteLogMs = 1000;

// A flooding politician lists thousands of its own commitments for the height being agreed
// (politician_flood.cc), and a citizen downloaded and decoded every one: 8,000 items a round
// from four flooders, about 0.6 s of a 2.4 s round in Poll. Items are downloaded at most
// kItemsPerPoll per politician and Poll, and once a politician has served
// kMaxSurplusCommitments of its own commitments beyond the two a citizen keeps (a signed
// surplus only its owner can make: an honest politician signs one per height), what only it
// lists is not downloaded for the rest of the round. An honest politician lists at most two
// commitments per politician and height (AdmitCommitment), so the rule never cuts one off.
constexpr size_t kItemsPerPoll = 128;
constexpr uint32_t kMaxSurplusCommitments = 16;

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
  std::set<Hash256> seen;
  std::map<std::string, bool> identities;  // encoded identity -> valid for this height
  std::map<uint32_t, std::set<Hash256>> commitments;
  // Per politician of the sample: how many of its own commitments for h past the two a
  // citizen keeps it has served this round (a flooder signs thousands; Poll stops downloading
  // what only it lists after kMaxSurplusCommitments).
  std::map<PoliticianClient*, uint32_t> surplus;
  // Listed item hashes not downloaded yet: at most kItemsPerPoll per politician and Poll.
  std::map<Hash256, std::vector<PoliticianClient*>> deferred;
  std::map<PublicKey, WitnessList> witnesses;
  std::map<Hash256, Proposal> proposals;
  std::vector<Vote> votes;  // checked votes not yet handed to the BA* player
  // Checked proposer tickets (ticket period, VRF output) not yet handed to the BA* player.
  std::vector<std::pair<uint32_t, VrfOutput>> proposer_tickets;
  std::set<Hash256> fed;                     // proposals handed to the BA* player
  std::map<Hash256, Pool> pool_data;         // pools downloaded and checked (CheckPoolData)
  PoliticianClient* committed_at = nullptr;  // the politician we got certified block h from
  std::set<PoliticianClient*> unreliable;    // claimed block h but could not serve it
  bool told_unvalidated = false;             // logged a validation the sample could not execute
  std::vector<WitnessEntry> own_witnessed;   // this member's witness list entries
  std::vector<Identity> registrations;       // for this block (registration.h), checked later
  std::string my_identity;
  VrfProof credential{};  // this member's committee ticket: authenticates its Execute calls
  // On the height's committee (witness lists, proposals, Execute with `credential`). With
  // per-step committees a citizen off it still plays the height: it votes in the steps it
  // wins and executes as a soft or cert member (ExecuteSigner).
  bool height_member = true;
  // Where the round's time went (logged at info when it ends): wall time in reads of the
  // sample, posts, validations and building proposals, and when (ms into the round) this
  // member first saw a proposal and first posted a soft and a cert vote (-1: never).
  struct Timing {
    double poll_ms = 0, post_ms = 0, validate_ms = 0, propose_ms = 0;
    // Of poll_ms: downloading listed items, and fetching certified blocks (SyncTo).
    double items_ms = 0, sync_ms = 0;
    uint32_t polls = 0, posts = 0;
    int64_t first_proposal = -1, soft = -1, cert = -1;
  } timing;
};

namespace {
// Adds the wall time of its scope to `*ms`.
class ScopedSpend {
 public:
  explicit ScopedSpend(double* ms) : ms_(ms), start_(Clock::now()) {}
  ~ScopedSpend() {
    *ms_ += std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  }

 private:
  double* ms_;
  Clock::time_point start_;
};
}  // namespace

Citizen::Citizen(CitizenOptions options, std::vector<std::shared_ptr<PoliticianClient>> politicians)
    : options_(std::move(options)),
      politicians_(std::move(politicians)),
      rng_(options_.rng_seed),
      follower_(options_.genesis, options_.timing.follow, options_.genesis.GenesisHeader().value()),
      read_costs_(LatencyRanking::kDefaultHalfLife, kPoolHedge),
      execute_costs_(LatencyRanking::kDefaultHalfLife, kExecuteHedge),
      calls_(std::make_unique<PoliticianCalls>(politicians_)) {
  latest_ = options_.genesis.GenesisHeader().value();
  std::vector<PoliticianClient*> clients;
  for (const auto& p : politicians_) clients.push_back(p.get());
  listener_ = std::make_unique<RoundListener>(
      clients, RoundListener::Options{.wait = milliseconds(options_.timing.round_wait_ms),
                                      .min_interval = milliseconds(options_.timing.poll_ms),
                                      .listener = std::string(AsChars(options_.keys.public_key())),
                                      .traffic = &traffic_});
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
  if (!options_.head_file.empty()) {
    // citizen-<i>.evidence beside the head: the blacklist survives a restart (blacklist.h).
    std::filesystem::path evidence = options_.head_file;
    if (Status s = blacklist_.Persist(evidence.replace_extension(".evidence")); !s.ok()) {
      spdlog::warn("citizen: {}", s.ToString());
    }
    stats_.blacklisted = blacklist_.BlockedAt(latest_.height + 1);
  }
  if (!options_.vote_journal.empty()) {
    auto journal = agreement::VoteJournal::Open(options_.vote_journal);
    if (journal.ok()) {
      for (const agreement::JournalRecord& r : journal->records()) {
        if (r.sent && r.vote.step == agreement::Step::kCert && !r.vote.value.bottom) {
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
  stats_.bytes_up = traffic_.up + follow_traffic_.up;
  stats_.bytes_down = traffic_.down + follow_traffic_.down;
  stats_.cpu_ns = ThreadCpuNs() - cpu_start_ns_;
  stats_.round_listings = listener_->calls();
  stats_.blacklisted = blacklist_.BlockedAt(latest_.height + 1);
}

std::vector<PoliticianClient*> Citizen::SafeSample() {
  std::vector<PoliticianClient*> sample;
  for (uint32_t i :
       DrawSafeSample(static_cast<uint32_t>(politicians_.size()), options_.genesis.safe_sample,
                      blacklist_, latest_.height + 1, rng_)) {
    sample.push_back(politicians_[i].get());
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.largest_sample = std::max<uint64_t>(stats_.largest_sample, sample.size());
  return sample;
}

std::optional<uint32_t> Citizen::IndexOf(const PoliticianClient* p) const {
  // politicians_ is built from the genesis list, one client per entry, in its order.
  for (uint32_t i = 0; i < politicians_.size() && i < options_.genesis.politicians.size(); ++i) {
    if (politicians_[i].get() == p) return i;
  }
  return std::nullopt;
}

bool Citizen::IsPolitician(const PoliticianClient* p, uint32_t id) const {
  const std::optional<uint32_t> i = IndexOf(p);
  return i && options_.genesis.politicians[*i].id == id;
}

bool Citizen::Blacklisted(PoliticianClient* p) const {
  const std::optional<uint32_t> i = IndexOf(p);
  return i && blacklist_.Blocked(*i, latest_.height + 1);
}

std::vector<PoliticianClient*> Citizen::Ranked(const std::vector<PoliticianClient*>& sample,
                                               const LatencyRanking& costs) {
  std::vector<PoliticianClient*> order = sample;
  std::shuffle(order.begin(), order.end(), rng_);
  costs.Rank(order);
  std::stable_partition(order.begin(), order.end(),
                        [&](PoliticianClient* p) { return !Blacklisted(p); });
  return order;
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
  // A long poll goes to the politician that answered fastest lately; the rest are asked at
  // once (chain_follower.h).
  follower_.Advance(wait ? Ranked(sample, read_costs_) : sample, wait, &follow_traffic_, &tickets_,
                    *calls_);
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
  Status s = follower_.CertifyTip(SafeSample(), &follow_traffic_, &tickets_, *calls_);
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
    const uint64_t bytes_before = follow_traffic_.up + follow_traffic_.down,
                   height_before = latest_.height;
    TryAdvance(SafeSample());
    const uint64_t h = latest_.height + 1;
    auto ticket = Draw(options_.keys, Role::kCommittee, h, latest_.seed,
                       SortitionAt(options_.genesis, latest_));
    // Per-step committees: every eligible citizen plays the height (its votes need their
    // step's ticket, citizen_agreement.h); per height, only the height's committee.
    const bool plays = ticket.ok() && (ticket->selected || options_.genesis.vote_committees ==
                                                               VoteCommittees::kPerStep);
    if (plays && EligibleAt(options_.identity, h, options_.genesis.registration_delay) &&
        CertifyHead()) {
      if (attempts_height_ != h) {
        attempts_height_ = h;
        attempts_ = 0;
        std::lock_guard<std::mutex> lock(stats_mu_);
        if (ticket->selected) ++stats_.committee_rounds;
      }
      PlayRound(h, *ticket, std::min(attempts_++, kMaxProposerPeriods - 1), stop);
    } else {
      auto until = Clock::now() + std::chrono::milliseconds(options_.timing.round_timeout_ms);
      while (!stop.load() && Clock::now() < until && !TryAdvance(SafeSample(), /*wait=*/true)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(options_.timing.poll_ms * 2));
      }
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.following_bytes += follow_traffic_.up + follow_traffic_.down - bytes_before;
      stats_.following_blocks += latest_.height - height_before;
    }
    UpdateStats();
  }
  UpdateStats();
}

// ---- One committee round ----------------------------------------------------------------------

void Citizen::Poll(Round& r) {
  ScopedSpend spend(&r.timing.poll_ms);
  ++r.timing.polls;
  // Every politician of the sample is listened to at once (any of them may withhold; a slow
  // one delays only its own listings, round_listener.h), by hash: an item is downloaded once,
  // from one politician that lists it, instead of once per politician. An item listed and then
  // not served only delays it: its listers are listed from the start again.
  const uint64_t h = r.h;
  Traffic* traffic = &traffic_;
  RoundListener::Listing listing = listener_->Take();
  std::map<PoliticianClient*, std::vector<Hash256>> wanted;
  std::map<Hash256, std::vector<PoliticianClient*>> listers = std::move(r.deferred);
  r.deferred.clear();
  for (auto& [hash, who] : listing.listers) {
    if (r.seen.count(hash)) continue;
    std::vector<PoliticianClient*>& all = listers[hash];
    for (PoliticianClient* p : who) {
      if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
    }
  }
  // From a random lister: one that lists an item and then withholds it cannot hold it back.
  // Not from a flooder (above); at most kItemsPerPoll from each, the rest at the next Poll.
  size_t asked = 0;
  for (auto& [hash, who] : listers) {
    if (r.seen.count(hash)) continue;
    std::erase_if(who, [&](PoliticianClient* p) { return r.surplus[p] >= kMaxSurplusCommitments; });
    // Listed by flooders only so far: not downloaded, and not marked seen either -- an item
    // that reached a flooder first (a vote, a proposal) is downloaded once an honest
    // politician lists it too.
    if (who.empty()) continue;
    PoliticianClient* from = who[rng_() % who.size()];
    auto batch = wanted.find(from);
    if (batch != wanted.end() && batch->second.size() >= kItemsPerPoll) {
      r.deferred[hash] = who;
      continue;
    }
    wanted[from].push_back(hash);
    ++asked;
  }
  if (asked > 0) {
    ScopedSpend items_spend(&r.timing.items_ms);
    std::vector<PoliticianClient*> from;
    for (const auto& [p, hashes] : wanted) from.push_back(p);
    auto items = calls_->All<RoundReply>(
        from,
        [h, traffic, wanted](PoliticianClient& p) { return p.GetItems(h, wanted.at(&p), traffic); },
        kReadWait, kReadPatience);
    for (size_t j = 0; j < from.size(); ++j) {
      if (!items[j]) continue;
      // A set: a flooder lists thousands of items, and a linear find per item was quadratic.
      const std::set<Hash256> requested(wanted[from[j]].begin(), wanted[from[j]].end());
      for (const RoundItem& item : items[j]->items()) {
        if (requested.count(RoundItemHash(item))) {
          Process(r, item, from[j]);
        }
      }
    }
    // Items asked for and not served: their listers are listed from the start again.
    std::set<PoliticianClient*> reread;
    for (const auto& [p, hashes] : wanted) {
      for (const Hash256& hash : hashes) {
        if (!r.seen.count(hash)) reread.insert(listers[hash].begin(), listers[hash].end());
      }
    }
    for (PoliticianClient* p : reread) listener_->Reread(p);
  }
  for (const auto& [p, height] : listing.heights) {
    if (height >= r.h && !r.committed_at && !r.unreliable.count(p)) AcceptCommitClaim(r, p);
  }
}

bool Citizen::AcceptCommitClaim(Round& r, PoliticianClient* p) {
  ScopedSpend sync_spend(&r.timing.sync_ms);
  if (SyncTo(r.h, *p).ok()) {
    r.committed_at = p;
    return true;
  }
  r.unreliable.insert(p);
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.bad_politician_answers;
  return false;
}

void Citizen::Process(Round& r, const RoundItem& item, PoliticianClient* from) {
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
    return registered(who) &&
           tickets_.Selected(SortitionAt(options_.genesis, latest_), who, r.h, latest_.seed, proof);
  };
  switch (static_cast<MessageType>(static_cast<uint8_t>(payload[0]))) {
    case static_cast<MessageType>(kIdentityMessageType): {
      // A registration a proposer puts into its header (SetRegistrations checks it).
      auto id = DecodeIdentity(AsBytes(payload));
      if (id.ok() && id->registered_at == r.h &&
          r.registrations.size() < kMaxRegistrationsPerBlock) {
        r.registrations.push_back(*id);
      }
      return;
    }
    case MessageType::kTxPoolCommitment: {
      auto c = DecodeTxPoolCommitment(AsBytes(payload));
      if (!c.ok() || c->height != r.h) return;
      const PoliticianInfo* owner = options_.genesis.Politician(c->politician_id);
      // Two commitments of one politician are its equivocation; more add nothing (a
      // flooding politician may serve thousands).
      std::set<Hash256>& signed_pools = r.commitments[c->politician_id];
      if (signed_pools.size() >= 2 && !signed_pools.count(c->pool_hash) &&
          IsPolitician(from, c->politician_id)) {
        ++r.surplus[from];  // its own third, fourth, ... commitment (only it can sign them)
      }
      if (signed_pools.size() < 2 && owner && VerifyTxPoolCommitment(*c, owner->key)) {
        signed_pools.insert(c->pool_hash);
        // A second pool is equivocation evidence (citizen_evidence.cc): relay it.
        if (auto evidence = NoteCommitment(*c)) PostAll(r, *evidence);
      }
      return;
    }
    case MessageType::kEvidence:
      ConsiderEvidence(item);
      return;
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
      if (!beta.ok()) return;
      if (options_.timing.split_proposals && period == 0 &&
          (BlockHash(*p)[0] & 1) != (options_.index & 1)) {
        return;  // the forced-split network fault (CitizenTiming): the other half's block
      }
      r.proposals[BlockHash(*p)] = {*p, *beta, std::nullopt, period};
      return;
    }
    case MessageType::kProposerTicket: {
      auto t = DecodeProposerTicket(AsBytes(payload));
      if (!t.ok()) return;
      auto id = DecodeIdentity(AsBytes(item.identity()));
      if (!id.ok()) return;
      auto beta = VerifyProposerTicket(options_.genesis, latest_, *t, *id);
      if (beta.ok()) r.proposer_tickets.push_back({t->period, *beta});
      return;
    }
    case MessageType::kVote: {
      auto v = DecodeVote(AsBytes(payload));
      if (!v.ok() || v->height != r.h || !VerifyVote(*v)) return;
      // Its ticket for its own (period, step) with per-step committees (TicketCache::Voter).
      if (!registered(v->citizen) ||
          !tickets_.Voter(options_.genesis.vote_committees, SortitionAt(options_.genesis, latest_),
                          v->citizen, r.h, v->period, static_cast<uint8_t>(v->step), latest_.seed,
                          v->credential)) {
        return;
      }
      r.votes.push_back(*v);
      return;
    }
    default:
      return;
  }
}

void Citizen::PostAll(Round& r, const RoundItem& item) {
  ScopedSpend spend(&r.timing.post_ms);
  ++r.timing.posts;
  // To every politician of the sample at once (one still busy with an earlier call gets it when
  // free, hedged_fetch.h); one that has not taken it after kReadWait is left behind (the others
  // gossip it).
  const uint64_t h = r.h;
  Traffic* traffic = &traffic_;
  auto missing = calls_->All<std::vector<Hash256>>(
      r.sample,
      [h, traffic, item](PoliticianClient& p) -> Result<std::vector<Hash256>> {
        std::vector<Hash256> lacks;
        TESSERA_RETURN_IF_ERROR(p.Post(h, item, traffic, &lacks));
        return lacks;
      },
      kReadWait, /*patience=*/{}, /*start_busy=*/true);
  auto vote = DecodeVote(AsBytes(item.payload()));
  if (!vote.ok() || vote->step != VoteStep::kCert) return;
  auto body = bodies_.find(vote->value);
  for (size_t i = 0; i < r.sample.size(); ++i) {
    if (!missing[i] || missing[i]->empty()) continue;
    // The politician lacks pools of the block we vote for: upload the ones we validated.
    std::set<Hash256> want(missing[i]->begin(), missing[i]->end());
    if (body != bodies_.end()) {
      for (const Pool& pool : body->second.pools()) {
        auto c = DecodeTxPoolCommitment(AsBytes(pool.commitment()));
        if (c.ok() && want.erase(c->pool_hash)) (void)r.sample[i]->PostPool(pool, &traffic_);
      }
    }
    for (const Hash256& ph : want) {
      auto held = r.pool_data.find(ph);
      if (held != r.pool_data.end()) (void)r.sample[i]->PostPool(held->second, &traffic_);
    }
  }
}

std::vector<WitnessEntry> Citizen::WitnessPools(Round& r) {
  // Attest a pool only with its data in hand: download every pool of a politician seen with
  // exactly one commitment (two are equivocation) from the sample, hedged.
  std::vector<Hash256> wanted;
  for (const auto& [pid, hashes] : r.commitments) {
    if (hashes.size() == 1) wanted.push_back(*hashes.begin());
  }
  FetchPools(r, wanted);
  const Hash256 empty = PoolHash({});
  std::vector<WitnessEntry> entries;
  for (const auto& [pid, hashes] : r.commitments) {
    if (hashes.size() != 1) continue;
    const Hash256& ph = *hashes.begin();
    if (ph == empty || r.pool_data.count(ph)) entries.push_back({pid, ph});
  }
  return entries;
}

void Citizen::FetchPools(Round& r, const std::vector<Hash256>& pools) {
  const Hash256 empty = PoolHash({});
  std::set<Hash256> missing;
  for (const Hash256& ph : pools) {
    if (ph != empty && !r.pool_data.count(ph)) missing.insert(ph);
  }
  if (missing.empty()) return;
  const std::vector<PoliticianClient*> order = Ranked(r.sample, read_costs_);
  const uint64_t h = r.h;
  Traffic* traffic = &traffic_;
  // Each politician asked is asked for what is still missing then.
  auto make_call = [&](PoliticianClient*) -> PoliticianCalls::Call<PoolsReply> {
    std::vector<Hash256> ask(missing.begin(), missing.end());
    if (ask.size() > kMaxPoolsPerRequest) ask.resize(kMaxPoolsPerRequest);
    return [ask, traffic](PoliticianClient& p) { return p.GetPools(ask, traffic); };
  };
  auto accept = [&](PoliticianClient*, PoolsReply& reply) {
    bool bad = false;
    for (const Pool& pool : reply.pools()) {
      auto c = DecodeTxPoolCommitment(AsBytes(pool.commitment()));
      if (!c.ok() || !missing.count(c->pool_hash)) continue;  // not asked for: ignored
      if (!CheckPoolData(pool, c->pool_hash, h, options_.genesis).ok()) {
        bad = true;
        continue;
      }
      r.pool_data.emplace(c->pool_hash, pool);
      missing.erase(c->pool_hash);
    }
    if (bad) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.bad_politician_answers;
    }
    return missing.empty();
  };
  const auto since = Clock::now();
  Clock::time_point winner_asked = since;
  // A partial answer counts as a refusal, after which First stops as soon as only politicians
  // slow lately are left to answer: a pool whose owner withholds it is in no one's hands, and
  // waiting out an unresponsive politician of the sample for it cost every citizen the whole
  // deadline (2 x witness_ms) each round (LocalnetTest.ASafeSample...: first proposals 600 ms
  // later than in the honest run).
  const milliseconds deadline(options_.timing.witness_ms * 2);
  auto answer = calls_->First<PoolsReply>(order, make_call, accept, kPoolHedge, deadline, deadline,
                                          &winner_asked);
  read_costs_.Learn(order, answer ? answer->first : nullptr, since, kPoolHedge, Clock::now(),
                    winner_asked);
}

Result<std::pair<ExecuteReply, Hash256>> Citizen::ExecuteHedged(
    Round& r, const std::vector<Hash256>& body, const std::optional<Hash256>& expected_root,
    milliseconds retry_for) {
  // Pools of the body this citizen holds: a politician that does not know one (its owner
  // served it to witnesses but not to the other politicians) gets it uploaded and is asked
  // again.
  // Their indices go with the request, so that the reply leaves them out: a member would
  // otherwise download every pool twice, as a witness and with the execution (a third of its
  // bytes at committee 64).
  auto held = std::make_shared<std::vector<Pool>>();
  std::vector<uint32_t> held_indices;
  std::vector<const Pool*> held_by_index(body.size(), nullptr);
  for (size_t i = 0; i < body.size(); ++i) {
    auto it = r.pool_data.find(body[i]);
    if (it == r.pool_data.end()) continue;
    held->push_back(it->second);
    held_indices.push_back(static_cast<uint32_t>(i));
    held_by_index[i] = &it->second;
  }
  std::vector<PoliticianClient*> order = Ranked(r.sample, execute_costs_);
  if (++execute_calls_ % kExploreEvery == 0) {
    MoveFirstUnaskedToFront(order, execute_costs_,
                            [&](PoliticianClient* p) { return !Blacklisted(p); });
  }
  const milliseconds hedge =
      !order.empty() && !execute_costs_.Known(order.front()) ? kFreshExecuteHedge : kExecuteHedge;
  const uint64_t h = r.h;
  Traffic* traffic = &traffic_;
  // Executions are for committee members only (request_auth.h): each call is signed.
  std::optional<RequestSigner> may = ExecuteSigner(r);
  if (!may) return UnavailableError("not on a committee that may execute at this height now");
  auto signer = std::make_shared<RequestSigner>(*may);
  // When each politician was asked, and the first whose answer was heard but not accepted (an
  // execution that contradicts the expected root, or "already committed"): it is charged its
  // own latency, not the whole call's. Charged like the silent ones, the one honest politician
  // of five lost its rank every time a member refuted the `inconsistent` citizen's wrong-root
  // proposal, and the member's next validation waited hedges on slow politicians first.
  std::map<PoliticianClient*, Clock::time_point> asked_at;
  // Why each politician gave no execution this time (its last failure or refused answer), for
  // the error: a member that cannot validate says which politician failed how.
  std::map<PoliticianClient*, std::string> why_not;
  PoliticianClient* heard = nullptr;
  Clock::time_point heard_at;
  auto hear = [&](PoliticianClient* p, Clock::time_point at) {
    if (heard != nullptr) return;
    heard = p;
    heard_at = at;
  };
  auto make_call = [&](PoliticianClient* target) -> PoliticianCalls::Call<ExecuteReply> {
    asked_at[target] = Clock::now();
    return [h, body, held, held_indices, traffic, signer](PoliticianClient& p) {
      auto reply = p.Execute(h, body, traffic, signer.get(), held_indices);
      if (!reply.ok() && !held->empty() &&
          reply.status().message().find("unknown") != std::string::npos) {
        for (const Pool& pool : *held) (void)p.PostPool(pool, traffic);
        reply = p.Execute(h, body, traffic, signer.get(), held_indices);
      }
      return reply;
    };
  };
  // Another politician's execution (with its own claims, and a fresh signature sample) may
  // reproduce the expected root where the first did not, so every member of the sample may
  // be tried before a proposal is judged wrong.
  bool mismatch = false;
  Hash256 root{};
  auto accept = [&](PoliticianClient* from, ExecuteReply& reply) {
    const Clock::time_point arrived = Clock::now();
    auto checked = CheckExecution(reply, body, from, held_by_index);
    if (!checked.ok()) {
      why_not[from] = checked.status().ToString();
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.bad_politician_answers;
      return false;
    }
    if (expected_root && *checked != *expected_root) {
      why_not[from] = "another state root";
      mismatch = true;
      hear(from, arrived);
      return false;
    }
    root = *checked;
    return true;
  };
  // Politicians that have not committed block h - 1 yet refuse at once: with `retry_for`, the
  // sample is asked again until then.
  const auto retry_until = Clock::now() + retry_for;
  const auto began = Clock::now();
  // What the order looked like when asked, for the log line of a slow execution: each target's
  // port, learned cost and whether its worker was busy with an earlier call.
  auto describe_order = [&] {
    std::string out;
    for (PoliticianClient* p : order) {
      const std::string& a = p->address();
      out += fmt::format(" {}:{:.0f}ms{}", a.substr(a.rfind(':') + 1), execute_costs_.CostMs(p),
                         calls_->Busy(p) ? ":busy" : "");
    }
    return out;
  };
  const std::string order_at_start = describe_order();
  // A politician that says block h is already committed ends the execution at once, and the
  // block is fetched from it and checked. Waiting out the others instead (four stopped
  // politicians: the round timeout) made a member miss the next height's period 0
  // (docs/ledger-network.md, "slow_execute's margin"). A politician whose claim does not check
  // out is ignored for the rest of the round: a lie costs one block fetch.
  PoliticianClient* claimed_by = nullptr;
  auto ends_call = [&](PoliticianClient* p, const Status& s) {
    why_not[p] = s.ToString();
    if (s.code() != StatusCode::kOutOfRange || r.unreliable.count(p)) return false;
    claimed_by = p;
    hear(p, Clock::now());
    return true;
  };
  for (;;) {
    const auto since = Clock::now();
    // A proposal whose root one checked execution contradicts gets one hedge delay for another
    // politician to reproduce it, not the round: blocked here, a member misses its votes (a
    // lying proposer's block cost every honest member 8 s with 4 of 5 politicians stopped).
    Clock::time_point winner_asked = since;
    heard = nullptr;
    auto answer = calls_->First<ExecuteReply>(
        order, make_call, accept, hedge, milliseconds(options_.timing.round_timeout_ms),
        expected_root ? std::optional<milliseconds>(kExecuteHedge) : std::nullopt, &winner_asked,
        ends_call);
    bool committed = false;
    if (!answer && claimed_by != nullptr) {
      PoliticianClient* claimer = std::exchange(claimed_by, nullptr);
      committed = AcceptCommitClaim(r, claimer);
      if (!committed) {
        // A false claim: its maker is charged as failed (not ranked by how fast it lied), its
        // claims are ignored for the rest of the round (r.unreliable), and the sample is asked
        // again.
        execute_costs_.Learn({claimer}, nullptr, since, hedge);
        continue;
      }
    }
    if (answer) {
      execute_costs_.Learn(order, answer->first, since, hedge, Clock::now(), winner_asked);
    } else {
      execute_costs_.Learn(order, heard, since, hedge, heard ? heard_at : Clock::now(),
                           heard ? asked_at[heard] : since);
    }
    PostEvidence(r);  // against any politician whose execution was caught lying
    const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - began).count();
    if (took >= kSlowExecuteLogMs) {
      const std::string& by = answer ? answer->first->address() : std::string("none");
      spdlog::info(
          "citizen: execution of block {} took {} ms, answered by {}; order then (port, "
          "cost):{}; now:{}",
          h, took, by.substr(by.rfind(':') + 1), order_at_start, describe_order());
    }
    if (answer) return std::make_pair(std::move(answer->second), root);
    if (committed) return AbortedError("block " + std::to_string(h) + " is committed");
    if (mismatch || Clock::now() + kRetryPause >= retry_until) break;
    std::this_thread::sleep_for(kRetryPause);
  }
  if (mismatch) return InvalidArgumentError("proposed state root is wrong");
  std::string why;
  for (PoliticianClient* p : r.sample) {
    const auto it = why_not.find(p);
    why += "; " + p->address() + ": " +
           (it != why_not.end() ? it->second
            : asked_at.count(p) ? "no answer in time"
                                : "not asked");
  }
  return UnavailableError("no politician in the sample could execute the body" + why);
}

std::optional<RequestSigner> Citizen::ExecuteSigner(const Round& r) const {
  if (r.height_member) return RequestSigner{options_.keys, r.my_identity, r.credential};
  // Per-step committees: a soft member of the player's current period. Never with a cert
  // ticket: showing it to a politician before the cert vote would let a malicious one learn
  // the cert committee early, which the cross-step fork bound forbids (thresholds.h); cert
  // members vote on the soft quorum instead (Params::cert_on_soft_quorum).
  if (!agreement_ || agreement_height_ != r.h) return std::nullopt;
  const uint32_t period = agreement_->period();
  if (auto ticket = agreement_->VoteTicket(period, agreement::Step::kSoft)) {
    return RequestSigner{options_.keys, r.my_identity, *ticket, period,
                         static_cast<uint8_t>(agreement::Step::kSoft)};
  }
  return std::nullopt;
}

Result<Hash256> Citizen::CheckExecution(const ExecuteReply& reply,
                                        const std::vector<Hash256>& pools, PoliticianClient* from,
                                        const std::vector<const Pool*>& held) {
  const std::optional<ExecutionClaim> claim = SignedClaim(reply, pools, from);
  if (!claim) return InvalidArgumentError("execution's signature is not its politician's");
  if (static_cast<size_t>(reply.pools_size()) != pools.size()) {
    return InvalidArgumentError("execution returned the wrong number of pools");
  }
  std::vector<LedgerTx> txs;
  // What this citizen executed, pool by pool (the reply's or its own copy): the evidence of a
  // wrong execution must carry the pools left out of the reply too (until session 27 it
  // carried the reply's empty ones, and every catch by a member holding the pools failed "does
  // not carry the executed pools"). Pointers: copied only if there is evidence to build.
  std::vector<const Pool*> executed;
  for (size_t i = 0; i < pools.size(); ++i) {
    // A pool the reply left out (an empty Pool: no commitment, no transactions) is the one
    // this citizen holds; an empty Pool in place of one it does not hold fails the hash check
    // below.
    const Pool& sent = reply.pools(static_cast<int>(i));
    const bool left_out = sent.commitment().empty() && sent.txs_size() == 0;
    const Pool& data = left_out && i < held.size() && held[i] != nullptr ? *held[i] : sent;
    std::vector<LedgerTx> pool;
    for (const std::string& t : data.txs()) {
      TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
      pool.push_back(std::move(tx));
    }
    if (PoolHash(pool) != pools[i]) return InvalidArgumentError("pool does not match its hash");
    txs.insert(txs.end(), pool.begin(), pool.end());
    executed.push_back(&data);
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
      ValidationSampleFor(options_.keys, latest_.height + 1, pools, txs.size(),
                          ParamsAt(options_.genesis, latest_).validation_sample);
  CryptoPolicy policy{.claimed_failures = &claimed, .verify = [&](size_t i) { return sample[i]; }};
  const BlockContext ctx{.height = latest_.height + 1, .prev_seed = latest_.seed};
  auto outcome =
      ApplyBlock(ProofLookup(proof, latest_.state_root), txs, ctx, *options_.apps, policy);
  // PERMISSION_DENIED: a sampled signature contradicts the politician's claim (its signed lie).
  if (outcome.status().code() == StatusCode::kPermissionDenied) {
    NoteWrongExecution(*claim, executed, reply);
  }
  TESSERA_RETURN_IF_ERROR(outcome.status());
  TESSERA_ASSIGN_OR_RETURN(Hash256 root, proof.RootAfter(latest_.state_root, outcome->updates));
  // Its claimed root is wrong (ours is from the proof): a signed lie too.
  const bool wrong_root = FromBytes(reply.new_root()) != root;
  if (wrong_root) NoteWrongExecution(*claim, executed, reply);
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.txs_validated += txs.size();
  stats_.signatures_checked += outcome->crypto_checked;
  if (wrong_root) ++stats_.bad_politician_answers;
  return root;
}

Status Citizen::Validate(Round& r, const BlockHeader& proposal) {
  ScopedSpend spend(&r.timing.validate_ms);
  // Every pool eligible, every required pool present: a proposal that censors a pool the
  // honest members witnessed (the empty block included) is invalid (pool_availability.h).
  TESSERA_RETURN_IF_ERROR(
      CheckBody(proposal.pool_hashes, TallyWitnesses(r.witnesses, options_.genesis)));
  if (checked_height_ != r.h) {
    checked_bodies_.clear();
    checked_height_ = r.h;
  }
  auto checked = checked_bodies_.find(proposal.pool_hashes);
  if (checked != checked_bodies_.end() && checked->second.first == proposal.state_root) {
    bodies_[BlockHash(proposal)] = checked->second.second;
    return Status::Ok();
  }
  TESSERA_ASSIGN_OR_RETURN(
      auto executed, ExecuteHedged(r, proposal.pool_hashes, proposal.state_root, milliseconds(0)));
  checked_bodies_[proposal.pool_hashes] = {executed.second, executed.first};
  bodies_[BlockHash(proposal)] = std::move(executed.first);
  return Status::Ok();
}

Result<BlockHeader> Citizen::BuildProposal(Round& r, const Ticket& proposer) {
  const PoolTally tally = TallyWitnesses(r.witnesses, options_.genesis);
  const auto fetch_start = Clock::now();
  FetchPools(r, tally.eligible);
  const auto fetched = Clock::now();
  // Every eligible pool this citizen could download (so some politician can be fed it), and
  // every required one whatever happens: without those the proposal is invalid anyway.
  std::vector<Hash256> full, required;
  for (const Hash256& ph : tally.eligible) {
    if (r.pool_data.count(ph) || tally.required.count(ph)) full.push_back(ph);
    if (tally.required.count(ph)) required.push_back(ph);
  }
  BlockHeader h;
  h.height = r.h;
  h.prev_hash = BlockHash(latest_);
  h.seed = NextSeed(latest_.seed, proposer.output);
  h.proposer = options_.keys.public_key();
  h.proposer_credential = proposer.proof;
  SetRegistrations(options_.genesis, latest_, r.registrations, &h);
  // The full body if some politician can execute it, else only the required pools (the
  // empty block when none is required).
  std::vector<std::vector<Hash256>> bodies{full};
  if (required != full) bodies.push_back(required);
  Status last = UnavailableError("no body");
  for (const std::vector<Hash256>& body : bodies) {
    auto executed =
        ExecuteHedged(r, body, std::nullopt, milliseconds(options_.timing.round_timeout_ms / 4));
    if (executed.status().code() == StatusCode::kAborted) return executed.status();
    if (!executed.ok()) {
      last = executed.status();
      continue;
    }
    h.pool_hashes = body;
    h.state_root = executed->second;
    spdlog::info("citizen: body of block {}: {} pools fetched in {} ms, executed in {} ms", r.h,
                 body.size(),
                 std::chrono::duration_cast<milliseconds>(fetched - fetch_start).count(),
                 std::chrono::duration_cast<milliseconds>(Clock::now() - fetched).count());
    return h;
  }
  return UnavailableError("no politician could execute a body; the last: " + last.ToString());
}

Result<BlockHeader> Citizen::BuildEmptyProposal(Round& r, const Ticket& proposer) {
  BlockHeader h;
  h.height = r.h;
  h.prev_hash = BlockHash(latest_);
  h.seed = NextSeed(latest_.seed, proposer.output);
  h.proposer = options_.keys.public_key();
  h.proposer_credential = proposer.proof;
  SetRegistrations(options_.genesis, latest_, r.registrations, &h);
  for (PoliticianClient* p : r.sample) {
    const RequestSigner signer{options_.keys, r.my_identity, r.credential};  // height member
    auto reply = p->Execute(r.h, {}, &traffic_, &signer);
    if (!reply.ok()) continue;
    auto root = CheckExecution(*reply, {}, p);
    if (!root.ok()) continue;
    h.state_root = *root;
    return h;
  }
  return UnavailableError("no politician could execute the empty block");
}

void Citizen::PlayRound(uint64_t h, const Ticket& ticket, uint32_t period,
                        const std::atomic<bool>& stop) {
  Round r;
  r.seen = evidence_items_;  // listed again every round; downloaded once (ConsiderEvidence)
  r.h = h;
  r.period = period;
  bodies_.clear();
  r.sample = SafeSample();
  listener_->Listen(h, r.sample);
  struct StopListening {  // however the round ends: no listings between rounds
    RoundListener* listener;
    ~StopListening() { listener->Stop(); }
  } stop_listening{listener_.get()};
  r.my_identity = EncodeIdentity(options_.identity);
  r.credential = ticket.proof;
  r.height_member = ticket.selected;
  const bool per_step = options_.genesis.vote_committees == VoteCommittees::kPerStep;
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
  if (!silent && r.height_member) {
    WitnessList w;
    w.height = h;
    w.credential = ticket.proof;
    w.entries = WitnessPools(r);
    r.own_witnessed = w.entries;
    SignWitnessList(w, options_.keys);
    PostAll(r, item_of(EncodeWitnessList(w)));
  }

  // 2-4. BA* (citizen_agreement.h): propose when our ticket for the period wins, soft, cert
  // and next votes from the player, journaled before they are posted.
  {
    if (agreement_height_ != h || !agreement_) {
      const uint64_t now = NowMs();
      agreement::Params params{
          .threshold = ParamsAt(options_.genesis, latest_).cert_threshold,
          .filter_ms = static_cast<uint64_t>(t.witness_ms + t.proposal_ms),
          .next_ms = static_cast<uint64_t>(t.next_vote_deadline_ms()),
          .resend_ms = static_cast<uint64_t>(std::max(t.round_timeout_ms / 4, 500)),
          .recovery = t.recovery,
      };
      // Per-step committees: a next step whose committee was short is repeated with a fresh
      // one (player.h), half a next deadline apart (the simulation's ratio).
      // A cert member votes on the soft quorum, without executing: Execute takes soft tickets
      // only, so no cert ticket is shown before its cert vote (player.h).
      if (per_step) {
        params.next_repeat_ms = params.next_ms / 2;
        params.cert_on_soft_quorum = true;
      }
      agreement_ = std::make_unique<CitizenAgreement>(
          CitizenAgreementConfig{
              .params = params,
              .height = h,
              .keys = &options_.keys,
              .credential = ticket.proof,
              .vote_ticket = per_step ? MakeVoteTickets(&options_.keys, h, latest_.seed,
                                                        SortitionAt(options_.genesis, latest_))
                                      : VoteTicketFn(),
              .identity = r.my_identity,
              .journal = journal_ ? &*journal_ : nullptr,
              .fault = options_.fault,
              .proposal_grace_ms = static_cast<uint64_t>(t.proposal_ms),
              .announced_proposal_wait_ms = std::max<uint64_t>(t.proposal_ms, params.next_ms / 4),
              .better_proposal_wait_ms = params.next_ms / 2,
              .silent_period_ms = std::max<uint64_t>(2 * t.proposal_ms, params.next_ms / 4)},
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
    // Proposers come from the height's committee (their Execute calls use its ticket).
    if (silent || !r.height_member || !ba.FreshProposalsWanted() || proposed_periods_.count(tp)) {
      return;
    }
    // A replaying adversary proposes at once with its winning ticket of any period.
    std::optional<Ticket> win;
    uint32_t win_period = tp;
    for (uint32_t q = 0; q < kMaxProposerPeriods; ++q) {
      if (fault != CitizenFault::kReplayTicket && q != tp) continue;
      auto d = Draw(options_.keys, Role::kProposer, h, ProposerSeed(latest_.seed, q),
                    ProposerParams(SortitionAt(options_.genesis, latest_), q));
      if (d.ok() && d->selected) {
        win = *d;
        win_period = q;
        break;
      }
    }
    proposed_periods_.insert(tp);
    if (!win) return;
    // Announce the ticket before building: members then wait for this proposal, and no
    // longer, before they soft-vote (citizen_agreement.h, "Soft-vote timing").
    PostAll(r, item_of(EncodeProposerTicket({.height = h,
                                             .period = win_period,
                                             .proposer = options_.keys.public_key(),
                                             .credential = win->proof})));
    // T_soft witness lists before building: what makes an honest body cover every pool a
    // validator may find required (pool_availability.h); and every pool whose data this
    // proposer checked eligible, so that the body carries them rather than fewer or none.
    // Both up to a quarter of the round: the proposal must still reach the members before
    // their soft votes (citizen_agreement.h, "Soft-vote timing").
    const auto wait_start = Clock::now();
    poll_until(Clock::now() + ms(std::max(3 * t.witness_ms, t.round_timeout_ms / 4)), [&] {
      if (r.witnesses.size() < ParamsAt(options_.genesis, latest_).soft_threshold) return false;
      return PoolsAwaitingEligibility(r.own_witnessed,
                                      TallyWitnesses(r.witnesses, options_.genesis))
          .empty();
    });
    std::vector<BlockHeader> headers;
    ScopedSpend spend(&r.timing.propose_ms);
    if (fault != CitizenFault::kProposeEmpty) {
      const auto build_start = Clock::now();
      auto header = BuildProposal(r, *win);
      spdlog::info(
          "citizen: proposal for block {} period {} built in {} ms ({} witness lists, {} ms "
          "waited for them {} ms into the round)",
          h, tp, std::chrono::duration_cast<milliseconds>(Clock::now() - build_start).count(),
          r.witnesses.size(),
          std::chrono::duration_cast<milliseconds>(build_start - wait_start).count(),
          std::chrono::duration_cast<milliseconds>(wait_start - start).count());
      if (header.ok()) {
        headers.push_back(*header);
      } else {
        spdlog::warn("citizen: no proposal for block {}: {}", h, header.status().ToString());
      }
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
    for (const auto& [period, beta] : r.proposer_tickets) ba.OnProposerTicket(period, beta, now);
    r.proposer_tickets.clear();
    for (const auto& [value, p] : r.proposals) {
      if (r.fed.insert(value).second) ba.OnProposal(value, p.period, p.beta, now);
    }
    for (const Hash256& value : ba.WantValidation()) {
      auto it = r.proposals.find(value);
      if (it == r.proposals.end()) continue;  // the header has not reached us yet
      if (!it->second.verdict) {
        // Per-step committees: only a soft member of this period may execute; the others'
        // votes go without a verdict (a cert member's on the soft quorum, player.h).
        if (!ExecuteSigner(r)) break;
        Status s = Validate(r, it->second.header);
        if (s.code() == StatusCode::kUnavailable) {  // ask again later; said once a round
          if (!std::exchange(r.told_unvalidated, true)) {
            spdlog::warn("citizen: cannot validate a proposal for block {} yet: {}", h,
                         s.ToString());
          }
          continue;
        }
        if (s.code() == StatusCode::kAborted) break;  // the height is committed
        it->second.verdict = s;
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(stats_mu_);
          ++stats_.rejected_proposals;
        }
      }
      ba.SetVerdict(value, it->second.verdict->ok(), now);
    }
    if (r.committed_at) break;  // learned while validating (Validate: ABORTED)
    auto items = ba.Step(now);
    if (!items.ok()) {
      journal_failed_ = true;
      spdlog::error("citizen: cannot persist votes, not voting: {}", items.status().ToString());
      return;
    }
    auto since_start = [&] {
      return std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    };
    if (r.timing.first_proposal < 0 && !r.proposals.empty()) {
      r.timing.first_proposal = since_start();
    }
    for (const RoundItem& item : *items) {
      auto v = DecodeVote(AsBytes(item.payload()));
      if (v.ok() && v->step == VoteStep::kCert && !cert_voted_.count(h)) {
        cert_voted_[h] = v->value;
      }
      if (v.ok() && v->step == VoteStep::kSoft && r.timing.soft < 0) r.timing.soft = since_start();
      if (v.ok() && v->step == VoteStep::kCert && r.timing.cert < 0) r.timing.cert = since_start();
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
  spdlog::info(
      "citizen: round for block {} {} after {} ms: first proposal {} ms, soft vote {} ms, cert "
      "vote {} ms; {} polls {:.0f} ms, {} posts {:.0f} ms, validation {:.0f} ms, proposing "
      "{:.0f} ms; of the polls, items {:.0f} ms, block fetch {:.0f} ms",
      h, r.committed_at ? "committed" : "ended",
      std::chrono::duration_cast<milliseconds>(Clock::now() - start).count(),
      r.timing.first_proposal, r.timing.soft, r.timing.cert, r.timing.polls, r.timing.poll_ms,
      r.timing.posts, r.timing.post_ms, r.timing.validate_ms, r.timing.propose_ms,
      r.timing.items_ms, r.timing.sync_ms);
  if (!r.committed_at && !stop.load()) {
    size_t valid_proposals = 0;
    for (const auto& [v, p] : r.proposals) valid_proposals += p.verdict && p.verdict->ok();
    spdlog::warn(
        "citizen: round for block {} (BA* period {}) timed out: {} witness lists, {} pools held, "
        "{} proposals ({} valid); {}",
        h, ba.period(), r.witnesses.size(), r.pool_data.size(), r.proposals.size(), valid_proposals,
        ba.DebugString());
  }
  cert_voted_.erase(cert_voted_.begin(), cert_voted_.lower_bound(latest_.height));
  if (journal_ && !journal_failed_) {
    Status s = journal_->PruneBelow(latest_.height);
    if (!s.ok()) spdlog::warn("citizen: vote journal prune: {}", s.ToString());
  }
}

}  // namespace tessera::ledger::net
