// Vote committees: BA*'s committee of one (height, period, step), drawn per step as Algorand
// draws it (ledger/agreement/player.h Params::member), beside the per-height committee of
// sortition.h (witness lists, Execute calls) that Blockene draws once per block.
//
// For step s of period p at block h a citizen computes (beta, pi) = ECVRF(sk, alpha) with
//   alpha = "tessera/sortition" || 3 || u64 h || u32 p || u8 s || seed_{h-L}
// (3 = kVoteRole, after sortition.h's committee 1 and proposer 2; `s` is the vote's step byte,
// ledger/agreement/vote.h) and sits on that step's committee iff IsSelected(beta, C, N), with
// C and N the block's committee size and population (sortition.h). One ticket per (height,
// period, step): a member of one step's committee is a member of another's only by its own
// luck there, and a step whose draw was short is redrawn at the next step.
//
//   TESSERA_ASSIGN_OR_RETURN(Ticket t, DrawVote(keys, h, period, step, seed, params));
//   if (t.selected) { ... send the vote with t.proof ... }
//   TESSERA_ASSIGN_OR_RETURN(Ticket seen, VerifyVoteTicket(pk, h, period, step, seed, proof,
//                                                          params));
#pragma once

#include <string>

#include "core/status.h"
#include "ledger/sortition.h"

namespace tessera::ledger {

inline constexpr uint8_t kVoteRole = 3;

// The VRF input above; `seed` must be the seed of block height - L.
std::string VoteSortitionInput(uint64_t height, uint32_t period, uint8_t step, const Hash256& seed);

// This key's ticket for (height, period, step). INVALID_ARGUMENT for an empty population.
Result<Ticket> DrawVote(const KeyPair& keys, uint64_t height, uint32_t period, uint8_t step,
                        const Hash256& seed, const SortitionParams& params);

// Checks `proof` for (key, height, period, step, seed) and reports whether it wins;
// INVALID_ARGUMENT if the proof is not valid (e.g. a ticket of another step).
Result<Ticket> VerifyVoteTicket(const PublicKey& key, uint64_t height, uint32_t period,
                                uint8_t step, const Hash256& seed, const VrfProof& proof,
                                const SortitionParams& params);

}  // namespace tessera::ledger
