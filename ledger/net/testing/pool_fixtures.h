// Test fixtures shared by the ledger/net unit tests (test-only: linked by the test binaries,
// never by a daemon): deterministic keys, a small genesis, and signed pools.
//
// Conventions every caller keeps: the registrar is key 100, politician i is key 200 + i at an
// unreachable address (127.0.0.1:(1 + i)), so a node under test never reaches a peer unless
// the test replaces the address. Keys are derived from a per-test salt, so two test files
// never share keys by accident and a test keeps the keys (and committees) it always had.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ledger/codec/messages.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/net/blockene.pb.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net::testing {

// Key `i` of the test named by `salt`: FromSeed(Sha256(salt + decimal i)).
KeyPair TestKey(std::string_view salt, int i);

struct TestGenesisSpec {
  std::string_view salt;
  uint32_t citizens = 4;           // population, expected committee and proposers
  uint32_t threshold = 3;          // soft and cert
  uint32_t witness_threshold = 0;  // 0: the Genesis default
  uint32_t max_pool_txs = 0;       // 0: the Genesis default
  uint32_t politicians = 0;        // ids 0 .. politicians - 1, keys 200 + id
};
Genesis TestGenesis(const TestGenesisSpec& spec);

// `count` transfers of 1 from `from` (nonces 0 .. count - 1) to `to`, signed.
std::vector<LedgerTx> Transfers(const KeyPair& from, const PublicKey& to, int count);

// A pool of `politician` for `height` holding `txs`, its commitment signed by `signer` and
// claiming `claimed` transactions (-1: txs.size()).
Pool SignedPool(uint32_t politician, uint64_t height, const std::vector<LedgerTx>& txs,
                const KeyPair& signer, int claimed = -1);

}  // namespace tessera::ledger::net::testing
