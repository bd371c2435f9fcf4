// A citizen: a light member that holds only its key, its registrar-signed identity and the
// latest certified block header, and does validation and consensus in per-block committees.
//
// For block h = latest + 1 the citizen draws its committee ticket on seed_{h-1}
// (sortition.h). If selected and eligible (identity.h) it plays one round, talking only to a
// safe sample of k politicians chosen at random for this round (never to other citizens):
//   1. witness: read the politicians' signed pool commitments, download each pool's data
//      from the sample (hedged_fetch.h) and post a signed witness list of the pools whose
//      data checked out (a politician seen with two different pools for h is left out:
//      equivocation; pool_availability.h);
//   2. propose, if its proposer ticket wins: the body is every pool witnessed by at least
//      T_w committee members that this citizen holds, and every pool witnessed by T_must
//      (and no rival pool of the same politician), in politician order; a proposal that
//      leaves out a pool witnessed by T_must members is invalid;
//      it asks a politician to execute the body, re-executes every transaction (transfers and
//      application transactions: nonce, balance, application rules) against a multi-proof on
//      the previous certified root, verifying a random fraction of the signatures itself
//      (the genesis validation_sample, raised to the sound fraction for the committee if it is
//      below it: validation_sample.h) and taking the politician's claim for the rest, recomputes
//      the new root from the proof (StateProof::RootAfter) and proposes the header;
//   3-4. BA* (citizen_agreement.h, ledger/agreement/player.h): soft vote for the valid
//      proposal of the current period with the lowest proposer VRF output ("valid" means the
//      same checks as in 2, done by this citizen with the execution of its own sample), cert
//      vote (with a block signature for the period) on a soft quorum for a value it validated,
//      next votes at the period's deadline and on late quorums; a next quorum ends a period,
//      so a split or proposer-less period moves on. Every vote is journaled and fsync'd before
//      it is posted, so a restarted citizen never votes twice in a (height, period, step);
//   5. wait for the certified block: a politician assembles T cert votes of one period into
//      the committee certificate; the citizen checks it (chain.h) and moves on.
// A citizen not on the committee just follows certified blocks. If a round stalls it is
// retried with a fresh sample; the BA* player of the height (its period and votes) carries
// over, so withheld or dropped messages delay progress but cannot change what gets certified.
#pragma once

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "core/status.h"
#include "ledger/agreement/vote_journal.h"
#include "ledger/net/blacklist.h"
#include "ledger/net/chain.h"
#include "ledger/net/chain_follower.h"
#include "ledger/net/citizen_agreement.h"
#include "ledger/net/client.h"
#include "ledger/net/execution_claim.h"
#include "ledger/net/faults.h"
#include "ledger/net/hedged_fetch.h"
#include "ledger/net/round_listener.h"

namespace tessera::ledger::net {

struct CitizenTiming {
  int poll_ms = 40;       // between reads of the sample
  int witness_ms = 300;   // collecting pool commitments before witnessing
  int proposal_ms = 400;  // collecting proposals before the soft vote
  // A round that has not committed is retried with a fresh sample (the BA* player and its
  // votes carry over); a BA* period's next-vote deadline is half of this.
  int round_timeout_ms = 8000;
  // A BA* period's next-vote deadline (agreement::Params::next_ms): half the round timeout,
  // and never shorter than two collection windows. The localnet's block budget aims below it
  // (BudgetTargetRoundS), so the one formula lives here.
  int next_vote_deadline_ms() const {
    return std::max(round_timeout_ms / 2, 2 * (witness_ms + proposal_ms));
  }
  // Round listings are long-polled (round_listener.h): a politician holds a listing up to
  // this long for a new item; listings of one politician are at least poll_ms apart. 0: the
  // politicians answer at once (a poll every poll_ms).
  int round_wait_ms = 0;
  FollowOptions follow;  // compact following while not on the committee
  // Test switches for forced BA* recovery over real processes (docs/ledger-network.md,
  // "Forced split"), never set in a real network:
  //  split_proposals: a network fault -- the citizen with index i sees only those period-0
  //    proposals whose block hash's first byte has the parity of i, so the honest members are
  //    cut into two halves that see different (or no) period-0 blocks and no period-0 value
  //    can gather a quorum; later periods' proposals reach everyone;
  //  recovery = false: the BA* player without next votes and periods (agreement::Params), to
  //    show that a split height then never commits.
  bool split_proposals = false;
  bool recovery = true;
};

struct CitizenOptions {
  Genesis genesis;
  KeyPair keys = KeyPair::Generate();
  Identity identity;
  // The applications of the chain (LoadApps(genesis)), shared by the citizens of a process.
  std::shared_ptr<const AppRegistry> apps = std::make_shared<AppRegistry>();
  CitizenFault fault = CitizenFault::kNone;
  CitizenTiming timing;
  uint64_t rng_seed = 1;
  uint32_t index = 0;  // the citizen's index in its network (CitizenTiming::split_proposals)
  // If set, the latest certified header is kept here (hex, rewritten atomically after every
  // verified block) and resumed from on start: with the key and identity files, this is all
  // a citizen stores.
  std::filesystem::path head_file;
  // If set, every BA* vote is appended here and fsync'd BEFORE it is posted, and the file is
  // read back on start (ledger/agreement/vote_journal.h): a restarted citizen never votes two
  // values in one (height, period, step). A journal that cannot be read or written stops this
  // citizen from voting (it still follows the chain).
  std::filesystem::path vote_journal;
};

struct CitizenStats {
  uint64_t height = 0;
  Hash256 head{};                 // hash of the latest certified header
  uint64_t committee_rounds = 0;  // blocks this citizen was on the committee of
  uint64_t blocks_followed = 0;
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;
  // The chain follower's traffic (up + down) while not on the committee, and the blocks
  // followed meanwhile: what following the chain costs a non-member. Only the follower's own
  // calls count: a member round's hedged calls still in flight when the round ends (an Execute
  // reply of ~1 MB at 6,000 transfers) land in the member's bytes, where they belong; counted
  // here they put one citizen's 1.19 MB on 4 blocks followed (session 26).
  uint64_t following_bytes = 0;
  uint64_t following_blocks = 0;
  uint64_t cpu_ns = 0;  // thread CPU time spent by this citizen
  uint64_t proposals = 0;
  uint64_t rejected_proposals = 0;  // proposals this citizen found invalid
  uint64_t bad_politician_answers = 0;
  uint64_t txs_validated = 0;       // transactions re-executed in validated executions
  uint64_t signatures_checked = 0;  // ... of which this citizen verified the signatures
  uint64_t round_listings = 0;      // round listing calls made (round_listener.h)
  // The most politicians in one safe sample this citizen drew (SafeSample): the genesis
  // safe_sample k, or all politicians where k is larger.
  uint64_t largest_sample = 0;
  // Evidence and blacklisting (blacklist.h): evidence this citizen refused (forged, or
  // malformed), and the politicians it has blacklisted at its next height.
  uint64_t evidence_refused = 0;
  std::vector<uint32_t> blacklisted;
};

class Citizen {
 public:
  // `politicians[i]` is the client of genesis politician i (shared between citizens).
  Citizen(CitizenOptions options, std::vector<std::shared_ptr<PoliticianClient>> politicians);

  // Follows the chain and serves on committees until `stop`. Runs on the caller's thread;
  // CPU time is measured on it.
  void Run(const std::atomic<bool>& stop);

  CitizenStats stats() const;
  const BlockHeader& latest() const { return latest_; }
  // The value of this citizen's first cert vote at `height`, if any (restored from the
  // journal; under BA* it may cert-vote other values in later periods).
  std::optional<Hash256> CertVote(uint64_t height) const;
  // False when a vote journal was asked for and cannot be used: the citizen does not cert-vote.
  bool may_cert_vote() const { return !journal_failed_; }

 private:
  struct Round;
  Status SyncTo(uint64_t target, PoliticianClient& source);
  void SaveHead();
  // Follows the chain (chain_follower.h): latest_ becomes the follower's tip, whose
  // certificate may not be checked yet. `wait`: long-poll one politician.
  bool TryAdvance(const std::vector<PoliticianClient*>& sample, bool wait = false);
  // Before acting on latest_ (a committee round): checks its certificate; false if none of
  // the sample certifies it (latest_ then goes back to the last checked head).
  bool CertifyHead();
  void PlayRound(uint64_t h, const Ticket& ticket, uint32_t period, const std::atomic<bool>& stop);
  void Poll(Round& r);
  // `p` says block r.h is certified: fetches and checks it (r.committed_at = p), or ignores p's
  // claims for the rest of the round (r.unreliable) if it cannot back this one.
  bool AcceptCommitClaim(Round& r, PoliticianClient* p);
  // `item`, downloaded from `from` (which a flood of its own commitments is counted against).
  void Process(Round& r, const RoundItem& item, PoliticianClient* from);
  // The genesis index of the politician whose client `p` is; nullopt for a client not ours.
  std::optional<uint32_t> IndexOf(const PoliticianClient* p) const;
  // Whether `p` is the client of the politician with genesis id `id`.
  bool IsPolitician(const PoliticianClient* p, uint32_t id) const;
  void PostAll(Round& r, const RoundItem& item);
  Status Validate(Round& r, const BlockHeader& proposal);
  Result<BlockHeader> BuildProposal(Round& r, const Ticket& proposer_ticket);
  Result<BlockHeader> BuildEmptyProposal(Round& r, const Ticket& proposer_ticket);  // faults
  // Data availability (pool_availability.h): the witness list's entries, for the pools whose
  // data this citizen downloaded; and the download itself, into the round's pool_data.
  std::vector<WitnessEntry> WitnessPools(Round& r);
  void FetchPools(Round& r, const std::vector<Hash256>& pools);
  // The body executed by the first politician of the sample whose execution checks out (and
  // reproduces `expected_root`, if given), hedged: the execution and the recomputed root.
  // While every politician refuses, the sample is asked again for up to `retry_for`. ABORTED:
  // a politician said block r.h is already committed, and backed it (r.committed_at is set).
  Result<std::pair<ExecuteReply, Hash256>> ExecuteHedged(
      Round& r, const std::vector<Hash256>& body, const std::optional<Hash256>& expected_root,
      std::chrono::milliseconds retry_for);
  // Who this citizen executes as in round `r`: the height's committee ticket, or with per-step
  // committees its soft or cert ticket of the player's current period; nullopt if neither.
  std::optional<RequestSigner> ExecuteSigner(const Round& r) const;
  // `from` answered `reply`: its signature over the claim must verify (execution_claim.h).
  // `held`, if not empty, has one entry per pool of the body: the pool this citizen holds
  // (checked against its hash when downloaded), which the reply may leave out, or nullptr.
  Result<Hash256> CheckExecution(const ExecuteReply& reply, const std::vector<Hash256>& pools,
                                 PoliticianClient* from, const std::vector<const Pool*>& held = {});
  // k politicians at random, blacklisted ones last (safe_sample.h: evidence never shrinks the
  // sample); Ranked() asks blacklisted ones last too.
  std::vector<PoliticianClient*> SafeSample();
  bool Blacklisted(PoliticianClient* p) const;  // at the next height
  // Evidence and blacklisting (citizen_evidence.cc). NoteCommitment: a verified pool
  // commitment of round `h`; if it contradicts one seen before from the same politician, the
  // politician is blacklisted and, when that is news, the evidence item to post is returned.
  // ConsiderEvidence: an evidence item read from a politician, verified before it is used.
  std::optional<RoundItem> NoteCommitment(const TxPoolCommitment& c);
  void ConsiderEvidence(const RoundItem& item);
  // Wrong executions (evidence.h, kind 2). SignedClaim: the claim of `from`'s reply to an
  // execution of `pools` at the next height, if its signature verifies. NoteWrongExecution:
  // a reply this citizen's check contradicted, with `pools` the transactions of every pool it
  // executed (the reply leaves out those the citizen holds: they come from its own copies); if
  // the full re-execution confirms the lie the politician is blacklisted and the evidence
  // queued for PostEvidence (after the hedged call).
  std::optional<ExecutionClaim> SignedClaim(const ExecuteReply& reply,
                                            const std::vector<Hash256>& pools,
                                            PoliticianClient* from) const;
  void NoteWrongExecution(const ExecutionClaim& claim, const std::vector<const Pool*>& pools,
                          const ExecuteReply& reply);
  void PostEvidence(Round& r);
  // The sample in the order hedged calls ask it: politicians not blacklisted first, then
  // those that answered this kind of call fast lately (`costs`; ties in random order), so that
  // a majority of slow politicians costs one hedge delay once rather than several per call.
  std::vector<PoliticianClient*> Ranked(const std::vector<PoliticianClient*>& sample,
                                        const LatencyRanking& costs);
  void UpdateStats();

  CitizenOptions options_;
  std::vector<std::shared_ptr<PoliticianClient>> politicians_;
  std::mt19937_64 rng_;
  BlockHeader latest_;
  ChainFollower follower_;
  TicketCache tickets_;

  std::map<uint64_t, Hash256> cert_voted_;  // height -> value: one cert vote per height, ever
  std::optional<agreement::VoteJournal> journal_;
  bool journal_failed_ = false;
  std::map<Hash256, ExecuteReply> bodies_;  // executions of validated proposals (this round)
  // Bodies this citizen checked at height checked_height_ (their pools -> the root its own
  // check of an execution gave, and that execution): another proposal of the height with the
  // same pools and root, in this period or a later one, is valid without a second execution
  // -- it would be the same execution, proof and signature sample (ValidationSampleFor
  // depends on the height and the pools). At committee 64 every transfer was validated 1.8x
  // per member: the proposers of a period mostly propose the same pools.
  uint64_t checked_height_ = 0;
  std::map<std::vector<Hash256>, std::pair<Hash256, ExecuteReply>> checked_bodies_;
  // The BA* player of the height being agreed (citizen_agreement.h); kept across the rounds
  // (retries with fresh samples) of one height.
  std::unique_ptr<CitizenAgreement> agreement_;
  uint64_t agreement_height_ = 0;
  std::set<uint32_t> proposed_periods_;  // proposer ticket periods this citizen proposed in
  uint64_t attempts_height_ = 0;         // the height of the rounds counted in attempts_
  uint32_t attempts_ = 0;                // rounds played at that height: the proposer period
  // How fast each politician answered lately (hedged_fetch.h), apart for reads and pool
  // downloads and for executions: a politician may serve pools in milliseconds and execute
  // in 15 s (`slow_execute`).
  LatencyRanking read_costs_, execute_costs_;
  uint64_t execute_calls_ = 0;  // ExecuteHedged calls: every kExploreEvery-th explores
  Blacklist blacklist_{options_.genesis, kBlacklistBlocks, options_.apps.get()};
  std::vector<RoundItem> evidence_to_post_;  // NoteWrongExecution -> PostEvidence
  // Round items of evidence already read (held or refused): a round lists them again, and
  // wrong-execution evidence may be up to kMaxEvidenceBytes, so each is downloaded once
  // (bounded: forgotten beyond kMaxEvidenceItems).
  std::set<Hash256> evidence_items_;
  static constexpr size_t kMaxEvidenceItems = 4096;
  // The first commitment seen per (height, politician), for NoteCommitment; heights below the
  // latest block are dropped.
  std::map<std::pair<uint64_t, uint32_t>, TxPoolCommitment> first_commitments_;
  Traffic traffic_;         // every call but the chain follower's
  Traffic follow_traffic_;  // the chain follower's calls (TryAdvance, CertifyHead)
  uint64_t cpu_start_ns_ = 0;
  mutable std::mutex stats_mu_;
  CitizenStats stats_;
  // The round's item listings (round_listener.h); destroyed before traffic_, which it counts
  // into.
  std::unique_ptr<RoundListener> listener_;
  // Last member: destroyed first, it waits for calls in flight that count into traffic_ and
  // follow_traffic_.
  std::unique_ptr<PoliticianCalls> calls_;
};

}  // namespace tessera::ledger::net
