// The localnet's config file and its report (localnet.h documents both).
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "ledger/net/localnet.h"

namespace tessera::ledger::net {

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
  TESSERA_ASSIGN_OR_RETURN(std::string committees,
                           c.GetStringOr("network.vote_committees", "per-height"));
  if (committees == "per-step") {
    l.vote_committees = VoteCommittees::kPerStep;
  } else if (committees == "per-height") {
    l.vote_committees = VoteCommittees::kPerHeight;
  } else {
    return InvalidArgumentError("network.vote_committees must be per-height or per-step");
  }
  TESSERA_ASSIGN_OR_RETURN(l.citizen_shared_checks,
                           c.GetBoolOr("network.citizen_shared_checks", l.citizen_shared_checks));
  TESSERA_ASSIGN_OR_RETURN(l.apps, ParseAppParams(c));
  TESSERA_RETURN_IF_ERROR(real("load.rate", l.rate, 0, 1e6));
  TESSERA_RETURN_IF_ERROR(real("load.duration_s", l.duration_s, 1, 86400));
  TESSERA_ASSIGN_OR_RETURN(int64_t blocks, c.GetIntOr("load.blocks", 0));
  l.blocks = static_cast<uint64_t>(std::max<int64_t>(blocks, 0));
  TESSERA_RETURN_IF_ERROR(real("load.double_spend_fraction", l.double_spend_fraction, 0, 1));
  TESSERA_RETURN_IF_ERROR(u32("load.fanout", l.fanout));
  TESSERA_RETURN_IF_ERROR(u32("load.threads", l.load_threads));
  if (l.load_threads < 1 || l.load_threads > 64) {
    return InvalidArgumentError("load.threads must be in [1, 64]");
  }
  TESSERA_RETURN_IF_ERROR(real("network.target_round_s", l.target_round_s, 0, 3600));
  TESSERA_RETURN_IF_ERROR(real("network.backlog_pools", l.backlog_pools, 1, 1000));
  TESSERA_RETURN_IF_ERROR(real("network.waiting_pools", l.waiting_pools, 0, 1000));
  TESSERA_ASSIGN_OR_RETURN(l.log_level, c.GetStringOr("network.log_level", l.log_level));
  if (spdlog::level::from_str(l.log_level) == spdlog::level::off && l.log_level != "off") {
    return InvalidArgumentError("network.log_level '" + l.log_level +
                                "' is not a spdlog level (trace, debug, info, warn, err, off)");
  }
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
  TESSERA_ASSIGN_OR_RETURN(int64_t stop, c.GetIntOr("fault.stop_politician", -1));
  l.stop_politician = static_cast<int>(stop);
  TESSERA_ASSIGN_OR_RETURN(int64_t stop_at, c.GetIntOr("fault.stop_at_block", 2));
  l.stop_at_block = static_cast<uint64_t>(std::max<int64_t>(stop_at, 1));
  TESSERA_ASSIGN_OR_RETURN(int64_t poll, c.GetIntOr("timing.poll_ms", l.timing.poll_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t wit, c.GetIntOr("timing.witness_ms", l.timing.witness_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t prop, c.GetIntOr("timing.proposal_ms", l.timing.proposal_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t to,
                           c.GetIntOr("timing.round_timeout_ms", l.timing.round_timeout_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t wait,
                           c.GetIntOr("timing.follow_wait_ms", l.timing.follow.wait_ms));
  TESSERA_ASSIGN_OR_RETURN(int64_t every,
                           c.GetIntOr("timing.certify_every", l.timing.follow.certify_every));
  l.timing = {static_cast<int>(poll), static_cast<int>(wit), static_cast<int>(prop),
              static_cast<int>(to)};
  if (wait < 0 || wait > 5000 || every < 1) {
    return InvalidArgumentError(
        "timing.follow_wait_ms must be in [0, 5000] and "
        "timing.certify_every at least 1");
  }
  TESSERA_ASSIGN_OR_RETURN(int64_t round_wait, c.GetIntOr("timing.round_wait_ms", 0));
  if (round_wait < 0 || round_wait > 5000) {
    return InvalidArgumentError("timing.round_wait_ms must be in [0, 5000]");
  }
  l.timing.round_wait_ms = static_cast<int>(round_wait);
  l.timing.follow.wait_ms = static_cast<int>(wait);
  l.timing.follow.certify_every = static_cast<uint32_t>(every);
  // Forced BA* recovery (citizen.h CitizenTiming): test switches, applied to every citizen
  // (after the assignment of l.timing above, which resets every other field).
  TESSERA_ASSIGN_OR_RETURN(l.timing.split_proposals,
                           c.GetBoolOr("fault.split_proposals", l.timing.split_proposals));
  TESSERA_ASSIGN_OR_RETURN(l.timing.recovery, c.GetBoolOr("fault.recovery", l.timing.recovery));

  if (l.politicians < 1 || l.citizens < 1 || l.citizens_per_process < 1 || l.accounts < 2) {
    return InvalidArgumentError("need at least 1 politician, 1 citizen and 2 accounts");
  }
  if (l.late_citizens >= l.citizens) {
    return InvalidArgumentError("network.late_citizens must leave some genesis citizens");
  }
  if (l.late_citizens > 0 && (l.register_at < 1 || l.register_at > 2)) {
    // Registrations are posted before block 1; politicians take them two blocks ahead at most.
    return InvalidArgumentError("network.register_at must be 1 or 2");
  }
  if (l.kill_politician >= static_cast<int>(l.politicians)) {
    return InvalidArgumentError("fault.kill_politician is not a politician index");
  }
  if (l.stop_politician >= static_cast<int>(l.politicians)) {
    return InvalidArgumentError("fault.stop_politician is not a politician index");
  }
  return l;
}

std::string LocalnetReport::ToJson() const {
  nlohmann::json j = {{"blocks", blocks},
                      {"committed_txs", committed_txs},
                      {"offered_txs", offered_txs},
                      {"submitted_txs", submitted_txs},
                      {"busy_submissions", busy_submissions},
                      {"resent_submissions", resent_submissions},
                      {"busy_answers", busy_answers},
                      {"idle_misses", idle_misses},
                      {"rejected_submissions", rejected_submissions},
                      {"offered_tx_per_s", offered_tx_per_s},
                      {"submitted_tx_per_s", submitted_tx_per_s},
                      {"seconds", seconds},
                      {"tx_per_s", tx_per_s},
                      {"steady_tx_per_s", steady_tx_per_s},
                      {"txs_per_block", txs_per_block},
                      {"block_interval_s", block_interval_s},
                      {"latency_p50_s", latency_p50_s},
                      {"latency_p90_s", latency_p90_s},
                      {"latency_p99_s", latency_p99_s},
                      {"latency_max_s", latency_max_s},
                      {"committee_rounds", committee_rounds},
                      {"citizen_bytes_up_per_block", citizen_bytes_up_per_block},
                      {"citizen_bytes_down_per_block", citizen_bytes_down_per_block},
                      {"citizen_member_bytes_per_block", citizen_member_bytes_per_block},
                      {"citizen_nonmember_bytes_per_block", citizen_nonmember_bytes_per_block},
                      {"citizen_cpu_ms_per_block", citizen_cpu_ms_per_block},
                      {"cpu_s_politicians", cpu_s_politicians},
                      {"cpu_s_citizens", cpu_s_citizens},
                      {"cpu_s_launcher", cpu_s_launcher},
                      {"cpu_s_malicious_politicians", cpu_s_malicious_politicians},
                      {"cpu_s_malicious_citizens", cpu_s_malicious_citizens},
                      {"cpu_ms_per_tx_politicians", cpu_ms_per_tx_politicians},
                      {"cpu_ms_per_tx_citizens", cpu_ms_per_tx_citizens},
                      {"cpu_ms_per_tx_launcher", cpu_ms_per_tx_launcher},
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
                      {"citizen_round_listings", citizen_round_listings},
                      {"citizen_largest_sample", citizen_largest_sample},
                      {"citizen_ed25519_verifications", citizen_ed25519_verifications},
                      {"citizen_vrf_verifications", citizen_vrf_verifications},
                      {"citizen_vrf_proofs", citizen_vrf_proofs},
                      {"app_txs_applied", app_txs_applied},
                      {"late_first_signed", late_first_signed},
                      {"late_signed_too_early", late_signed_too_early},
                      {"registered_on_chain", registered_on_chain},
                      {"last_block_population", last_block_population},
                      {"last_block_cert_threshold", last_block_cert_threshold},
                      {"recovered_blocks", recovered_blocks},
                      {"max_period", max_period},
                      {"blacklisted_malicious", blacklisted_malicious},
                      {"blacklisted_honest", blacklisted_honest},
                      {"blacklisted_by", blacklisted_by},
                      {"evidence_refused", evidence_refused}};
  // The latency breakdown, flat: latency_<stage>_{p50,p99,tail}_s (tail: the mean over the
  // transfers at or above the p99 total, so a p99 reads as its stages).
  const LatencyBreakdown& b = latency_breakdown;
  for (const auto& [name, stage] :
       {std::pair{"admission", &b.admission}, std::pair{"mempool", &b.mempool},
        std::pair{"pool_to_block", &b.pool_to_block},
        std::pair{"block_to_visible", &b.block_to_visible}, std::pair{"total", &b.total}}) {
    j[std::string("latency_") + name + "_p50_s"] = stage->p50_s;
    j[std::string("latency_") + name + "_p99_s"] = stage->p99_s;
    j[std::string("latency_") + name + "_tail_s"] = stage->tail_mean_s;
  }
  j["latency_attributed_txs"] = b.attributed;
  j["latency_unattributed_txs"] = b.unattributed;
  return j.dump(1);
}

double BudgetTargetRoundS(const LocalnetConfig& cfg) {
  if (cfg.target_round_s > 0) return cfg.target_round_s;
  return 0.6 * cfg.timing.next_vote_deadline_ms() / 1000.0;
}

}  // namespace tessera::ledger::net
