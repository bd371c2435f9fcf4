// Data availability rules (pool_availability.h) and the politician's GetPools, including the
// withhold_data adversary.
#include "ledger/net/pool_availability.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "ledger/crypto/hash.h"
#include "ledger/net/politician.h"
#include "ledger/net/testing/pool_fixtures.h"

namespace tessera::ledger::net {
namespace {

constexpr std::string_view kSalt = "availability test key ";

KeyPair Key(int i) { return testing::TestKey(kSalt, i); }

Genesis SmallGenesis() {
  Genesis g = testing::TestGenesis({.salt = kSalt,
                                    .citizens = 8,
                                    .threshold = 6,
                                    .witness_threshold = 3,
                                    .max_pool_txs = 4,
                                    .politicians = 3});
  g.accounts.push_back({Key(300).public_key(), 1000});
  return g;
}

// A pool of `politician` for `height` with `count` transfers to a receiver named by `variant`.
Pool MakePool(uint32_t politician, uint64_t height, int variant, int count) {
  return testing::SignedPool(politician, height,
                             testing::Transfers(Key(300), Key(400 + variant).public_key(), count),
                             Key(200 + static_cast<int>(politician)));
}

Hash256 HashOf(const Pool& p) { return DecodeTxPoolCommitment(AsBytes(p.commitment()))->pool_hash; }

// `n` witness lists (distinct citizens), each naming `entries`.
void Witness(std::map<PublicKey, WitnessList>& lists, int first, int n,
             const std::vector<WitnessEntry>& entries) {
  for (int i = first; i < first + n; ++i) {
    WitnessList& w = lists[Key(500 + i).public_key()];
    w.citizen = Key(500 + i).public_key();
    w.entries.insert(w.entries.end(), entries.begin(), entries.end());
  }
}

TEST(PoolAvailabilityTest, RequiredThresholdIsWitnessThresholdPlusCommitteeSlack) {
  EXPECT_EQ(RequiredWitnesses(SmallGenesis()), 3u + (8u - 6u));
}

TEST(PoolAvailabilityTest, TallyMakesPoolsEligibleAtTwAndRequiredAtTmust) {
  const Genesis g = SmallGenesis();
  const Hash256 a = HashOf(MakePool(0, 1, 0, 2)), b = HashOf(MakePool(1, 1, 1, 2));
  std::map<PublicKey, WitnessList> lists;
  Witness(lists, 0, 2, {{0, a}, {1, b}});
  PoolTally t = TallyWitnesses(lists, g);
  EXPECT_TRUE(t.eligible.empty());  // 2 < T_w
  Witness(lists, 2, 1, {{0, a}, {1, b}});
  t = TallyWitnesses(lists, g);
  EXPECT_EQ(t.eligible, (std::vector<Hash256>{a, b}));
  EXPECT_TRUE(t.required.empty());  // 3 < T_must = 5
  Witness(lists, 3, 2, {{0, a}});
  t = TallyWitnesses(lists, g);
  EXPECT_EQ(t.required, (std::set<Hash256>{a}));
}

TEST(PoolAvailabilityTest, ListNamingAPoolTwiceCountsOnce) {
  const Genesis g = SmallGenesis();
  const Hash256 a = HashOf(MakePool(0, 1, 0, 2));
  std::map<PublicKey, WitnessList> lists;
  Witness(lists, 0, 1, {{0, a}, {0, a}, {0, a}});
  EXPECT_TRUE(TallyWitnesses(lists, g).eligible.empty());
}

TEST(PoolAvailabilityTest, EquivocatingPoliticianAndEmptyPoolsAreNeverEligible) {
  const Genesis g = SmallGenesis();
  const Hash256 a1 = HashOf(MakePool(0, 1, 0, 2)), a2 = HashOf(MakePool(0, 1, 1, 2));
  const Hash256 empty = PoolHash({});
  std::map<PublicKey, WitnessList> lists;
  Witness(lists, 0, 4, {{0, a1}, {1, empty}});
  Witness(lists, 4, 4, {{0, a2}, {1, empty}});
  PoolTally t = TallyWitnesses(lists, g);
  EXPECT_TRUE(t.eligible.empty());
  EXPECT_TRUE(t.required.empty());
}

TEST(PoolAvailabilityTest, ProposalLeavingOutARequiredPoolIsRejectedAndTheEmptyBlockToo) {
  const Genesis g = SmallGenesis();
  const Hash256 a = HashOf(MakePool(0, 1, 0, 2)), b = HashOf(MakePool(1, 1, 1, 2));
  std::map<PublicKey, WitnessList> lists;
  Witness(lists, 0, 6, {{0, a}});  // required
  Witness(lists, 6, 3, {{1, b}});  // eligible only
  const PoolTally t = TallyWitnesses(lists, g);
  EXPECT_EQ(CheckBody({}, t).code(), StatusCode::kInvalidArgument);   // "propose empty"
  EXPECT_EQ(CheckBody({b}, t).code(), StatusCode::kInvalidArgument);  // censors a
  EXPECT_TRUE(CheckBody({a}, t).ok());                                // b may be left out
  EXPECT_TRUE(CheckBody({a, b}, t).ok());
  EXPECT_EQ(CheckBody({a, a}, t).code(), StatusCode::kInvalidArgument);
  const Hash256 unknown = HashOf(MakePool(2, 1, 2, 1));
  EXPECT_EQ(CheckBody({a, unknown}, t).code(), StatusCode::kUnavailable);
}

// The proposer's wait (citizen.cc): the pools it witnessed itself that the committee's lists
// do not make eligible yet; the empty pool is never waited for.
TEST(PoolAvailabilityTest, AProposerWaitsOnlyForItsOwnWitnessedPoolsNotYetEligible) {
  const Genesis g = SmallGenesis();
  const Hash256 a = HashOf(MakePool(0, 1, 0, 2)), b = HashOf(MakePool(1, 1, 1, 2));
  const Hash256 empty = PoolHash({});
  const std::vector<WitnessEntry> own = {{0, a}, {1, b}, {2, empty}};
  std::map<PublicKey, WitnessList> lists;
  Witness(lists, 0, 3, {{0, a}});  // a eligible (T_w = 3)
  Witness(lists, 3, 2, {{1, b}});  // b at 2 witnesses
  EXPECT_EQ(PoolsAwaitingEligibility(own, TallyWitnesses(lists, g)), std::vector<Hash256>{b});
  Witness(lists, 5, 1, {{1, b}});
  EXPECT_TRUE(PoolsAwaitingEligibility(own, TallyWitnesses(lists, g)).empty());
}

TEST(PoolAvailabilityTest, DownloadedPoolIsCheckedAgainstItsSignedCommitment) {
  const Genesis g = SmallGenesis();
  Pool pool = MakePool(1, 7, 0, 3);
  const Hash256 h = HashOf(pool);
  EXPECT_TRUE(CheckPoolData(pool, h, 7, g).ok());
  EXPECT_FALSE(CheckPoolData(pool, h, 8, g).ok());                             // other height
  EXPECT_FALSE(CheckPoolData(pool, HashOf(MakePool(1, 7, 1, 3)), 7, g).ok());  // not asked for
  Pool tampered = pool;
  tampered.set_txs(0, pool.txs(1));
  EXPECT_FALSE(CheckPoolData(tampered, h, 7, g).ok());
  Pool short_pool = pool;
  short_pool.mutable_txs()->RemoveLast();
  EXPECT_FALSE(CheckPoolData(short_pool, h, 7, g).ok());
  Pool big = MakePool(1, 7, 0, 5);  // over max_pool_txs 4
  EXPECT_FALSE(CheckPoolData(big, HashOf(big), 7, g).ok());
  Pool forged = pool;  // signed by another politician's key
  auto c = *DecodeTxPoolCommitment(AsBytes(pool.commitment()));
  SignTxPoolCommitment(c, Key(202));
  forged.set_commitment(EncodeTxPoolCommitment(c));
  EXPECT_FALSE(CheckPoolData(forged, h, 7, g).ok());
  EXPECT_FALSE(CheckPoolData(Pool(), h, 7, g).ok());
}

// The politician side: GetPools serves the pools it holds, bounded per request; a
// withhold_data politician serves none (and refuses Execute).
class GetPoolsTest : public ::testing::TestWithParam<bool> {};

TEST_P(GetPoolsTest, ServesHeldPoolsUnlessWithholding) {
  const bool withhold = GetParam();
  PoliticianOptions o;
  o.id = 0;
  o.genesis = SmallGenesis();
  o.keys = Key(200);
  o.faults.withhold_data = withhold;
  o.dir = std::filesystem::temp_directory_path() /
          ("availability_test_" + std::to_string(::getpid()) + (withhold ? "w" : "h"));
  std::filesystem::remove_all(o.dir);
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  Pool pool = MakePool(1, 1, 0, 2);
  PostReply posted;
  (*node)->PostPool(pool, &posted);
  ASSERT_TRUE(posted.accepted()) << posted.error();
  PoolsRequest req;
  req.add_pool_hashes(std::string(AsChars(HashOf(pool))));
  req.add_pool_hashes(std::string(AsChars(HashOf(MakePool(2, 1, 5, 2)))));  // not held
  PoolsReply rep;
  ASSERT_TRUE((*node)->GetPools(req, &rep).ok());
  ASSERT_EQ(rep.pools_size(), withhold ? 0 : 1);
  if (!withhold) EXPECT_TRUE(CheckPoolData(rep.pools(0), HashOf(pool), 1, o.genesis).ok());
  PoolsRequest flood;
  for (size_t i = 0; i <= kMaxPoolsPerRequest; ++i) flood.add_pool_hashes(std::string(32, 'x'));
  PoolsReply ignored;
  EXPECT_FALSE((*node)->GetPools(flood, &ignored).ok());
  ExecuteRequest exec;
  exec.set_height(1);
  ExecuteReply executed;
  // Unsigned: an honest politician refuses it as unauthenticated (request_auth.h), the
  // withholding one refuses everyone, claiming falsely that the height is already committed.
  EXPECT_EQ((*node)->Execute(exec, &executed).code(),
            withhold ? StatusCode::kOutOfRange : StatusCode::kPermissionDenied);
  node->reset();
  std::filesystem::remove_all(o.dir);
}

INSTANTIATE_TEST_SUITE_P(HonestAndWithholding, GetPoolsTest, ::testing::Bool());

}  // namespace
}  // namespace tessera::ledger::net
