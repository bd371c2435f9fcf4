#include "reviews/urs/urs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sodium.h>

#include <bitset>
#include <cmath>

namespace tessera::reviews::urs {
namespace {

Bytes B(std::string_view s) { return Bytes(s.begin(), s.end()); }

struct Fixture {
  std::vector<KeyPair> keys;
  Ring ring;
};

Fixture MakeRing(size_t n) {
  Fixture f;
  std::vector<Point> pks;
  for (size_t i = 0; i < n; ++i) {
    f.keys.push_back(GenerateKeyPair());
    pks.push_back(f.keys.back().public_key);
  }
  f.ring = *Ring::Create(pks);
  return f;
}

TEST(Urs, SignVerifyForEveryPositionAndSeveralSizes) {
  for (size_t n : {1u, 2u, 3u, 8u, 17u}) {
    Fixture f = MakeRing(n);
    for (const KeyPair& k : f.keys) {
      auto sig = Sign(k, f.ring, B("item-1|epoch-7"), B("rating=4"));
      ASSERT_TRUE(sig.ok()) << sig.status();
      EXPECT_EQ(sig->s.size(), n);
      EXPECT_TRUE(Verify(f.ring, B("item-1|epoch-7"), B("rating=4"), *sig).ok()) << "n=" << n;
    }
  }
}

// Test required by the issue: a second review of one item by one key is detected.
TEST(Urs, SecondSignatureInOneScopeHasTheSameTag) {
  Fixture f = MakeRing(10);
  const KeyPair& k = f.keys[3];
  auto first = Sign(k, f.ring, B("item-A"), B("5 stars"));
  auto second = Sign(k, f.ring, B("item-A"), B("1 star, changed my mind"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->tag, second->tag);
  EXPECT_NE(first->c0, second->c0);  // the signatures themselves are fresh
  // Even over a different ring that contains the key, the tag stays: no second tag by
  // choosing another ring.
  std::vector<Point> sub = {f.keys[3].public_key, f.keys[4].public_key};
  auto other_ring = Ring::Create(sub);
  ASSERT_TRUE(other_ring.ok());
  auto third = Sign(k, *other_ring, B("item-A"), B("again"));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->tag, first->tag);
  auto expected = ComputeTag(k.secret, B("item-A"));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(*expected, first->tag);
  // Other keys in the same scope get other tags.
  auto other = Sign(f.keys[4], f.ring, B("item-A"), B("5 stars"));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->tag, first->tag);
}

// Test required by the issue: reviews of two items by one key have different tags, and the
// tags cannot be linked without the secret key.
TEST(Urs, TagsOfDifferentItemsDifferAndAreNotThePublicDlogFlaw) {
  Fixture f = MakeRing(6);
  const KeyPair& k = f.keys[0];
  auto a = Sign(k, f.ring, B("item-A"), B("m"));
  auto b = Sign(k, f.ring, B("item-B"), B("m"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->tag, b->tag);
  // The flaw of the public Go URS library: with hash-to-group g^H(scope), the tag equals
  // Y^H(scope) and anyone can link it to a member. With a proper hash-to-group it does not,
  // for any member.
  Scalar h = HashToScalar("tessera/reviews/urs/v1/tag", {B("item-A")});
  for (const Point& y : f.ring.members()) {
    auto guess = Mul(h, y);
    ASSERT_TRUE(guess.ok());
    EXPECT_NE(*guess, a->tag);
  }
}

int HammingDistance(const Point& a, const Point& b) {
  int d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += std::bitset<8>(a[i] ^ b[i]).count();
  return d;
}

// Structural/statistical unlinkability check. Tags of one key across items are x*H_i for
// independent random-oracle points H_i, so they should look exactly like tags of unrelated
// keys: the same bit balance and the same pairwise distances. A linkable construction (a
// global key image, or a tag with public discrete log relation) fails this: identical tags,
// or tags sharing structure.
TEST(Urs, TagsOfOneKeyAcrossItemsLookLikeTagsOfUnrelatedKeys) {
  constexpr int kItems = 400;
  KeyPair k = GenerateKeyPair();
  std::vector<Point> same_key, different_keys;
  for (int i = 0; i < kItems; ++i) {
    Bytes scope = B("item-" + std::to_string(i));
    same_key.push_back(*ComputeTag(k.secret, scope));
    different_keys.push_back(*ComputeTag(GenerateKeyPair().secret, scope));
  }
  auto mean_distance = [](const std::vector<Point>& tags) {
    double sum = 0;
    for (size_t i = 0; i + 1 < tags.size(); ++i) sum += HammingDistance(tags[i], tags[i + 1]);
    return sum / static_cast<double>(tags.size() - 1);
  };
  // A ristretto encoding has two fixed bits (the sign bit of the first byte and the top bit),
  // so uniform encodings are ~127 bits apart; the standard error of the mean over 399 pairs is
  // ~0.4 bits, so a 4-bit band is ten standard errors wide.
  double same = mean_distance(same_key), diff = mean_distance(different_keys);
  EXPECT_NEAR(same, 127.0, 4.0);
  EXPECT_NEAR(diff, 127.0, 4.0);
  EXPECT_NEAR(same, diff, 4.0);
  // Bit balance per position (ignoring the two fixed bits): each free bit is set in about half
  // of the tags; 400 samples give a standard deviation of 10, so 50 is five sigma.
  for (int bit = 1; bit < 255; ++bit) {
    int set = 0;
    for (const Point& t : same_key) set += (t[bit / 8] >> (bit % 8)) & 1;
    EXPECT_NEAR(set, kItems / 2, 50) << "bit " << bit;
  }
  // No two items share a tag.
  std::sort(same_key.begin(), same_key.end());
  EXPECT_EQ(std::adjacent_find(same_key.begin(), same_key.end()), same_key.end());
}

// Test required by the issue: a key not in the ring cannot produce a valid signature.
TEST(Urs, OutsiderCannotSign) {
  Fixture f = MakeRing(5);
  KeyPair outsider = GenerateKeyPair();
  auto refused = Sign(outsider, f.ring, B("item"), B("m"));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  // An outsider who pretends to hold member 0's public key (but has its own secret) produces
  // a signature that does not verify.
  KeyPair forged = outsider;
  forged.public_key = f.keys[0].public_key;
  auto sig = Sign(forged, f.ring, B("item"), B("m"));
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(Verify(f.ring, B("item"), B("m"), *sig).code(), StatusCode::kPermissionDenied);
  // A signature made over a ring that includes the outsider does not verify for the real ring.
  std::vector<Point> with_outsider = f.ring.members();
  with_outsider.back() = outsider.public_key;
  auto wider = Ring::Create(with_outsider);
  ASSERT_TRUE(wider.ok());
  auto sig2 = Sign(outsider, *wider, B("item"), B("m"));
  ASSERT_TRUE(sig2.ok());
  EXPECT_TRUE(Verify(*wider, B("item"), B("m"), *sig2).ok());
  EXPECT_FALSE(Verify(f.ring, B("item"), B("m"), *sig2).ok());
}

// Test required by the issue: a tampered signature, ring, message or tag fails verification.
TEST(Urs, TamperingFails) {
  Fixture f = MakeRing(7);
  auto sig = Sign(f.keys[2], f.ring, B("item-9"), B("rating=2"));
  ASSERT_TRUE(sig.ok());
  ASSERT_TRUE(Verify(f.ring, B("item-9"), B("rating=2"), *sig).ok());
  EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=3"), *sig).ok());  // message
  EXPECT_FALSE(Verify(f.ring, B("item-8"), B("rating=2"), *sig).ok());  // scope
  // Tag: another valid point, e.g. the signer's tag for another item.
  Signature bad_tag = *sig;
  bad_tag.tag = *ComputeTag(f.keys[2].secret, B("item-8"));
  EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), bad_tag).ok());
  // Each response and the challenge.
  for (size_t i = 0; i < sig->s.size(); ++i) {
    Signature bad = *sig;
    bad.s[i][0] ^= 1;
    EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), bad).ok()) << i;
  }
  Signature bad_c = *sig;
  bad_c.c0[1] ^= 1;
  EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), bad_c).ok());
  // The commitment and each part of the link proof.
  Signature bad_commitment = *sig;
  bad_commitment.commitment = GenerateKeyPair().public_key;
  EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), bad_commitment).ok());
  for (Scalar Signature::*field :
       {&Signature::link_challenge, &Signature::link_x, &Signature::link_r}) {
    Signature bad_link = *sig;
    (bad_link.*field)[0] ^= 1;
    EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), bad_link).ok());
  }
  // Ring: one member replaced, one member removed (size mismatch), one added.
  std::vector<Point> members = f.ring.members();
  members[5] = GenerateKeyPair().public_key;
  EXPECT_FALSE(Verify(*Ring::Create(members), B("item-9"), B("rating=2"), *sig).ok());
  members = f.ring.members();
  members.pop_back();
  EXPECT_FALSE(Verify(*Ring::Create(members), B("item-9"), B("rating=2"), *sig).ok());
  members = f.ring.members();
  members.push_back(GenerateKeyPair().public_key);
  EXPECT_FALSE(Verify(*Ring::Create(members), B("item-9"), B("rating=2"), *sig).ok());
  // Zero and non-canonical scalars are rejected outright.
  Signature zero = *sig;
  zero.s[0] = Scalar{};
  EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), zero).ok());
  Signature identity_tag = *sig;
  identity_tag.tag = Point{};
  EXPECT_FALSE(Verify(f.ring, B("item-9"), B("rating=2"), identity_tag).ok());
}

// Review keys live on J (KeyBase), whose discrete log to G nobody knows: on G the commitment
// C = x*J + r*G could not tell the key from the blinding.
TEST(Urs, KeysAreOnTheKeyBase) {
  KeyPair k = GenerateKeyPair();
  EXPECT_EQ(k.public_key, *Mul(k.secret, KeyBase()));
  EXPECT_NE(k.public_key, *MulBase(k.secret));
  EXPECT_EQ(KeyBase(), HashToPoint("tessera/reviews/urs/v2/key-base", {}));
  EXPECT_EQ(KeyPairFromSecret(k.secret)->public_key, k.public_key);
}

// The ring proof alone shows only that C - Y_i = r*G for some member: a member who knows r
// could pair it with any tag. The link proof is what binds the tag to the key. A member here
// signs honestly except that it picks a fresh tag T' = x'*H (a second review of one item):
// the ring closes, and only the link proof refuses it. Written against the hash layout of
// urs.cc by hand (an independent copy). Broken on purpose once (the link check skipped in
// Verify): the forged second tag verified.
TEST(Urs, AMemberCannotChooseItsTag) {
  Fixture f = MakeRing(5);
  const KeyPair& k = f.keys[2];
  const size_t pi = *f.ring.IndexOf(k.public_key);
  const Bytes scope = B("item-7"), message = B("rating=1");
  const Point h = HashToPoint("tessera/reviews/urs/v1/tag", {scope});
  auto hash = [&](std::string_view domain, const Signature& sig, const Bytes& tail) {
    Bytes in;
    AppendLengthPrefixed(in, B(std::string(domain)));
    AppendLengthPrefixed(in, f.ring.digest());
    AppendLengthPrefixed(in, scope);
    AppendLengthPrefixed(in, message);
    AppendLengthPrefixed(in, sig.tag);
    AppendLengthPrefixed(in, sig.commitment);
    in.insert(in.end(), tail.begin(), tail.end());
    uint8_t digest[crypto_hash_sha512_BYTES];
    crypto_hash_sha512(digest, in.data(), in.size());
    Scalar out;
    crypto_core_ristretto255_scalar_reduce(out.data(), digest);
    return out;
  };
  auto ring_challenge = [&](const Signature& sig, size_t i, const Point& l) {
    Bytes tail;
    AppendBigEndian(tail, i, 4);
    tail.insert(tail.end(), l.begin(), l.end());
    return hash("tessera/reviews/urs/v2/challenge", sig, tail);
  };

  // First, the layout is right: the honest signature's ring recomputes to c0 this way.
  Signature honest = *Sign(k, f.ring, scope, message);
  {
    Scalar c = honest.c0;
    for (size_t i = 0; i < f.ring.size(); ++i) {
      Point l = Add(*MulBase(honest.s[i]), *Mul(c, Sub(honest.commitment, f.ring.members()[i])));
      c = ring_challenge(honest, i, l);
    }
    ASSERT_EQ(c, honest.c0);
  }

  // The forgery: a second tag for the same item.
  Signature forged;
  forged.tag = *Mul(RandomNonzeroScalar(), h);
  ASSERT_NE(forged.tag, honest.tag);
  const Scalar r = RandomNonzeroScalar();
  forged.commitment = Add(k.public_key, *MulBase(r));
  forged.link_challenge = RandomNonzeroScalar();  // no (x, r) fits both C and T'
  forged.link_x = RandomNonzeroScalar();
  forged.link_r = RandomNonzeroScalar();
  const size_t n = f.ring.size();
  std::vector<Scalar> c(n);
  forged.s.assign(n, Scalar{});
  const Scalar alpha = RandomNonzeroScalar();
  c[(pi + 1) % n] = ring_challenge(forged, pi, *MulBase(alpha));
  for (size_t step = 1; step < n; ++step) {
    const size_t i = (pi + step) % n;
    forged.s[i] = RandomNonzeroScalar();
    Point l = Add(*MulBase(forged.s[i]), *Mul(c[i], Sub(forged.commitment, f.ring.members()[i])));
    c[(i + 1) % n] = ring_challenge(forged, i, l);
  }
  forged.s[pi] = ScalarSub(alpha, ScalarMul(c[pi], r));
  forged.c0 = c[0];
  const Status st = Verify(f.ring, scope, message, forged);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), ::testing::HasSubstr("the tag and the commitment are not of one key"));
}

// libsodium 1.0.18 takes a ristretto255 encoding with the top bit set for the same element as
// the canonical one. A tag is a ledger leaf by its bytes, so a signer could sign a second time
// over the twin encoding of its tag (every commitment decodes to the same points, so the ring
// closes) and review an item twice. Such encodings are refused: as a tag by Verify, as a key by
// Ring::Create. Broken on purpose once (the top-bit check removed from ValidatePoint): Verify
// refused the twin only because its hash context changed, not for its tag, and Ring::Create
// took the twin key.
TEST(Urs, TwinEncodingsWithTheTopBitAreRefused) {
  Fixture f = MakeRing(4);
  Point twin = f.keys[1].public_key;
  twin[31] |= 0x80;
  if (crypto_core_ristretto255_is_valid_point(twin.data()) == 1) {
    // The library's view: the same element (so a scalar multiple is the same canonical point).
    Scalar s = RandomNonzeroScalar();
    EXPECT_EQ(*Mul(s, twin), *Mul(s, f.keys[1].public_key));
  }
  EXPECT_FALSE(ValidatePoint(twin, "key").ok());
  EXPECT_FALSE(Ring::Create({f.keys[0].public_key, twin}).ok());
  auto sig = Sign(f.keys[0], f.ring, B("item"), B("review"));
  ASSERT_TRUE(sig.ok());
  Signature twin_tag = *sig;
  twin_tag.tag[31] |= 0x80;
  const Status st = Verify(f.ring, B("item"), B("review"), twin_tag);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), ::testing::HasSubstr("tag is not a canonical"));
}

// Ring keys are validated once per process (urs.h): a second ring over the same keys computes
// no square root, and a key the cache never saw is still validated (an invalid one refused
// beside remembered valid ones). Broken on purpose once (the cache consulted but never
// filled): the second ring validated its 12 keys again.
TEST(Urs, RingKeysAreValidatedOncePerProcess) {
  std::vector<Point> keys;
  for (int i = 0; i < 12; ++i) keys.push_back(GenerateKeyPair().public_key);
  const RingKeyValidations before = RingKeyValidationStats();
  ASSERT_TRUE(Ring::Create(keys).ok());
  const RingKeyValidations first = RingKeyValidationStats();
  EXPECT_EQ(first.validated - before.validated, 12u);
  ASSERT_TRUE(Ring::Create(keys).ok());
  const RingKeyValidations second = RingKeyValidationStats();
  EXPECT_EQ(second.validated, first.validated);
  EXPECT_EQ(second.remembered - first.remembered, 12u);
  Point bad;
  bad.fill(0xee);  // not canonical
  std::vector<Point> with_bad = keys;
  with_bad.push_back(bad);
  auto refused = Ring::Create(with_bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("not a canonical"));
  EXPECT_FALSE(Ring::Create(with_bad).ok());  // and again: failures are never remembered
}

TEST(Urs, RingValidation) {
  EXPECT_FALSE(Ring::Create({}).ok());
  KeyPair k = GenerateKeyPair();
  auto dup = Ring::Create({k.public_key, k.public_key});
  EXPECT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate"), std::string::npos);
  Point bad;
  bad.fill(0xee);
  EXPECT_FALSE(Ring::Create({k.public_key, bad}).ok());
  // The order of the input does not matter: rings are canonical.
  KeyPair k2 = GenerateKeyPair();
  auto r1 = Ring::Create({k.public_key, k2.public_key});
  auto r2 = Ring::Create({k2.public_key, k.public_key});
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(r1->members(), r2->members());
  EXPECT_EQ(r1->digest(), r2->digest());
}

}  // namespace
}  // namespace tessera::reviews::urs
