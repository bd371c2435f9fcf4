// Certified blocks for the ledger/net unit tests that serve a chain as a politician would, or
// follow one (test-only: linked by the test binaries, never by a daemon). chain_follower_test.cc
// and localnet_audit_test.cc build their chains with it, block by block:
//
//   std::vector<KeyPair> citizens = SortedByPublicKey({...});
//   CertifiedBlockData b = CertifiedBlockAfter(g, head, citizens, registrar,
//                                              {.proposer = 1,
//                                               .signers = g.cert_threshold,
//                                               .pool_hashes = {},
//                                               .state_root = head.state_root});
//
// What it assumes of the genesis, and does not check: one committee per height
// (VoteCommittees::kPerHeight, so a signer's credential is its committee ticket for the height,
// drawn on the parent's seed), every citizen on every committee and a proposer (sortition
// population == committee_size == proposers == citizens.size(), so every ticket drawn here is
// selected), and no registrations pending. The proposer ticket and the certificate are of
// period 0. Whether the block is valid beyond that -- enough signers, a state root the
// transition produces -- is the caller's choice: tests build bad blocks with it on purpose.
#pragma once

#include <cstddef>
#include <vector>

#include "ledger/codec/messages.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/net/chain.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net::testing {

// What a test chooses about the next block.
struct CertifiedBlockSpec {
  size_t proposer = 0;               // citizens[proposer] proposes it
  size_t signers = 0;                // citizens[0 .. signers - 1] sign its certificate
  std::vector<Hash256> pool_hashes;  // the pools its header commits to
  Hash256 state_root{};              // the state root its header (and so the certificate) claims
};

// Block prev.height + 1 on `genesis`'s chain, linked to `prev` (hash, registrations, seed from
// the proposer's VRF output), as `spec` says, carrying an identity for every one of `citizens`
// (registered at genesis, signed by `registrar`). `citizens` must be sorted by public key: a
// certificate lists its signers in strictly increasing key order (SortedByPublicKey).
CertifiedBlockData CertifiedBlockAfter(const Genesis& genesis, const BlockHeader& prev,
                                       const std::vector<KeyPair>& citizens,
                                       const KeyPair& registrar, const CertifiedBlockSpec& spec);

// `keys` in increasing public-key order.
std::vector<KeyPair> SortedByPublicKey(std::vector<KeyPair> keys);

}  // namespace tessera::ledger::net::testing
