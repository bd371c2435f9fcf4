#include "cluster/interpose/cc/meta_exchange.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace tessera::cluster::interpose {
namespace {

// The c10d store's two calls, in memory: lookup waits until the key is set.
class FakeStore {
 public:
  void Set(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = value;
    cv_.notify_all();
  }
  std::string Get(const std::string& key) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return values_.count(key) > 0; });
    return values_[key];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> values_;
};

std::vector<std::optional<MetaExchange>> ConnectAll(int world, FakeStore& store) {
  std::vector<std::optional<MetaExchange>> out(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      Result<MetaExchange> m = MetaExchange::Connect(
          rank, world, "127.0.0.1",
          [&](const std::string& k, const std::string& v) { store.Set(k, v); },
          [&](const std::string& k) { return store.Get(k); });
      ASSERT_TRUE(m.ok()) << m.status();
      out[rank].emplace(std::move(*m));
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST(MetaExchangeTest, EveryRankReadsTheSameSumOneStepLater) {
  constexpr int kWorld = 4, kSteps = 8;
  FakeStore store;
  auto ranks = ConnectAll(kWorld, store);
  // Rank 2 sees the order at step 3, rank 0 at step 5; the others never.
  auto need = [](int rank, int step) {
    return (rank == 2 && step >= 3) || (rank == 0 && step >= 5);
  };
  std::vector<std::vector<int>> sums(kWorld);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kWorld; ++rank) {
    threads.emplace_back([&, rank] {
      for (int step = 0; step < kSteps; ++step) {
        Result<int> total = ranks[rank]->Exchange(need(rank, step));
        ASSERT_TRUE(total.ok()) << total.status();
        sums[rank].push_back(*total);
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::vector<int> expected = {0, 0, 0, 0, 1, 1, 2, 2};  // step s reads step s - 1's needs
  for (int rank = 0; rank < kWorld; ++rank) EXPECT_EQ(sums[rank], expected) << "rank " << rank;
}

TEST(MetaExchangeTest, APeerThatClosedIsAnErrorNotAHang) {
  FakeStore store;
  auto ranks = ConnectAll(2, store);
  ASSERT_TRUE(ranks[0]->Exchange(false).ok());  // first step: nothing to read yet
  ranks[1].reset();                             // rank 1 dies before sending its byte
  Result<int> total = ranks[0]->Exchange(false);
  ASSERT_FALSE(total.ok());
  // "a rank closed its barrier connection", or a reset when the peer left unread bytes.
  EXPECT_NE(total.status().message().find("meta exchange"), std::string::npos) << total.status();
}

TEST(MetaExchangeTest, LocalAddressTowardsLoopbackIsLoopback) {
  Result<std::string> host = LocalAddressTowards("127.0.0.1");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(*host, "127.0.0.1");
  EXPECT_FALSE(LocalAddressTowards("no-such-host.invalid").ok());
}

}  // namespace
}  // namespace tessera::cluster::interpose
