// Registration on the chain and the live population at each height (issue #12: "use the live
// population at each height, not the genesis count").
//
// A citizen registered after genesis is registered ON THE CHAIN: block h carries, in its
// header, the registrar's signature over the citizen's identity (key, registered_at = h)
// (messages.h Registration). The header also carries registered_through, the number of
// citizens registered through each of the blocks h - d + 1 .. h (d = registration_delay), so
// that the population eligible at block h + 1 -- citizens registered through block
// h + 1 - d, exactly the identities EligibleAt(h + 1) accepts -- is
//
//   population(h + 1) = header_h.registered_through.front()
//
// and anyone holding only the parent header (a citizen, a politician, a wallet) computes it,
// and checks a new header's registrations and counts, without the state or older headers.
// Every rule that depended on the genesis count now takes the live one (ParamsAt): the
// sortition probability C / population of committee and proposer tickets, and the BA*
// threshold T, which is ledger-thresholds' choice (validation_sample.h DesignThreshold, the
// tool's own code) for the live population and expected committee C. At the genesis
// population the genesis file's thresholds apply unchanged.
//
// Trust: the registrar is the Sybil-resistance root (identity.h) and is trusted not to sign a
// key twice; a registration is valid only in the block whose height it names, and a block
// lists each key at most once, so no proposer can count one registration twice. A proposer
// may leave a registration out (censorship delays it; the registrar signs it again for a
// later height). What this does not check: an identity the registrar signed but that never
// reached its block is still accepted by CheckIdentity (no node keeps the registry), so it
// is eligible without being counted; a registrar should hand a citizen its identity only
// after the block carrying it is certified (ledger-localnet's registrar does not need to: its
// late citizens' identities are posted before block 1 and it audits that they were counted).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/client.h"
#include "ledger/net/genesis.h"
#include "ledger/net/identity.h"

namespace tessera::ledger::net {

// The identity a registration in block `height` stands for.
Identity RegisteredIdentity(const Registration& r, uint64_t height);

// The citizens eligible for the committee of block prev.height + 1.
uint64_t PopulationAfter(const BlockHeader& prev);

// Everything a node needs to draw, check and count the committee of block prev.height + 1.
struct HeightParams {
  uint64_t height = 0;
  SortitionParams sortition;  // population = PopulationAfter(prev)
  uint32_t witness_threshold = 0;
  uint32_t soft_threshold = 0;
  uint32_t cert_threshold = 0;
  // The fraction of a block's signatures a committee member verifies itself: the genesis
  // file's validation_sample, raised to the sound fraction for this population, C and T_cert
  // (validation_sample.h; the tool's SoundSampleFraction).
  double validation_sample = 1.0;
};

// The parameters of block prev.height + 1 (see the file comment). Thresholds: the genesis
// file's at the genesis population; otherwise T_soft = T_cert = ledger-thresholds' choice for
// (live population, C) at f = 0.25 and 1e-9 per block, or floor(2 min(C, N) / 3) + 1 where no
// T meets the budget (small random committees; the same fallback as ledger-localnet). T_w is
// the genesis file's. Thread-safe; threshold and sample choices are cached per population.
HeightParams ParamsAt(const Genesis& genesis, const BlockHeader& prev);

// The sortition parameters alone (no threshold choice): genesis.sortition with the live
// population.
SortitionParams SortitionAt(const Genesis& genesis, const BlockHeader& prev);

// The thresholds for a live population (the second sentence above).
HeightParams ThresholdsFor(const Genesis& genesis, uint64_t population);

// Sets proposal->registrations to the valid ones of `pending` for block prev.height + 1 (the
// registrar's signature checks, registered_at is that height; sorted, duplicates dropped, at
// most kMaxRegistrationsPerBlock) and proposal->registered_through to match them.
void SetRegistrations(const Genesis& genesis, const BlockHeader& prev,
                      const std::vector<Identity>& pending, BlockHeader* proposal);

// OK iff `header` (block prev.height + 1) carries registrations the registrar signed for its
// height, in strictly increasing key order, and registered_through = prev's shifted by one
// block with the new count appended. INVALID_ARGUMENT / PERMISSION_DENIED with the reason.
Status CheckRegistrations(const Genesis& genesis, const BlockHeader& prev,
                          const BlockHeader& header);

// The registrar's side: posts `id` to politician `p` as a round item of block
// id.registered_at, for that block's proposer to list (politicians take round items at most two
// blocks ahead of their latest block).
Status PostRegistration(PoliticianClient& p, const Identity& id);

}  // namespace tessera::ledger::net
