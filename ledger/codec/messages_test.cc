#include "ledger/codec/messages.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "ledger/codec/canonical.h"

namespace tessera::ledger {
namespace {

template <size_t N>
std::array<uint8_t, N> Fill(uint8_t seed) {
  std::array<uint8_t, N> a;
  for (size_t i = 0; i < N; ++i) a[i] = static_cast<uint8_t>(seed + 7 * i);
  return a;
}

Transaction SampleTx() {
  KeyPair alice = KeyPair::FromSeed(Fill<32>(1));
  Transaction tx{.to = Fill<32>(2), .amount = 500, .nonce = 3};
  SignTransaction(tx, alice);
  return tx;
}

WitnessList SampleWitness() {
  WitnessList w{.height = 9, .credential = Fill<80>(3), .entries = {}};
  for (uint32_t id : {2u, 5u, 11u}) w.entries.push_back({id, Fill<32>(static_cast<uint8_t>(id))});
  SignWitnessList(w, KeyPair::FromSeed(Fill<32>(4)));
  return w;
}

Vote SampleVote() {
  Vote v{.height = 9,
         .period = 3,
         .step = VoteStep::kCert,
         .value = Fill<32>(5),
         .credential = Fill<80>(6)};
  SignVote(v, KeyPair::FromSeed(Fill<32>(7)));
  return v;
}

BlockHeader SampleHeader() {
  return BlockHeader{.height = 10,
                     .prev_hash = Fill<32>(8),
                     .seed = Fill<32>(9),
                     .proposer = Fill<32>(10),
                     .proposer_credential = Fill<80>(11),
                     .pool_hashes = {Fill<32>(12), Fill<32>(13)},
                     .state_root = Fill<32>(14),
                     .registrations = {{Fill<32>(15), Fill<64>(16)}, {Fill<32>(17), Fill<64>(18)}},
                     .registered_through = {5, 7}};
}

CommitteeCertificate SampleCertificate() {
  CommitteeCertificate c{
      .height = 10, .period = 2, .block_hash = BlockHash(SampleHeader()), .signers = {}};
  for (uint8_t s : {20, 21, 22}) {
    KeyPair k = KeyPair::FromSeed(Fill<32>(s));
    c.signers.push_back(
        {k.public_key(), Fill<80>(s), SignBlock(c.height, c.period, c.block_hash, k)});
  }
  std::sort(c.signers.begin(), c.signers.end(),
            [](const auto& a, const auto& b) { return a.citizen < b.citizen; });
  return c;
}

ProposerTicket SampleProposerTicket() {
  return ProposerTicket{
      .height = 10, .period = 2, .proposer = Fill<32>(31), .credential = Fill<80>(32)};
}

TxPoolCommitment SampleCommitment() {
  TxPoolCommitment c{
      .politician_id = 4, .height = 10, .tx_count = 1, .pool_hash = PoolHash({SampleTx()})};
  SignTxPoolCommitment(c, KeyPair::FromSeed(Fill<32>(30)));
  return c;
}

// Every message type: decode(encode(x)) == x; every proper prefix is rejected as truncated;
// a trailing byte and a wrong type byte are rejected.
struct Case {
  const char* name;
  std::string bytes;
  std::function<Status(ByteSpan)> decode_and_compare;
};

std::vector<Case> Cases() {
  auto make = [](const char* name, auto value, auto encode, auto decode) {
    return Case{name, encode(value), [value, decode](ByteSpan b) -> Status {
                  auto r = decode(b);
                  if (!r.ok()) return r.status();
                  if (!(*r == value)) return InternalError("round trip changed the value");
                  return Status::Ok();
                }};
  };
  return {
      make("transaction", SampleTx(), EncodeTransaction, DecodeTransaction),
      make("tx pool", SampleCommitment(), EncodeTxPoolCommitment, DecodeTxPoolCommitment),
      make("witness", SampleWitness(), EncodeWitnessList, DecodeWitnessList),
      make("vote", SampleVote(), EncodeVote, DecodeVote),
      make("header", SampleHeader(), EncodeBlockHeader, DecodeBlockHeader),
      make("proposer ticket", SampleProposerTicket(), EncodeProposerTicket, DecodeProposerTicket),
      make("certificate", SampleCertificate(), EncodeCommitteeCertificate,
           DecodeCommitteeCertificate)};
}

TEST(MessagesTest, RoundTripTruncationTrailingAndType) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.decode_and_compare(AsBytes(c.bytes)).ok());
    for (size_t len = 0; len < c.bytes.size(); ++len) {
      Status s = c.decode_and_compare(AsBytes(std::string_view(c.bytes).substr(0, len)));
      ASSERT_FALSE(s.ok()) << "prefix " << len;
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
      EXPECT_NE(s.message().find("truncated"), std::string::npos) << s;
    }
    Status trailing = c.decode_and_compare(AsBytes(c.bytes + '\0'));
    EXPECT_NE(trailing.message().find("trailing"), std::string::npos) << trailing;
    std::string wrong_type = c.bytes;
    wrong_type[0] = static_cast<char>(wrong_type[0] % 6 + 1);
    EXPECT_NE(c.decode_and_compare(AsBytes(wrong_type)).message().find("wrong message type"),
              std::string::npos);
  }
}

TEST(MessagesTest, TransactionSizeAndSignature) {
  Transaction tx = SampleTx();
  EXPECT_EQ(EncodeTransaction(tx).size(), 145u);
  EXPECT_TRUE(VerifyTransaction(tx));
  Transaction more = tx;
  more.amount += 1;
  EXPECT_FALSE(VerifyTransaction(more));
  Transaction replay = tx;
  replay.nonce += 1;
  EXPECT_FALSE(VerifyTransaction(replay));
  EXPECT_NE(TransactionId(tx), TransactionId(more));
}

TEST(MessagesTest, EncodedSizesAreFixedByTheLayout) {
  EXPECT_EQ(EncodeTxPoolCommitment(SampleCommitment()).size(), 113u);
  EXPECT_EQ(EncodeVote(SampleVote()).size(), 223u);
  EXPECT_EQ(EncodeProposerTicket(SampleProposerTicket()).size(), 125u);
  WitnessList w = SampleWitness();
  EXPECT_EQ(EncodeWitnessList(w).size(), 189u + 36u * w.entries.size());
  BlockHeader h = SampleHeader();
  EXPECT_EQ(EncodeBlockHeader(h).size(), 229u + 32u * h.pool_hashes.size() +
                                             8u * h.registered_through.size() +
                                             96u * h.registrations.size());
  CommitteeCertificate c = SampleCertificate();
  EXPECT_EQ(EncodeCommitteeCertificate(c).size(), 49u + 176u * c.signers.size());
}

TEST(MessagesTest, SignaturesCoverEveryField) {
  WitnessList w = SampleWitness();
  EXPECT_TRUE(VerifyWitnessList(w));
  w.entries[1].pool_hash[0] ^= 1;
  EXPECT_FALSE(VerifyWitnessList(w));
  Vote v = SampleVote();
  EXPECT_TRUE(VerifyVote(v));
  v.step = VoteStep::kSoft;
  EXPECT_FALSE(VerifyVote(v));
  v = SampleVote();
  v.period += 1;  // a vote of one period is not a vote of another
  EXPECT_FALSE(VerifyVote(v));
  TxPoolCommitment c = SampleCommitment();
  PublicKey politician = KeyPair::FromSeed(Fill<32>(30)).public_key();
  EXPECT_TRUE(VerifyTxPoolCommitment(c, politician));
  c.tx_count = 2;
  EXPECT_FALSE(VerifyTxPoolCommitment(c, politician));
  CommitteeCertificate cert = SampleCertificate();
  for (const auto& s : cert.signers) {
    EXPECT_TRUE(
        VerifyBlockSignature(cert.height, cert.period, cert.block_hash, s.citizen, s.signature));
    EXPECT_FALSE(VerifyBlockSignature(cert.height + 1, cert.period, cert.block_hash, s.citizen,
                                      s.signature));
    // Cert votes of different periods never combine into one certificate.
    EXPECT_FALSE(VerifyBlockSignature(cert.height, cert.period + 1, cert.block_hash, s.citizen,
                                      s.signature));
  }
}

TEST(MessagesTest, SignaturesDoNotTransferBetweenMessageTypes) {
  // A vote signature is not valid as a witness-list signature over the same key.
  KeyPair k = KeyPair::FromSeed(Fill<32>(40));
  Vote v = SampleVote();
  SignVote(v, k);
  std::string body = EncodeVote(v).substr(0, EncodeVote(v).size() - 64);
  EXPECT_TRUE(Verify(k.public_key(), "vote", AsBytes(body), v.signature));
  EXPECT_FALSE(Verify(k.public_key(), "witness-list", AsBytes(body), v.signature));
}

TEST(MessagesTest, NonCanonicalListsAreRejected) {
  WitnessList w = SampleWitness();
  std::swap(w.entries[0], w.entries[1]);
  auto r = DecodeWitnessList(AsBytes(EncodeWitnessList(w)));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("strictly increasing"), std::string::npos);
  w = SampleWitness();
  w.entries[1].politician_id = w.entries[0].politician_id;  // duplicate
  EXPECT_FALSE(DecodeWitnessList(AsBytes(EncodeWitnessList(w))).ok());

  CommitteeCertificate c = SampleCertificate();
  std::swap(c.signers[0], c.signers[2]);
  r = DecodeWitnessList(AsBytes(EncodeCommitteeCertificate(c)));
  EXPECT_FALSE(r.ok());
  auto rc = DecodeCommitteeCertificate(AsBytes(EncodeCommitteeCertificate(c)));
  ASSERT_FALSE(rc.ok());
  EXPECT_NE(rc.status().message().find("strictly increasing key order"), std::string::npos);

  BlockHeader h = SampleHeader();
  h.pool_hashes.push_back(h.pool_hashes[0]);
  auto rh = DecodeBlockHeader(AsBytes(EncodeBlockHeader(h)));
  ASSERT_FALSE(rh.ok());
  EXPECT_NE(rh.status().message().find("appears twice"), std::string::npos);
}

TEST(MessagesTest, UnknownVoteStepAndOversizedCountsAreRejected) {
  std::string bytes = EncodeVote(SampleVote());
  bytes[13] = 0;  // type(1) height(8) period(4) step
  auto r = DecodeVote(AsBytes(bytes));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown vote step 0"), std::string::npos);
  bytes[13] = kMaxVoteStep + 1;
  r = DecodeVote(AsBytes(bytes));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown vote step 70"), std::string::npos);
  // Repeated next rounds (per-step committees): step bytes 6 .. 69 decode, bottom included.
  for (uint8_t step : {uint8_t{6}, uint8_t{37}, kMaxVoteStep}) {
    Vote next = SampleVote();
    next.step = static_cast<VoteStep>(step);
    next.bottom = true;
    next.value = Hash256{};
    auto back = DecodeVote(AsBytes(EncodeVote(next)));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, next);
    EXPECT_TRUE(IsNextVoteStep(back->step));
  }
  bytes = EncodeVote(SampleVote());
  bytes[14] = 2;  // bottom flag
  r = DecodeVote(AsBytes(bytes));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bottom flag"), std::string::npos);
  // Bottom only in the next steps, and always with a zero value.
  Vote bottom = SampleVote();
  bottom.bottom = true;
  EXPECT_FALSE(DecodeVote(AsBytes(EncodeVote(bottom))).ok());  // cert vote for bottom
  bottom.step = VoteStep::kNext;
  EXPECT_FALSE(DecodeVote(AsBytes(EncodeVote(bottom))).ok());  // non-zero value
  bottom.value = Hash256{};
  ASSERT_TRUE(DecodeVote(AsBytes(EncodeVote(bottom))).ok());
  EXPECT_EQ(*DecodeVote(AsBytes(EncodeVote(bottom))), bottom);

  // A count above the limit, and a count the remaining bytes cannot hold.
  CanonicalWriter w;
  w.U8(static_cast<uint8_t>(MessageType::kBlockHeader))
      .U64(1)
      .Array(Hash256{})
      .Array(Hash256{})
      .Array(PublicKey{})
      .Array(VrfProof{})
      .U32(kMaxPoolHashes + 1);
  auto over = DecodeBlockHeader(AsBytes(w.bytes()));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("exceeds the limit"), std::string::npos);
  CanonicalWriter w2;
  w2.U8(static_cast<uint8_t>(MessageType::kBlockHeader))
      .U64(1)
      .Array(Hash256{})
      .Array(Hash256{})
      .Array(PublicKey{})
      .Array(VrfProof{})
      .U32(100);
  auto big = DecodeBlockHeader(AsBytes(w2.bytes()));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("truncated"), std::string::npos);
}

TEST(CanonicalTest, BooleansAndIntegers) {
  CanonicalWriter w;
  w.U16(0x0102).U32(0x03040506).U64(0x0708090a0b0c0d0e).Bool(true).U8(2);
  CanonicalReader r(AsBytes(w.bytes()), "test");
  uint16_t a;
  uint32_t b;
  uint64_t c;
  bool d;
  ASSERT_TRUE(r.U16(&a, "a").ok());
  ASSERT_TRUE(r.U32(&b, "b").ok());
  ASSERT_TRUE(r.U64(&c, "c").ok());
  ASSERT_TRUE(r.Bool(&d, "d").ok());
  EXPECT_EQ(a, 0x0102);
  EXPECT_EQ(b, 0x03040506u);
  EXPECT_EQ(c, 0x0708090a0b0c0d0eu);
  EXPECT_TRUE(d);
  Status bad = r.Bool(&d, "e");
  EXPECT_NE(bad.message().find("non-canonical boolean 2"), std::string::npos) << bad;
  EXPECT_EQ(ToHex(AsBytes(w.bytes())).substr(0, 12), "010203040506");
}

}  // namespace
}  // namespace tessera::ledger
