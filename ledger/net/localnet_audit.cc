#include "ledger/net/localnet_audit.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file.h"
#include "ledger/state/account.h"
#include "ledger/state/state_proof.h"

namespace tessera::ledger::net {

bool BalancesConserved(const ChainReplay& replay, uint64_t total) {
  uint64_t sum = 0;
  for (const Hash256& key : replay.accounts()) {
    auto leaf = replay.tree().Get(key);
    auto a = leaf ? DecodeAccount(*leaf) : Result<Account>(NotFoundError("missing account"));
    if (!a.ok()) return false;
    sum += a->balance;
  }
  return sum == total;
}

void AuditPoliticians(const std::vector<AuditedPolitician>& politicians, const ChainReplay& replay,
                      const std::vector<Hash256>& probe, LocalnetReport* report,
                      std::ostream& progress) {
  using Clock = std::chrono::steady_clock;
  report->politicians_agree = true;
  report->proofs_ok = true;
  auto wait_until = Clock::now() + std::chrono::seconds(20);
  const uint64_t H = replay.height();
  for (const AuditedPolitician& p : politicians) {
    const uint32_t i = p.id;
    const bool restarted = p.restarted;
    uint64_t h = 0;
    do {  // at least one look, even after an earlier politician used up the shared wait
      auto s = p.client->GetStatus();
      if (s.ok() && (h = s->height()) >= H) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (Clock::now() < wait_until);
    bool caught_up = h >= H;
    bool same = caught_up;
    for (uint64_t k = 1; k <= H && same; ++k) {
      auto b = p.client->GetBlock(k);
      auto header = b.ok() ? DecodeBlockHeader(AsBytes(b->block().header()))
                           : Result<BlockHeader>(b.status());
      if (!header.ok() || BlockHash(*header) != replay.hashes()[k]) {
        same = false;
        ++report->forks;
      }
    }
    bool proofs = false;
    auto state = p.client->ReadState(H, probe);
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
    report->politicians_agree &= same;
    report->proofs_ok &= proofs;
    if (restarted) {
      report->restarted_caught_up = same;
      report->restarted_proofs_ok = proofs;
    }
    if (!same || !proofs) {
      progress << "audit: politician " << i << (caught_up ? "" : " did not catch up")
               << (same ? "" : " holds other blocks") << (proofs ? "" : " served bad proofs")
               << "\n";
    }
  }
}

Status AddCitizenStats(const std::vector<CitizenStatsFile>& files, const ChainReplay& replay,
                       const std::vector<bool>& malicious_politicians, LocalnetReport* report) {
  report->citizens_agree = true;
  uint64_t up = 0, down = 0, cpu = 0, rounds = 0, following_bytes = 0, following_blocks = 0;
  const uint64_t H = replay.height();
  for (const CitizenStatsFile& d : files) {
    auto text = ReadFile(d.path);
    if (!text.ok()) {
      if (!d.malicious) report->citizens_agree = false;
      continue;
    }
    nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded()) return DataLossError("bad stats file " + d.path.string());
    if (!d.malicious && doc.contains("process")) {
      const auto& proc = doc["process"];
      report->citizen_ed25519_verifications += proc.value("ed25519_verifications", uint64_t{0});
      report->citizen_vrf_verifications += proc.value("vrf_verifications", uint64_t{0});
      report->citizen_vrf_proofs += proc.value("vrf_proofs", uint64_t{0});
    }
    for (const auto& c : doc["citizens"]) {
      report->rejected_proposals += c["rejected_proposals"].get<uint64_t>();
      report->bad_politician_answers += c["bad_politician_answers"].get<uint64_t>();
      if (d.malicious) continue;
      report->evidence_refused += c.value("evidence_refused", uint64_t{0});
      for (const auto& id : c.value("blacklisted", nlohmann::json::array())) {
        const uint32_t p = id.get<uint32_t>();
        if (p < malicious_politicians.size()) {
          report->blacklisted_by.resize(malicious_politicians.size());
          ++report->blacklisted_by[p];
        }
        (p < malicious_politicians.size() && malicious_politicians[p]
             ? report->blacklisted_malicious
             : report->blacklisted_honest) += 1;
      }
      report->txs_validated += c["txs_validated"].get<uint64_t>();
      report->signatures_checked += c["signatures_checked"].get<uint64_t>();
      report->citizen_round_listings += c.value("round_listings", uint64_t{0});
      report->citizen_largest_sample =
          std::max(report->citizen_largest_sample, c.value("largest_sample", uint64_t{0}));
      uint64_t h = c["height"].get<uint64_t>();
      if (h > H || ToHex(replay.hashes()[h]) != c["head"].get<std::string>()) {
        report->citizens_agree = false;
      }
      up += c["bytes_up"].get<uint64_t>();
      down += c["bytes_down"].get<uint64_t>();
      cpu += c["cpu_ns"].get<uint64_t>();
      rounds += c["committee_rounds"].get<uint64_t>();
      following_bytes += c["following_bytes"].get<uint64_t>();
      following_blocks += c["following_blocks"].get<uint64_t>();
      report->citizen_storage_bytes =
          std::max<uint64_t>(report->citizen_storage_bytes, c["storage_bytes"].get<uint64_t>());
    }
  }
  report->committee_rounds = rounds;
  if (rounds) {
    report->citizen_bytes_up_per_block = static_cast<double>(up) / rounds;
    report->citizen_bytes_down_per_block = static_cast<double>(down) / rounds;
    report->citizen_cpu_ms_per_block = cpu / 1e6 / rounds;
    report->citizen_member_bytes_per_block =
        static_cast<double>(up + down - std::min(up + down, following_bytes)) / rounds;
  }
  if (following_blocks) {
    report->citizen_nonmember_bytes_per_block =
        static_cast<double>(following_bytes) / following_blocks;
  }
  return Status::Ok();
}

}  // namespace tessera::ledger::net
