// The citizen's side of evidence and blacklisting (evidence.h, blacklist.h): noticing a
// politician's second pool commitment for a height or a signed execution its check
// contradicts, and taking relayed evidence only after verifying it.
#include <spdlog/spdlog.h>

#include "ledger/net/citizen.h"
#include "ledger/net/round_item.h"

namespace tessera::ledger::net {

std::optional<RoundItem> Citizen::NoteCommitment(const TxPoolCommitment& c) {
  first_commitments_.erase(first_commitments_.begin(),
                           first_commitments_.lower_bound({latest_.height, 0}));
  auto [first, inserted] = first_commitments_.try_emplace({c.height, c.politician_id}, c);
  if (inserted) return std::nullopt;
  auto evidence = PoolEquivocation(first->second, c);
  if (!evidence.ok()) return std::nullopt;  // the same pool again
  auto news = blacklist_.Add(*evidence, latest_.height + 1);
  if (!news.ok() || !*news) return std::nullopt;
  spdlog::info("citizen: politician {} signed two pools for height {}: blacklisted until height {}",
               c.politician_id, c.height, c.height + kBlacklistBlocks);
  RoundItem item;
  item.set_payload(EncodeEvidence(*evidence));
  return item;
}

void Citizen::ConsiderEvidence(const RoundItem& item) {
  if (evidence_items_.size() >= kMaxEvidenceItems) evidence_items_.clear();
  evidence_items_.insert(RoundItemHash(item));
  auto news = blacklist_.AddEncoded(AsBytes(item.payload()), latest_.height + 1);
  if (!news.ok()) {
    spdlog::warn("citizen: refused evidence: {}", news.status().ToString());
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.evidence_refused;
    return;
  }
  if (*news) spdlog::info("citizen: blacklisted a politician on relayed evidence");
}

std::optional<ExecutionClaim> Citizen::SignedClaim(const ExecuteReply& reply,
                                                   const std::vector<Hash256>& pools,
                                                   PoliticianClient* from) const {
  const std::optional<uint32_t> i = IndexOf(from);
  if (!i) return std::nullopt;
  const PoliticianInfo& who = options_.genesis.politicians[*i];
  // The claim as this citizen asked for it, on the state it holds (execution_claim.h).
  ExecutionClaim claim =
      ClaimOfReply(who.id, latest_.height + 1, latest_.state_root, latest_.seed, pools, reply);
  if (!VerifyExecutionClaim(claim, who.key)) return std::nullopt;
  return claim;
}

void Citizen::NoteWrongExecution(const ExecutionClaim& claim,
                                 const std::vector<const Pool*>& executed,
                                 const ExecuteReply& reply) {
  std::vector<std::vector<std::string>> pools;
  for (const Pool* pool : executed) pools.emplace_back(pool->txs().begin(), pool->txs().end());
  auto evidence = WrongExecutionEvidence(claim, std::move(pools), reply.proof());
  if (!evidence.ok()) {  // larger than kMaxEvidenceBytes: only counted (bad_politician_answers)
    spdlog::warn("citizen: politician {} executed block {} wrongly; no evidence: {}",
                 claim.politician_id, claim.height, evidence.status().ToString());
    return;
  }
  // Re-executed with every signature checked before anyone is blacklisted (blacklist.h).
  auto news = blacklist_.Add(*evidence, latest_.height + 1);
  if (!news.ok()) {
    spdlog::warn("citizen: politician {}'s execution of block {} not proved wrong: {}",
                 claim.politician_id, claim.height, news.status().ToString());
    return;
  }
  if (!*news) return;
  spdlog::info(
      "citizen: politician {} signed a wrong execution of block {}: blacklisted until "
      "height {}",
      claim.politician_id, claim.height, claim.height + kBlacklistBlocks);
  RoundItem item;
  item.set_payload(EncodeEvidence(*evidence));
  evidence_items_.insert(RoundItemHash(item));
  evidence_to_post_.push_back(std::move(item));
}

void Citizen::PostEvidence(Round& r) {
  for (const RoundItem& item : std::exchange(evidence_to_post_, {})) PostAll(r, item);
}

}  // namespace tessera::ledger::net
