#include "ledger/net/round_listener.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace tessera::ledger::net {
namespace {

Hash256 ItemHash(int i) {
  Hash256 h{};
  h[0] = static_cast<uint8_t>(i);
  h[1] = static_cast<uint8_t>(i >> 8);
  h[2] = static_cast<uint8_t>(i >> 16);
  return h;
}

// A politician's round listing as PoliticianNode::GetRound long-polls it: holds a call while it
// has nothing after the caller's offset, until an item is added, the call's wait ends or the
// caller cancels it.
class ListingPolitician final : public Politician::Service {
 public:
  grpc::Status GetRound(grpc::ServerContext* ctx, const RoundRequest* q, RoundReply* r) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++calls_;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(q->wait_ms());
    ++held_;
    cv_.notify_all();
    while (items_ <= q->offset() && std::chrono::steady_clock::now() < deadline) {
      if (ctx->IsCancelled()) {
        ++cancelled_;
        cv_.notify_all();
        break;
      }
      cv_.wait_for(lock, std::chrono::milliseconds(10));
    }
    --held_;
    for (uint64_t i = q->offset(); i < items_; ++i) {
      r->add_item_hashes(std::string(AsChars(ItemHash(static_cast<int>(i)))));
    }
    r->set_next_offset(items_);
    return grpc::Status::OK;
  }
  void AddItem(uint64_t n = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    items_ += n;
    cv_.notify_all();
  }
  uint64_t calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Waits until a call is held; returns the calls made so far.
  uint64_t WaitHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return held_ > 0; });
    return calls_;
  }
  // Waits (at most ~10 s) until `n` held calls have seen their caller cancel them.
  uint64_t WaitCancelled(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return cancelled_ >= n; });
    return cancelled_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t items_ = 0, calls_ = 0, held_ = 0, cancelled_ = 0;
};

// `service` on a free loopback port (written to *port), for a PoliticianClient to call.
std::unique_ptr<grpc::Server> ServeOnLoopback(Politician::Service* service, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), port);
  builder.RegisterService(service);
  return builder.BuildAndStart();
}

RoundListener::Listing TakeUntil(RoundListener& l, size_t hashes) {
  RoundListener::Listing all;
  for (int i = 0; i < 10000 && all.listers.size() < hashes; ++i) {
    RoundListener::Listing more = l.Take();
    for (auto& [h, who] : more.listers) all.listers[h] = who;
    for (auto& [p, height] : more.heights) all.heights[p] = height;
    if (all.listers.size() < hashes) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return all;
}

// The member hears an item through the call the politician was holding (no poll: the calls
// made are the held one that returned with it, and the one held after it), lists a
// politician from the start again after Reread, and cancels a held call when it is destroyed
// instead of waiting out its 5 s.
TEST(RoundListenerTest, HearsItemsThroughHeldCallsAndCancelsThemWhenDone) {
  ListingPolitician service;
  int port = 0;
  std::unique_ptr<grpc::Server> server = ServeOnLoopback(&service, &port);
  PoliticianClient client("127.0.0.1:" + std::to_string(port), 2000);
  {
    RoundListener listener({&client}, {.wait = std::chrono::milliseconds(5000),
                                       .min_interval = std::chrono::milliseconds(1)});
    listener.Listen(1, {&client});
    EXPECT_EQ(service.WaitHeld(), 1u);  // the first listing, held: nothing yet
    service.AddItem();
    RoundListener::Listing l = TakeUntil(listener, 1);
    ASSERT_EQ(l.listers.size(), 1u);
    EXPECT_EQ(l.listers.begin()->first, ItemHash(0));
    EXPECT_EQ(l.listers.begin()->second, std::vector<PoliticianClient*>{&client});
    // The next listing is held again after the item: two calls for one item over 5 s waits.
    EXPECT_EQ(service.WaitHeld(), 2u);
    service.AddItem();
    l = TakeUntil(listener, 1);
    ASSERT_EQ(l.listers.size(), 1u);
    EXPECT_EQ(l.listers.begin()->first, ItemHash(1));  // only what came after the offset
    EXPECT_EQ(service.WaitHeld(), 3u);
    // An item listed and not served: the politician is listed from the start again (the held
    // call, which would list only what comes after the old offset, is cancelled).
    listener.Reread(&client);
    l = TakeUntil(listener, 2);
    EXPECT_EQ(l.listers.size(), 2u);
    EXPECT_EQ(service.WaitCancelled(1), 1u);
    service.WaitHeld();
  }  // destroyed with a call held: cancelled, not waited out
  EXPECT_EQ(service.WaitCancelled(2), 2u);
  server->Shutdown();
}

// A politician that lists everything after the offset in one reply, however long (a
// flooder's 10,000 items; an honest one stops at kMaxRoundListing): the member takes at most
// kMaxRoundListing hashes of any reply and asks again from there, so what waits for Take is
// bounded per politician and call, and a long honest round still arrives whole.
TEST(RoundListenerTest, ALongListingIsTakenAtMostTheCapPerReply) {
  ListingPolitician service;
  int port = 0;
  std::unique_ptr<grpc::Server> server = ServeOnLoopback(&service, &port);
  PoliticianClient client("127.0.0.1:" + std::to_string(port), 2000);
  constexpr int kItems = 10000;
  service.AddItem(kItems);
  {
    RoundListener listener({&client}, {.wait = std::chrono::milliseconds(5000),
                                       .min_interval = std::chrono::milliseconds(1)});
    listener.Listen(1, {&client});
    RoundListener::Listing l = TakeUntil(listener, kItems);
    EXPECT_EQ(l.listers.size(), static_cast<size_t>(kItems));
    // 0..4095, 4096..8191, 8192..9999: three replies, the first two cut.
    EXPECT_GE(service.calls(), 3u);
    EXPECT_EQ(listener.listings_cut(), 2u);
  }
  server->Shutdown();
}

}  // namespace
}  // namespace tessera::ledger::net
