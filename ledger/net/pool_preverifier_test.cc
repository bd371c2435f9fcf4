// Background pre-verification of peers' pools (pool_preverifier.h). The property guarded: the
// application transactions of a pool gossiped by another politician are executed with their
// cryptography checked before any block carries them, so that executing that block only hits
// the application's verified cache; and the work stays bounded (pools without application
// transactions cost nothing, committed heights are skipped, at most max_pending pools wait).
// The reference is a counting application written here, which shares no code with the
// reviews application.
#include "ledger/net/pool_preverifier.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "ledger/crypto/ed25519.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/app_factories.h"
#include "ledger/net/politician.h"
#include "ledger/net/testing/pool_fixtures.h"

namespace tessera::ledger::net {
namespace {

constexpr uint8_t kCountingAppId = 200;
constexpr std::string_view kCountingAppName = "preverify-counting";

// An application whose "signature check" is counted, with a verified cache like the reviews
// application's: each payload is checked at most once, whoever asks. An optional gate holds
// every check until opened (to keep the preverifier's thread busy).
class CountingApp : public Application {
 public:
  uint8_t id() const override { return kCountingAppId; }
  std::string_view name() const override { return kCountingAppName; }
  Result<std::vector<Hash256>> ReadSet(ByteSpan, const BlockContext&) const override {
    return std::vector<Hash256>{};
  }
  Result<AppVerdict> Apply(ByteSpan payload, const BlockContext&, const LeafReader&,
                           bool verify_crypto) const override {
    if (verify_crypto) {
      std::unique_lock<std::mutex> lock(mu_);
      ++entered_;
      gate_cv_.notify_all();
      gate_cv_.wait(lock, [&] { return open_; });
      if (verified_.insert(std::string(AsChars(payload))).second) ++checks_;
    }
    return AppVerdict::Accept({});
  }
  uint64_t checks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return checks_;
  }
  bool verified(const std::string& payload) const {
    std::lock_guard<std::mutex> lock(mu_);
    return verified_.count(payload) > 0;
  }
  uint64_t entered() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entered_;
  }
  // Waits (at most 10 s) until `n` checks have entered (and, with the gate closed, are held).
  bool WaitHeld(uint64_t n = 1) const {
    std::unique_lock<std::mutex> lock(mu_);
    return gate_cv_.wait_for(lock, std::chrono::seconds(10), [&] { return entered_ >= n; });
  }
  void SetGate(bool open) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = open;
    }
    gate_cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable gate_cv_;
  mutable std::set<std::string> verified_;
  mutable uint64_t checks_ = 0;
  mutable uint64_t entered_ = 0;
  bool open_ = true;
};

LedgerTx AppTx(const std::string& payload) {
  return AppTransaction{.app = kCountingAppId, .payload = payload};
}

KeyPair Key(int i) { return testing::TestKey("preverify test key ", i); }

LedgerTx Transfer(uint64_t nonce) {
  Transaction tx{.to = Key(1).public_key(), .amount = 1, .nonce = nonce};
  SignTransaction(tx, Key(0));
  return tx;
}

struct Fixture {
  std::shared_ptr<CountingApp> app = std::make_shared<CountingApp>();
  AppRegistry apps;
  std::atomic<uint64_t> committed{0};
  Fixture() { EXPECT_TRUE(apps.Add(app).ok()); }
};

TEST(PoolPreverifierTest, ExecutesOnlyTheApplicationTransactionsOfAPool) {
  Fixture f;
  PoolPreverifier pre(&f.apps, nullptr, [&] { return f.committed.load(); });
  EXPECT_FALSE(pre.Offer(1, {Transfer(0), Transfer(1)}, SparseMerkleTree{}, {.height = 1}));
  EXPECT_TRUE(pre.Offer(1, {Transfer(0), AppTx("a"), AppTx("b"), Transfer(1), AppTx("c")},
                        SparseMerkleTree{}, {.height = 1}));
  pre.Wait();
  EXPECT_EQ(f.app->checks(), 3u);
  for (const char* p : {"a", "b", "c"}) EXPECT_TRUE(f.app->verified(p)) << p;
  EXPECT_EQ(pre.stats().pools, 1u);
  EXPECT_EQ(pre.stats().txs, 3u);
}

TEST(PoolPreverifierTest, SkipsPoolsOfCommittedHeights) {
  Fixture f;
  f.committed = 5;
  PoolPreverifier pre(&f.apps, nullptr, [&] { return f.committed.load(); });
  ASSERT_TRUE(pre.Offer(5, {AppTx("late")}, SparseMerkleTree{}, {.height = 5}));
  ASSERT_TRUE(pre.Offer(6, {AppTx("next")}, SparseMerkleTree{}, {.height = 6}));
  pre.Wait();
  EXPECT_FALSE(f.app->verified("late"));
  EXPECT_TRUE(f.app->verified("next"));
  EXPECT_EQ(pre.stats().stale, 1u);
}

TEST(PoolPreverifierTest, KeepsAtMostMaxPendingPoolsDroppingTheOldest) {
  Fixture f;
  f.app->SetGate(false);
  PoolPreverifier pre(&f.apps, nullptr, [&] { return f.committed.load(); },
                      {.max_pending = 1, .chunk_txs = 16, .threads = 1});
  ASSERT_TRUE(pre.Offer(1, {AppTx("running")}, SparseMerkleTree{}, {.height = 1}));
  ASSERT_TRUE(f.app->WaitHeld());  // the thread is inside "running"'s check
  ASSERT_TRUE(pre.Offer(1, {AppTx("waiting 1")}, SparseMerkleTree{}, {.height = 1}));
  ASSERT_TRUE(pre.Offer(1, {AppTx("waiting 2")}, SparseMerkleTree{}, {.height = 1}));
  f.app->SetGate(true);
  pre.Wait();
  EXPECT_EQ(pre.stats().dropped, 1u);
  EXPECT_FALSE(f.app->verified("waiting 1"));
  EXPECT_TRUE(f.app->verified("running"));
  EXPECT_TRUE(f.app->verified("waiting 2"));
}

// The chunks of one pool are checked in parallel: the pools of a height arrive together, and
// the block's execution waits on what is still in flight. With one worker, or chunks not
// handed out to other workers, the second check never starts while the first is held, and the
// wait fails.
TEST(PoolPreverifierTest, ChecksTheChunksOfAPoolInParallel) {
  Fixture f;
  f.app->SetGate(false);
  PoolPreverifier pre(&f.apps, nullptr, [&] { return f.committed.load(); },
                      {.max_pending = 8, .chunk_txs = 1, .threads = 2});
  ASSERT_TRUE(pre.Offer(1, {AppTx("first"), AppTx("second")}, SparseMerkleTree{}, {.height = 1}));
  const bool both_held = f.app->WaitHeld(2);
  f.app->SetGate(true);
  pre.Wait();
  EXPECT_TRUE(both_held) << "the second chunk did not start while the first was running";
  EXPECT_TRUE(f.app->verified("first"));
  EXPECT_TRUE(f.app->verified("second"));
  EXPECT_EQ(pre.stats().pools, 1u);
  EXPECT_EQ(pre.stats().txs, 2u);
}

// ---- In a politician: a peer's pool is checked when it arrives --------------------------------

std::shared_ptr<CountingApp>& RegisteredApp() {
  static auto* app = new std::shared_ptr<CountingApp>(std::make_shared<CountingApp>());
  return *app;
}
const bool kRegistered = RegisterAppFactory(
    std::string(kCountingAppName),
    [](const AppParams&) -> Result<std::shared_ptr<const Application>> { return RegisteredApp(); });

Genesis GenesisWithCountingApp() {
  Genesis g =
      testing::TestGenesis({.salt = "preverify test key ", .max_pool_txs = 16, .politicians = 2});
  g.accounts.push_back({Key(0).public_key(), 1000});
  g.apps.push_back(AppParams{.name = std::string(kCountingAppName), .values = {}});
  return g;
}

Pool SignedPool(uint32_t politician, uint64_t height, const std::vector<LedgerTx>& txs) {
  return testing::SignedPool(politician, height, txs, Key(200 + static_cast<int>(politician)));
}

// Politician 0 of a chain with the counting application, in a fresh directory named after
// `test` (the caller removes it).
PoliticianOptions CountingAppPolitician(const std::string& test) {
  PoliticianOptions o;
  o.id = 0;
  o.genesis = GenesisWithCountingApp();
  o.keys = Key(200);
  o.dir = std::filesystem::temp_directory_path() / (test + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(o.dir);
  return o;
}

// Breaking the hook (PreverifyPool not called from AddPool) leaves the checks at 0 here: the
// check would then happen only when the committee asks this politician to execute the block.
TEST(PoolPreverifierTest, APoliticianChecksAPeersPoolWhenItArrives) {
  ASSERT_TRUE(kRegistered);
  const PoliticianOptions o = CountingAppPolitician("preverify_test");
  {
    auto node = PoliticianNode::Open(o);
    ASSERT_TRUE(node.ok()) << node.status();
    const uint64_t before = RegisteredApp()->checks();
    PostReply rep;
    (*node)->PostPool(SignedPool(1, 1, {AppTx("peer 1"), Transfer(0), AppTx("peer 2")}), &rep);
    ASSERT_TRUE(rep.accepted()) << rep.error();
    // The checks run on the politician's background thread: wait for them (bounded), then
    // check the count exactly. No block was executed in between.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (RegisteredApp()->checks() < before + 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(RegisteredApp()->checks(), before + 2);
    EXPECT_TRUE(RegisteredApp()->verified("peer 1"));
    EXPECT_TRUE(RegisteredApp()->verified("peer 2"));
  }
  std::filesystem::remove_all(o.dir);
}

// ---- Admission: an application transaction's check holds no lock other requests need -------

// A politician checks an application transaction it is sent (a review: a ring signature of
// milliseconds) before admitting it. Run under the mempool's lock, the check held up the next
// pool's freeze, which takes that lock with the round lock held, and so every request of the
// politician: here GetStatus, which takes both. Breaking it (the check under mempool_mu_ again)
// leaves GetStatus waiting until the held check's gate opens, and the test fails.
TEST(PoliticianAdmissionTest, AnApplicationsCheckDoesNotHoldUpOtherRequests) {
  ASSERT_TRUE(kRegistered);
  const PoliticianOptions o = CountingAppPolitician("admission_test");
  {
    auto node = PoliticianNode::Open(o);
    ASSERT_TRUE(node.ok()) << node.status();
    PoliticianNode& politician = **node;
    const uint64_t entered = RegisteredApp()->entered();
    RegisteredApp()->SetGate(false);
    TxReply submitted;
    std::thread submit([&] {
      TxRequest req;
      req.set_tx(EncodeLedgerTx(AppTx("admitted while others ask")));
      politician.SubmitTransaction(req, &submitted);
    });
    const bool held = RegisteredApp()->WaitHeld(entered + 1);
    // GetStatus from another thread, while the check is held: it must answer.
    std::promise<void> answered;
    std::thread status([&] {
      StatusReply rep;
      politician.GetStatus(&rep);
      answered.set_value();
    });
    const bool answered_while_held =
        answered.get_future().wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    RegisteredApp()->SetGate(true);
    submit.join();
    status.join();
    EXPECT_TRUE(held) << "the submission's check never started";
    EXPECT_TRUE(answered_while_held)
        << "GetStatus waited for an application transaction's signature check";
    EXPECT_TRUE(submitted.accepted()) << submitted.error();
  }
  std::filesystem::remove_all(o.dir);
}

}  // namespace
}  // namespace tessera::ledger::net
