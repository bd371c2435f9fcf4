// The mempool's service order and bound (admission rules: net_test.cc MempoolTest).
#include "ledger/net/mempool.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ledger/crypto/hash.h"
#include "ledger/state/account.h"
#include "ledger/state/application.h"

namespace tessera::ledger::net {
namespace {

struct Accounts {
  std::vector<KeyPair> keys;
  SparseMerkleTree state;
  explicit Accounts(int n) {
    std::vector<LeafUpdate> leaves;
    for (int i = 0; i < n; ++i) {
      keys.push_back(KeyPair::FromSeed(Sha256("mempool test " + std::to_string(i))));
      leaves.push_back({AccountKey(keys.back().public_key()), EncodeAccount({1000, 0})});
    }
    state = *SparseMerkleTree().Update(std::move(leaves));
  }
  Transaction Transfer(int from, uint64_t nonce) const {
    Transaction tx{.from = keys[from].public_key(),
                   .to = keys[(from + 1) % keys.size()].public_key(),
                   .amount = 1,
                   .nonce = nonce};
    SignTransaction(tx, keys[from]);
    return tx;
  }
};

// Under sustained overload a pool is the oldest transfers, not the lowest sender keys: with
// key order, senders with high keys would wait forever.
TEST(MempoolOrderTest, PoolsServeTheOldestTransfersFirst) {
  Accounts a(12);
  Mempool pool(100);
  // Admit in descending key order, so arrival order is the reverse of key order.
  std::vector<int> order(12);
  for (int i = 0; i < 12; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](int x, int y) { return a.keys[x].public_key() > a.keys[y].public_key(); });
  for (int i : order) ASSERT_TRUE(pool.Admit(a.Transfer(i, 0), a.state).ok());
  std::vector<LedgerTx> first = pool.Snapshot(4, AppRegistry{});
  ASSERT_EQ(first.size(), 4u);
  std::vector<PublicKey> expected, got;
  for (int k = 0; k < 4; ++k) expected.push_back(a.keys[order[k]].public_key());
  for (const LedgerTx& tx : first) got.push_back(std::get<Transaction>(tx).from);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);  // the four oldest, applied in (sender, nonce) order

  // Once they are committed, the next pool serves the next oldest.
  std::vector<LeafUpdate> committed;
  for (int k = 0; k < 4; ++k) {
    committed.push_back({AccountKey(a.keys[order[k]].public_key()), EncodeAccount({999, 1})});
  }
  pool.Prune(*a.state.Update(committed), AppRegistry{}, BlockContext{});
  EXPECT_EQ(pool.size(), 8u);
  std::vector<LedgerTx> second = pool.Snapshot(4, AppRegistry{});
  ASSERT_EQ(second.size(), 4u);
  expected.clear();
  got.clear();
  for (int k = 4; k < 8; ++k) expected.push_back(a.keys[order[k]].public_key());
  for (const LedgerTx& tx : second) got.push_back(std::get<Transaction>(tx).from);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
}

TEST(MempoolOrderTest, ASendersTransfersStayInNonceOrderAndCapacityIsEnforced) {
  Accounts a(3);
  Mempool pool(4);
  ASSERT_TRUE(pool.Admit(a.Transfer(0, 1), a.state).ok());  // nonce 1 arrives before 0
  ASSERT_TRUE(pool.Admit(a.Transfer(0, 0), a.state).ok());
  ASSERT_TRUE(pool.Admit(a.Transfer(1, 0), a.state).ok());
  ASSERT_TRUE(pool.Admit(a.Transfer(2, 0), a.state).ok());
  Status full = pool.Admit(a.Transfer(1, 1), a.state);
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted) << full;
  pool.set_capacity(5);
  EXPECT_TRUE(pool.Admit(a.Transfer(1, 1), a.state).ok());
  std::vector<LedgerTx> all = pool.Snapshot(10, AppRegistry{});
  ASSERT_EQ(all.size(), 5u);
  uint64_t last_nonce_of_0 = 0;
  int seen_of_0 = 0;
  for (const LedgerTx& tx : all) {
    const auto& t = std::get<Transaction>(tx);
    if (t.from != a.keys[0].public_key()) continue;
    if (seen_of_0++ > 0) {
      EXPECT_GT(t.nonce, last_nonce_of_0);
    }
    last_nonce_of_0 = t.nonce;
  }
  EXPECT_EQ(seen_of_0, 2);
}

// The admission bound tied to the next pool (block_budget.h): at most waiting_capacity()
// transfers wait for a pool; those in the frozen pool do not count until the block commits,
// and what a committed block left out waits again. The total capacity still holds.
TEST(MempoolBoundTest, AdmitsOnlyWhatTheNextPoolCanCarry) {
  Accounts a(12);
  Mempool pool(100);
  pool.set_waiting_capacity(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pool.Admit(a.Transfer(i, 0), a.state).ok());
  Status full = pool.Admit(a.Transfer(3, 0), a.state);
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted) << full;
  EXPECT_NE(full.message().find("next pool full"), std::string::npos) << full;
  EXPECT_EQ(pool.Room().code(), StatusCode::kResourceExhausted);

  // Freezing the next pool takes the three: three more fit behind it.
  ASSERT_EQ(pool.Freeze(3, AppRegistry{}).size(), 3u);
  EXPECT_EQ(pool.waiting(), 0u);
  EXPECT_TRUE(pool.Room().ok());
  for (int i = 3; i < 6; ++i) ASSERT_TRUE(pool.Admit(a.Transfer(i, 0), a.state).ok());
  EXPECT_EQ(pool.Admit(a.Transfer(6, 0), a.state).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(pool.size(), 6u);

  // A block that left the frozen pool out: its three wait again (oldest, so first in the next
  // pool), and nothing is admitted until a pool takes them.
  pool.Prune(a.state, AppRegistry{}, BlockContext{});
  EXPECT_EQ(pool.waiting(), 6u);
  EXPECT_EQ(pool.Admit(a.Transfer(6, 0), a.state).code(), StatusCode::kResourceExhausted);
  std::vector<LedgerTx> next = pool.Freeze(3, AppRegistry{});
  ASSERT_EQ(next.size(), 3u);
  for (const LedgerTx& tx : next) {
    const PublicKey& from = std::get<Transaction>(tx).from;
    EXPECT_TRUE(from == a.keys[0].public_key() || from == a.keys[1].public_key() ||
                from == a.keys[2].public_key());
  }
  EXPECT_EQ(pool.waiting(), 3u);
  EXPECT_EQ(pool.Admit(a.Transfer(6, 0), a.state).code(), StatusCode::kResourceExhausted);

  // A block that carried it: the committed three leave, the other three are waiting.
  std::vector<LeafUpdate> committed;
  for (int i = 0; i < 3; ++i) {
    committed.push_back({AccountKey(a.keys[i].public_key()), EncodeAccount({999, 1})});
  }
  pool.Prune(*a.state.Update(committed), AppRegistry{}, BlockContext{});
  EXPECT_EQ(pool.size(), 3u);
  EXPECT_EQ(pool.waiting(), 3u);
  ASSERT_EQ(pool.Freeze(3, AppRegistry{}).size(), 3u);
  EXPECT_TRUE(pool.Admit(a.Transfer(6, 0), a.state).ok());

  // Without the bound (0) only the total capacity counts: the old admission rule.
  Mempool total(5);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(total.Admit(a.Transfer(i, 0), a.state).ok());
  Status over = total.Admit(a.Transfer(5, 0), a.state);
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted) << over;
  EXPECT_NE(over.message().find("mempool full"), std::string::npos) << over;
}

// An application with a mempool quota of half the capacity whose transactions, as submitted,
// end with ';' (a payload weighs its ';'s, as a client's batch of reviews weighs its reviews).
class QuotaApp : public Application {
 public:
  uint8_t id() const override { return 202; }
  std::string_view name() const override { return "quota"; }
  Result<std::vector<Hash256>> ReadSet(ByteSpan, const BlockContext&) const override {
    return std::vector<Hash256>{};
  }
  Result<AppVerdict> Apply(ByteSpan, const BlockContext&, const LeafReader&, bool) const override {
    return AppVerdict::Accept({});
  }
  double MempoolShare() const override { return 0.5; }
  size_t Weight(ByteSpan payload) const override {
    return static_cast<size_t>(std::count(payload.begin(), payload.end(), ';'));
  }
};

// Session 15 (docs/reviews.md): with a quota of one pool, a full pool of reviews frozen for
// block h held the whole quota until h committed, so the pool for h + 1 carried none (blocks of
// 150, 0, 150). The quota counts what waits for a pool, not the pool in flight.
TEST(MempoolQuotaTest, AnApplicationsQuotaCountsWhatWaitsNotTheFrozenPool) {
  AppRegistry apps;
  ASSERT_TRUE(apps.Add(std::make_shared<QuotaApp>()).ok());
  Mempool pool(8);  // quota: 4
  int n = 0;
  auto admit = [&] {
    return pool.AdmitApp({202, "tx " + std::to_string(n++) + ";"}, SparseMerkleTree(), apps, {});
  };
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(admit().ok()) << i;
  Status over = admit();
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted) << over;
  EXPECT_NE(over.message().find("quota of application 'quota' reached (4"), std::string::npos);
  size_t weight = 0;
  ASSERT_EQ(pool.Freeze(4, apps, &weight).size(), 4u);
  EXPECT_EQ(weight, 4u);
  // The frozen four are the block being agreed: four more may wait for the next pool.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(admit().ok()) << i;
  EXPECT_EQ(admit().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(pool.size(), 8u);
  EXPECT_EQ(pool.waiting(), 4u);
  // A block that left the frozen pool out: all eight wait again, over the quota, and nothing
  // more is admitted until a pool takes them.
  pool.Prune(SparseMerkleTree(), apps, {});
  EXPECT_EQ(pool.waiting(), 8u);
  EXPECT_EQ(admit().code(), StatusCode::kResourceExhausted);
}

// Weight is read once at admission and kept: a client's batch counts what it carries in the
// pool size, the bounds and the quota, and Freeze reports the pool's weight.
TEST(MempoolQuotaTest, EntriesCountByTheirWeight) {
  AppRegistry apps;
  ASSERT_TRUE(apps.Add(std::make_shared<QuotaApp>()).ok());
  Mempool pool(100);
  for (const char* p : {"a;b;", "c;d;", "e;f;", "g;h;i;j;k;l;m;"}) {
    ASSERT_TRUE(pool.AdmitApp({202, p}, SparseMerkleTree(), apps, {}).ok()) << p;
  }
  EXPECT_EQ(pool.size(), 4u);
  EXPECT_EQ(pool.weight(), 13u);
  size_t weight = 0;
  EXPECT_EQ(pool.Freeze(4, apps, &weight).size(), 2u);  // a;b; and c;d;: a pool of 4
  EXPECT_EQ(weight, 4u);
  EXPECT_EQ(pool.waiting(), 9u);
  pool.Prune(SparseMerkleTree(), apps, {});
  // A heavy last entry is taken whole rather than passed over.
  std::vector<LedgerTx> all = pool.Freeze(7, apps, &weight);
  EXPECT_EQ(all.size(), 4u);
  EXPECT_EQ(weight, 13u);
  EXPECT_EQ(pool.waiting(), 0u);
  // The quota (50) is reached by weight: a batch of 50 fills it.
  Mempool quota(100);
  ASSERT_TRUE(quota.AdmitApp({202, std::string(50, ';')}, SparseMerkleTree(), apps, {}).ok());
  EXPECT_EQ(quota.AdmitApp({202, "x;"}, SparseMerkleTree(), apps, {}).code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace tessera::ledger::net
