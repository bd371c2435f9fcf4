// Citizen identities: a registrar-signed statement that a public key is one registered
// citizen, and from which block on it may sit on committees.
//
// Sybil resistance comes from the registrar (research note §2: one identity per device or per
// external identity provider); this is the pluggable attestor with a single trusted registrar
// key named in the genesis file. A citizen registered at height r is eligible for committees
// of blocks h >= r + registration_delay, so a key chosen after seeing a seed cannot be ground
// against it: the seed of block h - 1 (the sortition lookback used here is 1) is unknown until
// block h - 1 is certified, and by then every key eligible at h was fixed delay - 1 blocks ago.
// Identities registered at genesis (r = 0) are eligible from block 1.
//
// Canonical encoding (canonical.h): type 0x40 | citizen(32) | registered_at u64 | sig(64).
#pragma once

#include <string>

#include "core/status.h"
#include "ledger/crypto/ed25519.h"

namespace tessera::ledger::net {

// The identity's canonical type byte; a round item whose payload starts with it is a
// registration for that round's block (registration.h).
inline constexpr uint8_t kIdentityMessageType = 0x40;

struct Identity {
  PublicKey citizen{};
  uint64_t registered_at = 0;
  Signature signature{};  // by the registrar, over the encoding without the signature
  friend bool operator==(const Identity&, const Identity&) = default;
};

std::string EncodeIdentity(const Identity& id);
Result<Identity> DecodeIdentity(ByteSpan bytes);
void SignIdentity(Identity& id, const KeyPair& registrar);
bool VerifyIdentity(const Identity& id, const PublicKey& registrar);

// True iff a citizen with this identity may sit on the committee of block `height`.
bool EligibleAt(const Identity& id, uint64_t height, uint64_t registration_delay);

}  // namespace tessera::ledger::net
