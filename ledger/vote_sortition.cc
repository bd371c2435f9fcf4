#include "ledger/vote_sortition.h"

#include "ledger/codec/canonical.h"

namespace tessera::ledger {

std::string VoteSortitionInput(uint64_t height, uint32_t period, uint8_t step,
                               const Hash256& seed) {
  CanonicalWriter w;
  w.Raw(AsBytes("tessera/sortition")).U8(kVoteRole).U64(height).U32(period).U8(step).Array(seed);
  return w.Take();
}

Result<Ticket> DrawVote(const KeyPair& keys, uint64_t height, uint32_t period, uint8_t step,
                        const Hash256& seed, const SortitionParams& params) {
  if (params.population == 0) return InvalidArgumentError("vote sortition: population is zero");
  Ticket t;
  TESSERA_ASSIGN_OR_RETURN(t.proof,
                           VrfProve(keys, AsBytes(VoteSortitionInput(height, period, step, seed))));
  TESSERA_ASSIGN_OR_RETURN(t.output, VrfProofToHash(t.proof));
  t.selected = IsSelected(t.output, params.committee_size, params.population);
  return t;
}

Result<Ticket> VerifyVoteTicket(const PublicKey& key, uint64_t height, uint32_t period,
                                uint8_t step, const Hash256& seed, const VrfProof& proof,
                                const SortitionParams& params) {
  if (params.population == 0) return InvalidArgumentError("vote sortition: population is zero");
  Ticket t;
  t.proof = proof;
  TESSERA_ASSIGN_OR_RETURN(
      t.output, VrfVerify(key, AsBytes(VoteSortitionInput(height, period, step, seed)), proof));
  t.selected = IsSelected(t.output, params.committee_size, params.population);
  return t;
}

}  // namespace tessera::ledger
