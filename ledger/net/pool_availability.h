// Data availability and anti-censorship of pools (docs/ledger-network.md, "Data
// availability"): which pools a block may carry, which it must carry, and the check of a
// downloaded pool against its signed commitment.
//
// A committee member witnesses a pool only after downloading its data from some politician
// of its safe sample and checking it here (CheckPoolData), so a witness list attests data,
// not just a signed hash. From the committee's witness lists (TallyWitnesses):
//   - a pool is *eligible* once T_w members witnessed it (T_w exceeds the malicious members,
//     so some honest member holds the data and uploads it to any politician that lacks it);
//   - a pool is *required* once T_must = T_w + (C - T_soft) members witnessed it: a proposal
//     that leaves out a required pool is invalid (CheckBody), so a proposer cannot censor a
//     pool -- or propose the empty block -- once the honest members have seen its data.
// Why T_must: an honest proposer builds its body after seeing at least T_soft witness lists,
// so a validator holds at most C - T_soft lists the proposer lacked and counts at most
// C - T_soft more witnesses for any pool; a pool the validator finds required was therefore
// eligible for the proposer, and the honest proposer included it. (C is the expected
// committee; a committee drawn larger than C can make an honest proposal look censoring to
// some validators, which costs a proposal, never safety.) A pool of honest data is witnessed
// by every honest member, (1 - f) C of them with a fraction f of the committee malicious,
// which reaches T_must whenever T_soft - f C >= T_w: at f = 0.25, true for the thresholds the
// localnet derives and for the ledger-thresholds figures (docs/ledger-network.md).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/blockene.pb.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net {

// T_must = T_w + (C - T_soft), C = the genesis expected committee size.
uint32_t RequiredWitnesses(const Genesis& genesis);

struct PoolTally {
  // Pools witnessed by >= T_w members, one per politician (a politician with two such pools
  // equivocated and gets none), never the empty pool; in politician order.
  std::vector<Hash256> eligible;
  // The eligible pools witnessed by >= RequiredWitnesses(genesis) members.
  std::set<Hash256> required;
};

// Counts each (politician, pool) once per witness list.
PoolTally TallyWitnesses(const std::map<PublicKey, WitnessList>& lists, const Genesis& genesis);

// The pools of `own` (a proposer's own witness entries: pools whose data it downloaded and
// checked) that are not eligible in `tally` yet, the empty pool aside. An honest proposer
// waits for these, up to a fraction of the round, before it builds its body: every honest
// member witnesses a pool of honest data, so such a pool becomes eligible as their lists
// arrive, and proposing before then leaves it out -- with a committee of 64 on a loaded
// machine, blocks came out (nearly) empty (docs/ledger-engine.md).
std::vector<Hash256> PoolsAwaitingEligibility(const std::vector<WitnessEntry>& own,
                                              const PoolTally& tally);

// A proposal's pools against the tally: no duplicates, every pool eligible (UNAVAILABLE: it
// may become eligible once more witness lists arrive), every required pool present
// (INVALID_ARGUMENT: censorship).
Status CheckBody(const std::vector<Hash256>& body, const PoolTally& tally);

// A pool downloaded for `expected` at height h: a commitment signed by its genesis
// politician for h and `expected`, at most max_pool_txs transactions and kMaxPoolBytes
// (client.h), and transactions that decode and hash to it. Returns the commitment.
Result<TxPoolCommitment> CheckPoolData(const Pool& pool, const Hash256& expected, uint64_t h,
                                       const Genesis& genesis);

}  // namespace tessera::ledger::net
