// Deterministic synthetic workloads for tests, benchmarks, the crash test and the demo.
//
// The same (seed, version) always yields the same block, so a process that reopens a store
// after a crash can recompute, independently, the root every committed version must have.
#pragma once

#include <vector>

#include "ledger/state/account.h"

namespace tessera::ledger {

// The key of synthetic account number `index` (SHA-256 of "account" || u64 index).
Hash256 SyntheticAccountKey(uint64_t index);

// The genesis updates: accounts 0..count-1, each with `balance` and nonce 0.
std::vector<LeafUpdate> SyntheticGenesis(uint64_t count, uint64_t balance);

// Block `version` of a run: up to `size` distinct accounts among `accounts`, each set to a
// value derived from (seed, version, account).
std::vector<LeafUpdate> SyntheticBlock(uint64_t seed, uint64_t version, uint64_t accounts,
                                       size_t size);

}  // namespace tessera::ledger
