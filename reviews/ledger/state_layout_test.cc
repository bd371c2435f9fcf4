#include "reviews/ledger/state_layout.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera::reviews::onchain {
namespace {

TEST(StateLayout, KeysOfDifferentRecordsNeverCollide) {
  ItemId a = ItemIdOf("a");
  urs::Point p{};
  std::copy(a.begin(), a.end(), p.begin());
  ledger::PublicKey c{};
  std::copy(a.begin(), a.end(), c.begin());
  std::set<ledger::Hash256> keys = {
      leaf::Item(a),        leaf::ItemCount(),     leaf::Tally(a),         leaf::Chain(a),
      leaf::Tag(a, 1, p),   leaf::Tag(a, 2, p),    leaf::KeyRequest(1, c), leaf::RequestCount(1),
      leaf::KeyIssue(1, c), leaf::ReviewKey(1, p), leaf::KeyCount(1),      leaf::EpochSeed(1),
      leaf::KeyCount(2)};
  EXPECT_EQ(keys.size(), 13u);
}

TEST(StateLayout, ValuesRoundTripAndForeignLeavesAreRefused) {
  EXPECT_EQ(*DecodeCounter(std::nullopt), 0u);
  EXPECT_EQ(*DecodeCounter(EncodeCounter(123456789)), 123456789u);
  ledger::LeafValue junk{};
  junk.fill(0xab);
  EXPECT_FALSE(DecodeCounter(junk).ok());
  EXPECT_FALSE(DecodeTally(junk).ok());
  EXPECT_FALSE(DecodeItemRecord(junk).ok());

  auto rec = DecodeItemRecord(EncodeItemRecord({4, 41}));
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->created_epoch, 4u);
  EXPECT_EQ(rec->created_height, 41u);
  EXPECT_EQ(rec->first_review_epoch(), 6u);
  EXPECT_FALSE(DecodeItemRecord(ledger::LeafValue{}).ok());  // zero is not an item

  Tally t;
  t.histogram = {1, 0, 2, 0, 3};
  EXPECT_EQ(t.count(), 6u);
  EXPECT_EQ(t.sum(), 1u + 6u + 15u);
  EXPECT_DOUBLE_EQ(t.mean(), 22.0 / 6.0);
  EXPECT_EQ(*DecodeTally(EncodeTally(t)), t);
  EXPECT_EQ(DecodeTally(std::nullopt)->count(), 0u);
}

TEST(StateLayout, RecordsNeverReadAsAnotherRecordOrAsAnAccount) {
  Tally t;
  t.histogram = {3, 0, 0, 0, 0};
  for (const ledger::LeafValue& v :
       {EncodeCounter(7), EncodeTally(t), EncodeItemRecord({1, 12}), EncodeTally(Tally{})}) {
    EXPECT_FALSE(ledger::DecodeAccount(v).ok());
  }
  EXPECT_FALSE(DecodeCounter(EncodeTally(t)).ok());
  EXPECT_FALSE(DecodeTally(EncodeCounter(7)).ok());
  EXPECT_FALSE(DecodeItemRecord(EncodeCounter(7)).ok());
}

TEST(StateLayout, ChainDependsOnOrder) {
  ledger::Hash256 a{}, b{};
  a[0] = 1;
  b[0] = 2;
  ledger::LeafValue zero{};
  EXPECT_NE(NextChain(NextChain(zero, a), b), NextChain(NextChain(zero, b), a));
  EXPECT_EQ(NextChain(NextChain(zero, a), b), NextChain(NextChain(zero, a), b));
}

}  // namespace
}  // namespace tessera::reviews::onchain
