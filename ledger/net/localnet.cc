#include "ledger/net/localnet.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <deque>
#include <functional>
#include <iomanip>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
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

// RunLocalnet, by purpose: the network's files (keys, identities, genesis), starting the
// politicians and the citizen daemons, the chain watch (the auditor's replay of every block
// as it commits, and the load's latencies), the run loop (progress and the kill -9 / SIGSTOP
// faults), and the report (load figures, CPU by role, the audit).

namespace tessera::ledger::net {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr uint32_t kWalletAccounts = 4;  // accounts with key files under keys/

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

KeyPair AccountKeys(uint32_t i) {
  return KeyPair::FromSeed(Sha256("tessera/localnet/account/" + std::to_string(i)));
}

uint32_t OrDefault(uint32_t v, uint32_t fallback) { return v ? v : fallback; }

struct PoliticianProcess {
  std::unique_ptr<ChildProcess> process;
  std::vector<std::string> args;
  fs::path log;
  fs::path timeline;  // its round timeline (round_timeline.h)
  bool malicious = false;
  std::unique_ptr<PoliticianClient> client;
};

struct CitizenProcess {
  std::unique_ptr<ChildProcess> process;
  fs::path stats;
  fs::path log;
  bool malicious = false;
};

// ---- The network's files ------------------------------------------------------------------

struct Network {
  Genesis g;
  bool designed_threshold = false;  // T_cert is ledger-thresholds' choice
  std::vector<PoliticianProcess> pols;
  uint32_t bad_pols = 0;
  uint64_t total_balance = 0;
  std::vector<KeyPair> account_keys;  // account i's keys (derived once: ~55 s at 1M accounts)
  std::vector<Identity> late_registrations;  // signed by the registrar, posted once running
};

// The politicians' command lines (not started yet) and their genesis entries.
Status PlanPoliticians(const LocalnetConfig& cfg, const fs::path& out_dir,
                       const std::function<KeyPair(const std::string&, uint32_t)>& make_key,
                       Network& net) {
  net.pols.resize(cfg.politicians);
  net.bad_pols =
      static_cast<uint32_t>(std::floor(cfg.malicious_politicians * cfg.politicians + 1e-9));
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    PoliticianProcess& p = net.pols[i];
    KeyPair k = make_key("politician", i);
    fs::path key = out_dir / "keys" / ("politician-" + std::to_string(i) + ".key");
    TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(key, k));
    TESSERA_ASSIGN_OR_RETURN(int port, FreeLoopbackPort());
    net.g.politicians.push_back({i, k.public_key(), "127.0.0.1:" + std::to_string(port)});
    p.malicious = i < net.bad_pols;
    p.timeline = out_dir / "logs" / ("politician-" + std::to_string(i) + ".timeline.tsv");
    p.args = {"--log-level",
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
              std::to_string(BudgetTargetRoundS(cfg)),
              "--backlog-pools",
              std::to_string(cfg.backlog_pools),
              "--waiting-pools",
              std::to_string(cfg.waiting_pools),
              "--round-timeline",
              p.timeline.string()};
    if (p.malicious) {
      p.args.push_back("--fault");
      p.args.push_back(cfg.politician_behaviours[i % cfg.politician_behaviours.size()]);
    }
    p.log = out_dir / "logs" / ("politician-" + std::to_string(i) + ".log");
  }
  return Status::Ok();
}

KeyPair LocalnetKey(uint32_t key_seed, const std::string& role, uint32_t i) {
  return KeyPair::FromSeed(Sha256("tessera/localnet/" + std::to_string(key_seed) + "/" + role +
                                  "/" + std::to_string(i)));
}

// Keys, identities, the politicians' plans and the genesis file under out_dir.
Result<Network> WriteNetworkFiles(const LocalnetConfig& cfg, const fs::path& out_dir) {
  Network net;
  Genesis& g = net.g;
  g.name = "localnet";
  // Fixed keys make the whole committee sequence reproducible (sortition depends only on keys
  // and seeds); a key_seed of 0 draws fresh keys.
  auto make_key = [&](const std::string& role, uint32_t i) {
    if (cfg.key_seed == 0) return KeyPair::Generate();
    return LocalnetKey(cfg.key_seed, role, i);
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
  net.designed_threshold = designed.ok() && g.cert_threshold == designed->threshold;
  g.soft_threshold = OrDefault(cfg.soft_threshold, g.cert_threshold);
  g.witness_threshold = OrDefault(cfg.witness_threshold, committee / 4 + 1);
  g.registration_delay = cfg.registration_delay;
  g.safe_sample = OrDefault(cfg.safe_sample, cfg.politicians);
  g.max_pool_txs = cfg.max_pool_txs;
  g.validation_sample = cfg.validation_sample;
  g.vote_committees = cfg.vote_committees;
  g.apps = cfg.apps;
  TESSERA_RETURN_IF_ERROR(PlanPoliticians(cfg, out_dir, make_key, net));
  for (uint32_t i = 0; i < cfg.citizens; ++i) {
    bool late = i + cfg.late_citizens >= cfg.citizens;
    TESSERA_RETURN_IF_ERROR(WriteCitizenFiles(out_dir / "keys", i, make_key("citizen", i),
                                              registrar, late ? cfg.register_at : 0));
    if (late) {
      // Late citizens are registered on the chain: the registrar posts them for block
      // register_at once the politicians run (PostLateRegistrations).
      Identity id{.citizen = make_key("citizen", i).public_key(), .registered_at = cfg.register_at};
      SignIdentity(id, registrar);
      net.late_registrations.push_back(id);
    }
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
  net.account_keys.reserve(cfg.accounts);
  for (uint32_t i = 0; i < cfg.accounts; ++i) {
    net.account_keys.push_back(AccountKeys(i));
    g.accounts.push_back({net.account_keys.back().public_key(), cfg.balance});
    net.total_balance += cfg.balance;
  }
  // The root goes into the file: citizens then load it without the accounts (genesis.h).
  TESSERA_RETURN_IF_ERROR(g.SealStateRoot());
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "genesis.toml", GenesisToToml(g)));
  TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(out_dir / "keys" / "registrar.key", registrar));
  return net;
}

// An honest politician that is never killed nor stopped: the auditor's source.
Result<int> AuditSource(const LocalnetConfig& cfg, const std::vector<PoliticianProcess>& pols) {
  for (int i = static_cast<int>(cfg.politicians) - 1; i >= 0; --i) {
    if (!pols[i].malicious && i != cfg.kill_politician && i != cfg.stop_politician) return i;
  }
  return InvalidArgumentError("need one honest politician that is not killed");
}

// ---- Starting the processes ----------------------------------------------------------------

void PrintNetwork(const LocalnetConfig& cfg, const Network& net, std::ostream& progress) {
  const Genesis& g = net.g;
  progress << "starting " << cfg.politicians << " politicians (" << net.bad_pols
           << " malicious) and " << cfg.citizens << " citizens, committee "
           << g.sortition.committee_size << ", T_cert " << g.cert_threshold << ", T_w "
           << g.witness_threshold << "\n";
  const agreement::CommitteeChoice risk = ThresholdRisk(g);
  progress << "BA* threshold T = " << g.cert_threshold << " ("
           << (net.designed_threshold ? "ledger-thresholds' choice"
                                      : "2/3 rule or configured; no T meets 1e-9 here")
           << "): per block at f = 0.25, fork " << std::defaultfloat << risk.fork_per_block
           << ", stall " << risk.stall_per_block << "\n";
}

// "127.0.0.1:4321" -> 4321.
int PortOf(const std::string& address) {
  return std::atoi(address.c_str() + address.rfind(':') + 1);
}

// Why politician i, alive, has not answered GetStatus: its last answer and who listens on its
// port (a clean-clone CI run on the 2-core machine lost two 80/25 runs to "politicians did not
// start", 30 s after launch, with nothing in any log).
Status NotStartedError(const Network& net, uint32_t i, const Status& last) {
  const std::string& address = net.g.politicians[i].address;
  const int port = PortOf(address);
  std::string listeners;
  for (pid_t pid : PidsListeningOn(port)) {
    listeners += (listeners.empty() ? "" : ", ") + std::to_string(pid) +
                 (pid == net.pols[i].process->pid() ? " (the politician)" : " (another process)");
  }
  return DeadlineExceededError(
      "politician " + std::to_string(i) + " (pid " + std::to_string(net.pols[i].process->pid()) +
      ", " + address + ") did not answer GetStatus in time; its last answer: " + last.ToString() +
      "; listening on port " + std::to_string(port) + ": " +
      (listeners.empty() ? "nobody" : listeners) + "; see " + net.pols[i].log.string());
}

// The politicians' ports are drawn free (FreeLoopbackPort) when the network's files are
// written, and another process may bind one before its politician does (under ctest -j2,
// another network's politician or any outgoing connection). Such a politician exits, unable
// to listen (its server does not share ports: politician_server.cc), and the network is
// written again with fresh ports, at most kStartAttempts times in all.
constexpr int kStartAttempts = 3;

bool APortWasTaken(const Network& net) {
  for (const PoliticianProcess& p : net.pols) {
    auto log = ReadFile(p.log);
    if (log.ok() && log->find("cannot listen on") != std::string::npos) return true;
  }
  return false;
}

// Starts every politician and waits until each answers GetStatus.
Status StartPoliticians(const LocalnetConfig& cfg, const fs::path& bin_dir, Network& net) {
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    PoliticianProcess& p = net.pols[i];
    p.process = std::make_unique<ChildProcess>();
    TESSERA_RETURN_IF_ERROR(p.process->Start(bin_dir / "ledger-politician", p.args, p.log));
  }
  // A politician parses the genesis file and builds and stores the genesis tree before it
  // answers: five politicians with 1M accounts took ~3.8 min on the shared 2-core box at load
  // average ~70, so the wait grows with the account count (30 s + 0.5 ms per account).
  auto deadline = Clock::now() + std::chrono::seconds(30) +
                  std::chrono::microseconds(500) * static_cast<int64_t>(cfg.accounts);
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    PoliticianProcess& p = net.pols[i];
    auto exited = [&] {
      return UnavailableError("politician " + std::to_string(i) + " exited; see " + p.log.string());
    };
    // The client is made once the politician listens: a gRPC channel whose first connection
    // is refused waits seconds before the next one (here every ~5 s, whatever the reconnect
    // backoff says), so the launcher waited ~10 s for politicians that listened within 50 ms
    // (strace, session 17), and under CI load it ran past the deadline.
    const int port = PortOf(net.g.politicians[i].address);
    while (!LoopbackPortAccepts(port)) {
      if (!p.process->running()) return exited();
      if (Clock::now() > deadline)
        return NotStartedError(net, i, UnavailableError("not listening"));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    p.client = std::make_unique<PoliticianClient>(net.g.politicians[i].address, 3000);
    for (auto status = p.client->GetStatus(); !status.ok(); status = p.client->GetStatus()) {
      if (!p.process->running()) return exited();
      if (Clock::now() > deadline) return NotStartedError(net, i, status.status());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return Status::Ok();
}

// The registrar posts the late citizens' registrations for block register_at to every politician.
Status PostLateRegistrations(const Network& net) {
  for (const Identity& id : net.late_registrations) {
    for (const PoliticianProcess& p : net.pols) {
      TESSERA_RETURN_IF_ERROR(PostRegistration(*p.client, id));
    }
  }
  return Status::Ok();
}

Result<CitizenProcess> StartCitizenDaemon(const LocalnetConfig& cfg, const fs::path& bin_dir,
                                          const fs::path& out_dir, uint32_t first, uint32_t count,
                                          const std::string& fault) {
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
                                   "--round-wait-ms",
                                   std::to_string(cfg.timing.round_wait_ms),
                                   "--follow-wait-ms",
                                   std::to_string(cfg.timing.follow.wait_ms),
                                   "--certify-every",
                                   std::to_string(cfg.timing.follow.certify_every)};
  if (cfg.timing.split_proposals) args.push_back("--split-proposals");
  if (!cfg.timing.recovery) args.push_back("--no-recovery");
  if (!cfg.citizen_shared_checks) args.push_back("--separate-checks");
  d.log = out_dir / "logs" / (name + ".log");
  TESSERA_RETURN_IF_ERROR(d.process->Start(bin_dir / "ledger-citizen", args, d.log));
  return d;
}

// LocalnetReport::log_digest: the honest daemons' warnings and errors, and one round summary
// per height and outcome (every member writes one), the last kLogDigestLines of them, each
// line after its file's name. A line reads "<time> <level letter> <logger>: <message>"
// (core/log.cc).
std::string HonestCitizensLogDigest(const std::vector<CitizenProcess>& daemons) {
  constexpr size_t kLogDigestLines = 40;
  constexpr std::string_view kRoundSummary = "citizen: round for block ";
  std::deque<std::string> kept;
  std::set<std::string> summarised;  // "<height> committed" or "<height> ended"
  for (const CitizenProcess& d : daemons) {
    if (d.malicious) continue;
    auto text = ReadFile(d.log);
    if (!text.ok()) continue;  // the digest is a diagnostic: a missing log leaves a gap
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      const size_t level = line.find(' ') + 1;  // 0 without a space: then no level letter
      const bool warning =
          level > 0 && level < line.size() && (line[level] == 'W' || line[level] == 'E');
      if (!warning) {
        const size_t summary = line.find(kRoundSummary);
        if (summary == std::string::npos) continue;
        const size_t from = summary + kRoundSummary.size();
        if (!summarised.insert(line.substr(from, line.find(" after ", from) - from)).second) {
          continue;
        }
      }
      kept.push_back(d.log.filename().string() + " " + line);
      if (kept.size() > kLogDigestLines) kept.pop_front();
    }
  }
  std::string out;
  for (const std::string& line : kept) out += line + "\n";
  return out;
}

// The malicious citizens first, one per process; the honest ones citizens_per_process each.
Result<std::vector<CitizenProcess>> StartCitizens(const LocalnetConfig& cfg,
                                                  const fs::path& bin_dir, const fs::path& out_dir,
                                                  uint32_t bad_citizens) {
  std::vector<CitizenProcess> daemons;
  for (uint32_t i = 0; i < bad_citizens; ++i) {
    TESSERA_ASSIGN_OR_RETURN(
        CitizenProcess d,
        StartCitizenDaemon(cfg, bin_dir, out_dir, i, 1,
                           cfg.citizen_behaviours[i % cfg.citizen_behaviours.size()]));
    daemons.push_back(std::move(d));
  }
  for (uint32_t i = bad_citizens; i < cfg.citizens; i += cfg.citizens_per_process) {
    TESSERA_ASSIGN_OR_RETURN(
        CitizenProcess d,
        StartCitizenDaemon(cfg, bin_dir, out_dir, i,
                           std::min(cfg.citizens_per_process, cfg.citizens - i), "none"));
    daemons.push_back(std::move(d));
  }
  return daemons;
}

// ---- Load ---------------------------------------------------------------------------------

// Where the load generator sends transfers: not to the politician that will be SIGSTOP'd, nor
// to unresponsive ones: it submits to one politician after another with a 3 s deadline, and a
// client stuck on a stopped politician would measure the client, not the chain.
std::vector<std::string> LoadAddresses(const LocalnetConfig& cfg, const Network& net) {
  std::vector<std::string> addresses;
  for (const PoliticianInfo& p : net.g.politicians) {
    const bool unresponsive =
        net.pols[p.id].malicious &&
        cfg.politician_behaviours[p.id % cfg.politician_behaviours.size()] == "unresponsive";
    if (static_cast<int>(p.id) != cfg.stop_politician && !unresponsive) {
      addresses.push_back(p.address);
    }
  }
  return addresses;
}

// The senders: every account but the wallets' (when there are enough others).
std::vector<uint32_t> LoadSenders(const LocalnetConfig& cfg) {
  std::vector<uint32_t> senders;
  for (uint32_t i = cfg.accounts >= 2 * kWalletAccounts ? kWalletAccounts : 0; i < cfg.accounts;
       ++i) {
    senders.push_back(i);
  }
  return senders;
}

// ---- The chain watch: the auditor's replay as blocks commit --------------------------------

class ChainWatch {
 public:
  // Builds the replay's genesis state (a 1M-leaf tree at 1M accounts: before the load starts,
  // so that it does not delay the first blocks' arrival times).
  ChainWatch(const Genesis& g, PoliticianClient& source, LoadGenerator& load,
             std::ostream& progress)
      : replay_(g), source_(source), load_(load), progress_(progress) {}

  // Replays the source's blocks beyond the replay's height; each block's latencies go to
  // the load's figures.
  void FollowOnce() {
    auto status = source_.GetStatus();
    if (!status.ok()) return;
    while (replay_.height() < status->height()) {
      auto block = source_.GetBlock(replay_.height() + 1);
      if (!block.ok()) return;
      std::lock_guard<std::mutex> lock(mu_);
      auto applied = replay_.Apply(*block);
      if (!applied.ok()) {
        ++invalid_;
        progress_ << "audit: block " << replay_.height() + 1
                  << " INVALID: " << applied.status().ToString() << "\n";
        return;
      }
      auto now = Clock::now();
      block_times_.push_back(now);
      auto nonce_of = [&](const PublicKey& key) -> uint64_t {
        auto leaf = replay_.tree().Get(AccountKey(key));
        return leaf ? DecodeAccount(*leaf)->nonce : 0;
      };
      const std::vector<CommittedTransfer> ours =
          load_.OnBlock(*applied, nonce_of, replay_.height(), now);
      for (const CommittedTransfer& tx : ours) latencies_.push_back(Seconds(now - tx.first_submit));
      committed_.insert(committed_.end(), ours.begin(), ours.end());
      block_load_txs_.push_back(ours.size());
      progress_ << "[" << std::fixed << std::setprecision(1) << Seconds(now - start_) << "s] block "
                << replay_.height() << ": " << applied->size() << " transfers\n";
    }
  }
  // FollowOnce every 100 ms on a thread, until StopThread; progress times count from `start`.
  void StartThread(Clock::time_point start) {
    start_ = start;
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        FollowOnce();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  void StopThread() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  ~ChainWatch() { StopThread(); }

  // Height and committed transfers so far (thread-safe).
  std::pair<uint64_t, size_t> Progress() {
    std::lock_guard<std::mutex> lock(mu_);
    return {replay_.height(), latencies_.size()};
  }
  // After StopThread only.
  const ChainReplay& replay() const { return replay_; }
  std::vector<double>& latencies() { return latencies_; }
  const std::vector<CommittedTransfer>& committed() const { return committed_; }
  const std::vector<Clock::time_point>& block_times() const { return block_times_; }
  const std::vector<size_t>& block_load_txs() const { return block_load_txs_; }
  uint64_t invalid() const { return invalid_.load(); }

 private:
  std::mutex mu_;  // guards the replay and the figures below (the thread writes them)
  ChainReplay replay_;
  std::vector<double> latencies_;  // from each transfer's first submission
  std::vector<CommittedTransfer> committed_;
  std::vector<Clock::time_point> block_times_;
  std::vector<size_t> block_load_txs_;  // per block: the load generator's transfers in it
  std::atomic<uint64_t> invalid_{0};
  PoliticianClient& source_;
  LoadGenerator& load_;
  Clock::time_point start_;
  std::ostream& progress_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// ---- The run loop: progress, the kill -9 and SIGSTOP faults, stop condition ----------------

struct FaultState {
  bool killed = false, stopped = false;
  // A killed politician waiting to be restarted at restart_at. Not a std::optional: GCC 12
  // warns (-Wmaybe-uninitialized, a false positive) on the optional's payload here.
  bool restart_pending = false;
  Clock::time_point restart_at{};
};

// One pass of the faults at the chain's `height`: kill -9, SIGSTOP, restart after kill.
Status ApplyFaults(const LocalnetConfig& cfg, const fs::path& bin_dir, uint64_t height,
                   std::vector<PoliticianProcess>& pols, FaultState& f, LocalnetReport& report,
                   std::ostream& progress) {
  if (cfg.kill_politician >= 0 && !f.killed && height >= cfg.kill_at_block) {
    pols[cfg.kill_politician].process->Kill9();
    f.killed = true;
    report.restarted = true;
    f.restart_pending = true;
    f.restart_at = Clock::now() + std::chrono::milliseconds(cfg.restart_after_ms);
    progress << "kill -9 politician " << cfg.kill_politician << " at block " << height << "\n";
  }
  if (cfg.stop_politician >= 0 && !f.stopped && height >= cfg.stop_at_block) {
    ::kill(pols[cfg.stop_politician].process->pid(), SIGSTOP);
    f.stopped = true;
    progress << "SIGSTOP politician " << cfg.stop_politician << " at block " << height << "\n";
  }
  if (f.restart_pending && Clock::now() >= f.restart_at) {
    PoliticianProcess& p = pols[cfg.kill_politician];
    p.process = std::make_unique<ChildProcess>();
    TESSERA_RETURN_IF_ERROR(p.process->Start(bin_dir / "ledger-politician", p.args, p.log));
    f.restart_pending = false;
    progress << "restarted politician " << cfg.kill_politician << "\n";
  }
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    if (!f.restart_pending && !pols[i].process->running() && (int)i != cfg.kill_politician) {
      return UnavailableError("politician " + std::to_string(i) + " died; see " +
                              pols[i].log.string());
    }
  }
  return Status::Ok();
}

// Runs the load for the configured time (or blocks), printing progress every second; returns
// the seconds of load. SIGCONTs a stopped politician at the end.
Result<double> RunLoad(const LocalnetConfig& cfg, const fs::path& bin_dir, Clock::time_point start,
                       std::vector<PoliticianProcess>& pols, LoadGenerator& load, ChainWatch& watch,
                       LocalnetReport& report, std::ostream& progress,
                       const std::atomic<bool>* stop) {
  FaultState faults;
  auto last_print = Clock::now();
  uint64_t last_blocks = 0;
  auto run_until = start + std::chrono::milliseconds(static_cast<int64_t>(cfg.duration_s * 1000));
  Status failure;
  while (Clock::now() < run_until && !(stop != nullptr && stop->load())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto [height, committed] = watch.Progress();
    failure = ApplyFaults(cfg, bin_dir, height, pols, faults, report, progress);
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
  if (faults.stopped) ::kill(pols[cfg.stop_politician].process->pid(), SIGCONT);
  TESSERA_RETURN_IF_ERROR(failure);
  return load_seconds;
}

// ---- The report ----------------------------------------------------------------------------

// CPU by role, read while every process is still running.
void AddCpuByRole(const std::vector<PoliticianProcess>& pols,
                  const std::vector<CitizenProcess>& daemons, LocalnetReport& report) {
  for (const PoliticianProcess& p : pols) {
    const double s = ProcessCpuSeconds(p.process->pid());
    report.cpu_s_politicians += s;
    if (p.malicious) report.cpu_s_malicious_politicians += s;
  }
  for (const CitizenProcess& d : daemons) {
    const double s = ProcessCpuSeconds(d.process->pid());
    report.cpu_s_citizens += s;
    if (d.malicious) report.cpu_s_malicious_citizens += s;
  }
  report.cpu_s_launcher = ProcessCpuSeconds(::getpid());
}

// The highest head among the honest citizens' stats files.
uint64_t CitizensMaxHeight(const std::vector<CitizenProcess>& daemons) {
  uint64_t citizen_max = 0;
  for (const CitizenProcess& d : daemons) {
    auto text = ReadFile(d.stats);
    nlohmann::json doc = nlohmann::json::parse(text.ok() ? *text : "", nullptr, false);
    if (d.malicious || doc.is_discarded()) continue;
    for (const auto& c : doc["citizens"]) {
      citizen_max = std::max(citizen_max, c["height"].get<uint64_t>());
    }
  }
  return citizen_max;
}

// Offered/submitted/committed counts, latencies and their breakdown (from the politicians'
// round timelines), throughput, intervals, CPU per transfer.
void AddLoadFigures(const LoadGenerator& load, double load_seconds, ChainWatch& watch,
                    const std::vector<PoliticianProcess>& pols, LocalnetReport& report) {
  const ChainReplay& replay = watch.replay();
  report.blocks = replay.height();
  report.invalid_blocks = watch.invalid();
  const LoadCounts counts = load.counts();
  report.offered_txs = counts.offered;
  report.submitted_txs = counts.submitted;
  report.busy_submissions = counts.busy;
  report.resent_submissions = counts.resent;
  report.busy_answers = counts.busy_answers;
  report.idle_misses = counts.idle_miss;
  report.rejected_submissions = counts.rejected;
  report.offered_tx_per_s = counts.offered / std::max(load_seconds, 1e-9);
  report.submitted_tx_per_s = counts.submitted / std::max(load_seconds, 1e-9);
  std::vector<double>& latencies = watch.latencies();
  const std::vector<Clock::time_point>& block_times = watch.block_times();
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
  const double txs = std::max<double>(report.committed_txs, 1);
  report.cpu_ms_per_tx_politicians = report.cpu_s_politicians * 1000 / txs;
  report.cpu_ms_per_tx_citizens = report.cpu_s_citizens * 1000 / txs;
  report.cpu_ms_per_tx_launcher = report.cpu_s_launcher * 1000 / txs;
  if (block_times.size() >= 2) {
    report.block_interval_s =
        Seconds(block_times.back() - block_times.front()) / (block_times.size() - 1);
    // Steady state: the blocks after the first over the time they took (the first block's
    // round starts with the chain, before the load has built up).
    const std::vector<size_t>& per_block = watch.block_load_txs();
    size_t after_first = 0;
    for (size_t i = 1; i < per_block.size(); ++i) after_first += per_block[i];
    report.steady_tx_per_s =
        after_first / std::max(Seconds(block_times.back() - block_times.front()), 1e-9);
  }
  report.txs_per_block =
      report.blocks ? static_cast<double>(report.committed_txs) / report.blocks : 0;
  std::vector<RoundTimeline> timelines(pols.size());
  for (size_t i = 0; i < pols.size(); ++i) {
    auto text = ReadFile(pols[i].timeline);
    auto parsed = text.ok() ? ParseRoundTimeline(*text) : Result<RoundTimeline>(text.status());
    if (parsed.ok()) timelines[i] = std::move(*parsed);
  }
  const auto system_minus_steady = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch() -
      std::chrono::steady_clock::now().time_since_epoch());
  report.latency_breakdown = BreakDownLatency(watch.committed(), timelines, system_minus_steady);
}

// Every honest politician (the restarted one included) must reach the replay's height with
// the same blocks and serve proofs that verify against the certified root and match the
// replay; honest citizens' heads must be on the audited chain.
Status Audit(const LocalnetConfig& cfg, const Network& net,
             const std::vector<CitizenProcess>& daemons, const ChainReplay& replay,
             const std::vector<KeyPair>& account_keys, LocalnetReport& report,
             std::ostream& progress) {
  report.balances_conserved = BalancesConserved(replay, net.total_balance);
  std::vector<Hash256> probe;
  for (uint32_t i = 0; i < std::min<uint32_t>(cfg.accounts, 32); ++i) {
    probe.push_back(AccountKey(account_keys[i].public_key()));
  }
  std::vector<AuditedPolitician> audited;
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    if (net.pols[i].malicious) continue;
    audited.push_back({i, net.pols[i].client.get(), static_cast<int>(i) == cfg.kill_politician});
  }
  AuditPoliticians(audited, replay, probe, &report, progress);
  std::vector<CitizenStatsFile> stats;
  for (const CitizenProcess& d : daemons) stats.push_back({d.stats, d.malicious});
  std::vector<bool> malicious_politicians;
  for (const auto& p : net.pols) malicious_politicians.push_back(p.malicious);
  return AddCitizenStats(stats, replay, malicious_politicians, &report);
}

}  // namespace

KeyPair LocalnetCitizenKey(uint32_t key_seed, uint32_t index) {
  return LocalnetKey(key_seed, "citizen", index);
}

Result<LocalnetReport> RunLocalnet(const LocalnetConfig& cfg, const fs::path& bin_dir,
                                   const fs::path& out_dir, std::ostream& progress,
                                   const std::atomic<bool>* stop) {
  Network net;
  for (int attempt = 1;; ++attempt) {
    fs::remove_all(out_dir);
    fs::create_directories(out_dir / "keys");
    fs::create_directories(out_dir / "logs");
    TESSERA_ASSIGN_OR_RETURN(net, WriteNetworkFiles(cfg, out_dir));
    if (attempt == 1) PrintNetwork(cfg, net, progress);
    Status started = StartPoliticians(cfg, bin_dir, net);
    if (started.ok()) break;
    std::vector<ChildProcess*> politicians;
    for (PoliticianProcess& p : net.pols) {
      if (p.process) politicians.push_back(p.process.get());
    }
    StopAll(politicians);
    if (attempt == kStartAttempts || !APortWasTaken(net)) return started;
    progress << "a politician's port was taken before it listened (" << started.ToString()
             << "); drawing the ports again\n";
  }
  LocalnetReport report;
  report.malicious_politicians = net.bad_pols;
  report.honest_politicians = cfg.politicians - net.bad_pols;
  TESSERA_ASSIGN_OR_RETURN(const int source, AuditSource(cfg, net.pols));

  TESSERA_RETURN_IF_ERROR(PostLateRegistrations(net));
  const uint32_t bad_citizens =
      static_cast<uint32_t>(std::floor(cfg.malicious_citizens * cfg.citizens + 1e-9));
  report.malicious_citizens = bad_citizens;
  report.honest_citizens = cfg.citizens - bad_citizens;
  TESSERA_ASSIGN_OR_RETURN(std::vector<CitizenProcess> daemons,
                           StartCitizens(cfg, bin_dir, out_dir, bad_citizens));

  const std::vector<KeyPair>& account_keys = net.account_keys;
  LoadGenerator load({.rate = cfg.rate,
                      .threads = cfg.load_threads,
                      .fanout = cfg.fanout,
                      .double_spend_fraction = cfg.double_spend_fraction},
                     LoadAddresses(cfg, net), account_keys, LoadSenders(cfg));
  ChainWatch watch(net.g, *net.pols[source].client, load, progress);
  const auto start = Clock::now();
  load.Start();
  watch.StartThread(start);
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "ready", "started\n"));
  Result<double> load_seconds =
      RunLoad(cfg, bin_dir, start, net.pols, load, watch, report, progress, stop);
  load.Stop();
  AddCpuByRole(net.pols, daemons, report);
  std::vector<ChildProcess*> citizens;
  for (CitizenProcess& d : daemons) citizens.push_back(d.process.get());
  StopAll(citizens);
  report.log_digest = HonestCitizensLogDigest(daemons);
  watch.StopThread();
  TESSERA_RETURN_IF_ERROR(load_seconds.status());

  // ---- Audit (every other thread has stopped) ----
  // Catch up with the blocks certified by the last cert votes, and with every honest
  // citizen's head.
  const uint64_t citizen_max = CitizensMaxHeight(daemons);
  for (int tries = 0; tries < 100; ++tries) {
    watch.FollowOnce();
    if (watch.replay().height() >= citizen_max) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  AddLoadFigures(load, *load_seconds, watch, net.pols, report);
  TESSERA_RETURN_IF_ERROR(Audit(cfg, net, daemons, watch.replay(), account_keys, report, progress));
  std::vector<ChildProcess*> politicians;
  for (PoliticianProcess& p : net.pols) politicians.push_back(p.process.get());
  StopAll(politicians);
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "report.json", report.ToJson() + "\n"));
  return report;
}

}  // namespace tessera::ledger::net
