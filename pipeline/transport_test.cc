#include "pipeline/transport.h"

#include <gtest/gtest.h>

#include <thread>

#include "pipeline/allreduce.h"

namespace tessera::pipeline {
namespace {

using std::chrono::milliseconds;

std::vector<Endpoint> LocalEndpoints(int n) {
  auto ports = FreeLocalPorts(n);
  EXPECT_TRUE(ports.ok());
  std::vector<Endpoint> out;
  for (int p : *ports) out.push_back({"127.0.0.1", p});
  return out;
}

// Connects `n` ranks in one process, every rank to every other.
std::vector<std::unique_ptr<Transport>> Mesh(int n) {
  auto endpoints = LocalEndpoints(n);
  std::vector<std::unique_ptr<Transport>> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::vector<int> peers;
      for (int p = 0; p < n; ++p) {
        if (p != r) peers.push_back(p);
      }
      auto t = Transport::Connect(r, endpoints, peers, milliseconds(10000));
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) out[r] = std::move(*t);
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// Closes all ranks at once (each close waits up to a second for its peers' FIN).
void CloseAll(std::vector<std::unique_ptr<Transport>>& mesh) {
  std::vector<std::thread> threads;
  for (auto& t : mesh) threads.emplace_back([&t] { t.reset(); });
  for (auto& t : threads) t.join();
}

TEST(Transport, TaggedMessagesArriveInOrder) {
  auto mesh = Mesh(2);
  ASSERT_TRUE(mesh[0] && mesh[1]);
  const uint64_t seen = mesh[1]->arrivals();
  ASSERT_TRUE(mesh[0]->Send(1, 7, "first").ok());
  ASSERT_TRUE(mesh[0]->Send(1, 9, "other tag").ok());
  ASSERT_TRUE(mesh[0]->Send(1, 7, "second").ok());
  ASSERT_TRUE(mesh[0]->Send(1, 8, std::string(1 << 20, 'x')).ok());
  mesh[1]->WaitForArrival(seen, milliseconds(5000));
  EXPECT_EQ(*mesh[1]->Recv(0, 9, milliseconds(5000)), "other tag");
  EXPECT_EQ(*mesh[1]->Recv(0, 7, milliseconds(5000)), "first");
  EXPECT_EQ(*mesh[1]->Recv(0, 7, milliseconds(5000)), "second");
  EXPECT_EQ(mesh[1]->Recv(0, 8, milliseconds(5000))->size(), 1u << 20);
  EXPECT_FALSE(mesh[1]->Has(0, 7));
  EXPECT_TRUE(mesh[0]->Flush(milliseconds(5000)).ok());
  EXPECT_EQ(mesh[0]->bytes_sent(), 5 + 9 + 6 + (1u << 20));
  CloseAll(mesh);
}

TEST(Transport, MissingMessageTimesOut) {
  auto mesh = Mesh(2);
  auto r = mesh[0]->Recv(1, 1, milliseconds(50));
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(mesh[0]->Send(5, 1, "x").ok());  // not a peer
  CloseAll(mesh);
}

TEST(Transport, DeadPeerIsAnErrorNotAHang) {
  auto mesh = Mesh(2);
  ASSERT_TRUE(mesh[1]->Send(0, 3, "last words").ok());
  mesh[1].reset();  // flushes, then closes
  EXPECT_EQ(*mesh[0]->Recv(1, 3, milliseconds(5000)), "last words");
  auto r = mesh[0]->Recv(1, 4, milliseconds(60000));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  EXPECT_EQ(mesh[0]->PeerStatus(1).code(), StatusCode::kUnavailable);
  EXPECT_EQ(mesh[0]->PeerStatus(9).code(), StatusCode::kInvalidArgument);
}

TEST(Transport, AbsentPeerFailsToConnect) {
  auto endpoints = LocalEndpoints(2);
  auto t = Transport::Connect(1, endpoints, {0}, milliseconds(200));
  EXPECT_EQ(t.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(ParseEndpoint("nohost").ok());
  EXPECT_FALSE(ParseEndpoint("h:70000").ok());
  EXPECT_FALSE(ParseEndpoint("h:12x").ok());
  EXPECT_EQ(ParseEndpoint("10.0.0.1:4000")->port, 4000);
}

TEST(RingAllreduce, SumsAcrossRanksIdentically) {
  for (int n : {1, 2, 3, 4}) {
    auto mesh = Mesh(n);
    std::vector<int> group;
    for (int r = 0; r < n; ++r) group.push_back(r);
    std::vector<std::vector<float>> data(n);
    for (int r = 0; r < n; ++r) {
      for (int k = 0; k < 11; ++k) data[r].push_back(0.1f * k + r);
    }
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        EXPECT_TRUE(RingAllreduce(*mesh[r], group, 100, data[r], milliseconds(10000)).ok());
      });
    }
    for (auto& t : threads) t.join();
    for (int k = 0; k < 11; ++k) {
      float expect = 0;
      for (int r = 0; r < n; ++r) expect += 0.1f * k + r;
      EXPECT_NEAR(data[0][k], expect, 1e-5) << "n=" << n << " k=" << k;
      for (int r = 1; r < n; ++r) EXPECT_EQ(data[r][k], data[0][k]);  // bit-identical
    }
    CloseAll(mesh);
  }
}

TEST(RingAllreduce, MismatchedSizesAreReported) {
  auto mesh = Mesh(2);
  std::vector<float> a(8, 1.0f), b(6, 1.0f);
  Status sa, sb;
  std::thread t([&] { sb = RingAllreduce(*mesh[1], {0, 1}, 0, b, milliseconds(2000)); });
  sa = RingAllreduce(*mesh[0], {0, 1}, 0, a, milliseconds(2000));
  t.join();
  EXPECT_FALSE(sa.ok() && sb.ok());
  std::vector<float> c(4);
  EXPECT_EQ(RingAllreduce(*mesh[0], {1, 2}, 0, c, milliseconds(10)).code(),
            StatusCode::kInvalidArgument);
  CloseAll(mesh);
}

}  // namespace
}  // namespace tessera::pipeline
