// The ledger's signed and hashed messages and their canonical encodings (canonical.h).
//
// Every encoding starts with a one-byte message type, so bytes of one type never decode as
// another, and every signature is domain-separated by the type's name (ed25519.h). A signed
// message encodes as body || signature(64); the signature covers exactly the body.
//
//   Transaction tx{.from = alice.public_key(), .to = bob, .amount = 5, .nonce = 0};
//   SignTransaction(tx, alice);
//   std::string wire = EncodeTransaction(tx);
//   TESSERA_ASSIGN_OR_RETURN(Transaction back, DecodeTransaction(AsBytes(wire)));
//   bool ok = VerifyTransaction(back);
//
// Decoders accept exactly the bytes their encoder produces: anything truncated, with
// trailing bytes, an unknown type or step, an over-limit list, or a list that must be
// strictly ordered but is not (duplicates included) is INVALID_ARGUMENT with the field and
// offset. Semantic checks (a transfer to oneself, a stale nonce) belong to the state
// transition, not to decoding.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "core/status.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/crypto/vrf.h"

namespace tessera::ledger {

enum class MessageType : uint8_t {
  kTransaction = 1,
  kTxPoolCommitment = 2,
  kWitnessList = 3,
  kVote = 4,
  kBlockHeader = 5,
  kCommitteeCertificate = 6,
  kAppTransaction = 7,
  kEvidence = 8,  // ledger/net/evidence.h: signed proof that a politician lied
  kProposerTicket = 9,
};

// List limits: generous for the protocol's sizes (research note §6: ~2000-member committees,
// low hundreds of politicians), small enough that a decoder's memory stays bounded.
inline constexpr uint32_t kMaxWitnessEntries = 4096;
inline constexpr uint32_t kMaxPoolHashes = 4096;
inline constexpr uint32_t kMaxCertificateSigners = 65536;
// Registrations one block may carry, and the longest registration delay a header can describe
// (ledger/net/registration.h).
inline constexpr uint32_t kMaxRegistrationsPerBlock = 1024;
inline constexpr uint32_t kMaxRegistrationDelay = 64;

// A transfer of `amount` from `from` to `to`; `nonce` is the sender's count of earlier
// transfers, so a transaction cannot be replayed. Signed by `from`. Encoded size: 145 bytes.
struct Transaction {
  PublicKey from{};
  PublicKey to{};
  uint64_t amount = 0;
  uint64_t nonce = 0;
  Signature signature{};
  friend bool operator==(const Transaction&, const Transaction&) = default;
};

// A transaction of an application that lives in the ledger's state (ledger/state/
// application.h): the application registered under `app` decodes, authenticates and executes
// the payload. The ledger adds no signature: an application decides who may do what (reviews,
// for instance, are deliberately not signed by any identity).
inline constexpr uint32_t kMaxAppPayload = 256 * 1024;
struct AppTransaction {
  uint8_t app = 0;
  std::string payload;  // at most kMaxAppPayload bytes
  friend bool operator==(const AppTransaction&, const AppTransaction&) = default;
};

// What a pool and a block body hold: transfers and application transactions, in order.
using LedgerTx = std::variant<Transaction, AppTransaction>;

// A politician's signed commitment to the pool of transactions it froze for a block.
struct TxPoolCommitment {
  uint32_t politician_id = 0;
  uint64_t height = 0;
  uint32_t tx_count = 0;
  Hash256 pool_hash{};  // PoolHash() of the pool's transactions, in pool order
  Signature signature{};
  friend bool operator==(const TxPoolCommitment&, const TxPoolCommitment&) = default;
};

// A committee citizen's signed statement of which pools it saw for a block.
struct WitnessEntry {
  uint32_t politician_id = 0;
  Hash256 pool_hash{};
  friend bool operator==(const WitnessEntry&, const WitnessEntry&) = default;
};
struct WitnessList {
  uint64_t height = 0;
  PublicKey citizen{};
  VrfProof credential{};              // the citizen's committee-membership proof (sortition.h)
  std::vector<WitnessEntry> entries;  // strictly increasing politician_id
  Signature signature{};
  friend bool operator==(const WitnessList&, const WitnessList&) = default;
};

// A proposer's winning ticket for one (height, period), posted before it builds its block so
// that committee members know which proposals to wait for before soft-voting (BA*'s priority
// message; ledger/net/citizen_agreement.h, "Soft-vote timing"). It carries no signature: the
// VRF proof, which only the proposer's key can make, is the credential, and copying it only
// repeats what the proposer announced.
struct ProposerTicket {
  uint64_t height = 0;
  uint32_t period = 0;  // the proposer period the ticket wins (ledger/net/chain.h)
  PublicKey proposer{};
  VrfProof credential{};
  friend bool operator==(const ProposerTicket&, const ProposerTicket&) = default;
};

// The steps of a BA* period (ledger/agreement/vote.h numbers them the same way): soft, cert,
// next, and the two "period completing 2" steps, late-next and down-next. With committees
// drawn per step (genesis vote_committees = "per-step") a next vote may also be a repeated
// next round, step bytes kDownNext + 1 .. kMaxVoteStep (agreement::NextRound(1 .. 64)); the
// wire carries them as values of this enum outside the named ones.
enum class VoteStep : uint8_t { kSoft = 1, kCert = 2, kNext = 3, kLateNext = 4, kDownNext = 5 };
inline constexpr uint8_t kMaxVoteStep = 5 + 64;  // agreement::NextRound(kMaxNextRounds)
// Next, late-next, down-next and the repeated next rounds: the steps that end a period.
inline bool IsNextVoteStep(VoteStep s) {
  return static_cast<uint8_t>(s) >= static_cast<uint8_t>(VoteStep::kNext);
}

// One agreement vote of a committee citizen, bound to (height, period, step): for a block
// value, or for bottom ("no block in this period") -- bottom only in the three next steps.
struct Vote {
  uint64_t height = 0;
  uint32_t period = 0;
  VoteStep step = VoteStep::kSoft;
  bool bottom = false;
  Hash256 value{};  // the hash of the block header voted for; all zero for bottom
  PublicKey citizen{};
  VrfProof credential{};
  Signature signature{};
  friend bool operator==(const Vote&, const Vote&) = default;
};

// A block header. The body (the pools' transactions) is stored by politicians and addressed
// by pool hash; a citizen needs only the header.
// A citizen registered on the chain by the block that carries it: the registrar's signature
// over the citizen's identity with registered_at = that block's height (ledger/net/identity.h;
// the height is implied, so a registration is valid in exactly one block).
struct Registration {
  PublicKey citizen{};
  Signature signature{};
  friend bool operator==(const Registration&, const Registration&) = default;
};

struct BlockHeader {
  uint64_t height = 0;
  Hash256 prev_hash{};
  Hash256 seed{};  // this block's sortition seed (sortition.h NextSeed)
  PublicKey proposer{};
  VrfProof proposer_credential{};
  std::vector<Hash256> pool_hashes;  // in block order (duplicates rejected)
  Hash256 state_root{};              // state after applying this block
  // The live population (ledger/net/registration.h): citizens registered by this block
  // (strictly increasing key) and the number of citizens registered through each of the
  // blocks height - d + 1 .. height, d = the chain's registration delay; so the population
  // eligible at height + 1 is registered_through.front(). Checked by everyone from the parent
  // header alone.
  std::vector<Registration> registrations;
  std::vector<uint64_t> registered_through;
  friend bool operator==(const BlockHeader&, const BlockHeader&) = default;
};

// The committee's signatures on a block: with enough valid signers it proves the block to a
// light client.
struct CertificateSigner {
  PublicKey citizen{};
  VrfProof credential{};
  Signature signature{};  // SignBlock() over (height, period, block_hash)
  friend bool operator==(const CertificateSigner&, const CertificateSigner&) = default;
};
// A certificate is the cert votes of ONE period (BA*: T cert votes for one value in one
// period); signatures of different periods never combine.
struct CommitteeCertificate {
  uint64_t height = 0;
  uint32_t period = 0;
  Hash256 block_hash{};
  std::vector<CertificateSigner> signers;  // strictly increasing citizen key
  friend bool operator==(const CommitteeCertificate&, const CommitteeCertificate&) = default;
};

std::string EncodeTransaction(const Transaction& tx);
Result<Transaction> DecodeTransaction(ByteSpan bytes);
std::string TransactionSigningBytes(const Transaction& tx);
void SignTransaction(Transaction& tx, const KeyPair& from);
bool VerifyTransaction(const Transaction& tx);
// SHA-256 of the full encoding (signature included).
Hash256 TransactionId(const Transaction& tx);

// Encoding: type (7), app (u8), payload length (u32) and bytes.
std::string EncodeAppTransaction(const AppTransaction& tx);
Result<AppTransaction> DecodeAppTransaction(ByteSpan bytes);

// A LedgerTx encodes as its alternative's encoding; the type byte says which.
std::string EncodeLedgerTx(const LedgerTx& tx);
Result<LedgerTx> DecodeLedgerTx(ByteSpan bytes);
// SHA-256 of the encoding (for a transfer, equal to TransactionId).
Hash256 LedgerTxId(const LedgerTx& tx);

// SHA-256 over "tessera/tx-pool", the count and every transaction's encoding, in order.
Hash256 PoolHash(const std::vector<LedgerTx>& pool);

std::string EncodeTxPoolCommitment(const TxPoolCommitment& c);
Result<TxPoolCommitment> DecodeTxPoolCommitment(ByteSpan bytes);
void SignTxPoolCommitment(TxPoolCommitment& c, const KeyPair& politician);
bool VerifyTxPoolCommitment(const TxPoolCommitment& c, const PublicKey& politician);

std::string EncodeWitnessList(const WitnessList& w);
Result<WitnessList> DecodeWitnessList(ByteSpan bytes);
void SignWitnessList(WitnessList& w, const KeyPair& citizen);  // sets w.citizen too
bool VerifyWitnessList(const WitnessList& w);

// Encoding: type (4), u64 height, u32 period, u8 step, u8 bottom, 32-byte value, citizen,
// credential, signature (223 bytes). Strict: a step outside 1..kMaxVoteStep, a bottom flag other
// than 0/1, bottom with a non-zero value, or bottom in the soft or cert step is INVALID_ARGUMENT.
std::string EncodeVote(const Vote& v);
Result<Vote> DecodeVote(ByteSpan bytes);
void SignVote(Vote& v, const KeyPair& citizen);  // sets v.citizen too
bool VerifyVote(const Vote& v);

// Encoding: type (9), u64 height, u32 period, proposer, credential (125 bytes), strict.
std::string EncodeProposerTicket(const ProposerTicket& t);
Result<ProposerTicket> DecodeProposerTicket(ByteSpan bytes);

std::string EncodeBlockHeader(const BlockHeader& h);
Result<BlockHeader> DecodeBlockHeader(ByteSpan bytes);
Hash256 BlockHash(const BlockHeader& h);  // SHA-256 of the encoding

std::string EncodeCommitteeCertificate(const CommitteeCertificate& c);
Result<CommitteeCertificate> DecodeCommitteeCertificate(ByteSpan bytes);
// A certificate signer's signature over (height, period, block_hash): sent with a cert vote of
// that period.
Signature SignBlock(uint64_t height, uint32_t period, const Hash256& block_hash,
                    const KeyPair& citizen);
bool VerifyBlockSignature(uint64_t height, uint32_t period, const Hash256& block_hash,
                          const PublicKey& citizen, const Signature& signature);

}  // namespace tessera::ledger
