#include "ledger/net/citizen_daemon.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file.h"
#include "ledger/crypto/key_file.h"
#include "ledger/crypto/signature_cache.h"
#include "ledger/crypto/vrf.h"
#include "ledger/crypto/vrf_cache.h"
#include "ledger/net/execute_reply_cap.h"
#include "ledger/net/validation_sample.h"

namespace tessera::ledger::net {
namespace {

std::filesystem::path KeyPath(const std::filesystem::path& dir, uint32_t i) {
  return dir / ("citizen-" + std::to_string(i) + ".key");
}
std::filesystem::path IdPath(const std::filesystem::path& dir, uint32_t i) {
  return dir / ("citizen-" + std::to_string(i) + ".id");
}

Status WriteStats(const std::filesystem::path& file, const std::filesystem::path& key_dir,
                  uint32_t first, const std::vector<std::unique_ptr<Citizen>>& citizens) {
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < citizens.size(); ++i) {
    CitizenStats s = citizens[i]->stats();
    // What a citizen keeps on disk: its key file, its identity file and its latest header.
    size_t storage = 0;
    for (const char* ext : {".key", ".id", ".head"}) {
      std::error_code ec;
      auto size =
          std::filesystem::file_size(key_dir / ("citizen-" + std::to_string(first + i) + ext), ec);
      if (!ec) storage += size;
    }
    all.push_back({{"index", first + i},
                   {"height", s.height},
                   {"head", ToHex(s.head)},
                   {"committee_rounds", s.committee_rounds},
                   {"blocks_followed", s.blocks_followed},
                   {"bytes_up", s.bytes_up},
                   {"bytes_down", s.bytes_down},
                   {"following_bytes", s.following_bytes},
                   {"following_blocks", s.following_blocks},
                   {"cpu_ns", s.cpu_ns},
                   {"proposals", s.proposals},
                   {"rejected_proposals", s.rejected_proposals},
                   {"bad_politician_answers", s.bad_politician_answers},
                   {"txs_validated", s.txs_validated},
                   {"signatures_checked", s.signatures_checked},
                   {"round_listings", s.round_listings},
                   {"largest_sample", s.largest_sample},
                   {"evidence_refused", s.evidence_refused},
                   {"blacklisted", s.blacklisted},
                   {"storage_bytes", storage}});
  }
  // Curve work of the whole daemon (every citizen in it), to split its CPU by component.
  nlohmann::json process = {{"ed25519_verifications", VerificationsComputed()},
                            {"vrf_verifications", VrfVerificationsComputed()},
                            {"vrf_proofs", VrfProofsComputed()}};
  nlohmann::json doc = {{"citizens", all}, {"process", process}};
  return WriteFileAtomically(file, doc.dump(1) + "\n");
}

}  // namespace

Status WriteCitizenFiles(const std::filesystem::path& key_dir, uint32_t index, const KeyPair& keys,
                         const KeyPair& registrar, uint64_t registered_at) {
  TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(KeyPath(key_dir, index), keys));
  Identity id{.citizen = keys.public_key(), .registered_at = registered_at};
  SignIdentity(id, registrar);
  return WriteFileAtomically(IdPath(key_dir, index), ToHex(AsBytes(EncodeIdentity(id))) + "\n");
}

Status RunCitizens(const CitizenDaemonOptions& options, const std::atomic<bool>& stop) {
  std::vector<std::shared_ptr<PoliticianClient>> clients;
  // Execute is capped too when the network runs no application (execute_reply_cap.h).
  const ReplyCaps caps =
      CitizenReplyCaps(options.genesis.politicians.size(), options.genesis.max_pool_txs,
                       !options.genesis.apps.empty());
  for (const PoliticianInfo& p : options.genesis.politicians) {
    clients.push_back(std::make_shared<PoliticianClient>(p.address, 1500, caps));
  }
  TESSERA_ASSIGN_OR_RETURN(AppRegistry registry, LoadApps(options.genesis));
  auto apps = std::make_shared<const AppRegistry>(std::move(registry));
  std::vector<std::unique_ptr<Citizen>> citizens;
  for (uint32_t i = options.first; i < options.first + options.count; ++i) {
    CitizenOptions o;
    o.genesis = options.genesis;
    o.apps = apps;
    TESSERA_ASSIGN_OR_RETURN(o.keys, ReadSecretKeyFile(KeyPath(options.key_dir, i)));
    TESSERA_ASSIGN_OR_RETURN(std::string id_hex, ReadFile(IdPath(options.key_dir, i)));
    while (!id_hex.empty() && (id_hex.back() == '\n' || id_hex.back() == ' ')) id_hex.pop_back();
    TESSERA_ASSIGN_OR_RETURN(std::vector<uint8_t> id_bytes, FromHex(id_hex));
    TESSERA_ASSIGN_OR_RETURN(o.identity, DecodeIdentity(id_bytes));
    if (o.identity.citizen != o.keys.public_key()) {
      return InvalidArgumentError("identity of citizen " + std::to_string(i) +
                                  " is for another key");
    }
    if (!VerifyIdentity(o.identity, options.genesis.registrar)) {
      return PermissionDeniedError("identity of citizen " + std::to_string(i) +
                                   " is not signed by the genesis registrar");
    }
    o.head_file = options.key_dir / ("citizen-" + std::to_string(i) + ".head");
    o.vote_journal = options.key_dir / ("citizen-" + std::to_string(i) + ".votes");
    o.fault = options.fault;
    o.timing = options.timing;
    o.index = i;
    o.rng_seed = 0x9e3779b97f4a7c15ull * (i + 1) ^ static_cast<uint64_t>(::getpid());
    citizens.push_back(std::make_unique<Citizen>(std::move(o), clients));
  }
  // The citizens of this process check the same committee and proposer tickets and the same
  // witness lists, votes and sampled transfers: each VRF ticket and each Ed25519 signature is
  // verified once for all of them (vrf_cache.h, signature_cache.h; only successes are kept).
  // 16,384 tickets are ~100 blocks at a committee of 64 with per-step committees; 2^18
  // signatures (~80 bytes each) a few blocks' votes, witness lists and samples. A few tens of MB,
  // not allocated with --separate-checks.
  std::unique_ptr<VrfCache> shared_tickets;
  std::unique_ptr<SignatureCache> shared_signatures;
  if (options.share_checks) {
    shared_tickets = std::make_unique<VrfCache>(1 << 14);
    shared_signatures = std::make_unique<SignatureCache>(1 << 18);
  }
  std::vector<std::thread> threads;
  for (auto& c : citizens) {
    threads.emplace_back([&stop, tickets = shared_tickets.get(),
                          signatures = shared_signatures.get(), cp = c.get()] {
      VrfCache::Scope tickets_scope(tickets);
      SignatureCache::Scope signatures_scope(signatures);
      cp->Run(stop);
    });
  }
  spdlog::info("{} citizens running", citizens.size());
  // The genesis file's BA* threshold against the design adversary (validation_sample.h).
  const agreement::CommitteeChoice risk = ThresholdRisk(options.genesis);
  const bool within =
      risk.fork_per_block < kInvalidBlockBudget && risk.stall_per_block < kInvalidBlockBudget;
  const std::string line = fmt::format(
      "BA* threshold {} for committee {}: per block at f = 0.25, fork {:.3g}, stall {:.3g}",
      risk.threshold, risk.expected, risk.fork_per_block, risk.stall_per_block);
  if (within) {
    spdlog::info("{}", line);
  } else {
    spdlog::warn("{} (above the 1e-9 budget)", line);
  }
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (!options.stats_file.empty()) {
      Status s = WriteStats(options.stats_file, options.key_dir, options.first, citizens);
      if (!s.ok()) spdlog::warn("stats: {}", s.ToString());
    }
  }
  for (auto& t : threads) t.join();
  if (shared_tickets) {
    const OnceCacheStats tickets = shared_tickets->stats();
    const SignatureCache::Stats signatures = shared_signatures->stats();
    spdlog::info(
        "shared checks: VRF {} verified, {} cache hits, {} joined in flight; Ed25519 {} "
        "verified, {} cache hits",
        tickets.computed, tickets.hits, tickets.joined, signatures.misses, signatures.hits);
  }
  if (!options.stats_file.empty()) {
    TESSERA_RETURN_IF_ERROR(
        WriteStats(options.stats_file, options.key_dir, options.first, citizens));
  }
  return Status::Ok();
}

}  // namespace tessera::ledger::net
