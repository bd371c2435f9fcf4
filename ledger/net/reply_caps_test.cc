// Citizens' reply caps (reply_caps.h): a lying politician's oversized reply fails the call
// before it is parsed, with a clear error, while the largest reply an honest politician may
// send under the protocol's bounds still arrives.
#include "ledger/net/reply_caps.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "ledger/net/client.h"
#include "ledger/net/evidence.h"
#include "ledger/net/execute_reply_cap.h"
#include "ledger/net/hedged_fetch.h"
#include "ledger/net/politician.h"
#include "ledger/net/round_listener.h"
#include "ledger/net/wallet.h"

namespace tessera::ledger::net {
namespace {

// A call refused at the receive cap: gRPC's RESOURCE_EXHAUSTED (code 8) before the reply is
// parsed, as the client reports it.
void ExpectRefusedAtTheCap(const Status& s) {
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("larger than max"), std::string::npos) << s;
  EXPECT_NE(s.message().find("grpc code 8"), std::string::npos) << s;
}

// A politician that answers with as much as it is told to: `hashes` in a listing, `item_bytes`
// of items (in items of 1 MiB), `missing` pool hashes in a Post reply, `pool_bytes` of pools
// (in pools of 1 MiB) and `proof_bytes` of state proof.
class LyingPolitician final : public Politician::Service {
 public:
  grpc::Status GetRound(grpc::ServerContext*, const RoundRequest*, RoundReply* r) override {
    ++listings;
    for (size_t i = 0; i < hashes; ++i) r->add_item_hashes(std::string(32, static_cast<char>(i)));
    r->set_next_offset(hashes);
    return grpc::Status::OK;
  }
  grpc::Status GetItems(grpc::ServerContext*, const ItemsRequest*, RoundReply* r) override {
    for (size_t left = item_bytes; left > 0;) {
      const size_t n = std::min<size_t>(left, 1 << 20);
      r->add_items()->set_payload(std::string(n, 'x'));
      left -= n;
    }
    return grpc::Status::OK;
  }
  grpc::Status Post(grpc::ServerContext*, const PostRequest*, PostReply* r) override {
    r->set_accepted(true);
    for (size_t i = 0; i < missing; ++i) r->add_missing_pools(std::string(32, 'p'));
    return grpc::Status::OK;
  }
  grpc::Status GetPools(grpc::ServerContext*, const PoolsRequest*, PoolsReply* r) override {
    ++pool_calls;
    for (size_t left = pool_bytes; left > 0;) {
      const size_t n = std::min<size_t>(left, 1 << 20);
      r->add_pools()->add_txs(std::string(n, 'x'));
      left -= n;
    }
    return grpc::Status::OK;
  }
  grpc::Status ReadState(grpc::ServerContext*, const StateRequest*, StateReply* r) override {
    r->set_proof(std::string(proof_bytes, 'x'));
    return grpc::Status::OK;
  }
  grpc::Status Execute(grpc::ServerContext*, const ExecuteRequest*, ExecuteReply* r) override {
    *r = execute_reply;
    return grpc::Status::OK;
  }
  ExecuteReply execute_reply;  // set before the call
  std::atomic<size_t> hashes{0}, item_bytes{0}, missing{0}, listings{0};
  std::atomic<size_t> pool_bytes{0}, proof_bytes{0}, pool_calls{0};
};

class ReplyCapsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&liar_);
    builder.SetMaxSendMessageSize(256 << 20);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override { server_->Shutdown(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  LyingPolitician liar_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// The caps are at least what an honest politician may send and far below the channel's 256 MiB.
TEST_F(ReplyCapsTest, CapsSitBetweenTheHonestBoundAndTheChannelLimit) {
  const ReplyCaps c = ReplyCaps::Citizen();
  EXPECT_GE(c.listing, kMaxRoundListing * 34);
  EXPECT_GE(c.items, PoliticianNode::kMaxItemsReplyBytes + MaxRoundItemBytes());
  EXPECT_GE(c.block, MaxCertifiedBlockBytes());
  EXPECT_GE(c.pools, kMaxPoolsReplyBytes + kMaxPoolBytes);
  EXPECT_GE(c.state, kMaxReadKeys * MaxProofBytesPerKey());
  for (size_t cap :
       {c.listing, c.items, c.block, c.status, c.heads, c.post, c.tx, c.pools, c.state}) {
    EXPECT_GT(cap, 0u);
    EXPECT_LE(cap, 64u << 20);  // GetPools: 32 MiB of pools and one more pool
  }
  std::printf(
      "caps: listing %zu, items %zu, block %zu, heads %zu, post %zu, tx %zu, pools %zu, "
      "state %zu\n",
      c.listing, c.items, c.block, c.heads, c.post, c.tx, c.pools, c.state);
  // A politician's peers: whole blocks with up to two pools per politician, never above the
  // channel's limit; everything else as a citizen's.
  const ReplyCaps peer = ReplyCaps::Peer(5);
  EXPECT_GE(peer.block, MaxCertifiedBlockBytes() + 10 * kMaxPoolBytes);
  EXPECT_LE(peer.block, kChannelMaxReceive);
  EXPECT_EQ(ReplyCaps::Peer(1000).block, kChannelMaxReceive);
  EXPECT_EQ(peer.pools, c.pools);
  // The server takes a whole pool and little more.
  EXPECT_GE(MaxRequestBytes(), kMaxPoolBytes);
  EXPECT_LE(MaxRequestBytes(), kMaxPoolBytes + (1u << 20));
  std::printf("peer block %zu, server request %zu\n", peer.block, MaxRequestBytes());
}

// A listing of kMaxRoundListing hashes (an honest politician's largest) arrives; one of 10,000
// hashes fails the call with RESOURCE_EXHAUSTED before it is parsed -- on the citizen's channel
// only: the same reply on an uncapped channel arrives whole.
TEST_F(ReplyCapsTest, AnOversizedListingFailsTheCall) {
  PoliticianClient citizen(address(), 5000, ReplyCaps::Citizen());
  PoliticianClient uncapped(address(), 5000);
  liar_.hashes = kMaxRoundListing;
  auto honest = citizen.ListenRound(1, 0, RoundWait{});
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ(honest->item_hashes_size(), static_cast<int>(kMaxRoundListing));

  liar_.hashes = 10000;
  auto lie = citizen.ListenRound(1, 0, RoundWait{});
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie.status());
  auto through = uncapped.ListenRound(1, 0, RoundWait{});
  ASSERT_TRUE(through.ok()) << through.status();
  EXPECT_EQ(through->item_hashes_size(), 10000);
}

// Items: 4 MiB plus one largest item (an honest reply stops after the item crossing 4 MiB)
// arrives; 16 MiB fails.
TEST_F(ReplyCapsTest, AnOversizedItemsReplyFailsTheCall) {
  PoliticianClient citizen(address(), 5000, ReplyCaps::Citizen());
  liar_.item_bytes = PoliticianNode::kMaxItemsReplyBytes + kMaxEvidenceBytes;
  auto honest = citizen.GetItems(1, {Hash256{}});
  EXPECT_TRUE(honest.ok()) << honest.status();
  liar_.item_bytes = 16 << 20;
  auto lie = citizen.GetItems(1, {Hash256{}});
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie.status());
}

// A Post reply naming every pool a proposal may hold arrives; one naming 100,000 fails.
TEST_F(ReplyCapsTest, AnOversizedPostReplyFailsTheCall) {
  PoliticianClient citizen(address(), 5000, ReplyCaps::Citizen());
  RoundItem item;
  item.set_payload("x");
  liar_.missing = kMaxPoolHashes;
  std::vector<Hash256> lacks;
  EXPECT_TRUE(citizen.Post(1, item, nullptr, &lacks).ok());
  EXPECT_EQ(lacks.size(), kMaxPoolHashes);
  liar_.missing = 100000;
  Status lie = citizen.Post(1, item);
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie);
}

// GetPools: the largest honest reply (kMaxPoolsReplyBytes, then the pool crossing it: 32 pools
// of 1 MiB) arrives; 64 MiB fails before it is parsed.
TEST_F(ReplyCapsTest, AnOversizedPoolsReplyFailsTheCall) {
  PoliticianClient citizen(address(), 5000, ReplyCaps::Citizen());
  liar_.pool_bytes = kMaxPoolsReplyBytes + kMaxPoolBytes;
  auto honest = citizen.GetPools({Hash256{}});
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ(honest->pools_size(), 32);
  liar_.pool_bytes = 64 << 20;
  auto lie = citizen.GetPools({Hash256{}});
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie.status());
}

// ReadState: a proof of kMaxReadKeys keys at the per-key bound arrives; 64 MiB fails.
TEST_F(ReplyCapsTest, AnOversizedStateProofFailsTheCall) {
  PoliticianClient citizen(address(), 5000, ReplyCaps::Citizen());
  liar_.proof_bytes = kMaxReadKeys * MaxProofBytesPerKey();
  auto honest = citizen.ReadState(1, {Hash256{}});
  ASSERT_TRUE(honest.ok()) << honest.status();
  liar_.proof_bytes = 64 << 20;
  auto lie = citizen.ReadState(1, {Hash256{}});
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie.status());
}

// The largest Execute reply MaxExecuteReplyBytes allows for a body of `pools` pools of `txs`
// transactions each: every pool at kMaxPoolBytes, a proof at two keys per transaction at the
// per-key bound, one crypto_rejected index per transaction in its longest (5-byte) varint, a
// root and a signature.
ExecuteReply LargestHonestExecuteReply(size_t pools, size_t txs) {
  ExecuteReply r;
  for (size_t i = 0; i < pools; ++i) {
    Pool* pool = r.add_pools();
    // One field of tag (1 byte), length (4 bytes: 16 MiB < 2^28) and data: kMaxPoolBytes.
    pool->add_txs(std::string(kMaxPoolBytes - 5, 't'));
  }
  r.set_proof(std::string(2 * pools * txs * MaxProofBytesPerKey() + 33, 'p'));
  for (size_t i = 0; i < pools * txs; ++i) r.add_crypto_rejected(0xffffffffu - i);
  r.set_new_root(std::string(32, 'r'));
  r.set_signature(std::string(64, 's'));
  return r;
}

// Execute on a network without applications: the bound is what an honest politician may send
// (its largest reply fits it exactly enough), it sits below the channel's limit at the default
// network (5 politicians, 2,000 transactions a pool) and is no cap at all with applications or
// one politician more.
TEST(ReplyCapsExecuteTest, TheExecuteBoundCoversTheLargestHonestReply) {
  for (auto [pools, txs] : {std::pair<size_t, size_t>{1, 100}, {2, 7}}) {
    const ExecuteReply largest = LargestHonestExecuteReply(pools, txs);
    for (const Pool& p : largest.pools()) EXPECT_EQ(p.ByteSizeLong(), kMaxPoolBytes);
    EXPECT_LE(largest.ByteSizeLong(), MaxExecuteReplyBytes(pools, txs));
    EXPECT_GE(largest.ByteSizeLong() + 64, MaxExecuteReplyBytes(pools, txs));  // tight
  }
  const ReplyCaps five = CitizenReplyCaps(5, 2000, false);
  EXPECT_GE(five.execute, MaxExecuteReplyBytes(5, 2000));
  EXPECT_LT(five.execute, kChannelMaxReceive);
  EXPECT_EQ(CitizenReplyCaps(5, 2000, true).execute, 0u);   // applications: no bound
  EXPECT_EQ(CitizenReplyCaps(6, 2000, false).execute, 0u);  // above the channel's limit
  EXPECT_EQ(CitizenReplyCaps(5, 2000, false).state, ReplyCaps::Citizen().state);
  std::printf("execute bound: 5 x 2000: %zu (%.1f MiB), 6 x 2000: %zu, 1 x 100: %zu\n",
              MaxExecuteReplyBytes(5, 2000), MaxExecuteReplyBytes(5, 2000) / 1048576.0,
              MaxExecuteReplyBytes(6, 2000), MaxExecuteReplyBytes(1, 100));
}

// A citizen's channel on a one-politician network of 100-transaction pools without
// applications: the largest honest Execute reply arrives; the same reply with 1 MiB more
// proof fails with RESOURCE_EXHAUSTED before it is parsed -- and arrives whole on a channel
// without the Execute cap (Citizen(), the caps before this one).
TEST_F(ReplyCapsTest, AnOversizedExecuteReplyFailsTheCall) {
  PoliticianClient citizen(address(), 20000, CitizenReplyCaps(1, 100, false));
  PoliticianClient uncapped(address(), 20000, ReplyCaps::Citizen());
  liar_.execute_reply = LargestHonestExecuteReply(1, 100);
  auto honest = citizen.Execute(1, {Hash256{}});
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ(honest->crypto_rejected_size(), 100);

  liar_.execute_reply.mutable_proof()->append(1 << 20, 'p');
  auto lie = citizen.Execute(1, {Hash256{}});
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie.status());
  auto through = uncapped.Execute(1, {Hash256{}});
  ASSERT_TRUE(through.ok()) << through.status();
}

// The wallet (LightClient) takes the peer's caps: a 64 MiB state proof from a lying politician
// fails its read with RESOURCE_EXHAUSTED, where the wallet's channel used to take 256 MiB; a
// proof of kMaxReadKeys keys at the per-key bound still arrives (and fails to verify, as
// bytes of 'x' should).
TEST_F(ReplyCapsTest, TheWalletRefusesAnOversizedStateProof) {
  Genesis g;
  g.politicians.push_back(PoliticianInfo{.id = 0, .key = {}, .address = address()});
  LightClient wallet(g, "");
  liar_.proof_bytes = kMaxReadKeys * MaxProofBytesPerKey();
  auto honest = wallet.ReadLeaves({Hash256{}});
  ASSERT_FALSE(honest.ok());
  EXPECT_EQ(honest.status().message().find("larger than max"), std::string::npos)
      << honest.status();
  liar_.proof_bytes = 64 << 20;
  auto lie = wallet.ReadLeaves({Hash256{}});
  ASSERT_FALSE(lie.ok());
  ExpectRefusedAtTheCap(lie.status());
}

// A citizen's hedged pool download (the calls FetchPools makes) with a liar first in its
// order: the liar's 64 MiB reply fails at the cap and the honest politician asked next
// answers. Without the cap the liar's reply arrives, is taken as an answer without the pool,
// and costs the citizen 64 MiB of receive and parse.
TEST(ReplyCapsHedgedTest, ACitizenCarriesOnPastAnOversizedPoolsReply) {
  LyingPolitician liar, honest;
  liar.pool_bytes = 64 << 20;
  honest.pool_bytes = 1000;
  std::vector<std::unique_ptr<grpc::Server>> servers;
  std::vector<std::shared_ptr<PoliticianClient>> clients;
  for (LyingPolitician* p : {&liar, &honest}) {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(p);
    builder.SetMaxSendMessageSize(256 << 20);
    servers.push_back(builder.BuildAndStart());
    ASSERT_NE(port, 0);
    clients.push_back(std::make_shared<PoliticianClient>("127.0.0.1:" + std::to_string(port), 5000,
                                                         ReplyCaps::Citizen()));
  }
  {
    PoliticianCalls calls(clients);
    std::vector<PoliticianClient*> order = {clients[0].get(), clients[1].get()};
    size_t refused = 0;
    auto answer = calls.First<PoolsReply>(
        order,
        [](PoliticianClient*) -> PoliticianCalls::Call<PoolsReply> {
          return [](PoliticianClient& p) { return p.GetPools({Hash256{}}); };
        },
        [&](PoliticianClient*, PoolsReply& r) {
          // What FetchPools takes: a pool that is not the one asked for is refused.
          const bool small = r.ByteSizeLong() < 4096;
          refused += !small;
          return small;
        },
        std::chrono::milliseconds(5000), std::chrono::milliseconds(10000));
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->first, order[1]);
    EXPECT_EQ(refused, 0u);  // the liar's reply never reached the caller
    EXPECT_EQ(liar.pool_calls.load(), 1u);
  }
  for (auto& server : servers) server->Shutdown();
}

// A member's round listener over capped channels, one lying politician (10,000 hashes a
// listing) and one honest one in its sample: every listing of the liar fails at the cap, so
// nothing it lists reaches the member, and the honest politician's listing does.
TEST(ReplyCapsListenerTest, ALyingPoliticiansListingsNeverReachTheMember) {
  LyingPolitician liar, honest;
  liar.hashes = 10000;
  honest.hashes = 5;
  std::vector<std::unique_ptr<grpc::Server>> servers;
  std::vector<std::unique_ptr<PoliticianClient>> clients;
  for (LyingPolitician* p : {&liar, &honest}) {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(p);
    servers.push_back(builder.BuildAndStart());
    ASSERT_NE(port, 0);
    clients.push_back(std::make_unique<PoliticianClient>("127.0.0.1:" + std::to_string(port), 5000,
                                                         ReplyCaps::Citizen()));
  }
  std::vector<PoliticianClient*> sample = {clients[0].get(), clients[1].get()};
  RoundListener listener(sample, {.wait = std::chrono::milliseconds(0),
                                  .min_interval = std::chrono::milliseconds(20),
                                  .listener = "member"});
  listener.Listen(1, sample);
  std::map<Hash256, std::vector<PoliticianClient*>> heard;
  bool liar_heard = false;
  // Until the honest listing is in (a liveness wait, not a timing bound), and a few more.
  for (int i = 0; i < 500 && heard.size() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    RoundListener::Listing l = listener.Take();
    liar_heard |= l.heights.count(sample[0]) > 0;
    for (auto& [hash, who] : l.listers) {
      for (PoliticianClient* p : who) heard[hash].push_back(p);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // more of the liar's calls
  RoundListener::Listing l = listener.Take();
  liar_heard |= l.heights.count(sample[0]) > 0;
  for (auto& [hash, who] : l.listers) {
    for (PoliticianClient* p : who) heard[hash].push_back(p);
  }
  listener.Stop();
  EXPECT_EQ(heard.size(), 5u);
  EXPECT_FALSE(liar_heard);
  for (const auto& [hash, who] : heard) {
    for (PoliticianClient* p : who) EXPECT_EQ(p, sample[1]);
  }
  EXPECT_GT(liar.listings.load(), 1u);  // it was asked, more than once
  for (auto& server : servers) server->Shutdown();
}

}  // namespace
}  // namespace tessera::ledger::net
