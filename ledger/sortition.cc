#include "ledger/sortition.h"

#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger {

Hash256 NextSeed(const Hash256& prev_seed, const VrfOutput& proposer_output) {
  Sha256Hasher h;
  h.Update("tessera/seed").Update(ByteSpan(prev_seed)).Update(ByteSpan(proposer_output));
  return h.Final();
}

std::string SortitionInput(Role role, uint64_t height, const Hash256& seed) {
  CanonicalWriter w;
  w.Raw(AsBytes("tessera/sortition")).U8(static_cast<uint8_t>(role)).U64(height).Array(seed);
  return w.Take();
}

bool IsSelected(const VrfOutput& beta, uint64_t expected, uint64_t population) {
  if (population == 0 || expected == 0) return false;
  if (expected >= population) return true;
  // threshold = floor(expected * 2^64 / population) < 2^64; selected iff top64(beta) < it.
  unsigned __int128 threshold =
      (static_cast<unsigned __int128>(expected) << 64) / static_cast<unsigned __int128>(population);
  uint64_t top = 0;
  for (int i = 0; i < 8; ++i) top = top << 8 | beta[i];
  return static_cast<unsigned __int128>(top) < threshold;
}

namespace {
uint64_t Expected(Role role, const SortitionParams& params) {
  return role == Role::kCommittee ? params.committee_size : params.proposers;
}
}  // namespace

Result<Ticket> Draw(const KeyPair& keys, Role role, uint64_t height, const Hash256& seed,
                    const SortitionParams& params) {
  if (params.population == 0) return InvalidArgumentError("sortition: population is zero");
  Ticket t;
  TESSERA_ASSIGN_OR_RETURN(t.proof, VrfProve(keys, AsBytes(SortitionInput(role, height, seed))));
  TESSERA_ASSIGN_OR_RETURN(t.output, VrfProofToHash(t.proof));
  t.selected = IsSelected(t.output, Expected(role, params), params.population);
  return t;
}

Result<Ticket> VerifyTicket(const PublicKey& key, Role role, uint64_t height, const Hash256& seed,
                            const VrfProof& proof, const SortitionParams& params) {
  if (params.population == 0) return InvalidArgumentError("sortition: population is zero");
  Ticket t;
  t.proof = proof;
  TESSERA_ASSIGN_OR_RETURN(t.output,
                           VrfVerify(key, AsBytes(SortitionInput(role, height, seed)), proof));
  t.selected = IsSelected(t.output, Expected(role, params), params.population);
  return t;
}

Result<size_t> SelectProposer(std::span<const ProposerClaim> claims, uint64_t height,
                              const Hash256& seed, const SortitionParams& params) {
  bool found = false;
  size_t best = 0;
  VrfOutput best_output{};
  for (size_t i = 0; i < claims.size(); ++i) {
    auto t = VerifyTicket(claims[i].key, Role::kProposer, height, seed, claims[i].proof, params);
    if (!t.ok() || !t->selected) continue;
    if (!found || t->output < best_output) {
      found = true;
      best = i;
      best_output = t->output;
    }
  }
  if (!found) return NotFoundError("no valid selected proposer among the claims");
  return best;
}

Result<size_t> VerifyCommitteeCertificate(const CommitteeCertificate& cert, const Hash256& seed,
                                          const SortitionParams& params, size_t quorum,
                                          const std::function<bool(const PublicKey&)>& registered) {
  size_t valid = 0;
  for (const CertificateSigner& s : cert.signers) {
    if (registered && !registered(s.citizen)) continue;
    if (!VerifyBlockSignature(cert.height, cert.period, cert.block_hash, s.citizen, s.signature))
      continue;
    auto t = VerifyTicket(s.citizen, Role::kCommittee, cert.height, seed, s.credential, params);
    if (t.ok() && t->selected) ++valid;
  }
  if (valid < quorum) {
    return FailedPreconditionError("committee certificate for height " +
                                   std::to_string(cert.height) + " has " + std::to_string(valid) +
                                   " valid signers, quorum is " + std::to_string(quorum));
  }
  return valid;
}

}  // namespace tessera::ledger
