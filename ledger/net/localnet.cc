#include "ledger/net/localnet.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iomanip>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "core/file.h"
#include "ledger/crypto/hash.h"
#include "ledger/crypto/key_file.h"
#include "ledger/net/chain_replay.h"
#include "ledger/net/citizen_daemon.h"
#include "ledger/net/client.h"
#include "ledger/net/load_generator.h"
#include "ledger/net/localnet_audit.h"
#include "ledger/net/process.h"
#include "ledger/net/registration.h"
#include "ledger/net/validation_sample.h"
#include "ledger/state/account.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::net {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr uint32_t kWalletAccounts = 4;  // accounts with key files under keys/

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

KeyPair AccountKeys(uint32_t i) {
  return KeyPair::FromSeed(Sha256("tessera/localnet/account/" + std::to_string(i)));
}

struct PoliticianProcess {
  std::unique_ptr<ChildProcess> process;
  std::vector<std::string> args;
  fs::path log;
  bool malicious = false;
  std::unique_ptr<PoliticianClient> client;
};

struct CitizenProcess {
  std::unique_ptr<ChildProcess> process;
  fs::path stats;
  bool malicious = false;
};

uint32_t OrDefault(uint32_t v, uint32_t fallback) { return v ? v : fallback; }

}  // namespace

Result<LocalnetReport> RunLocalnet(const LocalnetConfig& cfg, const fs::path& bin_dir,
                                   const fs::path& out_dir, std::ostream& progress,
                                   const std::atomic<bool>* stop) {
  fs::remove_all(out_dir);
  fs::create_directories(out_dir / "keys");
  fs::create_directories(out_dir / "logs");

  // ---- Keys, identities and the genesis file ----
  Genesis g;
  g.name = "localnet";
  // Fixed keys make the whole committee sequence reproducible (sortition depends only on keys
  // and seeds); a key_seed of 0 draws fresh keys.
  auto make_key = [&](const std::string& role, uint32_t i) {
    if (cfg.key_seed == 0) return KeyPair::Generate();
    return KeyPair::FromSeed(Sha256("tessera/localnet/" + std::to_string(cfg.key_seed) + "/" +
                                    role + "/" + std::to_string(i)));
  };
  KeyPair registrar = make_key("registrar", 0);
  g.registrar = registrar.public_key();
  const uint32_t committee = OrDefault(cfg.committee_size, cfg.citizens);
  // Late citizens are registered on the chain (registration.h), not at genesis.
  g.sortition.population = cfg.citizens - cfg.late_citizens;
  g.sortition.committee_size = committee;
  g.sortition.proposers = std::min(cfg.proposers, committee);
  g.sortition.seed_lookback = 1;
  // The threshold `ledger-thresholds` chooses for this committee (f = 0.25, 1e-9 per block);
  // small random committees cannot meet that budget, and fall back to the 2/3 rule.
  auto designed = DesignThreshold(g.sortition.population, committee);
  g.cert_threshold =
      OrDefault(cfg.cert_threshold,
                designed.ok() ? static_cast<uint32_t>(designed->threshold) : 2 * committee / 3 + 1);
  g.soft_threshold = OrDefault(cfg.soft_threshold, g.cert_threshold);
  g.witness_threshold = OrDefault(cfg.witness_threshold, committee / 4 + 1);
  g.registration_delay = cfg.registration_delay;
  g.safe_sample = OrDefault(cfg.safe_sample, cfg.politicians);
  g.max_pool_txs = cfg.max_pool_txs;
  g.validation_sample = cfg.validation_sample;
  g.apps = cfg.apps;
  std::vector<PoliticianProcess> pols(cfg.politicians);
  const uint32_t bad_pols =
      static_cast<uint32_t>(std::floor(cfg.malicious_politicians * cfg.politicians + 1e-9));
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    KeyPair k = make_key("politician", i);
    fs::path key = out_dir / "keys" / ("politician-" + std::to_string(i) + ".key");
    TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(key, k));
    TESSERA_ASSIGN_OR_RETURN(int port, FreeLoopbackPort());
    g.politicians.push_back({i, k.public_key(), "127.0.0.1:" + std::to_string(port)});
    pols[i].malicious = i < bad_pols;
    pols[i].args = {"--log-level",
                    cfg.log_level,
                    "--genesis",
                    (out_dir / "genesis.toml").string(),
                    "--id",
                    std::to_string(i),
                    "--key",
                    key.string(),
                    "--dir",
                    (out_dir / ("politician-" + std::to_string(i))).string(),
                    "--keep-versions",
                    std::to_string(cfg.keep_versions),
                    "--target-round-s",
                    std::to_string(cfg.target_round_s > 0 ? cfg.target_round_s
                                                          : cfg.timing.round_timeout_ms / 2000.0),
                    "--backlog-pools",
                    std::to_string(cfg.backlog_pools)};
    if (pols[i].malicious) {
      pols[i].args.push_back("--fault");
      pols[i].args.push_back(cfg.politician_behaviours[i % cfg.politician_behaviours.size()]);
    }
    pols[i].log = out_dir / "logs" / ("politician-" + std::to_string(i) + ".log");
  }
  for (uint32_t i = 0; i < cfg.citizens; ++i) {
    bool late = i + cfg.late_citizens >= cfg.citizens;
    TESSERA_RETURN_IF_ERROR(WriteCitizenFiles(out_dir / "keys", i, make_key("citizen", i),
                                              registrar, late ? cfg.register_at : 0));
  }
  // Key files for the first accounts, so that a wallet can spend from a running localnet; the
  // load generator does not send from them (when there are enough others), so a wallet's
  // nonce never races with it.
  for (uint32_t i = 0; i < kWalletAccounts && i < cfg.accounts; ++i) {
    fs::path prefix = out_dir / "keys" / ("account-" + std::to_string(i));
    TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(prefix.string() + ".key", AccountKeys(i)));
    TESSERA_RETURN_IF_ERROR(
        WritePublicKeyFile(prefix.string() + ".pub", AccountKeys(i).public_key()));
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < cfg.accounts; ++i) {
    g.accounts.push_back({AccountKeys(i).public_key(), cfg.balance});
    total += cfg.balance;
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "genesis.toml", GenesisToToml(g)));
  TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(out_dir / "keys" / "registrar.key", registrar));

  LocalnetReport report;
  report.malicious_politicians = bad_pols;
  report.honest_politicians = cfg.politicians - bad_pols;
  int follow = -1;  // an honest politician that is never killed: the auditor's source
  for (int i = static_cast<int>(cfg.politicians) - 1; i >= 0; --i) {
    if (!pols[i].malicious && i != cfg.kill_politician && i != cfg.stop_politician) {
      follow = i;
      break;
    }
  }
  if (follow < 0) return InvalidArgumentError("need one honest politician that is not killed");

  // ---- Start politicians, wait until they answer ----
  progress << "starting " << cfg.politicians << " politicians (" << bad_pols << " malicious) and "
           << cfg.citizens << " citizens, committee " << committee << ", T_cert "
           << g.cert_threshold << ", T_w " << g.witness_threshold << "\n";
  {
    const agreement::CommitteeChoice risk = ThresholdRisk(g);
    progress << "BA* threshold T = " << g.cert_threshold << " ("
             << (designed.ok() && g.cert_threshold == designed->threshold
                     ? "ledger-thresholds' choice"
                     : "2/3 rule or configured; no T meets 1e-9 here")
             << "): per block at f = 0.25, fork " << std::defaultfloat << risk.fork_per_block
             << ", stall " << risk.stall_per_block << "\n";
  }
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    pols[i].process = std::make_unique<ChildProcess>();
    TESSERA_RETURN_IF_ERROR(
        pols[i].process->Start(bin_dir / "ledger-politician", pols[i].args, pols[i].log));
    pols[i].client = std::make_unique<PoliticianClient>(g.politicians[i].address, 3000);
  }
  // A politician parses the genesis file and builds and stores the genesis tree before it
  // answers: five politicians with 1M accounts took ~3.8 min on the shared 2-core box at load
  // average ~70, so the wait grows with the account count (30 s + 0.5 ms per account).
  auto deadline = Clock::now() + std::chrono::seconds(30) +
                  std::chrono::microseconds(500) * static_cast<int64_t>(cfg.accounts);
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    while (!pols[i].client->GetStatus().ok()) {
      if (!pols[i].process->running()) {
        return UnavailableError("politician " + std::to_string(i) + " exited; see " +
                                pols[i].log.string());
      }
      if (Clock::now() > deadline) return DeadlineExceededError("politicians did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // The registrar posts the late citizens' registrations for block register_at.
  for (uint32_t i = cfg.citizens - cfg.late_citizens; i < cfg.citizens; ++i) {
    Identity id{.citizen = make_key("citizen", i).public_key(), .registered_at = cfg.register_at};
    SignIdentity(id, registrar);
    for (PoliticianProcess& p : pols) TESSERA_RETURN_IF_ERROR(PostRegistration(*p.client, id));
  }

  // ---- Start citizen daemons: the malicious citizens first, in their own processes ----
  const uint32_t bad_citizens =
      static_cast<uint32_t>(std::floor(cfg.malicious_citizens * cfg.citizens + 1e-9));
  report.malicious_citizens = bad_citizens;
  report.honest_citizens = cfg.citizens - bad_citizens;
  std::vector<CitizenProcess> daemons;
  auto spawn_citizens = [&](uint32_t first, uint32_t count, const std::string& fault) -> Status {
    CitizenProcess d;
    d.malicious = fault != "none";
    std::string name = "citizens-" + std::to_string(first);
    d.stats = out_dir / (name + ".json");
    d.process = std::make_unique<ChildProcess>();
    std::vector<std::string> args = {"--log-level",
                                     cfg.log_level,
                                     "--genesis",
                                     (out_dir / "genesis.toml").string(),
                                     "--keys",
                                     (out_dir / "keys").string(),
                                     "--first",
                                     std::to_string(first),
                                     "--count",
                                     std::to_string(count),
                                     "--fault",
                                     fault,
                                     "--stats",
                                     d.stats.string(),
                                     "--poll-ms",
                                     std::to_string(cfg.timing.poll_ms),
                                     "--witness-ms",
                                     std::to_string(cfg.timing.witness_ms),
                                     "--proposal-ms",
                                     std::to_string(cfg.timing.proposal_ms),
                                     "--round-timeout-ms",
                                     std::to_string(cfg.timing.round_timeout_ms),
                                     "--follow-wait-ms",
                                     std::to_string(cfg.timing.follow.wait_ms),
                                     "--certify-every",
                                     std::to_string(cfg.timing.follow.certify_every)};
    if (cfg.timing.split_proposals) args.push_back("--split-proposals");
    if (!cfg.timing.recovery) args.push_back("--no-recovery");
    TESSERA_RETURN_IF_ERROR(
        d.process->Start(bin_dir / "ledger-citizen", args, out_dir / "logs" / (name + ".log")));
    daemons.push_back(std::move(d));
    return Status::Ok();
  };
  for (uint32_t i = 0; i < bad_citizens; ++i) {
    TESSERA_RETURN_IF_ERROR(
        spawn_citizens(i, 1, cfg.citizen_behaviours[i % cfg.citizen_behaviours.size()]));
  }
  for (uint32_t i = bad_citizens; i < cfg.citizens; i += cfg.citizens_per_process) {
    TESSERA_RETURN_IF_ERROR(
        spawn_citizens(i, std::min(cfg.citizens_per_process, cfg.citizens - i), "none"));
  }

  // ---- Load generator and follower ----
  std::mutex mu;  // guards replay, latencies, block_times (the follower thread writes them)
  std::vector<double> latencies;
  std::vector<Clock::time_point> block_times;
  std::vector<size_t> block_load_txs;  // per block: the load generator's transfers in it
  ChainReplay replay(g);
  std::atomic<bool> stop_follow{false};
  std::atomic<uint64_t> invalid{0};
  std::vector<KeyPair> account_keys;
  for (uint32_t i = 0; i < cfg.accounts; ++i) account_keys.push_back(AccountKeys(i));
  std::vector<uint32_t> senders;
  for (uint32_t i = cfg.accounts >= 2 * kWalletAccounts ? kWalletAccounts : 0; i < cfg.accounts;
       ++i) {
    senders.push_back(i);
  }
  std::vector<std::string> addresses;
  for (const PoliticianInfo& p : g.politicians) {
    // Transactions are not sent to the politician that will be SIGSTOP'd, nor to
    // unresponsive ones: the load generator submits to one politician after another with a
    // 3 s deadline, and a client stuck on a stopped politician would measure the client, not
    // the chain.
    const bool unresponsive =
        pols[p.id].malicious &&
        cfg.politician_behaviours[p.id % cfg.politician_behaviours.size()] == "unresponsive";
    if (static_cast<int>(p.id) != cfg.stop_politician && !unresponsive) {
      addresses.push_back(p.address);
    }
  }
  LoadGenerator load({.rate = cfg.rate,
                      .threads = cfg.load_threads,
                      .fanout = cfg.fanout,
                      .double_spend_fraction = cfg.double_spend_fraction},
                     addresses, account_keys, senders);
  auto start = Clock::now();
  load.Start();
  bool killed = false, stopped = false;
  std::optional<Clock::time_point> restart_at;
  auto follow_once = [&]() {
    auto status = pols[follow].client->GetStatus();
    if (!status.ok()) return;
    while (replay.height() < status->height()) {
      auto block = pols[follow].client->GetBlock(replay.height() + 1);
      if (!block.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      auto applied = replay.Apply(*block);
      if (!applied.ok()) {
        ++invalid;
        progress << "audit: block " << replay.height() + 1
                 << " INVALID: " << applied.status().ToString() << "\n";
        return;
      }
      auto now = Clock::now();
      block_times.push_back(now);
      auto nonce_of = [&](const PublicKey& key) -> uint64_t {
        auto leaf = replay.tree().Get(AccountKey(key));
        return leaf ? DecodeAccount(*leaf)->nonce : 0;
      };
      const std::vector<double> block_latencies = load.OnBlock(*applied, nonce_of, now);
      latencies.insert(latencies.end(), block_latencies.begin(), block_latencies.end());
      block_load_txs.push_back(block_latencies.size());
      progress << "[" << std::fixed << std::setprecision(1) << Seconds(now - start) << "s] block "
               << replay.height() << ": " << applied->size() << " transfers\n";
    }
  };
  std::thread follower([&] {
    while (!stop_follow.load()) {
      follow_once();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });

  // ---- Main loop: progress, the kill -9 fault, stop condition ----
  auto last_print = Clock::now();
  uint64_t last_blocks = 0;
  auto run_until = start + std::chrono::milliseconds(static_cast<int64_t>(cfg.duration_s * 1000));
  Status failure;
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "ready", "started\n"));
  while (Clock::now() < run_until && !(stop != nullptr && stop->load())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uint64_t height;
    size_t committed;
    {
      std::lock_guard<std::mutex> lock(mu);
      height = replay.height();
      committed = latencies.size();
    }
    if (cfg.kill_politician >= 0 && !killed && height >= cfg.kill_at_block) {
      pols[cfg.kill_politician].process->Kill9();
      killed = true;
      report.restarted = true;
      restart_at = Clock::now() + std::chrono::milliseconds(cfg.restart_after_ms);
      progress << "kill -9 politician " << cfg.kill_politician << " at block " << height << "\n";
    }
    if (cfg.stop_politician >= 0 && !stopped && height >= cfg.stop_at_block) {
      ::kill(pols[cfg.stop_politician].process->pid(), SIGSTOP);
      stopped = true;
      progress << "SIGSTOP politician " << cfg.stop_politician << " at block " << height << "\n";
    }
    if (restart_at && Clock::now() >= *restart_at) {
      PoliticianProcess& p = pols[cfg.kill_politician];
      p.process = std::make_unique<ChildProcess>();
      failure = p.process->Start(bin_dir / "ledger-politician", p.args, p.log);
      if (!failure.ok()) break;
      restart_at.reset();
      progress << "restarted politician " << cfg.kill_politician << "\n";
    }
    for (uint32_t i = 0; i < cfg.politicians; ++i) {
      if (!restart_at && !pols[i].process->running() && (int)i != cfg.kill_politician) {
        failure = UnavailableError("politician " + std::to_string(i) + " died; see " +
                                   pols[i].log.string());
      }
    }
    if (!failure.ok()) break;
    if (Clock::now() - last_print >= std::chrono::seconds(1)) {
      double t = Seconds(Clock::now() - start);
      LoadCounts c = load.counts();
      progress << "[" << std::fixed << std::setprecision(1) << t << "s] block " << height
               << "  committed " << committed << " tx (" << std::setprecision(1)
               << committed / std::max(t, 1e-9) << " tx/s)  offered " << c.offered << "  submitted "
               << c.submitted << "  busy " << c.busy << "  +" << height - last_blocks
               << " blocks\n";
      progress.flush();
      last_print = Clock::now();
      last_blocks = height;
    }
    if (cfg.blocks > 0 && height >= cfg.blocks) break;
  }
  const double load_seconds = Seconds(Clock::now() - start);
  if (stopped) ::kill(pols[cfg.stop_politician].process->pid(), SIGCONT);
  load.Stop();
  LocalnetReport by_role;  // CPU by role, read while every process is still running
  for (const PoliticianProcess& p : pols)
    by_role.cpu_s_politicians += ProcessCpuSeconds(p.process->pid());
  for (const CitizenProcess& d : daemons)
    by_role.cpu_s_citizens += ProcessCpuSeconds(d.process->pid());
  by_role.cpu_s_launcher = ProcessCpuSeconds(::getpid());
  for (CitizenProcess& d : daemons) d.process->Stop();
  stop_follow = true;
  follower.join();
  TESSERA_RETURN_IF_ERROR(failure);

  // ---- Audit (every other thread has stopped) ----
  // Catch up with the blocks certified by the last cert votes, and with every honest
  // citizen's head.
  uint64_t citizen_max = 0;
  for (const CitizenProcess& d : daemons) {
    auto text = ReadFile(d.stats);
    nlohmann::json doc = nlohmann::json::parse(text.ok() ? *text : "", nullptr, false);
    if (d.malicious || doc.is_discarded()) continue;
    for (const auto& c : doc["citizens"]) {
      citizen_max = std::max(citizen_max, c["height"].get<uint64_t>());
    }
  }
  for (int tries = 0; tries < 100; ++tries) {
    follow_once();
    if (replay.height() >= citizen_max) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const uint64_t H = replay.height();
  report.blocks = H;
  report.invalid_blocks = invalid.load();
  const LoadCounts counts = load.counts();
  report.offered_txs = counts.offered;
  report.submitted_txs = counts.submitted;
  report.busy_submissions = counts.busy;
  report.resent_submissions = counts.resent;
  report.idle_misses = counts.idle_miss;
  report.rejected_submissions = counts.rejected;
  report.offered_tx_per_s = counts.offered / std::max(load_seconds, 1e-9);
  report.submitted_tx_per_s = counts.submitted / std::max(load_seconds, 1e-9);
  report.committed_txs = latencies.size();
  report.double_spend_attempts = counts.double_spend_attempts;
  const std::optional<Clock::time_point> first_submit = load.first_submit();
  report.double_spends_committed = replay.double_applied();
  report.late_first_signed = replay.late_first();
  report.app_txs_applied = replay.app_applied();
  report.late_signed_too_early = replay.late_too_early();
  report.registered_on_chain = replay.registered_on_chain();
  report.last_block_population = replay.last_population();
  report.last_block_cert_threshold = replay.last_cert_threshold();
  report.recovered_blocks = replay.recovered_blocks();
  report.max_period = replay.max_period();
  if (!latencies.empty() && first_submit && !block_times.empty()) {
    std::sort(latencies.begin(), latencies.end());
    report.latency_p50_s = latencies[latencies.size() / 2];
    report.latency_p90_s = latencies[latencies.size() * 9 / 10];
    report.latency_p99_s = latencies[latencies.size() * 99 / 100];
    report.latency_max_s = latencies.back();
    report.seconds = Seconds(block_times.back() - *first_submit);
    report.tx_per_s = report.committed_txs / std::max(report.seconds, 1e-9);
  }
  {
    report.cpu_s_politicians = by_role.cpu_s_politicians;
    report.cpu_s_citizens = by_role.cpu_s_citizens;
    report.cpu_s_launcher = by_role.cpu_s_launcher;
    const double txs = std::max<double>(report.committed_txs, 1);
    report.cpu_ms_per_tx_politicians = by_role.cpu_s_politicians * 1000 / txs;
    report.cpu_ms_per_tx_citizens = by_role.cpu_s_citizens * 1000 / txs;
    report.cpu_ms_per_tx_launcher = by_role.cpu_s_launcher * 1000 / txs;
  }
  if (block_times.size() >= 2) {
    report.block_interval_s =
        Seconds(block_times.back() - block_times.front()) / (block_times.size() - 1);
    // Steady state: the blocks after the first over the time they took (the first block's
    // round starts with the chain, before the load has built up).
    size_t after_first = 0;
    for (size_t i = 1; i < block_load_txs.size(); ++i) after_first += block_load_txs[i];
    report.steady_tx_per_s =
        after_first / std::max(Seconds(block_times.back() - block_times.front()), 1e-9);
  }
  report.txs_per_block = H ? static_cast<double>(report.committed_txs) / H : 0;

  uint64_t sum = 0;
  bool accounts_decode = true;
  for (const Hash256& key : replay.accounts()) {
    auto leaf = replay.tree().Get(key);
    auto a = leaf ? DecodeAccount(*leaf) : Result<Account>(NotFoundError("missing account"));
    accounts_decode &= a.ok();
    if (a.ok()) sum += a->balance;
  }
  report.balances_conserved = accounts_decode && sum == total;

  // Every honest politician (the restarted one included) must reach H with the same blocks and
  // serve proofs that verify against the certified root and match the replay.
  std::vector<Hash256> probe;
  for (uint32_t i = 0; i < std::min<uint32_t>(cfg.accounts, 32); ++i) {
    probe.push_back(AccountKey(account_keys[i].public_key()));
  }
  std::vector<AuditedPolitician> audited;
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    if (pols[i].malicious) continue;
    audited.push_back({i, pols[i].client.get(), static_cast<int>(i) == cfg.kill_politician});
  }
  AuditPoliticians(audited, replay, probe, &report, progress);
  // Honest citizens: their heads must be on the audited chain; their costs per committee block.
  std::vector<CitizenStatsFile> stats;
  for (const CitizenProcess& d : daemons) stats.push_back({d.stats, d.malicious});
  std::vector<bool> malicious_politicians;
  for (const auto& p : pols) malicious_politicians.push_back(p.malicious);
  TESSERA_RETURN_IF_ERROR(AddCitizenStats(stats, replay, malicious_politicians, &report));
  for (PoliticianProcess& p : pols) p.process->Stop();
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "report.json", report.ToJson() + "\n"));
  return report;
}

}  // namespace tessera::ledger::net
