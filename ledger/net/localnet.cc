#include "ledger/net/localnet.h"

#include <algorithm>
#include <cmath>
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
#include "ledger/net/citizen_daemon.h"
#include "ledger/net/client.h"
#include "ledger/net/process.h"
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

// Replays certified blocks from genesis with the shared state transition: the auditor.
class ChainReplay {
 public:
  explicit ChainReplay(const Genesis& g) : genesis_(g) {
    apps_ = LoadApps(g).value();  // the genesis file was written, and checked, by us
    for (const GenesisAccount& a : g.accounts) accounts_.insert(AccountKey(a.key));
    latest_ = g.GenesisHeader().value();
    tree_ = g.GenesisState().value();
    hashes_.push_back(BlockHash(latest_));
  }
  uint64_t height() const { return latest_.height; }
  const SparseMerkleTree& tree() const { return tree_; }
  const BlockHeader& latest() const { return latest_; }
  const std::vector<Hash256>& hashes() const { return hashes_; }
  uint64_t double_applied() const { return double_applied_; }
  uint64_t late_first() const { return late_first_; }
  uint64_t late_too_early() const { return late_too_early_; }
  uint64_t app_applied() const { return app_applied_; }
  // Every account that exists: the genesis accounts and every receiver of a transfer. (Other
  // leaves belong to applications and are not money.)
  const std::set<Hash256>& accounts() const { return accounts_; }
  uint64_t crypto_rejected() const { return crypto_rejected_; }

  // Verifies and applies the next block; returns the transactions it applied.
  Result<std::vector<Transaction>> Apply(const BlockReply& reply) {
    const CertifiedBlock& cb = reply.block();
    TESSERA_ASSIGN_OR_RETURN(
        CertifiedBlockData block,
        DecodeCertifiedBlock(cb.header(), cb.certificate(),
                             {cb.identities().begin(), cb.identities().end()}));
    TESSERA_RETURN_IF_ERROR(VerifyCertifiedBlock(genesis_, latest_, block, &tickets_));
    // Independently of the check above: when did late-registered citizens sign?
    for (const CertificateSigner& s : block.certificate.signers) {
      for (const Identity& id : block.identities) {
        if (id.citizen != s.citizen || id.registered_at == 0) continue;
        if (block.header.height < id.registered_at + genesis_.registration_delay) {
          ++late_too_early_;
        } else if (late_first_ == 0) {
          late_first_ = block.header.height;
        }
      }
    }
    if (static_cast<size_t>(reply.pools_size()) != block.header.pool_hashes.size()) {
      return InvalidArgumentError("block is missing pools");
    }
    std::vector<LedgerTx> txs;
    for (size_t i = 0; i < block.header.pool_hashes.size(); ++i) {
      std::vector<LedgerTx> pool;
      for (const std::string& t : reply.pools(static_cast<int>(i)).txs()) {
        TESSERA_ASSIGN_OR_RETURN(LedgerTx tx, DecodeLedgerTx(AsBytes(t)));
        pool.push_back(std::move(tx));
      }
      if (PoolHash(pool) != block.header.pool_hashes[i]) {
        return InvalidArgumentError("pool does not match the header");
      }
      txs.insert(txs.end(), pool.begin(), pool.end());
    }
    // Every signature verified: a block certified with a forged transaction applied fails here.
    const BlockContext ctx{.height = latest_.height + 1, .prev_seed = latest_.seed};
    TESSERA_ASSIGN_OR_RETURN(BlockOutcome outcome, ApplyBlock(TreeLookup(tree_), txs, ctx, apps_));
    crypto_rejected_ += outcome.crypto_rejected.size();
    TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree next, tree_.Update(outcome.updates));
    if (next.root_hash() != block.header.state_root) {
      return DataLossError("certified state root of block " + std::to_string(block.header.height) +
                           " does not match the replay");
    }
    std::set<size_t> rejected;
    for (const auto& [index, reason] : outcome.rejected) rejected.insert(index);
    std::vector<Transaction> applied;
    for (size_t i = 0; i < txs.size(); ++i) {
      if (rejected.count(i)) continue;
      const auto* transfer = std::get_if<Transaction>(&txs[i]);
      if (transfer == nullptr) {
        ++app_applied_;
        continue;
      }
      // Independent of the transition's own nonce rule: a (sender, nonce) applied twice
      // anywhere in the chain is a committed double spend.
      if (!spent_.insert({transfer->from, transfer->nonce}).second) ++double_applied_;
      accounts_.insert(AccountKey(transfer->to));
      applied.push_back(*transfer);
    }
    tree_ = std::move(next);
    latest_ = block.header;
    hashes_.push_back(BlockHash(latest_));
    return applied;
  }

 private:
  Genesis genesis_;
  AppRegistry apps_;
  BlockHeader latest_;
  SparseMerkleTree tree_;
  TicketCache tickets_;
  uint64_t app_applied_ = 0, crypto_rejected_ = 0;
  std::vector<Hash256> hashes_;
  std::set<std::pair<PublicKey, uint64_t>> spent_;
  std::set<Hash256> accounts_;
  uint64_t double_applied_ = 0;
  uint64_t late_first_ = 0, late_too_early_ = 0;
};

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

Result<LocalnetConfig> ParseLocalnetConfig(const Config& c) {
  LocalnetConfig l;
  auto u32 = [&](const char* key, uint32_t& field) -> Status {
    TESSERA_ASSIGN_OR_RETURN(int64_t v, c.GetIntOr(key, field));
    if (v < 0 || v > 1000000000) return InvalidArgumentError(std::string(key) + " out of range");
    field = static_cast<uint32_t>(v);
    return Status::Ok();
  };
  auto real = [&](const char* key, double& field, double lo, double hi) -> Status {
    TESSERA_ASSIGN_OR_RETURN(double v, c.GetDoubleOr(key, field));
    if (!(v >= lo && v <= hi)) {
      return InvalidArgumentError(std::string(key) + " must be in [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "]");
    }
    field = v;
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(u32("network.politicians", l.politicians));
  TESSERA_RETURN_IF_ERROR(u32("network.citizens", l.citizens));
  TESSERA_RETURN_IF_ERROR(u32("network.citizens_per_process", l.citizens_per_process));
  TESSERA_RETURN_IF_ERROR(u32("network.committee_size", l.committee_size));
  TESSERA_RETURN_IF_ERROR(u32("network.proposers", l.proposers));
  TESSERA_RETURN_IF_ERROR(u32("network.witness_threshold", l.witness_threshold));
  TESSERA_RETURN_IF_ERROR(u32("network.soft_threshold", l.soft_threshold));
  TESSERA_RETURN_IF_ERROR(u32("network.cert_threshold", l.cert_threshold));
  TESSERA_RETURN_IF_ERROR(u32("network.safe_sample", l.safe_sample));
  TESSERA_RETURN_IF_ERROR(u32("network.max_pool_txs", l.max_pool_txs));
  TESSERA_RETURN_IF_ERROR(u32("network.registration_delay", l.registration_delay));
  TESSERA_RETURN_IF_ERROR(u32("network.accounts", l.accounts));
  TESSERA_RETURN_IF_ERROR(u32("network.late_citizens", l.late_citizens));
  TESSERA_RETURN_IF_ERROR(u32("network.key_seed", l.key_seed));
  TESSERA_RETURN_IF_ERROR(u32("network.keep_versions", l.keep_versions));
  if (l.keep_versions < 2) return InvalidArgumentError("network.keep_versions must be at least 2");
  TESSERA_ASSIGN_OR_RETURN(int64_t register_at, c.GetIntOr("network.register_at", 2));
  if (register_at < 1) return InvalidArgumentError("network.register_at must be at least 1");
  l.register_at = static_cast<uint64_t>(register_at);
  TESSERA_ASSIGN_OR_RETURN(int64_t balance, c.GetIntOr("network.balance", 1000000));
  if (balance <= 0) return InvalidArgumentError("network.balance must be positive");
  l.balance = static_cast<uint64_t>(balance);
  TESSERA_RETURN_IF_ERROR(real("network.validation_sample", l.validation_sample, 1e-9, 1));
  TESSERA_ASSIGN_OR_RETURN(l.apps, ParseAppParams(c));
  TESSERA_RETURN_IF_ERROR(real("load.rate", l.rate, 0, 1e6));
  TESSERA_RETURN_IF_ERROR(real("load.duration_s", l.duration_s, 1, 86400));
  TESSERA_ASSIGN_OR_RETURN(int64_t blocks, c.GetIntOr("load.blocks", 0));
  l.blocks = static_cast<uint64_t>(std::max<int64_t>(blocks, 0));
  TESSERA_RETURN_IF_ERROR(real("load.double_spend_fraction", l.double_spend_fraction, 0, 1));
  TESSERA_RETURN_IF_ERROR(u32("load.fanout", l.fanout));
  TESSERA_RETURN_IF_ERROR(real("adversary.politicians", l.malicious_politicians, 0, 1));
  TESSERA_RETURN_IF_ERROR(real("adversary.citizens", l.malicious_citizens, 0, 1));
  if (c.Has("adversary.politician_behaviours")) {
    TESSERA_ASSIGN_OR_RETURN(l.politician_behaviours,
                             c.GetStringList("adversary.politician_behaviours"));
  }
  if (c.Has("adversary.citizen_behaviours")) {
    TESSERA_ASSIGN_OR_RETURN(l.citizen_behaviours, c.GetStringList("adversary.citizen_behaviours"));
  }
  for (const std::string& b : l.politician_behaviours) {
    PoliticianFaults f;
    TESSERA_RETURN_IF_ERROR(f.Add(b));
  }
  for (const std::string& b : l.citizen_behaviours) {
    TESSERA_RETURN_IF_ERROR(ParseCitizenFault(b).status());
  }
  TESSERA_ASSIGN_OR_RETURN(int64_t kill, c.GetIntOr("fault.kill_politician", -1));
  l.kill_politician = static_cast<int>(kill);
  TESSERA_ASSIGN_OR_RETURN(int64_t kill_at, c.GetIntOr("fault.kill_at_block", 2));
  l.kill_at_block = static_cast<uint64_t>(std::max<int64_t>(kill_at, 1));
  TESSERA_ASSIGN_OR_RETURN(int64_t restart, c.GetIntOr("fault.restart_after_ms", 1000));
  l.restart_after_ms = static_cast<int>(restart);
  TESSERA_ASSIGN_OR_RETURN(int64_t poll, c.GetIntOr("timing.poll_ms", l.timing.poll_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t wit, c.GetIntOr("timing.witness_ms", l.timing.witness_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t prop, c.GetIntOr("timing.proposal_ms", l.timing.proposal_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t to,
                           c.GetIntOr("timing.round_timeout_ms", l.timing.round_timeout_ms));
  l.timing = {static_cast<int>(poll), static_cast<int>(wit), static_cast<int>(prop),
              static_cast<int>(to)};

  if (l.politicians < 1 || l.citizens < 1 || l.citizens_per_process < 1 || l.accounts < 2) {
    return InvalidArgumentError("need at least 1 politician, 1 citizen and 2 accounts");
  }
  if (l.late_citizens >= l.citizens) {
    return InvalidArgumentError("network.late_citizens must leave some genesis citizens");
  }
  if (l.kill_politician >= static_cast<int>(l.politicians)) {
    return InvalidArgumentError("fault.kill_politician is not a politician index");
  }
  return l;
}

std::string LocalnetReport::ToJson() const {
  nlohmann::json j = {{"blocks", blocks},
                      {"committed_txs", committed_txs},
                      {"submitted_txs", submitted_txs},
                      {"rejected_submissions", rejected_submissions},
                      {"seconds", seconds},
                      {"tx_per_s", tx_per_s},
                      {"txs_per_block", txs_per_block},
                      {"block_interval_s", block_interval_s},
                      {"latency_p50_s", latency_p50_s},
                      {"latency_p90_s", latency_p90_s},
                      {"latency_max_s", latency_max_s},
                      {"committee_rounds", committee_rounds},
                      {"citizen_bytes_up_per_block", citizen_bytes_up_per_block},
                      {"citizen_bytes_down_per_block", citizen_bytes_down_per_block},
                      {"citizen_cpu_ms_per_block", citizen_cpu_ms_per_block},
                      {"citizen_storage_bytes", citizen_storage_bytes},
                      {"honest_politicians", honest_politicians},
                      {"malicious_politicians", malicious_politicians},
                      {"honest_citizens", honest_citizens},
                      {"malicious_citizens", malicious_citizens},
                      {"politicians_agree", politicians_agree},
                      {"forks", forks},
                      {"invalid_blocks", invalid_blocks},
                      {"citizens_agree", citizens_agree},
                      {"balances_conserved", balances_conserved},
                      {"double_spend_attempts", double_spend_attempts},
                      {"double_spends_committed", double_spends_committed},
                      {"proofs_ok", proofs_ok},
                      {"restarted", restarted},
                      {"restarted_caught_up", restarted_caught_up},
                      {"restarted_proofs_ok", restarted_proofs_ok},
                      {"rejected_proposals", rejected_proposals},
                      {"bad_politician_answers", bad_politician_answers},
                      {"txs_validated", txs_validated},
                      {"signatures_checked", signatures_checked},
                      {"app_txs_applied", app_txs_applied},
                      {"late_first_signed", late_first_signed},
                      {"late_signed_too_early", late_signed_too_early}};
  return j.dump(1);
}

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
  g.sortition.population = cfg.citizens;
  g.sortition.committee_size = committee;
  g.sortition.proposers = std::min(cfg.proposers, committee);
  g.sortition.seed_lookback = 1;
  g.cert_threshold = OrDefault(cfg.cert_threshold, 2 * committee / 3 + 1);
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
                    "warn",
                    "--genesis",
                    (out_dir / "genesis.toml").string(),
                    "--id",
                    std::to_string(i),
                    "--key",
                    key.string(),
                    "--dir",
                    (out_dir / ("politician-" + std::to_string(i))).string(),
                    "--keep-versions",
                    std::to_string(cfg.keep_versions)};
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
    if (!pols[i].malicious && i != cfg.kill_politician) {
      follow = i;
      break;
    }
  }
  if (follow < 0) return InvalidArgumentError("need one honest politician that is not killed");

  // ---- Start politicians, wait until they answer ----
  progress << "starting " << cfg.politicians << " politicians (" << bad_pols << " malicious) and "
           << cfg.citizens << " citizens, committee " << committee << ", T_cert "
           << g.cert_threshold << ", T_w " << g.witness_threshold << "\n";
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    pols[i].process = std::make_unique<ChildProcess>();
    TESSERA_RETURN_IF_ERROR(
        pols[i].process->Start(bin_dir / "ledger-politician", pols[i].args, pols[i].log));
    pols[i].client = std::make_unique<PoliticianClient>(g.politicians[i].address, 3000);
  }
  auto deadline = Clock::now() + std::chrono::seconds(30);
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
                                     "warn",
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
                                     std::to_string(cfg.timing.round_timeout_ms)};
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
  struct Sender {
    uint64_t next_nonce = 0;
    std::optional<Transaction> in_flight;
    Clock::time_point sent;
  };
  std::mutex mu;
  std::vector<Sender> senders(cfg.accounts);
  std::map<Hash256, Clock::time_point> submitted;
  std::vector<double> latencies;
  std::vector<Clock::time_point> block_times;
  ChainReplay replay(g);
  std::atomic<bool> stop_load{false}, stop_follow{false};
  std::atomic<uint64_t> sent_count{0}, rejected{0}, ds_attempts{0}, invalid{0};
  std::optional<Clock::time_point> first_submit;
  std::mt19937_64 rng(12345);
  std::vector<KeyPair> account_keys;
  for (uint32_t i = 0; i < cfg.accounts; ++i) account_keys.push_back(AccountKeys(i));

  // `count`: whether rejections are counted (not for resends, which hit "already pending").
  auto submit = [&](const Transaction& tx, uint32_t skip, bool count = true) {
    std::vector<uint32_t> order(cfg.politicians);
    for (uint32_t i = 0; i < cfg.politicians; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    uint32_t sent_to = 0;
    for (uint32_t p : order) {
      if (sent_to >= std::max(1u, cfg.fanout)) break;
      if (p == skip) continue;
      Status s = pols[p].client->SubmitTransaction(tx);
      if (count && !s.ok() && s.code() == StatusCode::kFailedPrecondition) ++rejected;
      ++sent_to;
    }
  };
  auto start = Clock::now();
  std::thread loadgen([&] {
    double issued = 0;
    while (!stop_load.load()) {
      double due = cfg.rate * Seconds(Clock::now() - start) - issued;
      for (int n = 0; n < static_cast<int>(due); ++n) {
        issued += 1;
        std::unique_lock<std::mutex> lock(mu);
        uint32_t a = 0;
        bool found = false;
        const uint32_t first = cfg.accounts >= 2 * kWalletAccounts ? kWalletAccounts : 0;
        for (int tries = 0; tries < 8 && !found; ++tries) {
          a = first + static_cast<uint32_t>(rng() % (cfg.accounts - first));
          found = !senders[a].in_flight;
        }
        if (!found) continue;
        uint32_t to = static_cast<uint32_t>(rng() % (cfg.accounts - 1));
        if (to >= a) ++to;
        Transaction tx{.from = account_keys[a].public_key(),
                       .to = account_keys[to].public_key(),
                       .amount = 1 + rng() % 10,
                       .nonce = senders[a].next_nonce};
        SignTransaction(tx, account_keys[a]);
        senders[a].in_flight = tx;
        senders[a].sent = Clock::now();
        submitted[TransactionId(tx)] = senders[a].sent;
        if (!first_submit) first_submit = senders[a].sent;
        bool conflict =
            std::uniform_real_distribution<double>(0, 1)(rng) < cfg.double_spend_fraction;
        lock.unlock();
        ++sent_count;
        submit(tx, cfg.politicians);
        if (conflict) {
          // A double spend: the same nonce to someone else, sent to other politicians.
          Transaction twin = tx;
          twin.to = account_keys[(to + 1) % cfg.accounts == a ? (to + 2) % cfg.accounts
                                                              : (to + 1) % cfg.accounts]
                        .public_key();
          SignTransaction(twin, account_keys[a]);
          ++ds_attempts;
          submit(twin, cfg.politicians);
        }
      }
      // Resend transfers that have waited long (a dropping politician may have eaten them).
      std::vector<Transaction> resend;
      {
        std::lock_guard<std::mutex> lock(mu);
        for (Sender& s : senders) {
          if (s.in_flight && Clock::now() - s.sent > std::chrono::seconds(6)) {
            resend.push_back(*s.in_flight);
            s.sent = Clock::now();
          }
        }
      }
      for (const Transaction& tx : resend) submit(tx, cfg.politicians, false);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  bool killed = false;
  std::optional<Clock::time_point> restart_at;
  auto follow_once = [&]() {
    auto status = pols[follow].client->GetStatus();
    if (!status.ok()) return;
    while (replay.height() < status->height()) {
      auto block = pols[follow].client->GetBlock(replay.height() + 1);
      if (!block.ok()) return;
      auto applied = replay.Apply(*block);
      if (!applied.ok()) {
        ++invalid;
        progress << "audit: block " << replay.height() + 1
                 << " INVALID: " << applied.status().ToString() << "\n";
        return;
      }
      auto now = Clock::now();
      std::lock_guard<std::mutex> lock(mu);
      block_times.push_back(now);
      for (const Transaction& tx : *applied) {
        auto it = submitted.find(TransactionId(tx));
        if (it != submitted.end()) {
          latencies.push_back(Seconds(now - it->second));
          submitted.erase(it);
        }
      }
      for (uint32_t a = 0; a < cfg.accounts; ++a) {
        Sender& s = senders[a];
        auto leaf = replay.tree().Get(AccountKey(account_keys[a].public_key()));
        uint64_t nonce = leaf ? DecodeAccount(*leaf)->nonce : 0;
        if (s.in_flight && nonce > s.in_flight->nonce) s.in_flight.reset();
        s.next_nonce = std::max(s.next_nonce, nonce);
        if (!s.in_flight) s.next_nonce = nonce;
      }
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
      progress << "[" << std::fixed << std::setprecision(1) << t << "s] block " << height
               << "  committed " << committed << " tx (" << std::setprecision(1)
               << committed / std::max(t, 1e-9) << " tx/s)  submitted " << sent_count.load()
               << "  +" << height - last_blocks << " blocks\n";
      progress.flush();
      last_print = Clock::now();
      last_blocks = height;
    }
    if (cfg.blocks > 0 && height >= cfg.blocks) break;
  }
  stop_load = true;
  loadgen.join();
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
  report.submitted_txs = sent_count.load();
  report.rejected_submissions = rejected.load();
  report.committed_txs = latencies.size();
  report.double_spend_attempts = ds_attempts.load();
  report.double_spends_committed = replay.double_applied();
  report.late_first_signed = replay.late_first();
  report.app_txs_applied = replay.app_applied();
  report.late_signed_too_early = replay.late_too_early();
  if (!latencies.empty() && first_submit && !block_times.empty()) {
    std::sort(latencies.begin(), latencies.end());
    report.latency_p50_s = latencies[latencies.size() / 2];
    report.latency_p90_s = latencies[latencies.size() * 9 / 10];
    report.latency_max_s = latencies.back();
    report.seconds = Seconds(block_times.back() - *first_submit);
    report.tx_per_s = report.committed_txs / std::max(report.seconds, 1e-9);
  }
  if (block_times.size() >= 2) {
    report.block_interval_s =
        Seconds(block_times.back() - block_times.front()) / (block_times.size() - 1);
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
  report.politicians_agree = true;
  report.proofs_ok = true;
  auto wait_until = Clock::now() + std::chrono::seconds(20);
  for (uint32_t i = 0; i < cfg.politicians; ++i) {
    if (pols[i].malicious) continue;
    bool restarted = static_cast<int>(i) == cfg.kill_politician;
    uint64_t h = 0;
    do {  // at least one look, even after an earlier politician used up the shared wait
      auto s = pols[i].client->GetStatus();
      if (s.ok() && (h = s->height()) >= H) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (Clock::now() < wait_until);
    bool caught_up = h >= H;
    bool same = caught_up;
    for (uint64_t k = 1; k <= H && same; ++k) {
      auto b = pols[i].client->GetBlock(k);
      auto header = b.ok() ? DecodeBlockHeader(AsBytes(b->block().header()))
                           : Result<BlockHeader>(b.status());
      if (!header.ok() || BlockHash(*header) != replay.hashes()[k]) {
        same = false;
        ++report.forks;
      }
    }
    bool proofs = false;
    auto state = pols[i].client->ReadState(H, probe);
    if (state.ok()) {
      auto proof = StateProof::Decode(AsBytes(state->proof()));
      if (proof.ok()) {
        auto values = proof->Verify(replay.latest().state_root, probe);
        proofs = values.ok();
        for (size_t k = 0; proofs && k < probe.size(); ++k) {
          proofs = (*values)[k] == replay.tree().Get(probe[k]);
        }
      }
    }
    report.politicians_agree &= same;
    report.proofs_ok &= proofs;
    if (restarted) {
      report.restarted_caught_up = same;
      report.restarted_proofs_ok = proofs;
    }
    if (!same || !proofs) {
      progress << "audit: politician " << i << (caught_up ? "" : " did not catch up")
               << (same ? "" : " holds other blocks") << (proofs ? "" : " served bad proofs")
               << "\n";
    }
  }

  // Honest citizens: their heads must be on the audited chain; their costs per committee block.
  report.citizens_agree = true;
  uint64_t up = 0, down = 0, cpu = 0, rounds = 0;
  for (const CitizenProcess& d : daemons) {
    auto text = ReadFile(d.stats);
    if (!text.ok()) {
      if (!d.malicious) report.citizens_agree = false;
      continue;
    }
    nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded()) return DataLossError("bad stats file " + d.stats.string());
    for (const auto& c : doc["citizens"]) {
      report.rejected_proposals += c["rejected_proposals"].get<uint64_t>();
      report.bad_politician_answers += c["bad_politician_answers"].get<uint64_t>();
      if (d.malicious) continue;
      report.txs_validated += c["txs_validated"].get<uint64_t>();
      report.signatures_checked += c["signatures_checked"].get<uint64_t>();
      uint64_t h = c["height"].get<uint64_t>();
      if (h > H || ToHex(replay.hashes()[h]) != c["head"].get<std::string>()) {
        report.citizens_agree = false;
      }
      up += c["bytes_up"].get<uint64_t>();
      down += c["bytes_down"].get<uint64_t>();
      cpu += c["cpu_ns"].get<uint64_t>();
      rounds += c["committee_rounds"].get<uint64_t>();
      report.citizen_storage_bytes =
          std::max<uint64_t>(report.citizen_storage_bytes, c["storage_bytes"].get<uint64_t>());
    }
  }
  report.committee_rounds = rounds;
  if (rounds) {
    report.citizen_bytes_up_per_block = static_cast<double>(up) / rounds;
    report.citizen_bytes_down_per_block = static_cast<double>(down) / rounds;
    report.citizen_cpu_ms_per_block = cpu / 1e6 / rounds;
  }
  for (PoliticianProcess& p : pols) p.process->Stop();
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out_dir / "report.json", report.ToJson() + "\n"));
  return report;
}

}  // namespace tessera::ledger::net
