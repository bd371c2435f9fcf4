#include "reviews/ledger/payload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "reviews/review/review.h"
#include "reviews/urs/codec.h"

namespace tessera::reviews::onchain {
namespace {

using ::testing::HasSubstr;

ledger::net::Identity TestIdentity(const ledger::KeyPair& citizen,
                                   const ledger::KeyPair& registrar) {
  ledger::net::Identity id{citizen.public_key(), 0, {}};
  ledger::net::SignIdentity(id, registrar);
  return id;
}

ReviewBatch TestBatch(int reviews) {
  std::vector<urs::KeyPair> keys;
  std::vector<urs::Point> pubs;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(urs::GenerateKeyPair());
    pubs.push_back(keys.back().public_key);
  }
  ReviewBatch b;
  b.item = ItemIdOf("espresso machine");
  b.epoch = 7;
  const urs::Ring ring = urs::Ring::Create(pubs).value();
  b.ring_size = static_cast<uint16_t>(ring.size());
  for (int i = 0; i < reviews; ++i) {
    auto r = SignReview(keys[i % 3], ring, ItemBytes(b.item), b.epoch, 1 + i % 5,
                        "ok " + std::to_string(i));
    b.reviews.push_back({r->rating, r->text, r->signature});
  }
  return b;
}

std::string Encoded(const Payload& p) { return EncodePayload(p); }

RingOpen TestRingOpen() {
  RingOpen open{ItemIdOf("espresso machine"), 7, 4096, 40, 43, {}};
  for (int i = 0; i < 5; ++i) open.keys.push_back(urs::GenerateKeyPair().public_key);
  std::sort(open.keys.begin(), open.keys.end());
  return open;
}

TEST(Payload, EveryKindRoundTrips) {
  auto registrar = ledger::KeyPair::Generate();
  auto citizen = ledger::KeyPair::Generate();
  KeyRequest req{TestIdentity(citizen, registrar), 3, Bytes(256, 7), {}};
  SignKeyRequest(req, citizen);
  std::vector<Payload> payloads = {
      CreateItem{"caffè", TestIdentity(citizen, registrar), {}},
      req,
      KeyIssue{3, citizen.public_key(), Bytes(256, 7), Bytes(256, 9)},
      RegisterKey{3, urs::GenerateKeyPair().public_key, {1, 2, 3}, Bytes(256, 5)},
      TestBatch(4),
      FrontRunProof{3,
                    citizen.public_key(),
                    Bytes(256, 7),
                    Bytes(256, 8),
                    {4},
                    urs::GenerateKeyPair().public_key,
                    {5},
                    Bytes(256, 6)},
      TestRingOpen(),
  };
  for (const Payload& p : payloads) {
    std::string bytes = Encoded(p);
    auto back = DecodePayload(AsBytes(bytes));
    ASSERT_TRUE(back.ok()) << KindName(p) << ": " << back.status();
    EXPECT_EQ(back->index(), p.index());
    EXPECT_EQ(EncodePayload(*back), bytes) << KindName(p);
  }
}

TEST(Payload, KeyRequestSignatureCoversEveryField) {
  auto registrar = ledger::KeyPair::Generate();
  auto citizen = ledger::KeyPair::Generate();
  KeyRequest req{TestIdentity(citizen, registrar), 3, Bytes(256, 7), {}};
  SignKeyRequest(req, citizen);
  auto ok = [&](const KeyRequest& r) {
    return ledger::Verify(citizen.public_key(), kKeyRequestDomain,
                          AsBytes(KeyRequestSigningBytes(r)), r.signature);
  };
  EXPECT_TRUE(ok(req));
  KeyRequest other = req;
  other.epoch = 4;
  EXPECT_FALSE(ok(other));
  other = req;
  other.blinded_msg[0] ^= 1;
  EXPECT_FALSE(ok(other));
  other = req;
  other.commitment[0] ^= 1;  // the commitment is signed too
  EXPECT_FALSE(ok(other));
}

TEST(Payload, FrontRunProofLengthsMustMatch) {
  auto citizen = ledger::KeyPair::Generate();
  FrontRunProof p{
      3,  citizen.public_key(), Bytes(256, 7), Bytes(255, 8), {}, urs::GenerateKeyPair().public_key,
      {}, Bytes(256, 6)};
  auto back = DecodePayload(AsBytes(EncodePayload(p)));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("'inv' is 255 bytes, must be 256..256"));
}

TEST(Payload, MalformedInputGetsErrorsNamingFieldAndOffset) {
  auto error = [](const std::string& bytes) {
    auto r = DecodePayload(AsBytes(bytes));
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_THAT(error(""), HasSubstr("truncated reading 'kind'"));
  EXPECT_THAT(error(std::string(1, '\x09')), HasSubstr("unknown kind 9"));
  std::string item = Encoded(CreateItem{"tea", {}, {}});
  // kind, name (4 + 3), identity (105), signature (64): 177 bytes.
  EXPECT_THAT(error(item + "x"), HasSubstr("1 trailing bytes (at offset 177)"));
  EXPECT_THAT(error(item.substr(0, 100)), HasSubstr("truncated reading 'identity'"));
  EXPECT_THAT(error(item.substr(0, 120)), HasSubstr("truncated reading 'signature'"));
  EXPECT_THAT(error(item.substr(0, 6)), HasSubstr("truncated reading 'name'"));
  EXPECT_THAT(error(Encoded(CreateItem{"", {}, {}})),
              HasSubstr("'name' is 0 bytes, must be 1..128"));
  EXPECT_THAT(error(Encoded(CreateItem{std::string(129, 'a'), {}, {}})),
              HasSubstr("must be 1..128"));
  EXPECT_THAT(error(Encoded(CreateItem{"\xC0\xAF", {}, {}})),
              HasSubstr("not valid UTF-8"));  // overlong
  EXPECT_THAT(error(Encoded(CreateItem{"\xED\xA0\x80", {}, {}})),
              HasSubstr("not valid UTF-8"));  // surrogate
  EXPECT_THAT(error(Encoded(CreateItem{"ab\xE2\x82", {}, {}})),
              HasSubstr("not valid UTF-8"));  // truncated

  ReviewBatch batch = TestBatch(2);
  std::string good = Encoded(batch);
  ASSERT_TRUE(DecodePayload(AsBytes(good)).ok());
  ReviewBatch bad = batch;
  bad.reviews[1].rating = 6;
  EXPECT_THAT(error(Encoded(bad)), HasSubstr("'rating' of review 1 is 6, must be 1..5"));
  bad = batch;
  bad.reviews[0].text = std::string(1001, 'x');
  EXPECT_THAT(error(Encoded(bad)), HasSubstr("'text of review 0' is 1001 bytes, must be 0..1000"));
  // A signature over a different ring size does not fit this ring.
  bad = batch;
  bad.reviews[0].signature.s.pop_back();
  EXPECT_THAT(error(Encoded(bad)),
              HasSubstr("'signature of review 0' is 259 bytes, must be 291..291"));
  // A response that is not a canonical scalar: the URS decoder's message, with our offset.
  std::string tampered = good;
  size_t last_response = tampered.size() - 32;
  std::fill(tampered.begin() + static_cast<long>(last_response), tampered.end(), '\xff');
  EXPECT_THAT(error(tampered), HasSubstr("'signature' of review 1: malformed signature"));
  bad = batch;
  bad.ring_size = 0;
  EXPECT_THAT(error(Encoded(bad)), HasSubstr("'ring_size' is 0, must be 1..4096 (at offset 41)"));
  bad.ring_size = 4097;
  EXPECT_THAT(error(Encoded(bad)), HasSubstr("'ring_size' is 4097"));
  // A ring opening: keys out of order or repeated, a ring size that grows by more than the keys
  // listed or shrinks, no keys.
  RingOpen open = TestRingOpen();
  std::swap(open.keys[1], open.keys[2]);
  EXPECT_THAT(error(Encoded(open)), HasSubstr("'key 2' is not above the key before it"));
  open = TestRingOpen();
  open.keys[3] = open.keys[2];
  EXPECT_THAT(error(Encoded(open)), HasSubstr("'key 3' is not above"));
  open = TestRingOpen();
  open.members = 46;  // the ring grows by at most the 5 keys listed
  EXPECT_THAT(error(Encoded(open)), HasSubstr("'members' is 46, outside 40..45"));
  open.members = 39;  // nor shrinks
  EXPECT_THAT(error(Encoded(open)), HasSubstr("'members' is 39, outside 40..45"));
  open = TestRingOpen();
  open.keys.clear();
  EXPECT_THAT(error(Encoded(open)), HasSubstr("'count' is 0, must be 1..4096"));
  open = TestRingOpen();
  open.member_offset = open.key_offset + 1;
  EXPECT_THAT(error(Encoded(open)), HasSubstr("out of range"));
  // A count of zero reviews, and a lying length that would overrun the buffer.
  bad = batch;
  bad.reviews.clear();
  EXPECT_THAT(error(Encoded(bad)), HasSubstr("'count' is 0, must be 1..256"));
  std::string reg = Encoded(RegisterKey{3, urs::GenerateKeyPair().public_key, {}, Bytes(256, 5)});
  reg[1 + 8 + 32 + 32] = '\x00';
  reg[1 + 8 + 32 + 32 + 2] = '\x04';  // length 0x00000400 = 1024 with 256 bytes left
  EXPECT_THAT(error(reg), HasSubstr("truncated reading 'signature' (need 1024 bytes, 256 left)"));
  RegisterKey not_a_point{3, {}, {}, Bytes(256, 5)};
  not_a_point.review_key.fill(0xff);
  EXPECT_THAT(error(Encoded(not_a_point)), HasSubstr("review_key"));
}

TEST(Payload, ReviewRecordHashCoversEveryField) {
  ReviewBatch b = TestBatch(1);
  const ReviewEntry& r = b.reviews[0];
  auto h = ReviewRecordHash(b.item, b.epoch, r);
  ReviewEntry other = r;
  other.rating = r.rating % 5 + 1;
  EXPECT_NE(ReviewRecordHash(b.item, b.epoch, other), h);
  other = r;
  other.text += ".";
  EXPECT_NE(ReviewRecordHash(b.item, b.epoch, other), h);
  other = r;
  other.signature.s[0][0] ^= 1;
  EXPECT_NE(ReviewRecordHash(b.item, b.epoch, other), h);
  EXPECT_NE(ReviewRecordHash(b.item, b.epoch + 1, r), h);
  EXPECT_NE(ReviewRecordHash(ItemIdOf("other"), b.epoch, r), h);
  EXPECT_EQ(ReviewRecordHash(b.item, b.epoch, r), h);
}

}  // namespace
}  // namespace tessera::reviews::onchain
