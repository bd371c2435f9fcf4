#include "reviews/ledger/reviews_app.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "ledger/crypto/hash.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/sparse_merkle_tree.h"
#include "reviews/drac/eligibility.h"
#include "reviews/ledger/payload.h"
#include "reviews/ledger/state_layout.h"
#include "reviews/review/review.h"
#include "reviews/urs/codec.h"

namespace tessera::reviews {
namespace {

using namespace onchain;  // NOLINT
using ledger::AppTransaction;
using ledger::BlockContext;
using ledger::BlockOutcome;
using ledger::LeafValue;
using ::testing::HasSubstr;

constexpr uint64_t kEpochBlocks = 10;

// One identity's path to a review key: the request, the issuer's answer, the registration.
struct Applicant {
  ledger::KeyPair citizen = ledger::KeyPair::Generate();
  ledger::net::Identity identity;
  urs::KeyPair review = urs::GenerateKeyPair();
  Bytes input;  // msg_prefix || CredentialMessage
  blind::BlindOutput blind;
  std::array<uint8_t, 32> salt{};  // of the request's commitment
};

class TreeReader : public ledger::LeafReader {
 public:
  explicit TreeReader(const ledger::SparseMerkleTree& tree) : tree_(tree) {}
  Result<std::optional<LeafValue>> Get(const ledger::Hash256& key) const override {
    return tree_.Get(key);
  }

 private:
  const ledger::SparseMerkleTree& tree_;
};

class ReviewsAppTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    issuer_ = new blind::SecretKey(*blind::SecretKey::Generate(2048));
  }
  static void TearDownTestSuite() { delete issuer_; }

  void SetUp() override {
    Configure(100);
    creator_ = NewApplicant();
  }

  void Configure(uint64_t ring_size) {
    ReviewsParams p{issuer_->public_key(), registrar_.public_key(), ring_size, kEpochBlocks};
    params_ = p;
    app_ = MakeReviewsApp(p);
    registry_ = ledger::AppRegistry();
    ASSERT_TRUE(registry_.Add(app_).ok());
  }

  static ledger::Hash256 SeedOf(uint64_t height) {
    return ledger::Sha256("test seed " + std::to_string(height));
  }
  BlockContext Context() const { return {next_height_, SeedOf(next_height_ - 1)}; }

  // Applies the next block (all signatures checked) and commits its updates.
  BlockOutcome Block(const std::vector<std::string>& payloads) {
    std::vector<ledger::LedgerTx> txs;
    for (const std::string& p : payloads) txs.push_back(AppTransaction{kReviewsAppId, p});
    auto outcome = ledger::ApplyBlock(ledger::TreeLookup(tree_), txs, Context(), registry_);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    tree_ = *tree_.Update(outcome->updates);
    ++next_height_;
    return *outcome;
  }
  std::string Reason(const BlockOutcome& o, size_t index) {
    for (const auto& [i, why] : o.rejected) {
      if (i == index) return why;
    }
    return "(applied)";
  }
  // One transaction in its own block: "" when applied, else the reason.
  std::string One(const std::string& payload) {
    BlockOutcome o = Block({payload});
    return o.applied == 1 ? "" : Reason(o, 0);
  }

  // Why the app refuses `payload` on the committed state (all checks, nothing committed).
  std::string Refusal(const std::string& payload) {
    return Verdict(payload, true).rejected.value_or("(applied)");
  }

  // Runs the app directly on the committed state (no commit), with or without crypto.
  ledger::AppVerdict Verdict(const std::string& payload, bool verify_crypto) {
    TreeReader reader(tree_);
    auto v = app_->Apply(AsBytes(payload), Context(), reader, verify_crypto);
    EXPECT_TRUE(v.ok()) << v.status();
    return *v;
  }

  void AdvanceTo(uint64_t height) {
    while (next_height_ < height) Block({});
  }

  Applicant NewApplicant() {
    Applicant a;
    a.identity = {a.citizen.public_key(), 0, {}};
    ledger::net::SignIdentity(a.identity, registrar_);
    return a;
  }
  std::string RequestOf(Applicant& a, uint64_t epoch) {
    a.input =
        blind::PrepareMessage(kCredentialVariant, CredentialMessage(a.review.public_key, epoch));
    a.blind = *blind::Blind(issuer_->public_key(), kCredentialVariant, a.input);
    a.salt = ledger::Sha256("salt of " + ToHex(a.review.public_key));
    Bytes encoded = *blind::UnblindMessage(issuer_->public_key(), a.blind.blinded_msg, a.blind.inv);
    KeyRequest req{
        a.identity, epoch, a.blind.blinded_msg, EncodedMessageCommitment(encoded, a.salt), {}};
    SignKeyRequest(req, a.citizen);
    return EncodePayload(req);
  }
  std::string IssueOf(const Applicant& a, uint64_t epoch) {
    return EncodePayload(KeyIssue{epoch, a.citizen.public_key(), a.blind.blinded_msg,
                                  *blind::BlindSign(*issuer_, a.blind.blinded_msg)});
  }
  std::string RegisterOf(const Applicant& a, uint64_t epoch) {
    Bytes blind_sig = *blind::BlindSign(*issuer_, a.blind.blinded_msg);
    Bytes sig = *blind::Finalize(issuer_->public_key(), kCredentialVariant, a.input, blind_sig,
                                 a.blind.inv);
    RegisterKey reg{epoch, a.review.public_key, {}, sig};
    std::copy_n(a.input.begin(), 32, reg.msg_prefix.begin());
    return EncodePayload(reg);
  }

  Bytes CredentialOf(const Applicant& a) {
    Bytes blind_sig = *blind::BlindSign(*issuer_, a.blind.blinded_msg);
    return *blind::Finalize(issuer_->public_key(), kCredentialVariant, a.input, blind_sig,
                            a.blind.inv);
  }
  FrontRunProof ProofOf(const Applicant& a, uint64_t epoch) {
    FrontRunProof p{epoch,
                    a.citizen.public_key(),
                    a.blind.blinded_msg,
                    a.blind.inv,
                    a.salt,
                    a.review.public_key,
                    {},
                    CredentialOf(a)};
    std::copy_n(a.input.begin(), 32, p.msg_prefix.begin());
    return p;
  }
  uint64_t Counter(const ledger::Hash256& key) { return *DecodeCounter(Leaf(key)); }

  // A signed CreateItem of `name` by `who` (the fixture's creator by default).
  std::string CreateTx(const std::string& name, const Applicant* who = nullptr) {
    if (who == nullptr) who = &creator_;
    CreateItem tx{name, who->identity, {}};
    SignCreateItem(tx, who->citizen);
    return EncodePayload(tx);
  }
  ItemId Id(const std::string& name) const { return ItemIdOf(creator_.citizen.public_key(), name); }

  // n identities each get and register a review key for `epoch` (three blocks).
  std::vector<urs::KeyPair> RegisterKeys(size_t n, uint64_t epoch) {
    std::vector<Applicant> as;
    std::vector<std::string> reqs, issues, regs;
    for (size_t i = 0; i < n; ++i) {
      as.push_back(NewApplicant());
      reqs.push_back(RequestOf(as.back(), epoch));
    }
    EXPECT_EQ(Block(reqs).applied, n);
    for (const Applicant& a : as) issues.push_back(IssueOf(a, epoch));
    EXPECT_EQ(Block(issues).applied, n);
    for (const Applicant& a : as) regs.push_back(RegisterOf(a, epoch));
    EXPECT_EQ(Block(regs).applied, n);
    std::vector<urs::KeyPair> keys;
    for (const Applicant& a : as) {
      keys.push_back(a.review);
      registered_[epoch].push_back(a.review.public_key);
    }
    return keys;
  }

  // The parts that open the item's ring for `epoch` over every key registered for it.
  std::vector<RingOpen> RingOpenParts(const ItemId& item, uint64_t epoch,
                                      size_t keys_per_part = kMaxRingOpenKeys) {
    auto seed = Leaf(leaf::EpochSeed(epoch));
    EXPECT_TRUE(seed.has_value());
    auto parts = PlanRingOpen(params_, item, epoch, registered_[epoch], seed.value_or(LeafValue{}),
                              {}, keys_per_part);
    EXPECT_TRUE(parts.ok()) << parts.status();
    return parts.value_or(std::vector<RingOpen>{});
  }
  // Opens the item's ring for `epoch` (one block per part) and returns it as the ledger holds it.
  urs::Ring OpenRing(const ItemId& item, uint64_t epoch) {
    for (const RingOpen& part : RingOpenParts(item, epoch)) {
      EXPECT_EQ(One(EncodePayload(part)), "");
    }
    return LedgerRing(item, epoch);
  }
  urs::Ring LedgerRing(const ItemId& item, uint64_t epoch) {
    uint64_t n = Counter(leaf::RingSize(item, epoch));
    std::vector<urs::Point> members;
    for (const auto& key : leaf::RingMembers(item, epoch, n)) members.push_back(*Leaf(key));
    return *urs::Ring::Create(members);
  }

  urs::Ring RingOf(const std::vector<urs::KeyPair>& keys) {
    std::vector<urs::Point> pubs;
    for (const auto& k : keys) pubs.push_back(k.public_key);
    return *urs::Ring::Create(pubs);
  }
  ReviewEntry Sign(const urs::KeyPair& key, const urs::Ring& ring, const ItemId& item,
                   uint64_t epoch, int rating, const std::string& text) {
    auto r = SignReview(key, ring, ItemBytes(item), epoch, rating, text);
    EXPECT_TRUE(r.ok()) << r.status();
    return {rating, text, r->signature};
  }
  // A review payload stating the size of the ring its signatures were made over.
  std::string ReviewTx(const ItemId& item, uint64_t epoch, const urs::Ring& ring,
                       std::vector<ReviewEntry> entries) {
    return EncodePayload(
        ReviewBatch{item, epoch, static_cast<uint16_t>(ring.size()), std::move(entries)});
  }

  // The standard scene: n keys for epoch 2, item "tea" created in epoch 0, block 20 (the
  // first of epoch 2, the item's first review window, which records seed_2) committed, and
  // tea's ring for epoch 2 opened (k = 100 >= n: every key is eligible).
  std::vector<urs::KeyPair> Scene(size_t n) {
    auto keys = RegisterKeys(n, 2);
    EXPECT_EQ(Block({CreateTx("tea")}).applied, 1u);
    AdvanceTo(2 * kEpochBlocks + 1);
    OpenRing(Id("tea"), 2);
    return keys;
  }

  // Four keys registered for epoch 2, the items "tea" and "coffee" created, the chain at the
  // second block of epoch 2 and both items' rings for it opened (the same four keys).
  struct TwoItems {
    std::vector<urs::KeyPair> keys;
    ItemId tea, coffee;
    urs::Ring ring;
  };
  TwoItems TwoItemsScene() {
    TwoItems s{RegisterKeys(4, 2), Id("tea"), Id("coffee"), {}};
    EXPECT_EQ(Block({CreateTx("tea"), CreateTx("coffee")}).applied, 2u);
    AdvanceTo(2 * kEpochBlocks + 1);
    s.ring = OpenRing(s.tea, 2);
    EXPECT_EQ(OpenRing(s.coffee, 2).members(), s.ring.members());
    return s;
  }

  std::optional<LeafValue> Leaf(const ledger::Hash256& key) const { return tree_.Get(key); }

  static blind::SecretKey* issuer_;
  ledger::KeyPair registrar_ = ledger::KeyPair::Generate();
  Applicant creator_;  // creates the items of the tests
  ReviewsParams params_;
  std::shared_ptr<const ledger::Application> app_;
  ledger::AppRegistry registry_;
  ledger::SparseMerkleTree tree_;
  uint64_t next_height_ = 1;
  std::map<uint64_t, std::vector<urs::Point>> registered_;  // review keys by epoch
};

blind::SecretKey* ReviewsAppTest::issuer_ = nullptr;

TEST_F(ReviewsAppTest, ReviewsCommitIntoTallyAndChain) {
  auto keys = Scene(4);
  const ItemId tea = Id("tea");
  EXPECT_EQ(*DecodeCounter(Leaf(leaf::KeyCount(2))), 4u);
  EXPECT_EQ(*DecodeCounter(Leaf(leaf::RequestCount(2))), 4u);
  EXPECT_EQ(*DecodeCounter(Leaf(leaf::ItemCount())), 1u);
  EXPECT_EQ(Leaf(leaf::EpochSeed(2)), SeedOf(2 * kEpochBlocks - 1));  // seed of block e*E - 1
  urs::Ring ring = RingOf(keys);
  std::vector<ReviewEntry> entries = {Sign(keys[0], ring, tea, 2, 5, "lovely"),
                                      Sign(keys[1], ring, tea, 2, 3, "fine"),
                                      Sign(keys[2], ring, tea, 2, 4, "")};
  EXPECT_EQ(One(ReviewTx(tea, 2, ring, {entries[0]})), "");
  EXPECT_EQ(One(ReviewTx(tea, 2, ring, {entries[1], entries[2]})), "");  // a batch of two

  Tally tally = *DecodeTally(Leaf(leaf::Tally(tea)));
  EXPECT_EQ(tally.count(), 3u);
  EXPECT_EQ(tally.sum(), 12u);
  EXPECT_EQ(tally.histogram, (std::array<uint32_t, 5>{0, 0, 1, 1, 1}));
  LeafValue chain{};
  for (const ReviewEntry& e : entries) chain = NextChain(chain, ReviewRecordHash(tea, 2, e));
  EXPECT_EQ(Leaf(leaf::Chain(tea)), chain);
  // A tampered local copy (another rating) replays to another chain.
  ReviewEntry changed = entries[1];
  changed.rating = 5;
  LeafValue forged{};
  for (const ReviewEntry& e : {entries[0], changed, entries[2]}) {
    forged = NextChain(forged, ReviewRecordHash(tea, 2, e));
  }
  EXPECT_NE(Leaf(leaf::Chain(tea)), forged);
}

// Issue 16, part 5: a politician verifies a review's ring signature once, at admission; the
// execution of the block finds it verified. A review that fails is never cached.
TEST_F(ReviewsAppTest, EachReviewIsVerifiedOnceByANode) {
  auto keys = Scene(4);
  const ItemId tea = Id("tea");
  urs::Ring ring = RingOf(keys);
  const ReviewsAppStats before = StatsOf(*app_);
  const std::string tx = ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 4, "ok")});
  EXPECT_FALSE(Verdict(tx, true).rejected);  // admission
  EXPECT_FALSE(Verdict(tx, true).rejected);  // re-admission after a failed round
  EXPECT_EQ(One(tx), "");                    // execution
  ReviewsAppStats after = StatsOf(*app_);
  EXPECT_EQ(after.ring_verifications - before.ring_verifications, 1u);
  EXPECT_EQ(after.cache_hits - before.cache_hits, 2u);
  ReviewEntry forged = Sign(keys[1], ring, tea, 2, 1, "bad");
  forged.rating = 5;
  const std::string bad = ReviewTx(tea, 2, ring, {forged});
  EXPECT_TRUE(Verdict(bad, true).crypto_failure);
  EXPECT_TRUE(Verdict(bad, true).crypto_failure);
  EXPECT_EQ(StatsOf(*app_).ring_verifications - after.ring_verifications, 2u);
}

// A citizen daemon runs many citizens over one application, and their sampled validations of
// one block run at the same time: concurrent checks of one review must run one verification,
// the others taking its result (a failure too, which is not kept). Broken on purpose once
// (waiters verified themselves): 8 verifications instead of 1.
TEST(VerifiedReviewCacheTest, ConcurrentChecksOfOneReviewRunOneVerification) {
  VerifiedReviewCache cache;
  constexpr uint64_t kThreads = 8;
  std::atomic<int> runs{0};
  // Holds the verification until every other thread waits on it (or 10 s, if they never do).
  auto hold_until_joined = [&](uint64_t joined) {
    for (int i = 0; i < 2000 && cache.stats().joined < joined; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  auto check_concurrently = [&](const ledger::Hash256& record, Status verdict, uint64_t joined) {
    std::vector<Status> results(kThreads);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        results[t] = cache.VerifyOnce(record, [&] {
          ++runs;
          hold_until_joined(joined);
          return verdict;
        });
      });
    }
    for (auto& th : threads) th.join();
    return results;
  };
  ledger::Hash256 good{}, bad{};
  good[0] = 1;
  bad[0] = 2;
  for (const Status& st : check_concurrently(good, Status::Ok(), kThreads - 1))
    EXPECT_TRUE(st.ok());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(cache.stats().ring_verifications, 1u);
  EXPECT_EQ(cache.stats().joined, kThreads - 1);
  EXPECT_TRUE(cache
                  .VerifyOnce(good,
                              [&] {
                                ++runs;
                                return Status::Ok();
                              })
                  .ok());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(cache.stats().cache_hits, 1u);

  for (const Status& st :
       check_concurrently(bad, PermissionDeniedError("forged"), 2 * (kThreads - 1))) {
    EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(runs.load(), 2);
  // A failure is not kept: the next check verifies again.
  EXPECT_FALSE(cache
                   .VerifyOnce(bad,
                               [&] {
                                 ++runs;
                                 return PermissionDeniedError("forged");
                               })
                   .ok());
  EXPECT_EQ(runs.load(), 3);
}

// Issue 16, part 5 (cheap pre-check): a well-formed review that breaks a state rule (unknown
// item, another epoch, a ring member that is not registered, a used tag) is refused with its
// reason before any ring verification, so a flood of them costs a politician leaf reads, not
// O(k) scalar multiplications. Broken on purpose once (the signatures checked first in Run):
// 4 verifications were counted instead of 0.
TEST_F(ReviewsAppTest, StateRuleViolationsCostNoRingVerification) {
  auto keys = Scene(4);
  const ItemId tea = Id("tea");
  urs::Ring ring = RingOf(keys);
  const ReviewEntry good = Sign(keys[0], ring, tea, 2, 4, "ok");
  EXPECT_EQ(One(ReviewTx(tea, 2, ring, {good})), "");
  const ReviewsAppStats before = StatsOf(*app_);
  const ItemId nothing = ItemIdOf("no such item");
  EXPECT_THAT(*Verdict(ReviewTx(nothing, 2, ring, {Sign(keys[1], ring, nothing, 2, 1, "x")}), true)
                   .rejected,
              HasSubstr("no item"));
  EXPECT_THAT(
      *Verdict(ReviewTx(tea, 3, ring, {Sign(keys[1], ring, tea, 3, 1, "x")}), true).rejected,
      HasSubstr("accepted only during it"));
  std::vector<urs::KeyPair> with_outsider = keys;
  with_outsider.push_back(urs::GenerateKeyPair());
  urs::Ring bigger = RingOf(with_outsider);
  EXPECT_THAT(
      *Verdict(ReviewTx(tea, 2, bigger, {Sign(keys[1], bigger, tea, 2, 1, "x")}), true).rejected,
      HasSubstr("has 4 members; the review says 5"));
  EXPECT_THAT(
      *Verdict(ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 1, "again")}), true).rejected,
      HasSubstr("tag used"));
  EXPECT_EQ(StatsOf(*app_).ring_verifications, before.ring_verifications);
}

TEST_F(ReviewsAppTest, SecondReviewOfOneItemByOneKeyIsRejected) {
  auto keys = Scene(3);
  const ItemId tea = Id("tea");
  urs::Ring ring = RingOf(keys);
  EXPECT_EQ(One(ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 5, "first")})), "");
  // Another message: the tag depends on the scope only.
  EXPECT_THAT(One(ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 1, "again")})),
              HasSubstr("already reviewed the item"));
  // Within one batch: the second review of a key is skipped, the other review counts.
  BlockOutcome o =
      Block({ReviewTx(tea, 2, ring,
                      {Sign(keys[1], ring, tea, 2, 2, "a"), Sign(keys[1], ring, tea, 2, 4, "b"),
                       Sign(keys[2], ring, tea, 2, 3, "c")})});
  EXPECT_EQ(o.applied, 1u);
  Tally tally = *DecodeTally(Leaf(leaf::Tally(tea)));
  EXPECT_EQ(tally.count(), 3u);
  EXPECT_EQ(tally.sum(), 5u + 2u + 3u);
}

TEST_F(ReviewsAppTest, OneKeyReviewsTwoItemsWithDifferentTags) {
  auto keys = RegisterKeys(3, 2);
  EXPECT_EQ(Block({CreateTx("tea"), CreateTx("coffee")}).applied, 2u);
  AdvanceTo(2 * kEpochBlocks + 1);
  urs::Ring ring = RingOf(keys);
  EXPECT_EQ(OpenRing(Id("tea"), 2).members(), ring.members());
  EXPECT_EQ(OpenRing(Id("coffee"), 2).members(), ring.members());
  ReviewEntry a = Sign(keys[0], ring, Id("tea"), 2, 5, "x");
  ReviewEntry b = Sign(keys[0], ring, Id("coffee"), 2, 5, "x");
  EXPECT_NE(a.signature.tag, b.signature.tag);
  EXPECT_EQ(One(ReviewTx(Id("tea"), 2, ring, {a})), "");
  EXPECT_EQ(One(ReviewTx(Id("coffee"), 2, ring, {b})), "");
}

// Issue 16 (ring = the full eligible set, enforced by the ledger): the ledger computes the ring
// from every registered key, and verifies each review over that ring, which the payload does
// not carry. A review signed over the eligible ring with one key missing, or with one extra
// (ineligible) key, is refused by the ledger, whatever the relay does: as a state rule when the
// payload states its true size, by the decoder when it states the ledger's size with a
// signature of another size, and as a failed signature over a ring of the same size with one
// eligible key swapped for an ineligible one. Broken on
// purpose once (RingOpen closing the opening after any part, not only after the N_e-th key):
// the ring opened after the first part with 3 of the 6 eligible keys, and 7 checks failed.
TEST_F(ReviewsAppTest, TheRingIsExactlyTheEligibleSetComputedByTheLedger) {
  Configure(8);  // k = 8 of N = 16: about half the keys lose the lottery
  auto keys = RegisterKeys(16, 2);
  EXPECT_EQ(One(CreateTx("tea")), "");
  AdvanceTo(2 * kEpochBlocks + 1);
  const ItemId tea = Id("tea");
  drac::Seed seed = *Leaf(leaf::EpochSeed(2));
  const std::vector<urs::Point> drawn =
      *drac::EligibleKeys(registered_[2], ItemBytes(tea), 2, seed, 8);
  std::vector<urs::KeyPair> eligible, ineligible;
  for (const auto& k : keys) {
    (std::binary_search(drawn.begin(), drawn.end(), k.public_key) ? eligible : ineligible)
        .push_back(k);
  }
  ASSERT_EQ(eligible.size(), 8u);  // the exact-k draw: k of N
  ASSERT_EQ(ineligible.size(), 8u);
  const urs::Ring full = RingOf(eligible);

  // Before the ring is open, no review applies.
  EXPECT_THAT(Refusal(ReviewTx(tea, 2, full, {Sign(eligible[0], full, tea, 2, 4, "early")})),
              HasSubstr("is not open yet"));

  // Opening it: in two parts of 8 keys; a part that leaves a registered key out cannot close
  // the opening (the ring stays closed), one that lists an unregistered key or states another
  // number of winners is refused, and parts must come in order.
  std::vector<RingOpen> parts = RingOpenParts(tea, 2, 8);
  ASSERT_EQ(parts.size(), 2u);
  RingOpen stranger = parts[0];
  stranger.keys.back() = urs::GenerateKeyPair().public_key;
  std::sort(stranger.keys.begin(), stranger.keys.end());
  EXPECT_THAT(Refusal(EncodePayload(stranger)), HasSubstr("is not registered for epoch 2"));
  RingOpen miscounted = parts[0];
  miscounted.members = miscounted.members == 0 ? 1 : miscounted.members - 1;
  EXPECT_THAT(Refusal(EncodePayload(miscounted)),
              HasSubstr("members before this part and 8 after it (k = 8), it says"));
  EXPECT_THAT(Refusal(EncodePayload(parts[1])), HasSubstr("this part starts at 8"));
  EXPECT_EQ(One(EncodePayload(parts[0])), "");
  EXPECT_FALSE(Leaf(leaf::RingSize(tea, 2)).has_value());  // 8 of 16 keys listed: not open
  EXPECT_THAT(Refusal(ReviewTx(tea, 2, full, {Sign(eligible[0], full, tea, 2, 4, "early")})),
              HasSubstr("is not open yet"));
  RingOpen repeated = parts[1];
  repeated.keys.front() = parts[0].keys.back();  // a key the first part listed
  EXPECT_THAT(Refusal(EncodePayload(repeated)), HasSubstr("not above the last key listed"));
  EXPECT_EQ(One(EncodePayload(parts[1])), "");
  const urs::Ring ledger_ring = LedgerRing(tea, 2);
  EXPECT_EQ(ledger_ring.members(), full.members());
  EXPECT_THAT(Refusal(EncodePayload(parts[1])), HasSubstr("open already"));

  // A ring missing one eligible key: refused by its size, and by its signature when the
  // payload claims the full size.
  std::vector<urs::KeyPair> short_keys(eligible.begin() + 1, eligible.end());
  const urs::Ring missing_one = RingOf(short_keys);
  const ReviewEntry over_short = Sign(short_keys[0], missing_one, tea, 2, 1, "small set");
  EXPECT_THAT(Refusal(ReviewTx(tea, 2, missing_one, {over_short})),
              HasSubstr("has " + std::to_string(full.size()) + " members; the review says " +
                        std::to_string(full.size() - 1)));
  // Claiming the full size does not even decode: a signature has one response per member.
  EXPECT_THAT(Refusal(ReviewTx(tea, 2, full, {over_short})),
              HasSubstr("'signature of review 0' is " +
                        std::to_string(urs::SignatureSize(full.size() - 1)) + " bytes"));
  // A ring with an extra (ineligible) key, by size and by signature (one eligible key swapped
  // for an ineligible one keeps the size).
  std::vector<urs::KeyPair> extra_keys = eligible;
  extra_keys.push_back(ineligible[0]);
  const urs::Ring with_extra = RingOf(extra_keys);
  EXPECT_THAT(
      Refusal(ReviewTx(tea, 2, with_extra, {Sign(ineligible[0], with_extra, tea, 2, 1, "hijack")})),
      HasSubstr("the review says " + std::to_string(full.size() + 1)));
  std::vector<urs::KeyPair> swapped = short_keys;
  swapped.push_back(ineligible[0]);
  const urs::Ring swapped_ring = RingOf(swapped);
  ledger::AppVerdict outsider = Verdict(
      ReviewTx(tea, 2, swapped_ring, {Sign(ineligible[0], swapped_ring, tea, 2, 1, "x")}), true);
  ASSERT_TRUE(outsider.rejected);
  EXPECT_TRUE(outsider.crypto_failure);
  // Over the ledger's ring, the review applies.
  EXPECT_EQ(One(ReviewTx(tea, 2, full, {Sign(eligible[0], full, tea, 2, 4, "ok")})), "");
}

// Registers `n` fresh review keys for `epoch` by writing their leaves into state directly (as
// RegisterKey would: the key's index and the epoch's count), without the blind-signature round
// trips, so that a test can hold thousands of keys in a second.
std::vector<urs::KeyPair> WriteKeysIntoState(ledger::SparseMerkleTree& tree, size_t n,
                                             uint64_t epoch, std::vector<urs::Point>& listed) {
  std::vector<urs::KeyPair> keys;
  std::vector<ledger::LeafUpdate> updates;
  for (size_t i = 0; i < n; ++i) {
    keys.push_back(urs::GenerateKeyPair());
    listed.push_back(keys.back().public_key);
    updates.push_back({leaf::ReviewKey(epoch, keys.back().public_key), EncodeCounter(i + 1)});
  }
  updates.push_back({leaf::KeyCount(epoch), EncodeCounter(n)});
  tree = *tree.Update(updates);
  return keys;
}

// Issue 16 (fourth session): an eligible set of more than 1,024 keys (the old kMaxRing) opens
// in parts and is reviewed over: 1,100 registered keys, k = 1,100 (every key eligible), the
// ring opened in three parts of at most 400 keys, one review signed over all 1,100 members
// applies, and the same review with its rating changed fails the signature check. Broken on
// purpose: with the opening's check at 1024 members the third part is refused.
TEST_F(ReviewsAppTest, EligibleSetsBeyond1024KeysOpenInPartsAndVerify) {
  constexpr size_t kKeys = 1100;
  Configure(kKeys);
  auto keys = WriteKeysIntoState(tree_, kKeys, 2, registered_[2]);
  EXPECT_EQ(One(CreateTx("big")), "");
  AdvanceTo(2 * kEpochBlocks + 1);
  const ItemId big = Id("big");
  std::vector<RingOpen> parts = RingOpenParts(big, 2, 400);
  ASSERT_EQ(parts.size(), 3u);
  for (const RingOpen& part : parts) EXPECT_EQ(One(EncodePayload(part)), "");
  ASSERT_EQ(Counter(leaf::RingSize(big, 2)), kKeys);
  const urs::Ring ring = LedgerRing(big, 2);
  ASSERT_EQ(ring.size(), kKeys);
  ReviewEntry review = Sign(keys[kKeys - 1], ring, big, 2, 4, "a ring of 1,100");
  ReviewEntry altered = review;
  altered.rating = 1;
  ledger::AppVerdict forged = Verdict(ReviewTx(big, 2, ring, {altered}), true);
  ASSERT_TRUE(forged.rejected);
  EXPECT_TRUE(forged.crypto_failure);
  EXPECT_EQ(One(ReviewTx(big, 2, ring, {review})), "");
  EXPECT_EQ(DecodeTally(Leaf(leaf::Tally(big))).value().histogram[3], 1u);
}

// The exact-k draw on the ledger: with 5,000 keys registered and k = 50 the ring opens in two
// parts (4,096 + 904 keys) and holds exactly the 50 keys with the lowest lottery values, the
// ring anyone recomputes from the registry and the seed (drac::EligibleKeys); a part stating
// another ring size is refused; the 51st key (the first one outside the draw) can neither sign
// over the ledger's ring nor get a review over a ring with itself swapped in past the ledger.
// Broken on purpose once (each part ranking only its own keys, not merged with the ring so
// far): the ring was the last part's 50 lowest, unequal to the draw, and the 50th key was not
// in it.
TEST_F(ReviewsAppTest, ExactlyTheKLowestLotteryValuesReviewHoweverManyKeysAreRegistered) {
  constexpr size_t kKeys = 5000;
  Configure(50);
  auto keys = WriteKeysIntoState(tree_, kKeys, 2, registered_[2]);
  EXPECT_EQ(One(CreateTx("popular")), "");
  AdvanceTo(2 * kEpochBlocks + 1);
  const ItemId item = Id("popular");
  const drac::Seed seed = *Leaf(leaf::EpochSeed(2));
  std::vector<RingOpen> parts = RingOpenParts(item, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].member_offset, 50u);
  RingOpen overstated = parts[0];
  overstated.members = 49;
  EXPECT_THAT(Refusal(EncodePayload(overstated)), HasSubstr("(k = 50), it says 0 and 49"));
  for (const RingOpen& part : parts) EXPECT_EQ(One(EncodePayload(part)), "");
  ASSERT_EQ(Counter(leaf::RingSize(item, 2)), 50u);
  const urs::Ring ring = LedgerRing(item, 2);
  EXPECT_EQ(ring.members(), *drac::EligibleKeys(registered_[2], ItemBytes(item), 2, seed, 50));

  std::vector<drac::Ranked> ranked;
  for (const auto& k : keys) ranked.push_back(drac::Rank(k.public_key, ItemBytes(item), 2, seed));
  std::sort(ranked.begin(), ranked.end());
  const auto key_of = [&](const urs::Point& p) {
    return *std::find_if(keys.begin(), keys.end(),
                         [&](const urs::KeyPair& k) { return k.public_key == p; });
  };
  const urs::KeyPair last_in = key_of(ranked[49].key), first_out = key_of(ranked[50].key);
  ASSERT_TRUE(ring.IndexOf(last_in.public_key).has_value());
  ASSERT_FALSE(ring.IndexOf(first_out.public_key).has_value());
  EXPECT_EQ(urs::Sign(first_out, ring, Bytes{}, Bytes{}).status().code(),
            StatusCode::kPermissionDenied);
  std::vector<urs::Point> swapped = ring.members();
  *std::find(swapped.begin(), swapped.end(), last_in.public_key) = first_out.public_key;
  const urs::Ring cheat = *urs::Ring::Create(swapped);
  ledger::AppVerdict refused =
      Verdict(ReviewTx(item, 2, cheat, {Sign(first_out, cheat, item, 2, 1, "51st")}), true);
  ASSERT_TRUE(refused.rejected);
  EXPECT_TRUE(refused.crypto_failure);
  EXPECT_EQ(One(ReviewTx(item, 2, ring, {Sign(last_in, ring, item, 2, 5, "50th")})), "");
}

// Issue 16: the ring left the payload. A review at k = 50 (50 registered keys, all eligible)
// carries 2 bytes for its ring instead of 1,607 (the urs/codec.h ring of 50 keys, length
// prefixed), so one review with a 12-byte text went from 3,338 bytes (measured on the previous
// encoding) to 1,733; the version 2 signature (urs.h: commitment and link proof) adds 128.
TEST_F(ReviewsAppTest, TheRingIsNotInThePayload) {
  Configure(50);
  auto keys = Scene(50);
  const ItemId tea = Id("tea");
  const urs::Ring ring = LedgerRing(tea, 2);
  ASSERT_EQ(ring.size(), 50u);
  const std::string one = ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 5, "great coffee")});
  EXPECT_EQ(one.size(), 1861u);
  EXPECT_EQ(one.size(), 1 + 32 + 8 + 2 + 2 + (1 + 4 + 12 + 4 + urs::SignatureSize(50)));
  std::vector<ReviewEntry> eight;
  for (int i = 0; i < 8; ++i) eight.push_back(Sign(keys[i], ring, tea, 2, 5, "great coffee"));
  EXPECT_EQ(ReviewTx(tea, 2, ring, eight).size(), 45u + 8 * 1816u);
  for (const urs::Point& m : ring.members()) {
    EXPECT_EQ(one.find(std::string(reinterpret_cast<const char*>(m.data()), m.size())),
              std::string::npos);
  }
  EXPECT_EQ(One(one), "");
}

// Issue 16, part 4: an item created in epoch c is reviewable from c + 2 on, so its ring in
// epoch e comes from seed_e (block e*E - 1), drawn after the item existed: the proposer of the
// seed block cannot try item names against a seed it knows. An item created in the seed block
// itself (the last block of epoch e - 1) waits for e + 1.
TEST_F(ReviewsAppTest, ReviewsOpenTwoEpochsAfterCreationNotBefore) {
  auto keys = RegisterKeys(2, 2);
  urs::Ring ring = RingOf(keys);
  const ItemId tea = Id("tea");
  EXPECT_THAT(One(ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 1, "x")})),
              HasSubstr("no item"));
  AdvanceTo(2 * kEpochBlocks - 1);  // the block whose seed is seed_2
  EXPECT_EQ(One(CreateTx("tea")), "");
  EXPECT_EQ(Leaf(leaf::EpochSeed(2)), std::nullopt);
  AdvanceTo(2 * kEpochBlocks + 1);
  EXPECT_THAT(One(ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 1, "ground")})),
              HasSubstr("the item's reviews open in epoch 3"));
  // Nor can its ring be opened.
  EXPECT_THAT(One(EncodePayload(RingOpenParts(tea, 2).at(0))),
              HasSubstr("the item's reviews open in epoch 3"));
  // The payload's epoch must be the current one.
  EXPECT_THAT(One(ReviewTx(tea, 3, ring, {Sign(keys[0], ring, tea, 3, 1, "early")})),
              HasSubstr("reviews for epoch 3 are accepted only during it (now epoch 2)"));
}

// Rolling windows: an item is reviewed in every epoch, with that epoch's keys and a fresh
// ring; one identity (one key per epoch) reviews it once per epoch.
TEST_F(ReviewsAppTest, ItemsAreReviewedInEveryEpochWithAFreshRing) {
  auto keys2 = RegisterKeys(2, 2);
  auto keys3 = RegisterKeys(3, 3);
  EXPECT_EQ(One(CreateTx("tea")), "");
  const ItemId tea = Id("tea");
  AdvanceTo(2 * kEpochBlocks + 1);
  urs::Ring ring2 = OpenRing(tea, 2);
  EXPECT_EQ(ring2.members(), RingOf(keys2).members());
  EXPECT_EQ(One(ReviewTx(tea, 2, ring2, {Sign(keys2[0], ring2, tea, 2, 5, "e2")})), "");
  // An epoch-3 key cannot review in epoch 2, and epoch 2's ring is refused in epoch 3.
  urs::Ring ring3 = RingOf(keys3);
  EXPECT_THAT(One(ReviewTx(tea, 3, ring3, {Sign(keys3[0], ring3, tea, 3, 1, "x")})),
              HasSubstr("accepted only during it"));
  AdvanceTo(3 * kEpochBlocks + 1);
  EXPECT_THAT(One(ReviewTx(tea, 2, ring2, {Sign(keys2[1], ring2, tea, 2, 4, "late")})),
              HasSubstr("now epoch 3"));
  EXPECT_EQ(OpenRing(tea, 3).members(), ring3.members());
  EXPECT_EQ(One(ReviewTx(tea, 3, ring3, {Sign(keys3[0], ring3, tea, 3, 3, "e3")})), "");
  EXPECT_NE(Leaf(leaf::EpochSeed(3)), Leaf(leaf::EpochSeed(2)));
  Tally tally = *DecodeTally(Leaf(leaf::Tally(tea)));
  EXPECT_EQ(tally.count(), 2u);
  EXPECT_EQ(tally.sum(), 8u);
}

// CreateItem is signed by a registered identity, names live in the creator's namespace (no
// squatting another's name) and each identity creates at most items_per_epoch per epoch.
TEST_F(ReviewsAppTest, ItemCreationIsSignedNamespacedAndRateLimited) {
  EXPECT_EQ(One(CreateTx("tea")), "");
  EXPECT_THAT(One(CreateTx("tea")),
              HasSubstr("item 'tea' already exists in this identity's namespace"));
  Applicant squatter = NewApplicant();
  EXPECT_EQ(One(CreateTx("tea", &squatter)), "");  // its own "tea", another id
  EXPECT_NE(ItemIdOf(squatter.citizen.public_key(), "tea"), Id("tea"));
  EXPECT_EQ(*DecodeCounter(Leaf(leaf::ItemCount())), 2u);

  CreateItem forged{"coffee", creator_.identity, {}};
  SignCreateItem(forged, squatter.citizen);  // in the creator's name, not by it
  ledger::AppVerdict v = Verdict(EncodePayload(forged), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("not signed by the identity"));
  Applicant unregistered;
  unregistered.identity = {unregistered.citizen.public_key(), 0, {}};  // no registrar signature
  v = Verdict(CreateTx("coffee", &unregistered), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("not signed by the registrar"));
  Applicant future = NewApplicant();
  future.identity.registered_at = 100;
  ledger::net::SignIdentity(future.identity, registrar_);
  EXPECT_THAT(One(CreateTx("coffee", &future)), HasSubstr("registered only from height 100"));

  params_.items_per_epoch = 3;
  app_ = MakeReviewsApp(params_);
  registry_ = ledger::AppRegistry();
  ASSERT_TRUE(registry_.Add(app_).ok());
  Applicant busy = NewApplicant();
  EXPECT_EQ(Block({CreateTx("a", &busy), CreateTx("b", &busy), CreateTx("c", &busy)}).applied, 3u);
  EXPECT_THAT(One(CreateTx("d", &busy)), HasSubstr("created its 3 items of epoch 0"));
  AdvanceTo(kEpochBlocks);
  EXPECT_EQ(One(CreateTx("d", &busy)), "");  // a new epoch, a new quota
}

TEST_F(ReviewsAppTest, TamperedReviewFailsOnlyTheCryptoCheck) {
  auto keys = Scene(3);
  const ItemId tea = Id("tea");
  urs::Ring ring = RingOf(keys);
  ReviewEntry e = Sign(keys[0], ring, tea, 2, 1, "awful");
  e.rating = 5;  // the politician (or anyone) rewrites the rating
  std::string tx = ReviewTx(tea, 2, ring, {e});
  ledger::AppVerdict checked = Verdict(tx, true);
  ASSERT_TRUE(checked.rejected);
  EXPECT_TRUE(checked.crypto_failure);
  EXPECT_THAT(*checked.rejected, HasSubstr("review 0"));
  // A citizen that does not sample this transaction runs every state rule but no signature.
  ledger::AppVerdict unchecked = Verdict(tx, false);
  EXPECT_FALSE(unchecked.rejected);
  EXPECT_FALSE(unchecked.crypto_failure);
  // ... and a state rule still bites without crypto: a used tag.
  EXPECT_EQ(One(ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 1, "awful")})), "");
  ledger::AppVerdict dup = Verdict(tx, false);
  ASSERT_TRUE(dup.rejected);
  EXPECT_FALSE(dup.crypto_failure);
  EXPECT_THAT(*dup.rejected, HasSubstr("tag used"));
}

TEST_F(ReviewsAppTest, MalformedPayloadsAreRefusedWithTheDecoderError) {
  std::string junk = CreateTx("tea") + "!";
  auto read_set = app_->ReadSet(AsBytes(junk), Context());
  ASSERT_FALSE(read_set.ok());
  EXPECT_EQ(read_set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(read_set.status().message(), HasSubstr("1 trailing bytes"));
  BlockOutcome o = Block({junk, CreateTx("tea")});
  EXPECT_EQ(o.applied, 1u);  // the block stays valid; the junk is skipped
  EXPECT_THAT(Reason(o, 0), HasSubstr("reviews payload"));
}

TEST_F(ReviewsAppTest, ItemsAreCreatedOnce) {
  EXPECT_EQ(One(CreateTx("tea")), "");
  EXPECT_THAT(One(CreateTx("tea")), HasSubstr("item 'tea' already exists"));
  auto rec = DecodeItemRecord(*Leaf(leaf::Item(Id("tea"))));
  EXPECT_EQ(rec->created_epoch, 0u);
  EXPECT_EQ(rec->created_height, 1u);
}

TEST_F(ReviewsAppTest, KeyRequestRules) {
  Applicant a = NewApplicant();
  std::string req = RequestOf(a, 2);
  EXPECT_EQ(One(req), "");
  Applicant again = a;
  EXPECT_THAT(One(RequestOf(again, 2)), HasSubstr("identity already requested a key for epoch 2"));
  // Forged identity (not by the registrar) and forged request signature: crypto failures.
  Applicant forged = NewApplicant();
  ledger::net::SignIdentity(forged.identity, ledger::KeyPair::Generate());
  ledger::AppVerdict v = Verdict(RequestOf(forged, 3), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("not signed by the registrar"));
  EXPECT_FALSE(Verdict(RequestOf(forged, 3), false).rejected);  // skipped without crypto
  Applicant impostor = NewApplicant();
  std::string stolen = RequestOf(impostor, 3);
  stolen[stolen.size() - 1] ^= 1;
  v = Verdict(stolen, true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("not signed by the identity"));
  // Requests for epoch 2 close at height (2 - 1) * E.
  AdvanceTo(kEpochBlocks);
  Applicant late = NewApplicant();
  EXPECT_THAT(One(RequestOf(late, 2)), HasSubstr("key requests for epoch 2 closed at height 10"));
  Applicant future = NewApplicant();
  future.identity.registered_at = 100;
  ledger::net::SignIdentity(future.identity, registrar_);
  EXPECT_THAT(One(RequestOf(future, 5)), HasSubstr("registered only from height 100"));
}

TEST_F(ReviewsAppTest, KeyIssueRules) {
  Applicant a = NewApplicant();
  std::string request = RequestOf(a, 2);
  EXPECT_THAT(One(IssueOf(a, 2)), HasSubstr("no key request"));
  EXPECT_EQ(One(request), "");
  // Not the issuer: a "blind signature" that is not blinded_msg^d.
  KeyIssue fake{2, a.citizen.public_key(), a.blind.blinded_msg, Bytes(256, 1)};
  ledger::AppVerdict v = Verdict(EncodePayload(fake), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("blind signature does not match"));
  KeyIssue other = fake;
  other.blinded_msg[5] ^= 1;
  EXPECT_THAT(One(EncodePayload(other)), HasSubstr("differs from the committed request"));
  EXPECT_EQ(One(IssueOf(a, 2)), "");
  EXPECT_THAT(One(IssueOf(a, 2)), HasSubstr("was answered"));
  EXPECT_TRUE(Leaf(leaf::KeyIssue(2, a.citizen.public_key())).has_value());
}

TEST_F(ReviewsAppTest, RegistrationsBeyondRequestsAreRejected) {
  Applicant a = NewApplicant();
  EXPECT_EQ(One(RequestOf(a, 2)), "");
  EXPECT_EQ(One(RegisterOf(a, 2)), "");
  EXPECT_THAT(One(RegisterOf(a, 2)), HasSubstr("already registered"));
  // The issuer mints a credential nobody requested on chain: valid signature, but the count
  // of registrations may not pass the count of requests.
  Applicant minted = NewApplicant();
  RequestOf(minted, 2);  // blinds locally only
  EXPECT_THAT(One(RegisterOf(minted, 2)),
              HasSubstr("all 1 key requests for epoch 2 have a registered key"));
  // A credential for another key or epoch does not verify.
  Applicant b = NewApplicant();
  EXPECT_EQ(One(RequestOf(b, 2)), "");
  std::string wrong_epoch = RegisterOf(b, 2);
  wrong_epoch[8] = 3;  // epoch field (big-endian u64 after the kind byte) 2 -> 3
  ledger::AppVerdict v = Verdict(wrong_epoch, true);
  ASSERT_TRUE(v.rejected);
  EXPECT_THAT(*v.rejected, HasSubstr("all 0 key requests for epoch 3"));
  RegisterKey swapped = std::get<RegisterKey>(*DecodePayload(AsBytes(RegisterOf(b, 2))));
  swapped.review_key = urs::GenerateKeyPair().public_key;
  v = Verdict(EncodePayload(swapped), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("credential not signed by this issuer"));
  EXPECT_FALSE(Verdict(EncodePayload(swapped), false).rejected);
  AdvanceTo(kEpochBlocks);
  EXPECT_THAT(One(RegisterOf(b, 2)), HasSubstr("key registration for epoch 2 closed at height 10"));
}

// Issue 16, part 3: the issuer registers a key of its own before an honest requester does
// (front-running); the requester's registration is refused, but its proof, opening the
// commitment of its request, is accepted: the evidence is on the ledger and the key is in.
TEST_F(ReviewsAppTest, FrontRunningIsProvableAndTheRequesterRegistersAnyway) {
  Applicant victim = NewApplicant();
  EXPECT_EQ(One(RequestOf(victim, 2)), "");
  EXPECT_EQ(One(IssueOf(victim, 2)), "");
  Applicant minted = NewApplicant();
  RequestOf(minted, 2);  // the issuer's own key: blinded locally, never requested on chain
  EXPECT_EQ(One(RegisterOf(minted, 2)), "");
  EXPECT_THAT(One(RegisterOf(victim, 2)),
              HasSubstr("all 1 key requests for epoch 2 have a registered key"));

  // Openings that do not match are refused as failed cryptographic checks.
  FrontRunProof wrong_salt = ProofOf(victim, 2);
  wrong_salt.salt[0] ^= 1;
  ledger::AppVerdict v = Verdict(EncodePayload(wrong_salt), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("does not match the request's commitment"));
  // Someone else's credential (here the minted one) cannot be passed off as this request's.
  FrontRunProof other = ProofOf(victim, 2);
  other.review_key = minted.review.public_key;
  other.signature = CredentialOf(minted);
  std::copy_n(minted.input.begin(), 32, other.msg_prefix.begin());
  v = Verdict(EncodePayload(other), true);
  ASSERT_TRUE(v.rejected);
  EXPECT_THAT(*v.rejected, HasSubstr("nothing was front-run"));  // that key is registered
  Applicant stranger = NewApplicant();
  RequestOf(stranger, 2);
  FrontRunProof forged = ProofOf(victim, 2);
  forged.review_key = stranger.review.public_key;
  forged.signature = CredentialOf(stranger);
  std::copy_n(stranger.input.begin(), 32, forged.msg_prefix.begin());
  v = Verdict(EncodePayload(forged), true);
  EXPECT_TRUE(v.crypto_failure);
  EXPECT_THAT(*v.rejected, HasSubstr("does not sign the committed message"));

  EXPECT_EQ(One(EncodePayload(ProofOf(victim, 2))), "");
  EXPECT_EQ(Counter(leaf::FrontRunCount(2)), 1u);
  EXPECT_EQ(Counter(leaf::KeyCount(2)), 2u);
  EXPECT_TRUE(Leaf(leaf::ReviewKey(2, victim.review.public_key)).has_value());
  EXPECT_THAT(One(EncodePayload(ProofOf(victim, 2))), HasSubstr("already proven"));
}

TEST_F(ReviewsAppTest, FrontRunProofNeedsAFrontRun) {
  Applicant a = NewApplicant();
  EXPECT_EQ(One(RequestOf(a, 2)), "");
  EXPECT_THAT(One(EncodePayload(ProofOf(a, 2))), HasSubstr("has not answered"));
  EXPECT_EQ(One(IssueOf(a, 2)), "");
  EXPECT_THAT(One(EncodePayload(ProofOf(a, 2))), HasSubstr("register normally"));
  EXPECT_EQ(One(RegisterOf(a, 2)), "");
  EXPECT_THAT(One(EncodePayload(ProofOf(a, 2))), HasSubstr("nothing was front-run"));
  Applicant b = NewApplicant();
  RequestOf(b, 2);  // blinded, never requested on chain
  EXPECT_THAT(One(EncodePayload(ProofOf(b, 2))), HasSubstr("no key request of this identity"));
  EXPECT_EQ(Counter(leaf::FrontRunCount(2)), 0u);
}

TEST_F(ReviewsAppTest, BeginBlockRecordsTheSeedAtEpochStartsOnly) {
  EXPECT_TRUE(app_->BeginBlock({kEpochBlocks + 1, SeedOf(kEpochBlocks)}).empty());
  auto u = app_->BeginBlock({3 * kEpochBlocks, SeedOf(3 * kEpochBlocks - 1)});
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].key, leaf::EpochSeed(3));
  EXPECT_EQ(u[0].value, SeedOf(3 * kEpochBlocks - 1));
}

TEST_F(ReviewsAppTest, CoalescedBatchesApplyExactlyAsTheirInputs) {
  const auto [keys, tea, coffee, ring] = TwoItemsScene();
  std::vector<std::string> pending = {
      ReviewTx(tea, 2, ring, {Sign(keys[0], ring, tea, 2, 5, "a")}),
      ReviewTx(coffee, 2, ring, {Sign(keys[0], ring, coffee, 2, 2, "b")}),
      ReviewTx(tea, 2, ring, {Sign(keys[1], ring, tea, 2, 4, "c")}),
      CreateTx("juice"),
      ReviewTx(tea, 2, ring, {Sign(keys[1], ring, tea, 2, 1, "dup")}),  // same key: skipped
      ReviewTx(tea, 2, ring, {Sign(keys[2], ring, tea, 2, 3, "d")}),
  };
  std::vector<std::string> merged = app_->Coalesce(pending);
  ASSERT_EQ(merged.size(), 3u);  // tea x4, coffee, juice
  EXPECT_EQ(std::get<ReviewBatch>(*DecodePayload(AsBytes(merged[0]))).reviews.size(), 4u);

  ledger::SparseMerkleTree before = tree_;
  uint64_t height = next_height_;
  Block(pending);
  auto separate = tree_.root_hash();
  tree_ = before;
  next_height_ = height;
  Block(merged);
  EXPECT_EQ(tree_.root_hash(), separate);
  EXPECT_EQ(DecodeTally(Leaf(leaf::Tally(tea)))->count(), 3u);
}

// The politicians' pool budget counts a pool's work by Application::Weight (ledger/net/
// block_budget.h, BlockWeight): the batches Coalesce makes must weigh the reviews they carry,
// or a full pool of reviews reads as a few transactions and the budget never grows it.
TEST_F(ReviewsAppTest, CoalescedBatchesWeighTheReviewsTheyCarry) {
  const auto [keys, tea, coffee, ring] = TwoItemsScene();
  std::vector<std::string> pending;
  for (int i = 0; i < 4; ++i) {
    pending.push_back(ReviewTx(tea, 2, ring, {Sign(keys[i], ring, tea, 2, 5, "t")}));
    pending.push_back(ReviewTx(coffee, 2, ring, {Sign(keys[i], ring, coffee, 2, 3, "c")}));
  }
  pending.push_back(CreateTx("juice"));
  size_t before = 0;
  for (const std::string& p : pending) before += app_->Weight(AsBytes(p));
  EXPECT_EQ(before, 9u);
  std::vector<std::string> merged = app_->Coalesce(pending);
  ASSERT_EQ(merged.size(), 3u);  // tea x4, coffee x4, juice
  EXPECT_EQ(app_->Weight(AsBytes(merged[0])), 4u);
  EXPECT_EQ(app_->Weight(AsBytes(merged[1])), 4u);
  EXPECT_EQ(app_->Weight(AsBytes(merged[2])), 1u);
  // Bytes that do not decode weigh 1, never more than kMaxBatch.
  std::string junk = merged[0].substr(0, 45);
  EXPECT_EQ(app_->Weight(AsBytes(junk)), 4u);  // the header alone is read
  junk[43] = junk[44] = '\xff';
  EXPECT_EQ(app_->Weight(AsBytes(junk)), 1u);  // count 65535 > kMaxBatch
  EXPECT_EQ(app_->Weight(AsBytes(junk.substr(0, 44))), 1u);
  EXPECT_EQ(app_->Weight(AsBytes(std::string())), 1u);
}

TEST_F(ReviewsAppTest, CoalesceNeverMovesAReviewAcrossItsItemsCreationOrRingOpening) {
  auto key = urs::GenerateKeyPair();
  urs::Ring ring = RingOf({key});
  ReviewBatch r{Id("tea"), 2, 1, {Sign(key, ring, Id("tea"), 2, 3, "x")}};
  std::vector<std::string> pending = {EncodePayload(r), CreateTx("tea"), EncodePayload(r)};
  EXPECT_EQ(app_->Coalesce(pending), pending);
  RingOpen open{Id("tea"), 2, 0, 0, 1, {key.public_key}};
  pending = {EncodePayload(r), EncodePayload(open), EncodePayload(r)};
  EXPECT_EQ(app_->Coalesce(pending), pending);
}

TEST(ReviewsParams, ParsedFromGenesisWithClearErrors) {
  auto issuer = blind::SecretKey::Generate(2048);
  ASSERT_TRUE(issuer.ok());
  ledger::AppParams params{"reviews", {}};
  EXPECT_THAT(MakeReviewsApp(params).status().message(), HasSubstr("issuer_public"));
  params.values["issuer_public"] = *IssuerPublicToHex(issuer->public_key());
  EXPECT_THAT(MakeReviewsApp(params).status().message(), HasSubstr("registrar"));
  params.values["registrar"] = ToHex(ledger::KeyPair::Generate().public_key());
  params.values["ring_size"] = "7";
  params.values["epoch_blocks"] = "1";
  EXPECT_THAT(MakeReviewsApp(params).status().message(),
              HasSubstr("epoch_blocks must be at least 2"));
  params.values["epoch_blocks"] = "20";
  auto parsed = ParseReviewsParams(params);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ring_size, 7u);
  // ring_size is bounded (payload.h, kMaxRingParameter).
  params.values["ring_size"] = std::to_string(kMaxRingParameter + 1);
  EXPECT_THAT(MakeReviewsApp(params).status().message(), HasSubstr("ring_size must be 1..2048"));
  params.values["ring_size"] = std::to_string(kMaxRingParameter);
  EXPECT_TRUE(ParseReviewsParams(params).ok());
  params.values["ring_size"] = "7";
  EXPECT_EQ(parsed->issuer.Fingerprint(), issuer->public_key().Fingerprint());
  EXPECT_EQ(parsed->RegistrationClose(3), 40u);
  params.values["issuer_public"] = "00ff";
  EXPECT_THAT(MakeReviewsApp(params).status().message(),
              HasSubstr("not a DER SubjectPublicKeyInfo"));
  auto app = MakeReviewsApp(ParseReviewsParams([&] {
                              auto p = params;
                              p.values["issuer_public"] = *IssuerPublicToHex(issuer->public_key());
                              return p;
                            }())
                                .value());
  EXPECT_EQ(app->id(), kReviewsAppId);
  EXPECT_EQ(app->name(), "reviews");
}

}  // namespace
}  // namespace tessera::reviews
