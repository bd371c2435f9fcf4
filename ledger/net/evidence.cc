#include "ledger/net/evidence.h"

#include "ledger/codec/canonical.h"

namespace tessera::ledger::net {
namespace {

// The canonical encoding of a commitment has a fixed size.
size_t CommitmentSize() {
  static const size_t size = EncodeTxPoolCommitment(TxPoolCommitment{}).size();
  return size;
}

bool SameBody(const TxPoolCommitment& a, const TxPoolCommitment& b) {
  return a.pool_hash == b.pool_hash && a.tx_count == b.tx_count;
}

}  // namespace

Result<Evidence> PoolEquivocation(const TxPoolCommitment& a, const TxPoolCommitment& b) {
  if (a.politician_id != b.politician_id || a.height != b.height) {
    return InvalidArgumentError(
        "evidence: the commitments are of different politicians or heights");
  }
  if (SameBody(a, b)) return InvalidArgumentError("evidence: the commitments state the same pool");
  Evidence e;
  if (EncodeTxPoolCommitment(a) < EncodeTxPoolCommitment(b)) {
    e.first = a;
    e.second = b;
  } else {
    e.first = b;
    e.second = a;
  }
  return e;
}

std::string EncodeEvidence(const Evidence& e) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kEvidence)).U8(static_cast<uint8_t>(e.kind));
  return w.Take() + EncodeTxPoolCommitment(e.first) + EncodeTxPoolCommitment(e.second);
}

Result<Evidence> DecodeEvidence(ByteSpan bytes) {
  CanonicalReader r(bytes, "evidence");
  uint8_t type = 0, kind = 0;
  TESSERA_RETURN_IF_ERROR(r.U8(&type, "type"));
  if (type != static_cast<uint8_t>(MessageType::kEvidence)) {
    return r.Error("wrong message type " + std::to_string(type));
  }
  TESSERA_RETURN_IF_ERROR(r.U8(&kind, "kind"));
  if (kind != static_cast<uint8_t>(EvidenceKind::kPoolEquivocation)) {
    return r.Error("unknown evidence kind " + std::to_string(kind));
  }
  const size_t n = CommitmentSize();
  if (bytes.size() != 2 + 2 * n) {
    return r.Error("pool equivocation evidence is " + std::to_string(2 + 2 * n) + " bytes, got " +
                   std::to_string(bytes.size()));
  }
  const ByteSpan first_bytes = bytes.subspan(2, n), second_bytes = bytes.subspan(2 + n, n);
  TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment first, DecodeTxPoolCommitment(first_bytes));
  TESSERA_ASSIGN_OR_RETURN(TxPoolCommitment second, DecodeTxPoolCommitment(second_bytes));
  if (!(AsChars(first_bytes) < AsChars(second_bytes))) {
    return InvalidArgumentError("evidence: commitments not in strictly increasing byte order");
  }
  TESSERA_ASSIGN_OR_RETURN(Evidence e, PoolEquivocation(first, second));
  return e;
}

Status VerifyEvidence(const Evidence& e, const Genesis& genesis) {
  const PoliticianInfo* accused = genesis.Politician(e.politician_id());
  if (accused == nullptr) {
    return PermissionDeniedError("evidence against politician " +
                                 std::to_string(e.politician_id()) + ", who is not in the genesis");
  }
  if (e.first.politician_id != e.second.politician_id || e.first.height != e.second.height ||
      SameBody(e.first, e.second)) {
    return PermissionDeniedError("evidence does not show two different pools for one height");
  }
  if (!VerifyTxPoolCommitment(e.first, accused->key) ||
      !VerifyTxPoolCommitment(e.second, accused->key)) {
    return PermissionDeniedError("evidence against politician " +
                                 std::to_string(e.politician_id()) +
                                 " carries a signature that is not its own (forged)");
  }
  return Status::Ok();
}

}  // namespace tessera::ledger::net
