#include "reviews/client/item_audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reviews/client/chain_index.h"
#include "reviews/ledger/reviews_app.h"
#include "reviews/review/review.h"

namespace tessera::reviews::client {
namespace {

using ::testing::HasSubstr;
using namespace onchain;  // NOLINT

struct Fixture {
  std::vector<urs::KeyPair> keys = {urs::GenerateKeyPair(), urs::GenerateKeyPair(),
                                    urs::GenerateKeyPair()};
  urs::Ring ring = *urs::Ring::Create({keys[0].public_key, keys[1].public_key, keys[2].public_key});
  ItemId item = ItemIdOf("tea");

  ReviewEntry Entry(size_t signer, int rating, const std::string& text) {
    auto r = SignReview(keys[signer], ring, ItemBytes(item), 2, rating, text);
    return {rating, text, r->signature};
  }
  ledger::LedgerTx Tx(const Payload& p) {
    return ledger::AppTransaction{kReviewsAppId, EncodePayload(p)};
  }
};

TEST(ChainIndex, IndexesReviewsPayloadsAndIgnoresEverythingElse) {
  Fixture f;
  ChainIndex index;
  urs::Point k1 = urs::GenerateKeyPair().public_key;
  index.Add(1, {f.Tx(CreateItem{"tea", {}, {}}), ledger::AppTransaction{9, "not ours"},
                ledger::AppTransaction{kReviewsAppId, "\x05junk"}, ledger::Transaction{},
                f.Tx(RegisterKey{2, k1, {}, Bytes(256, 1)})});
  index.Add(2, {f.Tx(CreateItem{"tea", {}, {}}), f.Tx(RegisterKey{2, k1, {}, Bytes(256, 2)}),
                f.Tx(ReviewBatch{f.item, 2, 3, {f.Entry(0, 5, "a"), f.Entry(1, 4, "b")}}),
                f.Tx(KeyIssue{2, {}, Bytes(256, 3), Bytes(256, 4)})});
  EXPECT_EQ(index.height(), 2u);
  ASSERT_EQ(index.creations().size(), 1u);  // the second CreateItem of "tea" is a duplicate
  EXPECT_EQ(index.creations()[0].height, 1u);
  EXPECT_EQ(index.KeyCandidates(2), std::vector<urs::Point>{k1});
  EXPECT_TRUE(index.KeyCandidates(3).empty());
  auto reviews = index.ReviewCandidates(f.item);
  ASSERT_EQ(reviews.size(), 2u);
  EXPECT_EQ(reviews[1].entry.text, "b");
  EXPECT_EQ(reviews[1].height, 2u);
  EXPECT_EQ(index.IssueCandidates(2, {}).size(), 1u);
}

TEST(ItemAudit, SelectsCommittedReviewsAndCatchesEveryTampering) {
  Fixture f;
  ChainIndex index;
  ReviewEntry first = f.Entry(0, 5, "great");
  ReviewEntry dup = f.Entry(0, 1, "changed my mind");  // same key: same tag, rejected on chain
  index.Add(1, {f.Tx(ReviewBatch{f.item, 2, 3, {first, f.Entry(1, 2, "meh")}})});
  index.Add(2, {f.Tx(ReviewBatch{f.item, 2, 3, {dup, f.Entry(2, 4, "good")}})});
  auto candidates = index.ReviewCandidates(f.item);
  ASSERT_EQ(candidates.size(), 4u);
  // What the ledger committed: 0, 1 and 3; the tag of 2 holds review 0's record.
  auto record = [&](size_t i) {
    const PostedReview& r = candidates[i];
    return ReviewRecordHash(r.item, r.epoch, r.entry);
  };
  std::vector<std::optional<ledger::LeafValue>> tags = {record(0), record(1), record(0), record(3)};
  std::vector<PostedReview> committed = SelectCommitted(candidates, tags);
  ASSERT_EQ(committed.size(), 3u);
  EXPECT_EQ(committed[2].entry.text, "good");
  ItemAudit truth = Replay(committed);
  EXPECT_EQ(truth.tally.count(), 3u);
  EXPECT_EQ(truth.tally.sum(), 11u);
  EXPECT_TRUE(CheckAgainstState(truth, truth.tally, truth.chain).ok());

  auto check = [&](std::vector<PostedReview> list) {
    return CheckAgainstState(Replay(std::move(list)), truth.tally, truth.chain);
  };
  auto tampered = committed;
  tampered[0].entry.rating = 1;
  EXPECT_THAT(check(tampered).message(), HasSubstr("tally mismatch"));
  tampered = committed;
  tampered[1].entry.text = "excellent";
  EXPECT_THAT(check(tampered).message(), HasSubstr("review chain mismatch"));
  tampered = committed;
  std::swap(tampered[0], tampered[1]);
  EXPECT_EQ(check(tampered).code(), StatusCode::kDataLoss);
  tampered = committed;
  tampered.pop_back();
  EXPECT_EQ(check(tampered).code(), StatusCode::kDataLoss);
  tampered = committed;
  tampered.push_back(candidates[2]);  // the rejected double review slipped back in
  EXPECT_EQ(check(tampered).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tessera::reviews::client
