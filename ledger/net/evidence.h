// Evidence that a politician lied, in a form anyone can check without trusting whoever relays
// it (docs/ledger-network.md, "Evidence and blacklisting").
//
// Politicians are untrusted: citizens already refuse whatever a politician cannot back with a
// signature, a proof or a certificate. Evidence goes one step further: when a politician signs
// a statement that is false, or two that contradict each other, the signatures prove the lie
// to every citizen, so one citizen's discovery can exclude the liar from every citizen's safe
// sample (blacklist.h). Two kinds:
//
// **Pool equivocation** (kind 1): two TxPoolCommitments signed by the same politician for the
// same height whose bodies differ (another pool hash or transaction count). An honest
// politician signs one commitment per height, ever: it freezes its pool once per height and
// records the height durably before signing (politician.cc, FreezePool), so a crash and
// restart cannot make it sign a second one. Two commitments that differ only in their
// signature (Ed25519 signatures are deterministic; a second valid one needs the signer's
// cooperation) are NOT evidence: the politician stated one thing.
//
// **Wrong execution** (kind 2): a signed `Execute` claim (execution_claim.h) whose re-execution
// gives another new root or another signature-failure list, with what re-executing it takes:
// the body's transactions and a state proof against the claim's own prev_root. VerifyEvidence
// re-executes the block with every signature checked; the evidence holds iff the result
// differs from the claim. No certified header is needed: the claim binds the state it was
// made on, and a statement about a deterministic function of it is false whatever that state
// is. At most kMaxEvidenceBytes encoded; a lie about a larger block is counted only by the
// citizen that caught it.
//
// Not evidence: a bad or incomplete state proof (the claim is signed, the proof is not: any
// valid proof re-executes to the same result, so the evidence may carry another one), an
// unsigned or wrongly signed reply (refused like a malformed one), and withheld data (absence
// cannot be proved to a third party); citizens count these locally
// (`bad_politician_answers`) and hedge around them (hedged_fetch.h).
//
// Encoding (canonical, like ledger/codec/messages.h): type (8) | kind (u8) | body.
//   kind 1: first commitment | second commitment, each the commitment's canonical encoding
//     (fixed size), the first strictly smaller bytewise than the second, so one lie has
//     exactly one encoding. 228 bytes.
//   kind 2: claim (execution_claim.h) | u32 pool count (= the claim's) | per pool: u32
//     transaction count, each transaction as a u32-length-prefixed LedgerTx encoding | proof
//     (u32-length-prefixed StateProof encoding).
// The decoder is strict: a wrong type or kind, a truncated or trailing byte, more than
// kMaxEvidenceBytes, commitments out of order, equal, of different politicians or heights,
// or with equal bodies, a pool count other than the claim's, a transaction that does not
// decode, are INVALID_ARGUMENT with the reason. Signatures and re-execution are checked by
// VerifyEvidence, never by the decoder.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/execution_claim.h"
#include "ledger/net/genesis.h"
#include "ledger/state/application.h"

namespace tessera::ledger::net {

enum class EvidenceKind : uint8_t { kPoolEquivocation = 1, kWrongExecution = 2 };

// The largest evidence encoded (a wrong execution of a block of about 5,000 transfers with
// its proof; a pool equivocation is 228 bytes). Bounds what politicians keep and relay per
// politician and what a citizen downloads once per piece.
inline constexpr size_t kMaxEvidenceBytes = 1 << 20;

// Kind 2: a signed claim and what re-executing it takes.
struct WrongExecution {
  ExecutionClaim claim;
  // The transactions of claim.pool_hashes, each encoded (EncodeLedgerTx), in body order.
  std::vector<std::vector<std::string>> pools;
  std::string proof;  // StateProof::Encode() of the leaves the block reads, on claim.prev_root
  friend bool operator==(const WrongExecution&, const WrongExecution&) = default;
};

struct Evidence {
  EvidenceKind kind = EvidenceKind::kPoolEquivocation;
  TxPoolCommitment first;  // kPoolEquivocation: encodes bytewise below `second`
  TxPoolCommitment second;
  WrongExecution execution;  // kWrongExecution
  uint32_t politician_id() const {
    return kind == EvidenceKind::kWrongExecution ? execution.claim.politician_id
                                                 : first.politician_id;
  }
  uint64_t height() const {
    return kind == EvidenceKind::kWrongExecution ? execution.claim.height : first.height;
  }
  friend bool operator==(const Evidence&, const Evidence&) = default;
};

// Evidence from two commitments seen for one politician and height, in either order;
// INVALID_ARGUMENT if they are not of one politician and height or have the same body.
Result<Evidence> PoolEquivocation(const TxPoolCommitment& a, const TxPoolCommitment& b);

// Evidence of a wrong execution: a signed claim, the body's transactions and a proof.
// INVALID_ARGUMENT if the pools do not match the claim's count or the encoding would exceed
// kMaxEvidenceBytes. Whether the claim is wrong is VerifyEvidence's business.
Result<Evidence> WrongExecutionEvidence(ExecutionClaim claim,
                                        std::vector<std::vector<std::string>> pools,
                                        std::string proof);

std::string EncodeEvidence(const Evidence& e);
Result<Evidence> DecodeEvidence(ByteSpan bytes);

// OK iff the evidence proves a lie of a genesis politician. Pool equivocation: both
// commitments carry that politician's valid signature. Wrong execution: the claim carries its
// valid signature, the transactions hash to the claim's pools, and re-executing them with
// every signature checked on a proof against the claim's prev_root (`apps`: the chain's
// applications; without them no wrong execution is accepted) gives another root or another
// failure list than the claim. PERMISSION_DENIED (with the reason) otherwise: unknown
// politician, a signature that does not verify (a forgery meant to frame an honest
// politician), or a claim that re-executes to what it states (an honest execution).
Status VerifyEvidence(const Evidence& e, const Genesis& genesis, const AppRegistry* apps = nullptr);

}  // namespace tessera::ledger::net
