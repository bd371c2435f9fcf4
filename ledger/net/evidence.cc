#include "ledger/net/evidence.h"

#include "ledger/codec/canonical.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/state_proof.h"

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

Result<Evidence> WrongExecutionEvidence(ExecutionClaim claim,
                                        std::vector<std::vector<std::string>> pools,
                                        std::string proof) {
  if (pools.size() != claim.pool_hashes.size()) {
    return InvalidArgumentError("evidence: " + std::to_string(pools.size()) +
                                " pools for a claim of " +
                                std::to_string(claim.pool_hashes.size()));
  }
  Evidence e;
  e.kind = EvidenceKind::kWrongExecution;
  e.execution = {std::move(claim), std::move(pools), std::move(proof)};
  if (const size_t size = EncodeEvidence(e).size(); size > kMaxEvidenceBytes) {
    return InvalidArgumentError("evidence: a wrong execution of " + std::to_string(size) +
                                " bytes exceeds " + std::to_string(kMaxEvidenceBytes));
  }
  return e;
}

std::string EncodeEvidence(const Evidence& e) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kEvidence)).U8(static_cast<uint8_t>(e.kind));
  if (e.kind == EvidenceKind::kWrongExecution) {
    const WrongExecution& x = e.execution;
    WriteExecutionClaim(w, x.claim);
    w.U32(static_cast<uint32_t>(x.pools.size()));
    for (const std::vector<std::string>& pool : x.pools) {
      w.U32(static_cast<uint32_t>(pool.size()));
      for (const std::string& tx : pool) w.Bytes(AsBytes(tx));
    }
    w.Bytes(AsBytes(x.proof));
    return w.Take();
  }
  return w.Take() + EncodeTxPoolCommitment(e.first) + EncodeTxPoolCommitment(e.second);
}

namespace {

Result<Evidence> DecodeWrongExecution(CanonicalReader& r) {
  Evidence e;
  e.kind = EvidenceKind::kWrongExecution;
  WrongExecution& x = e.execution;
  TESSERA_RETURN_IF_ERROR(ReadExecutionClaim(r, &x.claim));
  uint32_t pools = 0;
  // Every pool holds at least its u32 count.
  TESSERA_RETURN_IF_ERROR(r.Count(&pools, kMaxPoolHashes, 4, "pools"));
  if (pools != x.claim.pool_hashes.size()) {
    return r.Error(std::to_string(pools) + " pools for a claim of " +
                   std::to_string(x.claim.pool_hashes.size()));
  }
  x.pools.resize(pools);
  for (std::vector<std::string>& pool : x.pools) {
    uint32_t txs = 0;
    // A transaction is its u32 length and at least a type byte.
    TESSERA_RETURN_IF_ERROR(r.Count(&txs, kMaxEvidenceBytes, 5, "transactions"));
    pool.resize(txs);
    for (std::string& tx : pool) {
      TESSERA_RETURN_IF_ERROR(r.Bytes(&tx, kMaxEvidenceBytes, "transaction"));
      if (auto decoded = DecodeLedgerTx(AsBytes(tx)); !decoded.ok()) {
        return r.Error("a transaction does not decode: " + decoded.status().message());
      }
    }
  }
  TESSERA_RETURN_IF_ERROR(r.Bytes(&x.proof, kMaxEvidenceBytes, "proof"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return e;
}

}  // namespace

Result<Evidence> DecodeEvidence(ByteSpan bytes) {
  CanonicalReader r(bytes, "evidence");
  uint8_t type = 0, kind = 0;
  TESSERA_RETURN_IF_ERROR(r.U8(&type, "type"));
  if (type != static_cast<uint8_t>(MessageType::kEvidence)) {
    return r.Error("wrong message type " + std::to_string(type));
  }
  TESSERA_RETURN_IF_ERROR(r.U8(&kind, "kind"));
  if (bytes.size() > kMaxEvidenceBytes) {
    return r.Error("evidence of " + std::to_string(bytes.size()) + " bytes exceeds " +
                   std::to_string(kMaxEvidenceBytes));
  }
  if (kind == static_cast<uint8_t>(EvidenceKind::kWrongExecution)) return DecodeWrongExecution(r);
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

namespace {

// Kind 2 (evidence.h): the claim is the accused's, and re-executing it disagrees with it.
Status VerifyWrongExecution(const WrongExecution& x, const PoliticianInfo& accused,
                            const AppRegistry* apps) {
  const ExecutionClaim& c = x.claim;
  const std::string who = "evidence against politician " + std::to_string(c.politician_id);
  if (!VerifyExecutionClaim(c, accused.key)) {
    return PermissionDeniedError(who + " carries a signature that is not its own (forged)");
  }
  if (apps == nullptr) {
    return PermissionDeniedError(who + ": cannot re-execute without the chain's applications");
  }
  if (x.pools.size() != c.pool_hashes.size()) {
    return PermissionDeniedError(who + " does not carry the executed pools");
  }
  std::vector<LedgerTx> txs;
  for (size_t i = 0; i < x.pools.size(); ++i) {
    std::vector<LedgerTx> pool;
    for (const std::string& bytes : x.pools[i]) {
      auto tx = DecodeLedgerTx(AsBytes(bytes));
      if (!tx.ok()) return PermissionDeniedError(who + ": " + tx.status().message());
      pool.push_back(std::move(*tx));
    }
    if (PoolHash(pool) != c.pool_hashes[i]) {
      return PermissionDeniedError(who + " does not carry the executed pools");
    }
    txs.insert(txs.end(), std::make_move_iterator(pool.begin()),
               std::make_move_iterator(pool.end()));
  }
  auto proof = StateProof::Decode(AsBytes(x.proof));
  if (!proof.ok()) return PermissionDeniedError(who + ": " + proof.status().message());
  // Every signature checked (no claim taken): what an honest politician computes.
  const BlockContext ctx{.height = c.height, .prev_seed = c.prev_seed};
  auto outcome = ApplyBlock(ProofLookup(*proof, c.prev_root), txs, ctx, *apps);
  if (!outcome.ok()) {
    return PermissionDeniedError(who + " cannot be re-executed: " + outcome.status().message());
  }
  auto root = proof->RootAfter(c.prev_root, outcome->updates);
  if (!root.ok()) {
    return PermissionDeniedError(who + " cannot be re-executed: " + root.status().message());
  }
  if (*root == c.new_root && outcome->crypto_rejected == c.crypto_rejected) {
    return PermissionDeniedError(who + ": the execution re-executes to what it claims (no lie)");
  }
  return Status::Ok();
}

}  // namespace

Status VerifyEvidence(const Evidence& e, const Genesis& genesis, const AppRegistry* apps) {
  const PoliticianInfo* accused = genesis.Politician(e.politician_id());
  if (accused == nullptr) {
    return PermissionDeniedError("evidence against politician " +
                                 std::to_string(e.politician_id()) + ", who is not in the genesis");
  }
  if (e.kind == EvidenceKind::kWrongExecution)
    return VerifyWrongExecution(e.execution, *accused, apps);
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
