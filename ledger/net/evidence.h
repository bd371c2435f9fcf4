// Evidence that a politician lied, in a form anyone can check without trusting whoever relays
// it (docs/ledger-network.md, "Evidence and blacklisting").
//
// Politicians are untrusted: citizens already refuse whatever a politician cannot back with a
// signature, a proof or a certificate. Evidence goes one step further: when a politician signs
// two contradictory statements, the two signatures together prove the lie to every citizen, so
// one citizen's discovery can exclude the liar from every citizen's safe sample (blacklist.h).
//
// The one kind built is **pool equivocation**: two TxPoolCommitments signed by the same
// politician for the same height whose bodies differ (another pool hash or transaction count).
// An honest politician signs one commitment per height, ever: it freezes its pool once per
// height and records the height durably before signing (politician.cc, FreezePool), so a
// crash and restart cannot make it sign a second one. Two commitments that differ only in
// their signature (Ed25519 signatures are deterministic; a second valid one needs the signer's
// cooperation) are NOT evidence: the politician stated one thing.
//
// Lies that need context to prove (a wrong Execute claim, a bad state proof: the verifier
// needs the previous certified root and the whole execution) and withheld data (absence cannot
// be proved to a third party) are not evidence here; citizens count them locally
// (`bad_politician_answers`) and hedge around them (hedged_fetch.h).
//
// Encoding (canonical, like ledger/codec/messages.h): type (8) | kind (u8, 1 = pool
// equivocation) | first commitment | second commitment, each the commitment's canonical
// encoding (fixed size), the first strictly smaller bytewise than the second, so one lie has
// exactly one encoding. 228 bytes. The decoder is strict: a wrong type or kind, a truncated
// or trailing byte, commitments out of order, equal, of different politicians or heights, or
// with equal bodies are INVALID_ARGUMENT with the reason. Signatures are checked by
// VerifyEvidence against the genesis keys, never by the decoder.
#pragma once

#include <string>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net {

enum class EvidenceKind : uint8_t { kPoolEquivocation = 1 };

struct Evidence {
  EvidenceKind kind = EvidenceKind::kPoolEquivocation;
  TxPoolCommitment first;  // encodes bytewise below `second`
  TxPoolCommitment second;
  uint32_t politician_id() const { return first.politician_id; }
  uint64_t height() const { return first.height; }
  friend bool operator==(const Evidence&, const Evidence&) = default;
};

// Evidence from two commitments seen for one politician and height, in either order;
// INVALID_ARGUMENT if they are not of one politician and height or have the same body.
Result<Evidence> PoolEquivocation(const TxPoolCommitment& a, const TxPoolCommitment& b);

std::string EncodeEvidence(const Evidence& e);
Result<Evidence> DecodeEvidence(ByteSpan bytes);

// OK iff the evidence proves a lie of a genesis politician: both commitments carry that
// politician's valid signature. PERMISSION_DENIED (with the reason) otherwise: unknown
// politician, or a signature that does not verify (a forgery meant to frame an honest
// politician).
Status VerifyEvidence(const Evidence& e, const Genesis& genesis);

}  // namespace tessera::ledger::net
