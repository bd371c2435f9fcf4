// Account state as stored in the state tree's leaves.
//
// Every leaf of the sparse Merkle tree holds a 32-byte LeafValue under a 256-bit key. An
// account occupies the leaf at AccountKey(public key) = SHA-256(public key); its value is the
// big-endian balance, the big-endian nonce and 16 reserved zero bytes. Systems that store
// other records (reviews) put a SHA-256 digest of their record in the 32 bytes instead.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "ledger/crypto/ed25519.h"

namespace tessera::ledger {

using LeafValue = std::array<uint8_t, 32>;

struct LeafUpdate {
  Hash256 key;
  LeafValue value;
};

struct Account {
  uint64_t balance = 0;
  uint64_t nonce = 0;  // number of transfers sent; the next transfer must carry this nonce
  friend bool operator==(const Account&, const Account&) = default;
};

Hash256 AccountKey(const PublicKey& key);
LeafValue EncodeAccount(const Account& account);
// INVALID_ARGUMENT if the reserved bytes are not zero (the leaf is not an account).
Result<Account> DecodeAccount(const LeafValue& value);

}  // namespace tessera::ledger
