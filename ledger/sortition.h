// Sortition: who sits on a block's committee and who may propose it, decided by each
// citizen's own VRF lottery ticket and checkable by anyone from the public key and proof.
//
// For block h a citizen computes (beta, pi) = ECVRF(sk, alpha) with
//   alpha = "tessera/sortition" || role || u64 h || seed_{h-L}
// and is selected iff beta, read as a fraction in [0, 1), is below expected / population
// (unweighted: one registered identity, one ticket). The comparison is exact integer
// arithmetic on the top 64 bits of beta, so every node reaches the same answer (go-algorand's
// floating-point binomial sortition shows why that matters; research note §7.1).
// Seeds chain block to block:
//   seed_h = SHA-256("tessera/seed" || seed_{h-1} || beta of block h-1's proposer)
// and tickets for block h use the seed L blocks back (seed_lookback), so the seed is fixed
// before anyone can know whether a key would win with it. Among selected proposers the lowest
// beta wins, as in Algorand.
//
//   TESSERA_ASSIGN_OR_RETURN(Ticket t, Draw(keys, Role::kCommittee, h, seed, params));
//   if (t.selected) { ... publish t.proof ... }
//   TESSERA_ASSIGN_OR_RETURN(Ticket seen, VerifyTicket(pk, Role::kCommittee, h, seed, proof,
//                                                      params));
#pragma once

#include <functional>
#include <span>
#include <string>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/crypto/vrf.h"

namespace tessera::ledger {

enum class Role : uint8_t { kCommittee = 1, kProposer = 2 };

struct SortitionParams {
  uint64_t population = 0;      // registered citizens eligible for this block
  uint64_t committee_size = 0;  // expected committee size (research note proposes ~2000)
  uint64_t proposers = 20;      // expected proposer candidates (Algorand's NumProposers)
  uint64_t seed_lookback = 2;   // L: tickets for block h use seed_{h-L}
};

Hash256 NextSeed(const Hash256& prev_seed, const VrfOutput& proposer_output);

// The VRF input for `role` at `height`; `seed` must be the seed of block height - L.
std::string SortitionInput(Role role, uint64_t height, const Hash256& seed);

// True iff beta / 2^512 < expected / population, decided on beta's top 64 bits with exact
// integer arithmetic (error below 2^-64). Everyone is selected when expected >= population.
bool IsSelected(const VrfOutput& beta, uint64_t expected, uint64_t population);

struct Ticket {
  VrfProof proof{};
  VrfOutput output{};
  bool selected = false;
};

// This key's ticket. INVALID_ARGUMENT for an empty population.
Result<Ticket> Draw(const KeyPair& keys, Role role, uint64_t height, const Hash256& seed,
                    const SortitionParams& params);

// Checks `proof` for (key, role, height, seed) and reports whether it wins; INVALID_ARGUMENT
// if the proof is not valid.
Result<Ticket> VerifyTicket(const PublicKey& key, Role role, uint64_t height, const Hash256& seed,
                            const VrfProof& proof, const SortitionParams& params);

struct ProposerClaim {
  PublicKey key{};
  VrfProof proof{};
};

// Index of the winning proposer among `claims`: the valid, selected claim with the lowest
// output. Invalid or unselected claims are ignored; NOT_FOUND if none remains.
Result<size_t> SelectProposer(std::span<const ProposerClaim> claims, uint64_t height,
                              const Hash256& seed, const SortitionParams& params);

// Checks a committee certificate for `height` whose tickets use `seed` (the seed of block
// height - L): each signer must hold a valid, selected committee ticket, a valid signature on
// (height, period, block_hash) and, if `registered` is given, be a registered citizen. Returns the
// number of valid signers; FAILED_PRECONDITION if fewer than `quorum`.
Result<size_t> VerifyCommitteeCertificate(
    const CommitteeCertificate& cert, const Hash256& seed, const SortitionParams& params,
    size_t quorum, const std::function<bool(const PublicKey&)>& registered = nullptr);

}  // namespace tessera::ledger
