#include "ledger/codec/messages.h"

#include <algorithm>

#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger {

namespace {

Status ReadType(CanonicalReader& r, MessageType want) {
  uint8_t type;
  TESSERA_RETURN_IF_ERROR(r.U8(&type, "type"));
  if (type != static_cast<uint8_t>(want)) {
    return r.Error("wrong message type " + std::to_string(type) + " (expected " +
                   std::to_string(static_cast<int>(want)) + ")");
  }
  return Status::Ok();
}

// --- Transaction -------------------------------------------------------------------------

void WriteTransactionBody(CanonicalWriter& w, const Transaction& tx) {
  w.U8(static_cast<uint8_t>(MessageType::kTransaction))
      .Array(tx.from)
      .Array(tx.to)
      .U64(tx.amount)
      .U64(tx.nonce);
}

}  // namespace

std::string TransactionSigningBytes(const Transaction& tx) {
  CanonicalWriter w;
  WriteTransactionBody(w, tx);
  return w.Take();
}

std::string EncodeTransaction(const Transaction& tx) {
  CanonicalWriter w;
  WriteTransactionBody(w, tx);
  w.Array(tx.signature);
  return w.Take();
}

Result<Transaction> DecodeTransaction(ByteSpan bytes) {
  CanonicalReader r(bytes, "transaction");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kTransaction));
  Transaction tx;
  TESSERA_RETURN_IF_ERROR(r.Array(&tx.from, "from"));
  TESSERA_RETURN_IF_ERROR(r.Array(&tx.to, "to"));
  TESSERA_RETURN_IF_ERROR(r.U64(&tx.amount, "amount"));
  TESSERA_RETURN_IF_ERROR(r.U64(&tx.nonce, "nonce"));
  TESSERA_RETURN_IF_ERROR(r.Array(&tx.signature, "signature"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return tx;
}

void SignTransaction(Transaction& tx, const KeyPair& from) {
  tx.from = from.public_key();
  tx.signature = Sign(from, "transaction", AsBytes(TransactionSigningBytes(tx)));
}

bool VerifyTransaction(const Transaction& tx) {
  return Verify(tx.from, "transaction", AsBytes(TransactionSigningBytes(tx)), tx.signature);
}

Hash256 TransactionId(const Transaction& tx) { return Sha256(EncodeTransaction(tx)); }

// --- AppTransaction and LedgerTx --------------------------------------------------------

std::string EncodeAppTransaction(const AppTransaction& tx) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kAppTransaction)).U8(tx.app).Bytes(AsBytes(tx.payload));
  return w.Take();
}

Result<AppTransaction> DecodeAppTransaction(ByteSpan bytes) {
  CanonicalReader r(bytes, "app transaction");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kAppTransaction));
  AppTransaction tx;
  TESSERA_RETURN_IF_ERROR(r.U8(&tx.app, "app"));
  TESSERA_RETURN_IF_ERROR(r.Bytes(&tx.payload, kMaxAppPayload, "payload"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return tx;
}

std::string EncodeLedgerTx(const LedgerTx& tx) {
  if (const auto* transfer = std::get_if<Transaction>(&tx)) return EncodeTransaction(*transfer);
  return EncodeAppTransaction(std::get<AppTransaction>(tx));
}

Result<LedgerTx> DecodeLedgerTx(ByteSpan bytes) {
  if (!bytes.empty() && bytes[0] == static_cast<uint8_t>(MessageType::kAppTransaction)) {
    TESSERA_ASSIGN_OR_RETURN(AppTransaction tx, DecodeAppTransaction(bytes));
    return LedgerTx(std::move(tx));
  }
  TESSERA_ASSIGN_OR_RETURN(Transaction tx, DecodeTransaction(bytes));
  return LedgerTx(tx);
}

Hash256 LedgerTxId(const LedgerTx& tx) { return Sha256(EncodeLedgerTx(tx)); }

Hash256 PoolHash(const std::vector<LedgerTx>& pool) {
  Sha256Hasher h;
  h.Update("tessera/tx-pool");
  CanonicalWriter count;
  count.U32(static_cast<uint32_t>(pool.size()));
  h.Update(count.bytes());
  for (const LedgerTx& tx : pool) h.Update(EncodeLedgerTx(tx));
  return h.Final();
}

// --- TxPoolCommitment ----------------------------------------------------------------------

namespace {
std::string TxPoolBody(const TxPoolCommitment& c) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kTxPoolCommitment))
      .U32(c.politician_id)
      .U64(c.height)
      .U32(c.tx_count)
      .Array(c.pool_hash);
  return w.Take();
}
}  // namespace

std::string EncodeTxPoolCommitment(const TxPoolCommitment& c) {
  return TxPoolBody(c) + std::string(AsChars(c.signature));
}

Result<TxPoolCommitment> DecodeTxPoolCommitment(ByteSpan bytes) {
  CanonicalReader r(bytes, "tx pool commitment");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kTxPoolCommitment));
  TxPoolCommitment c;
  TESSERA_RETURN_IF_ERROR(r.U32(&c.politician_id, "politician_id"));
  TESSERA_RETURN_IF_ERROR(r.U64(&c.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.U32(&c.tx_count, "tx_count"));
  TESSERA_RETURN_IF_ERROR(r.Array(&c.pool_hash, "pool_hash"));
  TESSERA_RETURN_IF_ERROR(r.Array(&c.signature, "signature"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return c;
}

void SignTxPoolCommitment(TxPoolCommitment& c, const KeyPair& politician) {
  c.signature = Sign(politician, "tx-pool", AsBytes(TxPoolBody(c)));
}

bool VerifyTxPoolCommitment(const TxPoolCommitment& c, const PublicKey& politician) {
  return Verify(politician, "tx-pool", AsBytes(TxPoolBody(c)), c.signature);
}

// --- WitnessList ---------------------------------------------------------------------------

namespace {
std::string WitnessBody(const WitnessList& wl) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kWitnessList))
      .U64(wl.height)
      .Array(wl.citizen)
      .Array(wl.credential)
      .U32(static_cast<uint32_t>(wl.entries.size()));
  for (const WitnessEntry& e : wl.entries) w.U32(e.politician_id).Array(e.pool_hash);
  return w.Take();
}
}  // namespace

std::string EncodeWitnessList(const WitnessList& w) {
  return WitnessBody(w) + std::string(AsChars(w.signature));
}

Result<WitnessList> DecodeWitnessList(ByteSpan bytes) {
  CanonicalReader r(bytes, "witness list");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kWitnessList));
  WitnessList w;
  TESSERA_RETURN_IF_ERROR(r.U64(&w.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.Array(&w.citizen, "citizen"));
  TESSERA_RETURN_IF_ERROR(r.Array(&w.credential, "credential"));
  uint32_t n;
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxWitnessEntries, 36, "entries"));
  w.entries.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    TESSERA_RETURN_IF_ERROR(r.U32(&w.entries[i].politician_id, "entries.politician_id"));
    if (i > 0 && w.entries[i].politician_id <= w.entries[i - 1].politician_id) {
      return r.Error("entries not in strictly increasing politician_id order (entry " +
                     std::to_string(i) + ")");
    }
    TESSERA_RETURN_IF_ERROR(r.Array(&w.entries[i].pool_hash, "entries.pool_hash"));
  }
  TESSERA_RETURN_IF_ERROR(r.Array(&w.signature, "signature"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return w;
}

void SignWitnessList(WitnessList& w, const KeyPair& citizen) {
  w.citizen = citizen.public_key();
  w.signature = Sign(citizen, "witness-list", AsBytes(WitnessBody(w)));
}

bool VerifyWitnessList(const WitnessList& w) {
  return Verify(w.citizen, "witness-list", AsBytes(WitnessBody(w)), w.signature);
}

// --- Vote ----------------------------------------------------------------------------------

namespace {
std::string VoteBody(const Vote& v) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kVote))
      .U64(v.height)
      .U32(v.period)
      .U8(static_cast<uint8_t>(v.step))
      .U8(v.bottom ? 1 : 0)
      .Array(v.value)
      .Array(v.citizen)
      .Array(v.credential);
  return w.Take();
}
}  // namespace

std::string EncodeVote(const Vote& v) { return VoteBody(v) + std::string(AsChars(v.signature)); }

Result<Vote> DecodeVote(ByteSpan bytes) {
  CanonicalReader r(bytes, "vote");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kVote));
  Vote v;
  TESSERA_RETURN_IF_ERROR(r.U64(&v.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.U32(&v.period, "period"));
  uint8_t step;
  TESSERA_RETURN_IF_ERROR(r.U8(&step, "step"));
  if (step < static_cast<uint8_t>(VoteStep::kSoft) || step > kMaxVoteStep) {
    return r.Error("unknown vote step " + std::to_string(step));
  }
  v.step = static_cast<VoteStep>(step);
  uint8_t bottom;
  TESSERA_RETURN_IF_ERROR(r.U8(&bottom, "bottom"));
  if (bottom > 1) return r.Error("bottom flag must be 0 or 1, not " + std::to_string(bottom));
  v.bottom = bottom == 1;
  if (v.bottom && (v.step == VoteStep::kSoft || v.step == VoteStep::kCert)) {
    return r.Error("a soft or cert vote for bottom");
  }
  TESSERA_RETURN_IF_ERROR(r.Array(&v.value, "value"));
  if (v.bottom && v.value != Hash256{}) return r.Error("a bottom vote with a non-zero value");
  TESSERA_RETURN_IF_ERROR(r.Array(&v.citizen, "citizen"));
  TESSERA_RETURN_IF_ERROR(r.Array(&v.credential, "credential"));
  TESSERA_RETURN_IF_ERROR(r.Array(&v.signature, "signature"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return v;
}

std::string EncodeProposerTicket(const ProposerTicket& t) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kProposerTicket))
      .U64(t.height)
      .U32(t.period)
      .Array(t.proposer)
      .Array(t.credential);
  return w.Take();
}

Result<ProposerTicket> DecodeProposerTicket(ByteSpan bytes) {
  CanonicalReader r(bytes, "proposer ticket");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kProposerTicket));
  ProposerTicket t;
  TESSERA_RETURN_IF_ERROR(r.U64(&t.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.U32(&t.period, "period"));
  TESSERA_RETURN_IF_ERROR(r.Array(&t.proposer, "proposer"));
  TESSERA_RETURN_IF_ERROR(r.Array(&t.credential, "credential"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return t;
}

void SignVote(Vote& v, const KeyPair& citizen) {
  v.citizen = citizen.public_key();
  v.signature = Sign(citizen, "vote", AsBytes(VoteBody(v)));
}

bool VerifyVote(const Vote& v) {
  return Verify(v.citizen, "vote", AsBytes(VoteBody(v)), v.signature);
}

// --- BlockHeader ---------------------------------------------------------------------------

std::string EncodeBlockHeader(const BlockHeader& h) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kBlockHeader))
      .U64(h.height)
      .Array(h.prev_hash)
      .Array(h.seed)
      .Array(h.proposer)
      .Array(h.proposer_credential)
      .U32(static_cast<uint32_t>(h.pool_hashes.size()));
  for (const Hash256& p : h.pool_hashes) w.Array(p);
  w.Array(h.state_root);
  w.U32(static_cast<uint32_t>(h.registered_through.size()));
  for (uint64_t n : h.registered_through) w.U64(n);
  w.U32(static_cast<uint32_t>(h.registrations.size()));
  for (const Registration& reg : h.registrations) w.Array(reg.citizen).Array(reg.signature);
  return w.Take();
}

Result<BlockHeader> DecodeBlockHeader(ByteSpan bytes) {
  CanonicalReader r(bytes, "block header");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kBlockHeader));
  BlockHeader h;
  TESSERA_RETURN_IF_ERROR(r.U64(&h.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.Array(&h.prev_hash, "prev_hash"));
  TESSERA_RETURN_IF_ERROR(r.Array(&h.seed, "seed"));
  TESSERA_RETURN_IF_ERROR(r.Array(&h.proposer, "proposer"));
  TESSERA_RETURN_IF_ERROR(r.Array(&h.proposer_credential, "proposer_credential"));
  uint32_t n;
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxPoolHashes, 32, "pool_hashes"));
  h.pool_hashes.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    TESSERA_RETURN_IF_ERROR(r.Array(&h.pool_hashes[i], "pool_hashes"));
  }
  std::vector<Hash256> sorted = h.pool_hashes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return r.Error("a pool hash appears twice in pool_hashes");
  }
  TESSERA_RETURN_IF_ERROR(r.Array(&h.state_root, "state_root"));
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxRegistrationDelay, 8, "registered_through"));
  h.registered_through.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    TESSERA_RETURN_IF_ERROR(r.U64(&h.registered_through[i], "registered_through"));
    if (i > 0 && h.registered_through[i] < h.registered_through[i - 1]) {
      return r.Error("registered_through decreases");
    }
  }
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxRegistrationsPerBlock, 96, "registrations"));
  h.registrations.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    TESSERA_RETURN_IF_ERROR(r.Array(&h.registrations[i].citizen, "registrations"));
    TESSERA_RETURN_IF_ERROR(r.Array(&h.registrations[i].signature, "registrations"));
    if (i > 0 && !(h.registrations[i - 1].citizen < h.registrations[i].citizen)) {
      return r.Error("registrations are not strictly ordered by citizen");
    }
  }
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return h;
}

Hash256 BlockHash(const BlockHeader& h) { return Sha256(EncodeBlockHeader(h)); }

// --- CommitteeCertificate ------------------------------------------------------------------

std::string EncodeCommitteeCertificate(const CommitteeCertificate& c) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kCommitteeCertificate))
      .U64(c.height)
      .U32(c.period)
      .Array(c.block_hash)
      .U32(static_cast<uint32_t>(c.signers.size()));
  for (const CertificateSigner& s : c.signers) {
    w.Array(s.citizen).Array(s.credential).Array(s.signature);
  }
  return w.Take();
}

Result<CommitteeCertificate> DecodeCommitteeCertificate(ByteSpan bytes) {
  CanonicalReader r(bytes, "committee certificate");
  TESSERA_RETURN_IF_ERROR(ReadType(r, MessageType::kCommitteeCertificate));
  CommitteeCertificate c;
  TESSERA_RETURN_IF_ERROR(r.U64(&c.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.U32(&c.period, "period"));
  TESSERA_RETURN_IF_ERROR(r.Array(&c.block_hash, "block_hash"));
  uint32_t n;
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxCertificateSigners, 32 + 80 + 64, "signers"));
  c.signers.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    TESSERA_RETURN_IF_ERROR(r.Array(&c.signers[i].citizen, "signers.citizen"));
    if (i > 0 && !(c.signers[i - 1].citizen < c.signers[i].citizen)) {
      return r.Error("signers not in strictly increasing key order (signer " + std::to_string(i) +
                     ")");
    }
    TESSERA_RETURN_IF_ERROR(r.Array(&c.signers[i].credential, "signers.credential"));
    TESSERA_RETURN_IF_ERROR(r.Array(&c.signers[i].signature, "signers.signature"));
  }
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return c;
}

namespace {
std::string BlockSigningBytes(uint64_t height, uint32_t period, const Hash256& block_hash) {
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kCommitteeCertificate))
      .U64(height)
      .U32(period)
      .Array(block_hash);
  return w.Take();
}
}  // namespace

Signature SignBlock(uint64_t height, uint32_t period, const Hash256& block_hash,
                    const KeyPair& citizen) {
  return Sign(citizen, "block", AsBytes(BlockSigningBytes(height, period, block_hash)));
}

bool VerifyBlockSignature(uint64_t height, uint32_t period, const Hash256& block_hash,
                          const PublicKey& citizen, const Signature& signature) {
  return Verify(citizen, "block", AsBytes(BlockSigningBytes(height, period, block_hash)),
                signature);
}

}  // namespace tessera::ledger
