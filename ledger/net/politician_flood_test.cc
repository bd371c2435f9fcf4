// A politician's flood limits on pools and pool commitments (issue #12's data-availability
// bounds): pools over max_pool_txs, for heights too far ahead, or a third pool of one
// politician for one height are refused, and so is a third commitment; a certified block's
// pools are still taken (they must stay appliable).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "ledger/crypto/ed25519.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/identity.h"
#include "ledger/net/politician.h"
#include "ledger/net/politician_server.h"
#include "ledger/net/reply_caps.h"
#include "ledger/net/round_item.h"
#include "ledger/net/surplus_filter.h"
#include "ledger/net/testing/pool_fixtures.h"

namespace tessera::ledger::net {
namespace {

using testing::SignedPool;
using testing::Transfers;

KeyPair Key(int i) { return testing::TestKey("flood test key ", i); }

// Four citizens, pools of at most three transactions, no politicians yet.
Genesis SmallGenesis() {
  return testing::TestGenesis({.salt = "flood test key ", .max_pool_txs = 3});
}

// Politician 0 of `g` with its key, in a fresh directory named by `prefix` and the pid.
PoliticianOptions NodeOptions(const Genesis& g, const std::string& prefix) {
  PoliticianOptions o;
  o.id = 0;
  o.genesis = g;
  o.keys = Key(200);
  o.dir = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  std::filesystem::remove_all(o.dir);
  return o;
}

class PoliticianFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Genesis g = SmallGenesis();
    for (uint32_t i = 0; i < 2; ++i) {
      g.politicians.push_back({i, Key(200 + i).public_key(), "127.0.0.1:" + std::to_string(1 + i)});
    }
    g.accounts.push_back({Key(300).public_key(), 1000});
    PoliticianOptions o = NodeOptions(g, "flood_test_");
    dir_ = o.dir;
    auto node = PoliticianNode::Open(o);
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
  }
  void TearDown() override {
    node_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A pool of politician 1 for `height`: `count` transfers to a receiver named by `variant`.
  static Pool MakePool(uint64_t height, int variant, int count, int claimed = -1) {
    return SignedPool(1, height, Transfers(Key(300), Key(400 + variant).public_key(), count),
                      Key(201), claimed);
  }
  std::string PostPool(const Pool& pool) {
    PostReply rep;
    node_->PostPool(pool, &rep);
    return rep.accepted() ? "" : rep.error();
  }
  std::string PostCommitment(const Pool& pool) {
    PostRequest req;
    req.set_height(1);
    req.mutable_item()->set_payload(pool.commitment());
    PostReply rep;
    node_->Post(req, &rep);
    return rep.accepted() ? "" : rep.error();
  }
  std::filesystem::path dir_;
  std::unique_ptr<PoliticianNode> node_;
};

TEST_F(PoliticianFloodTest, RefusesOversizedFarAheadAndThirdPools) {
  EXPECT_NE(PostPool(MakePool(1, 0, 4)).find("over max_pool_txs 3"), std::string::npos);
  EXPECT_NE(PostPool(MakePool(5, 0, 1)).find("too far ahead"), std::string::npos);
  EXPECT_NE(PostPool(MakePool(1, 0, 1, /*claimed=*/2)).find("commitment says 2"),
            std::string::npos);
  EXPECT_EQ(PostPool(MakePool(1, 0, 1)), "");
  EXPECT_EQ(PostPool(MakePool(1, 0, 1)), "");  // the same pool again is fine
  EXPECT_EQ(PostPool(MakePool(1, 1, 1)), "");  // a second: equivocation evidence, kept
  EXPECT_NE(PostPool(MakePool(1, 2, 1)).find("already signed two pools"), std::string::npos);
  EXPECT_EQ(PostPool(MakePool(2, 2, 1)), "");  // another height has its own limit
}

// How far ahead a commitment may be: only the next two heights are being agreed, and a
// commitment is taken only in the round of its own height.
TEST_F(PoliticianFloodTest, RefusesCommitmentsFarAheadOrForAnotherRound) {
  auto post = [&](uint64_t round, const Pool& pool) {
    PostRequest req;
    req.set_height(round);
    req.mutable_item()->set_payload(pool.commitment());
    PostReply rep;
    node_->Post(req, &rep);
    return rep.accepted() ? "" : rep.error();
  };
  EXPECT_EQ(post(2, MakePool(2, 0, 1)), "");  // latest is 0: heights 1 and 2 are open
  EXPECT_NE(post(3, MakePool(3, 0, 1)).find("not being agreed"), std::string::npos);
  EXPECT_NE(post(1000000, MakePool(1000000, 0, 1)).find("not being agreed"), std::string::npos);
  EXPECT_NE(post(1, MakePool(2, 1, 1)).find("invalid pool commitment"), std::string::npos);
}

TEST_F(PoliticianFloodTest, RefusesAThirdCommitmentForOneHeight) {
  EXPECT_EQ(PostCommitment(MakePool(1, 0, 1)), "");
  EXPECT_EQ(PostCommitment(MakePool(1, 1, 1)), "");
  EXPECT_NE(PostCommitment(MakePool(1, 2, 1)).find("already has two commitments"),
            std::string::npos);
}

// What a flood costs an honest politician: N validly signed commitments of one politician for
// one height (the flood adversary signs 2,000) are refused by the per-politician cap before
// their signatures are checked, so the signature checks stay at the two it keeps, whatever N.
TEST_F(PoliticianFloodTest, AFloodOfCommitmentsCostsTwoSignatureChecks) {
  constexpr int kFlood = 300;
  std::vector<std::string> flood;
  for (int i = 0; i < kFlood; ++i) {
    TxPoolCommitment c{.politician_id = 1,
                       .height = 1,
                       .tx_count = 0,
                       .pool_hash = Sha256("flood test " + std::to_string(i))};
    SignTxPoolCommitment(c, Key(201));
    flood.push_back(EncodeTxPoolCommitment(c));
  }
  const uint64_t before = VerificationsComputed();
  int accepted = 0;
  for (const std::string& commitment : flood) {
    PostRequest req;
    req.set_height(1);
    req.mutable_item()->set_payload(commitment);
    PostReply rep;
    node_->Post(req, &rep);
    accepted += rep.accepted();
  }
  EXPECT_EQ(accepted, 2);
  EXPECT_EQ(VerificationsComputed() - before, 2u);
}

// ---- Pushes over real gRPC (AdmitPush, politician_flood.cc) -----------------------------------

// A stub on a connection of its own: channels in one process to one address otherwise share
// a connection, and the push budget is per connection.
std::unique_ptr<Politician::Stub> OwnConnection(int port) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return Politician::NewStub(grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                                       grpc::InsecureChannelCredentials(), args));
}

grpc::Status PushItem(Politician::Stub& stub, uint64_t height, const std::string& payload,
                      PostReply* rep) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  PostRequest req;
  req.set_height(height);
  req.mutable_item()->set_payload(payload);
  return stub.Post(&ctx, req, rep);
}

// A hostile pusher calls Post once per item on one connection: 50 validly signed pool
// commitments, then 1,000 distinct, validly signed witness lists of an unregistered citizen
// (each costs a signature check before AcceptItem refuses it). The politician's push budget is
// 100 per connection and does not refill within the test (0.001/s), so the property is exact:
// pushed commitments are refused on their type byte with pull gossip on (no signature check),
// at most the 50 calls left of the budget reach the witness-list checks, the other 950 are
// refused RESOURCE_EXHAUSTED before they are decoded, and a registration pushed on another
// connection during the flood is taken (honest callers keep their own budget).
TEST(PoliticianPushTest, AHostilePusherIsHeldToItsConnectionsBudget) {
  Genesis g = SmallGenesis();
  for (uint32_t i = 0; i < 2; ++i) {
    g.politicians.push_back({i, Key(200 + i).public_key(), "127.0.0.1:1"});
  }
  g.accounts.push_back({Key(300).public_key(), 1000});
  PoliticianOptions o = NodeOptions(g, "push_test_");
  o.pushes_per_s = 0.001;
  o.pushes_burst = 100;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  auto server = PoliticianServer::Start(node->get(), "127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status();
  auto hostile = OwnConnection((*server)->port());
  auto honest = OwnConnection((*server)->port());

  const uint64_t before = VerificationsComputed();
  int pushed_commitments_refused = 0;
  for (int i = 0; i < 50; ++i) {
    TxPoolCommitment c{.politician_id = 1,
                       .height = 1,
                       .tx_count = 0,
                       .pool_hash = Sha256("pushed " + std::to_string(i))};
    SignTxPoolCommitment(c, Key(201));
    PostReply rep;
    grpc::Status s = PushItem(*hostile, 1, EncodeTxPoolCommitment(c), &rep);
    pushed_commitments_refused += s.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
                                  s.error_message().find("pulled") != std::string::npos;
  }
  EXPECT_EQ(pushed_commitments_refused, 50);
  EXPECT_EQ(VerificationsComputed() - before, 0u);

  int over_budget = 0, looked_at = 0;
  std::string first_error;
  const KeyPair outsider = Key(600);
  for (int i = 0; i < 1000; ++i) {
    WitnessList w{.height = 1};
    w.credential[0] = static_cast<uint8_t>(i);
    w.credential[1] = static_cast<uint8_t>(i >> 8);
    SignWitnessList(w, outsider);
    PostReply rep;
    grpc::Status s = PushItem(*hostile, 1, EncodeWitnessList(w), &rep);
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++over_budget;
      if (first_error.empty()) first_error = s.error_message();
    } else {
      EXPECT_TRUE(s.ok()) << s.error_message();
      EXPECT_FALSE(rep.accepted());  // an unregistered citizen: refused by AcceptItem
      ++looked_at;
    }
    if (i == 500) {  // mid-flood, an honest registration on its own connection
      Identity id{.citizen = Key(500).public_key(), .registered_at = 1};
      SignIdentity(id, Key(100));
      PostReply reg;
      grpc::Status rs = PushItem(*honest, 1, EncodeIdentity(id), &reg);
      EXPECT_TRUE(rs.ok()) << rs.error_message();
      EXPECT_TRUE(reg.accepted()) << reg.error();
    }
  }
  std::printf("witness lists: %d looked at, %d over budget; %llu signature checks; \"%s\"\n",
              looked_at, over_budget,
              static_cast<unsigned long long>(VerificationsComputed() - before),
              first_error.c_str());
  EXPECT_LE(looked_at, 50);
  EXPECT_GE(over_budget, 950);
  EXPECT_NE(first_error.find("push budget"), std::string::npos) << first_error;
  // Two checks at most per witness list looked at (Post's warm-up and AcceptItem's, the second
  // normally a cache hit) and one for the registration.
  EXPECT_LE(VerificationsComputed() - before, 2u * 50 + 1);
  EXPECT_EQ((*node)->push_stats().over_budget, static_cast<uint64_t>(over_budget));
  EXPECT_EQ((*node)->push_stats().pushed_commitments, 50u);
  server->reset();
  node->reset();
  std::filesystem::remove_all(o.dir);
}

// ---- Pull gossip against hostile peers (flood_fetcher.h, politician_flood.cc) ----------------

enum class PeerKind { kHonest, kRandomHashes, kHugeListing, kNeverServes, kWrongBytes };

// A peer politician over real gRPC as a hostile one may behave: it lists `items` (or 4,096
// fresh random hashes per listing, as many as an honest reply may hold, for kRandomHashes; or
// 100,000, for kHugeListing) and answers GetItems honestly, never within the caller's deadline,
// or with other bytes.
class FakePeer final : public Politician::Service {
 public:
  FakePeer(PeerKind kind, std::vector<RoundItem> items) : kind_(kind), items_(std::move(items)) {
    // By hash: a fetch of 256 hashes from thousands of items must not hash them all each time
    // (a fetch past the caller's 1 s deadline is a miss).
    for (const RoundItem& item : items_) by_hash_.emplace(AsChars(RoundItemHash(item)), item);
  }
  grpc::Status GetRound(grpc::ServerContext*, const RoundRequest* q, RoundReply* r) override {
    ++listings;
    if (kind_ == PeerKind::kRandomHashes || kind_ == PeerKind::kHugeListing) {
      const int n = kind_ == PeerKind::kHugeListing ? 100000 : 4096;
      std::lock_guard<std::mutex> lock(mu_);
      for (int i = 0; i < n; ++i) {
        Hash256 h{};
        for (size_t w = 0; w < 4; ++w) {
          const uint64_t x = rng_();
          std::memcpy(h.data() + 8 * w, &x, 8);
        }
        r->add_item_hashes(std::string(AsChars(h)));
      }
      r->set_next_offset(q->offset() + n);
      return grpc::Status::OK;
    }
    if (q->offset() >= items_.size()) {  // nothing new: hold the call a while, as a long-poll
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<uint32_t>(q->wait_ms(), 100)));
    }
    for (size_t i = q->offset(); i < items_.size(); ++i) {
      r->add_item_hashes(std::string(AsChars(RoundItemHash(items_[i]))));
    }
    r->set_next_offset(std::max<uint64_t>(q->offset(), items_.size()));
    return grpc::Status::OK;
  }
  grpc::Status GetItems(grpc::ServerContext*, const ItemsRequest* q, RoundReply* r) override {
    ++fetches;
    if (kind_ == PeerKind::kNeverServes) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the caller's 1 s
      return grpc::Status::OK;
    }
    for (const std::string& b : q->hashes()) {
      auto it = by_hash_.find(b);
      if (it == by_hash_.end()) continue;
      RoundItem out = it->second;
      if (kind_ == PeerKind::kWrongBytes) out.set_block_signature("other bytes");
      *r->add_items() = out;
    }
    r->set_next_offset(q->hashes_size());
    return grpc::Status::OK;
  }
  std::atomic<uint64_t> listings{0}, fetches{0};

 private:
  const PeerKind kind_;
  const std::vector<RoundItem> items_;
  std::map<std::string, RoundItem> by_hash_;
  std::mutex mu_;
  std::mt19937_64 rng_{7};
};

// A politician pulling round items from one honest peer and four hostile ones (a random-hash
// lister in 4,096-hash listings, one in 100,000-hash listings -- 1e6 in ten calls --, one that
// never serves, one that serves other bytes; the last two list the real items too): every
// real item is taken, its pending set stays bounded, a listing over the reply cap fails before
// it is parsed, and its listing and fetch RPCs per peer stay within one per 20 ms whatever the
// peers list.
TEST(PoliticianPullTest, HostilePeersCostBoundedRpcsAndHonestItemsArrive) {
  constexpr uint32_t kPoliticians = 16;  // 1-5 served here, the rest unreachable
  std::vector<RoundItem> items;          // two commitments of each politician 1..15 for height 1
  for (uint32_t p = 1; p < kPoliticians; ++p) {
    for (int v = 0; v < 2; ++v) {
      TxPoolCommitment c{
          .politician_id = p,
          .height = 1,
          .tx_count = 0,
          .pool_hash = Sha256("pull test " + std::to_string(p) + " " + std::to_string(v))};
      SignTxPoolCommitment(c, Key(200 + p));
      RoundItem item;
      item.set_payload(EncodeTxPoolCommitment(c));
      items.push_back(item);
    }
  }
  const std::vector<PeerKind> kinds = {PeerKind::kRandomHashes, PeerKind::kNeverServes,
                                       PeerKind::kWrongBytes, PeerKind::kHonest,
                                       PeerKind::kHugeListing};
  std::vector<std::unique_ptr<FakePeer>> peers;
  std::vector<std::unique_ptr<grpc::Server>> servers;
  Genesis g = SmallGenesis();
  g.accounts.push_back({Key(300).public_key(), 1000});
  g.politicians.push_back({0, Key(200).public_key(), "127.0.0.1:1"});
  for (uint32_t p = 1; p < kPoliticians; ++p) {
    std::string address = "127.0.0.1:1";  // unreachable
    if (p <= kinds.size()) {
      peers.push_back(std::make_unique<FakePeer>(kinds[p - 1], items));
      int port = 0;
      grpc::ServerBuilder builder;
      builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
      builder.RegisterService(peers.back().get());
      servers.push_back(builder.BuildAndStart());
      ASSERT_NE(port, 0);
      address = "127.0.0.1:" + std::to_string(port);
    }
    g.politicians.push_back({p, Key(200 + p).public_key(), address});
  }
  PoliticianOptions o = NodeOptions(g, "pull_test_");
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  const auto start = std::chrono::steady_clock::now();
  (*node)->Start();
  // Every real item within a fetch deadline and some slack (loaded machines).
  while ((*node)->flood_stats().accepted < items.size() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double to_all_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the flood goes on
  (*node)->Stop();
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const PoliticianNode::FloodStats s = (*node)->flood_stats();
  std::printf(
      "all %zu items in %.2f s; %.1f s: listings %llu, fetches %llu (honest peer %llu), "
      "pending %zu, over_listing %llu, over_share %llu, wrong %llu, misses %llu, "
      "listing errors %llu\n",
      items.size(), to_all_s, elapsed_s, static_cast<unsigned long long>(s.listing_rpcs),
      static_cast<unsigned long long>(s.fetch_rpcs),
      static_cast<unsigned long long>(peers[3]->fetches.load()), s.pending,
      static_cast<unsigned long long>(s.fetcher.over_listing),
      static_cast<unsigned long long>(s.fetcher.over_share),
      static_cast<unsigned long long>(s.fetcher.wrong_items),
      static_cast<unsigned long long>(s.fetcher.misses),
      static_cast<unsigned long long>(s.listing_errors));
  // Useful work: every real item taken once, none of the other bytes (whether the wrong-bytes
  // peer is asked at all depends on who answers first; FloodFetcherTest asserts its count).
  EXPECT_EQ(s.accepted, items.size());
  EXPECT_EQ(s.refused, 0u);
  EXPECT_LT(to_all_s, 5.0);
  // Bounded memory and work per listing.
  EXPECT_LE(s.pending, o.flood.max_pending);
  EXPECT_GT(s.fetcher.over_listing, 0u);
  // RPCs: per peer at most one listing and one fetch per 20 ms (+1 for rounding), whatever it
  // lists; the 30 real items took a few fetches from the honest peer, not one each.
  const uint64_t per_peer = static_cast<uint64_t>(elapsed_s / 0.020) + 2;
  for (size_t i = 0; i < peers.size(); ++i) {
    EXPECT_LE(peers[i]->listings.load(), per_peer) << i;
    EXPECT_LE(peers[i]->fetches.load(), per_peer) << i;
  }
  EXPECT_LE(peers[3]->fetches.load(), 6u);
  for (auto& server : servers) server->Shutdown();
  node->reset();
  std::filesystem::remove_all(o.dir);
}

// ---- The server's receive cap (politician_server.cc, reply_caps.h MaxRequestBytes) -----------

// A politician (two in its genesis, the other unreachable) served over gRPC with `limits`.
class PoliticianServerCapTest : public ::testing::Test {
 protected:
  void Serve(const std::string& prefix, const ServerLimits& limits = {}) {
    options_ = NodeOptions(
        testing::TestGenesis({.salt = "flood test key ", .max_pool_txs = 3, .politicians = 2}),
        prefix);
    auto node = PoliticianNode::Open(options_);
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
    auto server = PoliticianServer::Start(node_.get(), "127.0.0.1:0", limits);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void TearDown() override {
    server_.reset();
    node_.reset();
    std::filesystem::remove_all(options_.dir);
  }
  // The server's peak RSS (VmHWM, MiB) before and after a flood.
  // The server's peak RSS (VmHWM, MiB) before and after a flood, and whether an honest call
  // right after the flood was served.
  struct Peaks {
    long long before = -1;
    long long after = -1;
    bool honest_served = false;
  };
  // Runs `flood(port)` against a server with `limits` in a fresh process, so that its peak RSS
  // is the server's alone, then an honest call: this test binary again, filtered to `test` and
  // told by the environment to serve (a fork alone would inherit this process's gRPC state).
  // In that process the call serves, reports and exits; it never returns there.
  Peaks FloodAServerInAFreshProcess(const char* test, const ServerLimits& limits,
                                    const std::function<void(int port)>& flood);
  // A flood's verdict: the server grew by at most `bound_mib`, some of the flood's `calls`
  // were served and some refused, and the honest call after it was served.
  static void ExpectBoundedFlood(const char* calls, const Peaks& peaks, long long bound_mib, int ok,
                                 int refused);
  PoliticianOptions options_;
  std::unique_ptr<PoliticianNode> node_;
  std::unique_ptr<PoliticianServer> server_;
};

// A process's peak resident set (VmHWM) in MiB, or -1.
long long PeakRssMiB() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long long kib = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atoll(line + 6);
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib >> 10;
}

// An honest call, on a connection of its own, is served.
bool AnHonestCallIsServed(int port);

PoliticianServerCapTest::Peaks PoliticianServerCapTest::FloodAServerInAFreshProcess(
    const char* test, const ServerLimits& limits, const std::function<void(int port)>& flood) {
  if (const char* fds = std::getenv("TESSERA_FLOOD_SERVER_FDS")) {
    int to_parent = -1, from_parent = -1;
    if (std::sscanf(fds, "%d,%d", &to_parent, &from_parent) != 2) _exit(2);
    if (!UseMallocForLargeRequests().ok()) _exit(3);  // as ledger-politician's main does
    Serve("memory_flood_test_", limits);
    long long rss[2] = {PeakRssMiB(), 0};
    const int port = server_ ? server_->port() : 0;
    if (write(to_parent, &port, sizeof port) != sizeof port) _exit(1);
    char done;
    if (read(from_parent, &done, 1) != 1) _exit(1);
    rss[1] = PeakRssMiB();
    if (write(to_parent, rss, sizeof rss) != sizeof rss) _exit(1);
    TearDown();
    _exit(0);
  }
  Peaks peaks;
  int to_parent[2], to_child[2];
  if (pipe(to_parent) != 0 || pipe(to_child) != 0) return peaks;
  const pid_t server_pid = fork();
  if (server_pid == 0) {
    const std::string fds = std::to_string(to_parent[1]) + "," + std::to_string(to_child[0]);
    setenv("TESSERA_FLOOD_SERVER_FDS", fds.c_str(), 1);
    const std::string filter = std::string("--gtest_filter=PoliticianServerCapTest.") + test;
    execl("/proc/self/exe", "ledger_citizen_safety_test", filter.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_parent[1]);
  close(to_child[0]);
  int port = 0;
  if (server_pid > 0 && read(to_parent[0], &port, sizeof port) == sizeof port && port > 0) {
    flood(port);
    peaks.honest_served = AnHonestCallIsServed(port);
  }
  long long rss[2] = {-1, -1};
  if (write(to_child[1], "x", 1) == 1 && read(to_parent[0], rss, sizeof rss) == sizeof rss) {
    peaks.before = rss[0];
    peaks.after = rss[1];
  }
  close(to_parent[0]);
  close(to_child[1]);
  int wait_status = 0;
  if (server_pid > 0) waitpid(server_pid, &wait_status, 0);
  return peaks;
}

// A request over the largest an honest caller sends (a PostPool of a kMaxPoolBytes pool) fails
// RESOURCE_EXHAUSTED before it is parsed, and the politician carries on: the same caller's
// next request of honest size is served. With the cap back at 256 MiB the 20 MiB pool is
// parsed and refused by AddPool instead (the call succeeds, accepted false): the test fails.
TEST_F(PoliticianServerCapTest, AnOversizedRequestFailsBeforeItIsParsed) {
  ASSERT_NO_FATAL_FAILURE(Serve("server_cap_test_"));
  auto stub = OwnConnection(server_->port());
  auto post_pool = [&](size_t bytes, PostReply* rep) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    Pool pool;
    pool.add_txs(std::string(bytes, 'x'));
    return stub->PostPool(&ctx, pool, rep);
  };
  PostReply rep;
  grpc::Status big = post_pool(20 << 20, &rep);
  EXPECT_EQ(big.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << big.error_message();
  grpc::Status small = post_pool(100, &rep);  // parsed, refused by AddPool (no commitment)
  EXPECT_TRUE(small.ok()) << small.error_message();
  EXPECT_FALSE(rep.accepted());
}

// N connections, each holding a long-poll (the calls a politician holds on purpose), against a
// server whose thread quota is 16 (ServerLimits; 2,048 in the daemon): at most 16 calls are
// in progress at once, the rest fail RESOURCE_EXHAUSTED at once instead of each costing a
// thread, an honest call after them is served, and the connections, idle then, are closed
// by the server within idle_ms. Seen failing with the quota removed (64 held) and with the
// idle limit removed (the connections stayed open). idle_ms is 2 s, not less: a connection is
// idle from its handshake until its first call, and in a loaded CI run (session 14, 64 caller
// threads on 2 cores) one call came more than 300 ms after its connection and met the
// server's GOAWAY (a status other than OK or RESOURCE_EXHAUSTED).
TEST_F(PoliticianServerCapTest, ManyConnectionsCostBoundedThreadsAndIdleOnesClose) {
  const ServerLimits limits{.max_threads = 16, .idle_ms = 2000};
  ASSERT_NO_FATAL_FAILURE(Serve("connections_test_", limits));
  constexpr int kConnections = 64;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < kConnections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    channels.push_back(grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                 grpc::InsecureChannelCredentials(), args));
  }
  std::atomic<int> exhausted{0}, ok{0}, other{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kConnections; ++i) {
    callers.emplace_back([&, i] {
      auto stub = Politician::NewStub(channels[i]);
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
      // A connection that fails before its call reaches the server is tried again, so the
      // status is the server's answer: in a clean-clone CI run (session 17) one of 64 connects
      // failed on the client ("failed to connect to all addresses ... No such file or
      // directory") and counted as `other`.
      ctx.set_wait_for_ready(true);
      RoundRequest req;
      req.set_height(1);
      req.set_hashes_only(true);
      req.set_relay(true);
      req.set_wait_ms(500);
      req.set_listener("flooder " + std::to_string(i));
      RoundReply rep;
      grpc::Status s = stub->GetRound(&ctx, req, &rep);
      ++(s.ok() ? ok : s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? exhausted : other);
      if (!s.ok() && s.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
        std::printf("connection %d: code %d %s\n", i, static_cast<int>(s.error_code()),
                    s.error_message().c_str());
      }
    });
  }
  for (std::thread& t : callers) t.join();
  const PoliticianNode::RoundWaitStats waits = node_->round_wait_stats();
  std::printf("held %llu of %d long-polls, %d refused RESOURCE_EXHAUSTED\n",
              static_cast<unsigned long long>(waits.expired + waits.woken), kConnections,
              exhausted.load());
  EXPECT_LE(waits.expired + waits.woken, static_cast<uint64_t>(limits.max_threads));
  EXPECT_GE(exhausted.load(), kConnections - limits.max_threads);
  EXPECT_EQ(other.load(), 0);
  {
    auto honest = OwnConnection(server_->port());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    StatusReply rep;
    EXPECT_TRUE(honest->GetStatus(&ctx, StatusRequest(), &rep).ok());
  }
  // Idle now: the server closes each connection (a liveness wait, not a timing bound).
  auto open = [&] {
    int n = 0;
    for (auto& c : channels) n += c->GetState(false) == GRPC_CHANNEL_READY;
    return n;
  };
  const auto start = std::chrono::steady_clock::now();
  while (open() > 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(open(), 0);
}

bool AnHonestCallIsServed(int port) {
  auto honest = OwnConnection(port);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  StatusReply rep;
  grpc::Status s = honest->GetStatus(&ctx, StatusRequest(), &rep);
  if (!s.ok()) std::printf("honest call: code %d %s\n", s.error_code(), s.error_message().c_str());
  return s.ok();
}

void PoliticianServerCapTest::ExpectBoundedFlood(const char* calls, const Peaks& peaks,
                                                 long long bound_mib, int ok, int refused) {
  std::printf("server peak RSS %lld -> %lld MiB (bound +%lld); %d %s ok, %d refused\n",
              peaks.before, peaks.after, bound_mib, ok, calls, refused);
  ASSERT_GT(peaks.before, 0);
  EXPECT_LE(peaks.after - peaks.before, bound_mib);
  EXPECT_GT(ok, 0);
  EXPECT_GT(refused, 0);
  EXPECT_TRUE(peaks.honest_served);
}

// A flood of large requests being received: 48 connections each post three 15 MiB pools at
// once, against a server with a 128 MiB memory quota and a 64 MiB held limit. What they cost
// the server stays under 2 x quota + the held limit (politician_server.h: a message being
// parsed exists twice) + 128 MiB of allocator slack; calls over the quota fail fast, some
// still succeed, and an honest call after the flood is served. Without the quota (session 16)
// the server grew by 912-964 MiB in this test and it fails.
TEST_F(PoliticianServerCapTest, AFloodOfLargePostsCostsBoundedMemory) {
  const ServerLimits limits{.max_memory_bytes = size_t{128} << 20,
                            .max_held_request_bytes = size_t{64} << 20};
  std::atomic<int> ok{0}, refused{0};
  const Peaks peaks =
      FloodAServerInAFreshProcess("AFloodOfLargePostsCostsBoundedMemory", limits, [&](int port) {
        const std::string big(15 << 20, 'x');
        std::vector<std::thread> callers;
        for (int i = 0; i < 48; ++i) {
          callers.emplace_back([&] {
            auto stub = OwnConnection(port);
            for (int call = 0; call < 3; ++call) {
              grpc::ClientContext ctx;
              ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
              Pool pool;
              pool.add_txs(big);
              PostReply rep;
              ++(stub->PostPool(&ctx, pool, &rep).ok() ? ok : refused);
            }
          });
        }
        for (std::thread& t : callers) t.join();
      });
  ExpectBoundedFlood("posts", peaks, 2 * 128 + 64 + 128, ok.load(), refused.load());
}

// Requests held by handlers: 32 connections each send one long-poll carrying 15 MiB (a field
// the politician does not know, which protobuf keeps and ByteSizeLong counts), 80 ms apart, so
// few are being received at once but all would wait together. With a 64 MiB limit on held
// requests at most four wait and the rest fail RESOURCE_EXHAUSTED at once; the server's growth
// stays under the same bound as above. Without the limit (session 16) all 32 waited, the
// server grew by 1,688-1,718 MiB, and the test fails. (Session 16 made the 15 MiB a listener
// name, which the waiters' map then copied twice more: a clean-clone CI run of session 17
// grew by 476 MiB. A listener longer than a public key is now refused, next test.)
// Session 20: the server process sets malloc as ledger-politician does (UseMallocForLargeRequests):
// before, freed 15 MiB requests stayed in malloc's arenas and the growth beside CPU load varied
// from 208 to 454 MiB (a CI failure); now 178-246 MiB beside 3 CPU hogs, and 533-779 MiB with
// the held limit raised to 4 GiB (fails).
TEST_F(PoliticianServerCapTest, LongPollsHoldingLargeRequestsCostBoundedMemory) {
  const ServerLimits limits{.max_memory_bytes = size_t{128} << 20,
                            .max_held_request_bytes = size_t{64} << 20};
  std::atomic<int> ok{0}, refused{0};
  const Peaks peaks = FloodAServerInAFreshProcess(
      "LongPollsHoldingLargeRequestsCostBoundedMemory", limits, [&](int port) {
        const std::string big(15 << 20, 'x');
        std::vector<std::thread> callers;
        for (int i = 0; i < 32; ++i) {
          callers.emplace_back([&, i] {
            auto stub = OwnConnection(port);
            std::this_thread::sleep_for(std::chrono::milliseconds(80 * i));
            grpc::ClientContext ctx;
            ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
            RoundRequest req;
            req.set_height(1);
            req.set_hashes_only(true);
            req.set_relay(true);
            req.set_wait_ms(PoliticianNode::kMaxRoundWaitMs);
            req.set_listener("flooder " + std::to_string(i));
            req.GetReflection()->MutableUnknownFields(&req)->AddLengthDelimited(99, big);
            RoundReply rep;
            grpc::Status s = stub->GetRound(&ctx, req, &rep);
            ++(s.ok() ? ok : refused);
          });
        }
        for (std::thread& t : callers) t.join();
      });
  ExpectBoundedFlood("long-polls", peaks, 2 * 128 + 64 + 128, ok.load(), refused.load());
}

// A round listener longer than a public key is refused before the call is held (each held
// call keys its per-peer count by its listener), and a key-sized one is served. Seen failing
// with the check removed (the 1 KiB listener was held and answered OK).
TEST_F(PoliticianServerCapTest, AListenerLongerThanAPublicKeyIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Serve("listener_cap_test_"));
  auto stub = OwnConnection(server_->port());
  auto listen = [&](size_t listener_bytes) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    RoundRequest req;
    req.set_height(1);
    req.set_hashes_only(true);
    req.set_wait_ms(10);
    req.set_listener(std::string(listener_bytes, 'k'));
    RoundReply rep;
    return stub->GetRound(&ctx, req, &rep);
  };
  EXPECT_TRUE(listen(32).ok());
  EXPECT_TRUE(listen(PoliticianNode::kMaxListenerBytes).ok());
  grpc::Status long_listener = listen(1024);
  EXPECT_EQ(long_listener.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << long_listener.error_message();
}

// Start refuses a held-request limit under the largest honest request (it would refuse every
// full pool).
TEST_F(PoliticianServerCapTest, AHeldLimitBelowTheLargestRequestIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Serve("held_limit_test_"));
  const ServerLimits limits{.max_held_request_bytes = MaxRequestBytes() - 1};
  auto server = PoliticianServer::Start(node_.get(), "127.0.0.1:0", limits);
  EXPECT_FALSE(server.ok());
}

// A second server on a port already served fails to start instead of sharing it: gRPC sets
// SO_REUSEPORT by default, and the kernel would then hand part of the port's connections to
// each (two loopback networks under ctest -j2 that drew one port would each reach the other's
// politician).
TEST_F(PoliticianServerCapTest, ASecondServerOnAServedPortFailsToStart) {
  ASSERT_NO_FATAL_FAILURE(Serve("port_taken_test_"));
  auto second =
      PoliticianServer::Start(node_.get(), "127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_FALSE(second.ok());
}

// ---- A peer's surplus commitments, dropped before Post (surplus_filter.h) ---------------------

RoundItem CommitmentItem(uint32_t politician, uint64_t height, int variant, const KeyPair& signer) {
  TxPoolCommitment c{
      .politician_id = politician,
      .height = height,
      .tx_count = 0,
      .pool_hash = Sha256("surplus " + std::to_string(politician) + " " + std::to_string(variant))};
  SignTxPoolCommitment(c, signer);
  RoundItem item;
  item.set_payload(EncodeTxPoolCommitment(c));
  return item;
}

// Per serving peer, two distinct commitments per politician and height pass, the same one
// again passes, and the third is dropped; forged commitments a liar serves in another's name
// use up only the liar's slots; other items, other heights and committed heights are apart.
TEST(SurplusFilterTest, TwoCommitmentsPerPoliticianAndHeightPass) {
  SurplusFilter liar({0, 1, 2}), honest({0, 1, 2});
  EXPECT_TRUE(liar.Admit(1, CommitmentItem(1, 1, 0, Key(201))));
  EXPECT_TRUE(liar.Admit(1, CommitmentItem(1, 1, 1, Key(201))));
  EXPECT_TRUE(liar.Admit(1, CommitmentItem(1, 1, 1, Key(201))));  // the same again
  for (int v = 2; v < 100; ++v) EXPECT_FALSE(liar.Admit(1, CommitmentItem(1, 1, v, Key(201))));
  // Forged in politician 2's name (signed by the liar): two pass at the liar, none of them
  // touches what the honest peer serves of politician 2.
  for (int v = 0; v < 10; ++v) (void)liar.Admit(1, CommitmentItem(2, 1, 100 + v, Key(201)));
  EXPECT_TRUE(honest.Admit(1, CommitmentItem(2, 1, 0, Key(202))));
  EXPECT_EQ(liar.dropped(), 98u + 8u);
  EXPECT_EQ(honest.dropped(), 0u);
  // Not the listed round's height, or an unknown politician: AcceptItem would refuse it.
  EXPECT_FALSE(honest.Admit(1, CommitmentItem(2, 2, 1, Key(202))));
  EXPECT_FALSE(honest.Admit(1, CommitmentItem(7, 1, 1, Key(202))));
  // Other items pass untouched; another height has its own slots.
  RoundItem vote;
  vote.set_payload(std::string(1, static_cast<char>(MessageType::kVote)) + "x");
  EXPECT_TRUE(liar.Admit(1, vote));
  EXPECT_TRUE(liar.Admit(2, CommitmentItem(1, 2, 50, Key(201))));
  liar.Forget(1);
  EXPECT_TRUE(liar.Admit(1, CommitmentItem(1, 1, 60, Key(201))));  // forgotten: starts over
}

// A flooding peer lists 3,000 of its own signed commitments for the next height, and 2 of
// another politician: the politician pulling from it takes the first two of each politician,
// and the other 2,998 are dropped in the fetch thread, before any signature check and without
// mu_ -- none reaches Post (nothing refused there), and the signature checks stay at the four
// commitments kept. With the filter bypassed it fails: 2,998 refused in Post.
TEST(PoliticianPullTest, AFlooderSurplusIsDroppedBeforePost) {
  std::vector<RoundItem> items;
  for (int v = 0; v < 3000; ++v) items.push_back(CommitmentItem(1, 1, v, Key(201)));
  items.push_back(CommitmentItem(2, 1, 0, Key(202)));
  items.push_back(CommitmentItem(2, 1, 1, Key(202)));
  FakePeer flooder(PeerKind::kHonest, items);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&flooder);
  auto server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  Genesis g = SmallGenesis();
  g.accounts.push_back({Key(300).public_key(), 1000});
  g.politicians.push_back({0, Key(200).public_key(), "127.0.0.1:1"});
  g.politicians.push_back({1, Key(201).public_key(), "127.0.0.1:" + std::to_string(port)});
  g.politicians.push_back({2, Key(202).public_key(), "127.0.0.1:1"});  // unreachable
  PoliticianOptions o = NodeOptions(g, "surplus_test_");
  o.flood.max_listing = 4096;  // the whole flood in one listing
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  const uint64_t before = VerificationsComputed();
  (*node)->Start();
  // A liveness wait (every item fetched once), not a timing bound.
  const auto start = std::chrono::steady_clock::now();
  auto handled = [&] {
    const PoliticianNode::FloodStats s = (*node)->flood_stats();
    return s.accepted + s.refused + s.surplus_dropped;
  };
  while (handled() < items.size() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  (*node)->Stop();
  const PoliticianNode::FloodStats s = (*node)->flood_stats();
  std::printf("accepted %llu, refused %llu, surplus dropped %llu, signature checks %llu\n",
              static_cast<unsigned long long>(s.accepted),
              static_cast<unsigned long long>(s.refused),
              static_cast<unsigned long long>(s.surplus_dropped),
              static_cast<unsigned long long>(VerificationsComputed() - before));
  EXPECT_EQ(s.accepted, 4u);
  EXPECT_EQ(s.refused, 0u);
  EXPECT_EQ(s.surplus_dropped, 2998u);
  EXPECT_LE(VerificationsComputed() - before, 4u);
  server->Shutdown();
  node->reset();
  std::filesystem::remove_all(o.dir);
}

}  // namespace
}  // namespace tessera::ledger::net
