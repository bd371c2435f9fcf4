#include "ledger/net/testing/certified_blocks.h"

#include <algorithm>

#include "ledger/net/identity.h"
#include "ledger/net/registration.h"
#include "ledger/sortition.h"

namespace tessera::ledger::net::testing {

CertifiedBlockData CertifiedBlockAfter(const Genesis& genesis, const BlockHeader& prev,
                                       const std::vector<KeyPair>& citizens,
                                       const KeyPair& registrar, const CertifiedBlockSpec& spec) {
  const uint64_t h = prev.height + 1;
  CertifiedBlockData b;
  const KeyPair& proposer = citizens.at(spec.proposer);
  const Ticket ticket =
      *Draw(proposer, Role::kProposer, h, ProposerSeed(prev.seed, 0), genesis.sortition);
  b.header.height = h;
  b.header.prev_hash = BlockHash(prev);
  SetRegistrations(genesis, prev, {}, &b.header);
  b.header.seed = NextSeed(prev.seed, ticket.output);
  b.header.proposer = proposer.public_key();
  b.header.proposer_credential = ticket.proof;
  b.header.pool_hashes = spec.pool_hashes;
  b.header.state_root = spec.state_root;
  b.certificate.height = h;
  b.certificate.block_hash = BlockHash(b.header);
  for (size_t i = 0; i < spec.signers; ++i) {
    const KeyPair& signer = citizens.at(i);
    const Ticket t = *Draw(signer, Role::kCommittee, h, prev.seed, genesis.sortition);
    b.certificate.signers.push_back({signer.public_key(), t.proof,
                                     SignBlock(h, /*period=*/0, b.certificate.block_hash, signer)});
  }
  for (const KeyPair& k : citizens) {
    Identity id{.citizen = k.public_key(), .registered_at = 0};
    SignIdentity(id, registrar);
    b.identities.push_back(id);
  }
  return b;
}

std::vector<KeyPair> SortedByPublicKey(std::vector<KeyPair> keys) {
  std::sort(keys.begin(), keys.end(),
            [](const KeyPair& a, const KeyPair& b) { return a.public_key() < b.public_key(); });
  return keys;
}

}  // namespace tessera::ledger::net::testing
