// Who may make a politician do expensive work for them (issue #13): executing a candidate
// block (Execute: a multi-proof over every account the block touches) and reading state
// (ReadState: a multi-proof). Both used to be open to anyone, so one client could keep a
// politician busy building proofs.
//
// A request is signed by the caller's key, over the request's canonical bytes and a domain
// string, and carries the caller's registrar-signed identity (identity.h):
//   * Execute: only committee members of the height being executed; the request also carries
//     the member's committee ticket (VRF proof) for that height, which the politician checks;
//     or, with per-step committees (genesis.h VoteCommittees), a member of the soft
//     committee of a period (at most kExecutePeriodsAhead past the politician's view of the
//     height) with that vote ticket, the request naming (period, step): a member drawn to
//     soft-vote a block must validate it. Never a cert ticket: it must stay secret until the
//     cert vote (agreement/thresholds.h), and cert members vote on the soft quorum.
//   * ReadState: any registered identity; or none, in which case the read is served from a
//     small anonymous budget shared by all unauthenticated callers (wallets that are not
//     citizens, the auditor, tools).
// Each identity has its own rate budget (rate_limiter.h), so a flood from one caller -- or
// from all anonymous callers together -- is refused (RESOURCE_EXHAUSTED) without slowing the
// others. Signatures are checked before the caller's budget is charged, so nobody can spend
// another identity's budget.
#pragma once

#include <string>
#include <vector>

#include "ledger/crypto/ed25519.h"
#include "ledger/crypto/vrf.h"
#include "ledger/net/blockene.pb.h"

namespace tessera::ledger::net {

// The caller's credentials: its key, its encoded identity, and (for Execute) its committee
// ticket proof for the height.
struct RequestSigner {
  const KeyPair& keys;
  std::string identity;
  VrfProof credential{};
  // Which ticket `credential` is: step 0, the height's committee ticket; else a vote ticket
  // for (vote_period, vote_step) (per-step committees, soft or cert).
  uint32_t vote_period = 0;
  uint8_t vote_step = 0;
};

// How far past the highest period with a next quorum the politician holds (VoteRelay
// floor_period) an Execute's vote ticket may be: a citizen may be a period ahead of what one
// politician has seen; a bound keeps a citizen from searching many periods for some winning
// ticket (each (period, step) is one more lottery ticket).
inline constexpr uint32_t kExecutePeriodsAhead = 2;

// The bytes a request's signature covers (everything but the signature itself).
std::string ExecuteSigningBytes(const ExecuteRequest& req);
std::string StateSigningBytes(const StateRequest& req);

void SignExecuteRequest(ExecuteRequest& req, const RequestSigner& signer);
void SignStateRequest(StateRequest& req, const RequestSigner& signer);

inline constexpr std::string_view kExecuteDomain = "execute-request";
inline constexpr std::string_view kStateDomain = "state-request";

}  // namespace tessera::ledger::net
