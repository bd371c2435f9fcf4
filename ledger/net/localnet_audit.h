// The localnet's final audit of what the processes hold, against the auditor's own replay of
// the chain (chain_replay.h): every honest politician has the replayed blocks and serves proofs
// that verify against the certified state root and match the replay; every honest citizen's
// head is on the replayed chain; the citizens' traffic and CPU per committee block.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <vector>

#include "core/status.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/chain_replay.h"
#include "ledger/net/client.h"
#include "ledger/net/localnet.h"

namespace tessera::ledger::net {

// The replayed accounts' balances sum to `total` (the genesis total): no money created or lost.
bool BalancesConserved(const ChainReplay& replay, uint64_t total);

struct AuditedPolitician {
  uint32_t id = 0;
  PoliticianClient* client = nullptr;
  bool restarted = false;  // the one killed with SIGKILL and restarted during the run
};

// Waits (20 s in all) for each politician to reach the replay's height, then compares every
// block hash and a proof of `probe` at that height. Sets report->politicians_agree,
// proofs_ok, forks and the restarted_* fields; says what failed on `progress`.
void AuditPoliticians(const std::vector<AuditedPolitician>& politicians, const ChainReplay& replay,
                      const std::vector<Hash256>& probe, LocalnetReport* report,
                      std::ostream& progress);

struct CitizenStatsFile {
  std::filesystem::path path;  // a citizen daemon's --stats JSON
  bool malicious = false;      // counted for rejected proposals and bad answers only
};

// Reads the citizen daemons' stats: sets report->citizens_agree (every honest head on the
// replayed chain) and the per-committee-block bytes, CPU and following figures. DATA_LOSS for
// a stats file that is not JSON. Blacklistings by honest citizens are counted against
// `malicious_politicians` (indexed by politician id) as deserved or not.
Status AddCitizenStats(const std::vector<CitizenStatsFile>& files, const ChainReplay& replay,
                       const std::vector<bool>& malicious_politicians, LocalnetReport* report);

}  // namespace tessera::ledger::net
