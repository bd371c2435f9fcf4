// A whole Blockene network on loopback, from one TOML config: N politician processes, M
// citizens hosted in citizen-daemon processes, a load generator, optional adversaries and a
// kill -9 fault, and at the end an independent audit of what was committed.
//
// Config (every key optional; defaults in LocalnetConfig):
//   [network]   politicians, citizens, citizens_per_process, committee_size, proposers,
//               witness_threshold, soft_threshold, cert_threshold (0 = derived, see below),
//               safe_sample (0 = all politicians), max_pool_txs, registration_delay, accounts,
//               balance, late_citizens, register_at, validation_sample (fraction of
//               signatures each citizen verifies itself; default 1), vote_committees
//               ("per-height", the default, or "per-step": genesis.h VoteCommittees), key_seed (0:
//               fresh random keys; otherwise deterministic keys, so runs are reproducible),
//               keep_versions (state versions each politician keeps; default 64),
//               target_round_s (0 = BudgetTargetRoundS below), backlog_pools and
//               waiting_pools (politicians' back-pressure, block_budget.h; waiting_pools 0:
//               the total bound only), citizen_shared_checks (default true: the citizens of
//               a daemon verify each ticket and signature once between them; false: each
//               for itself, as phones would, citizen_daemon.h share_checks)
//   [apps.<name>] copied into the genesis file: the applications the chain runs (e.g. reviews)
//   [load]      rate (offered tx/s), duration_s, blocks (stop after this many blocks; 0 =
//               duration), double_spend_fraction, fanout (politicians each transfer is sent
//               to), threads (load generator threads, load_generator.h; default 4)
//   [adversary] politicians (fraction malicious), politician_behaviours (list of drop, delay,
//               withhold, stale, wrong, equivocate, forge, withhold_data, slow_execute,
//               unresponsive; cycled over the malicious ones), citizens
//               (fraction malicious), citizen_behaviours (list of silent, inconsistent)
//   [fault]     kill_politician (index, -1 = none), kill_at_block, restart_after_ms,
//               stop_politician (index, -1 = none: SIGSTOP'd at stop_at_block, SIGCONT'd
//               when the load stops), split_proposals and recovery (test switches that
//               force and disable BA* recovery, citizen.h CitizenTiming)
//   [timing]    poll_ms, witness_ms, proposal_ms, round_timeout_ms, round_wait_ms (the
//               long-poll of round listings, round_listener.h), follow_wait_ms and
//               certify_every (compact following, chain_follower.h)
// Derived thresholds for a committee of expected size C: T_cert = T_soft = floor(2C/3) + 1
// and T_w = floor(C/4) + 1 (docs/ledger-network.md explains the choice).
//
// The audit (after the load stops) replays every certified block from genesis with the shared
// state transition, checking each certificate and state root; checks that every honest
// politician holds the same header at every height; that every honest citizen's head is on
// that chain; that balances sum to the genesis total; that no (sender, nonce) was ever
// applied twice; and that every honest politician -- the restarted one included -- serves
// state proofs that verify against the certified root and match the replay.
#pragma once

#include <atomic>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "ledger/net/citizen.h"
#include "ledger/net/round_timeline.h"

namespace tessera::ledger::net {

struct LocalnetConfig {
  uint32_t politicians = 5;
  uint32_t citizens = 8;
  uint32_t citizens_per_process = 16;
  bool citizen_shared_checks = true;  // CitizenDaemonOptions::share_checks
  uint32_t committee_size = 0;        // 0 = every citizen
  uint32_t proposers = 2;
  uint32_t witness_threshold = 0, soft_threshold = 0, cert_threshold = 0;
  uint32_t safe_sample = 0;
  uint32_t max_pool_txs = 2000;
  uint32_t registration_delay = 2;
  uint32_t accounts = 200;
  uint64_t balance = 1000000;
  // The last `late_citizens` citizens are registered at block `register_at` instead of at
  // genesis: they may sign certificates only from register_at + registration_delay on.
  uint32_t late_citizens = 0;
  uint64_t register_at = 2;
  double validation_sample = 1.0;
  VoteCommittees vote_committees = VoteCommittees::kPerHeight;
  uint32_t key_seed = 0;
  uint32_t keep_versions = 64;
  double target_round_s = 0;  // 0: BudgetTargetRoundS
  double backlog_pools = 2;
  double waiting_pools = 1;
  // The politicians' and citizen daemons' spdlog level (their logs under out/logs): "warn"
  // keeps long runs quiet; "info" logs every commit with its duration and block size.
  std::string log_level = "warn";
  std::vector<AppParams> apps;

  double rate = 50;
  double duration_s = 20;
  uint64_t blocks = 0;
  double double_spend_fraction = 0.05;
  uint32_t fanout = 2;
  uint32_t load_threads = 4;

  double malicious_politicians = 0;
  std::vector<std::string> politician_behaviours{"withhold", "wrong", "equivocate",
                                                 "stale",    "drop",  "delay"};
  double malicious_citizens = 0;
  std::vector<std::string> citizen_behaviours{"inconsistent", "silent"};

  int kill_politician = -1;
  uint64_t kill_at_block = 2;
  int restart_after_ms = 1000;
  // SIGSTOP this politician (-1 = none) once block stop_at_block is committed, and SIGCONT it
  // when the load stops: it is audited like every honest politician, after catching up.
  int stop_politician = -1;
  uint64_t stop_at_block = 2;

  CitizenTiming timing;
};

Result<LocalnetConfig> ParseLocalnetConfig(const Config& config);

// The politicians' block-budget target (block_budget.h) in seconds: target_round_s if set,
// else 0.6 x the citizens' BA* next-vote deadline (max(round_timeout / 2, 2 x (witness_ms +
// proposal_ms)), citizen.cc), so that a round 1.5x slower than the target still ends within
// period 0. A round past that deadline costs the deadline plus a second period, twice the
// mean block interval at committee 16 on this box: the slow round of every 2x-load run's p99
// (docs/ledger-engine.md, "2x load, sixth session"). It used to be half the round timeout,
// i.e. the deadline itself.
double BudgetTargetRoundS(const LocalnetConfig& cfg);

// The key of citizen `index` of a network with `key_seed` != 0 (the deterministic keys of
// LocalnetConfig::key_seed), e.g. for a test that picks a seed by its committee draws.
KeyPair LocalnetCitizenKey(uint32_t key_seed, uint32_t index);

struct LocalnetReport {
  uint64_t blocks = 0;
  uint64_t committed_txs = 0;
  // Load generator counts (load_generator.h): offered = submitted + busy + idle_misses +
  // rejected_submissions.
  uint64_t offered_txs = 0;
  uint64_t submitted_txs = 0;
  uint64_t busy_submissions = 0;    // turned away by full mempools (RESOURCE_EXHAUSTED)
  uint64_t resent_submissions = 0;  // waited too long and sent again (not part of offered)
  uint64_t busy_answers = 0;        // RESOURCE_EXHAUSTED answers over all the load's calls
  uint64_t idle_misses = 0;         // no idle account to send from
  uint64_t rejected_submissions = 0;
  double seconds = 0;   // from the first submission to the last committed block
  double tx_per_s = 0;  // committed
  // Committed in the blocks after the first, over the time from the first block to the last.
  double steady_tx_per_s = 0;
  double offered_tx_per_s = 0, submitted_tx_per_s = 0;  // over the load's duration
  // From each committed transfer's first submission (not a resend) to the auditor seeing its
  // block; the breakdown splits it into stages (round_timeline.h).
  double latency_p50_s = 0, latency_p90_s = 0, latency_p99_s = 0, latency_max_s = 0;
  LatencyBreakdown latency_breakdown;
  double block_interval_s = 0;
  uint64_t committee_rounds = 0;  // summed over honest citizens
  double citizen_bytes_up_per_block = 0, citizen_bytes_down_per_block = 0;
  // Split: a member's bytes per committee block (its following traffic left out), and a
  // non-member's bytes per block it followed.
  double citizen_member_bytes_per_block = 0, citizen_nonmember_bytes_per_block = 0;
  double citizen_cpu_ms_per_block = 0;
  // CPU by role over the whole run (user + system, all threads): the politician processes,
  // the citizen daemons, and this launcher (load generator and the auditor's replay), and
  // each per committed transfer.
  double cpu_s_politicians = 0, cpu_s_citizens = 0, cpu_s_launcher = 0;
  // The malicious processes' part of the two above: on one machine the adversary's CPU is
  // taken from the honest processes, which a real deployment would not share.
  double cpu_s_malicious_politicians = 0, cpu_s_malicious_citizens = 0;
  double cpu_ms_per_tx_politicians = 0, cpu_ms_per_tx_citizens = 0, cpu_ms_per_tx_launcher = 0;
  uint64_t citizen_storage_bytes = 0;
  double txs_per_block = 0;
  uint64_t honest_politicians = 0, malicious_politicians = 0;
  uint64_t honest_citizens = 0, malicious_citizens = 0;
  bool politicians_agree = false;
  uint64_t forks = 0;  // honest politicians holding a block the replay does not (each once)
  uint64_t invalid_blocks = 0;  // blocks failing certificate or state-root replay
  bool citizens_agree = false;
  bool balances_conserved = false;
  uint64_t double_spend_attempts = 0;
  uint64_t double_spends_committed = 0;
  bool proofs_ok = false;  // every honest politician's proofs verify and match the replay
  bool restarted = false, restarted_caught_up = false, restarted_proofs_ok = false;
  uint64_t rejected_proposals = 0, bad_politician_answers = 0;
  // Sampled validation, summed over honest citizens: transactions re-executed, and how many
  // of their signatures the citizens verified themselves.
  uint64_t txs_validated = 0, signatures_checked = 0;
  // Round listing calls of the honest citizens (GetRound, long-polled: round_listener.h).
  uint64_t citizen_round_listings = 0;
  // The most politicians in one safe sample any honest citizen drew (the genesis safe_sample
  // k, or all politicians where k is larger; citizen.h CitizenStats::largest_sample).
  uint64_t citizen_largest_sample = 0;
  // Curve work of the honest citizen daemons (processes, all their citizens): Ed25519 and VRF
  // verifications computed, VRF proofs made; with the per-op costs of ledger_bench they split
  // cpu_s_citizens by component (docs/ledger-engine.md, committee 64).
  uint64_t citizen_ed25519_verifications = 0, citizen_vrf_verifications = 0;
  uint64_t citizen_vrf_proofs = 0;
  uint64_t app_txs_applied = 0;        // application transactions in the audited chain
  uint64_t late_first_signed = 0;      // first block signed by a late-registered citizen
  uint64_t late_signed_too_early = 0;  // signatures of late citizens before eligibility
  // Registration on the chain (registration.h), as the auditor's replay saw it: citizens
  // registered by blocks, and the live population and T_cert the last block was checked with.
  uint64_t registered_on_chain = 0;
  uint64_t last_block_population = 0;
  uint64_t last_block_cert_threshold = 0;
  // BA*: blocks certified in a period above 0 (their height needed recovery), highest period.
  uint64_t recovered_blocks = 0, max_period = 0;
  // Evidence and blacklisting (blacklist.h), at the end of the run, over honest citizens:
  // (citizen, politician) pairs blacklisted with the politician malicious / honest (the
  // latter must stay 0), and evidence the citizens refused as forged or malformed.
  uint64_t blacklisted_malicious = 0, blacklisted_honest = 0, evidence_refused = 0;
  // blacklisted_by[p]: how many honest citizens hold politician p blacklisted at the end.
  std::vector<uint64_t> blacklisted_by;
  // The honest citizens' last warnings, errors and round summaries (at most 40 lines, each
  // after its log file's name), for a failed check's message: a test removes the logs of a
  // run that completed. Not part of ToJson.
  std::string log_digest;

  std::string ToJson() const;
};

// Runs the network under `out_dir` (keys, genesis.toml, data, logs, report.json) with the
// binaries of `bin_dir`, printing a progress line per second to `progress`. Once every
// process is started it writes `out_dir/ready` (for tools that use the running network). It
// stops after the configured duration or blocks, or as soon as `*stop` is set. Every process
// it starts is killed before it returns (and, through PR_SET_PDEATHSIG, if it dies).
Result<LocalnetReport> RunLocalnet(const LocalnetConfig& config,
                                   const std::filesystem::path& bin_dir,
                                   const std::filesystem::path& out_dir, std::ostream& progress,
                                   const std::atomic<bool>* stop = nullptr);

}  // namespace tessera::ledger::net
