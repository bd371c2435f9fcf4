// The citizen's side of evidence and blacklisting (evidence.h, blacklist.h): noticing a
// politician's second pool commitment for a height, and taking relayed evidence only after
// verifying it.
#include <spdlog/spdlog.h>

#include "ledger/net/citizen.h"

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

void Citizen::ConsiderEvidence(const std::string& payload) {
  auto news = blacklist_.AddEncoded(AsBytes(payload), latest_.height + 1);
  if (!news.ok()) {
    spdlog::warn("citizen: refused evidence: {}", news.status().ToString());
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.evidence_refused;
    return;
  }
  if (*news) spdlog::info("citizen: blacklisted a politician on relayed evidence");
}

}  // namespace tessera::ledger::net
