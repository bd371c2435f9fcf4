#include "pipeline/gloo_collective.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <thread>

#include "pipeline/gradient_buckets.h"

namespace tessera::pipeline {
namespace {

using std::chrono::milliseconds;

// `n` ranks in this process, each with a transport to every other and a gloo group of all.
struct Members {
  std::vector<std::unique_ptr<Transport>> transports;
  std::vector<std::unique_ptr<GlooGroup>> groups;
};

Members Join(int n, milliseconds timeout = milliseconds(10000)) {
  auto ports = FreeLocalPorts(n + 1);
  EXPECT_TRUE(ports.ok());
  std::vector<Endpoint> endpoints;
  for (int r = 0; r < n; ++r) endpoints.push_back({"127.0.0.1", (*ports)[r]});
  const Endpoint store{"127.0.0.1", (*ports)[n]};
  std::vector<int> all;
  for (int r = 0; r < n; ++r) all.push_back(r);
  Members m;
  m.transports.resize(n);
  m.groups.resize(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::vector<int> peers;
      for (int p = 0; p < n; ++p) {
        if (p != r) peers.push_back(p);
      }
      auto t = Transport::Connect(r, endpoints, peers, milliseconds(10000));
      ASSERT_TRUE(t.ok()) << t.status();
      m.transports[r] = std::move(*t);
      auto g = GlooGroup::Join({.store = store,
                                .serve_store = r == 0,
                                .prefix = "stage-0",
                                .members = all,
                                .rank = r,
                                .bind_host = "127.0.0.1",
                                .timeout = timeout},
                               *m.transports[r]);
      ASSERT_TRUE(g.ok()) << g.status();
      m.groups[r] = std::move(*g);
    });
  }
  for (auto& t : threads) t.join();
  return m;
}

// Two buckets of a buffer summed over 3 ranks: every rank ends with the sums, bit for bit the
// same on all.
TEST(GlooGroup, SumsBucketsIdenticallyOnEveryRank) {
  constexpr int n = 3, size = 1001;
  Members m = Join(n);
  ASSERT_EQ(m.groups.size(), n);
  std::vector<std::vector<float>> data(n, std::vector<float>(size));
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < size; ++i) data[r][i] = 0.1f * (r + 1) + 1e-3f * i;
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::span<float> all(data[r]);
      ASSERT_TRUE(m.groups[r]->Start(all.subspan(500)).ok());
      ASSERT_TRUE(m.groups[r]->Start(all.subspan(0, 500)).ok());
      EXPECT_EQ(m.groups[r]->pending(), 2);
      Status s = m.groups[r]->Wait(milliseconds(10000));
      EXPECT_TRUE(s.ok()) << s;
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < size; ++i) {
    EXPECT_NEAR(data[0][i], 0.6 + 3e-3 * i, 1e-5) << i;
    for (int r = 1; r < n; ++r) {
      EXPECT_EQ(std::memcmp(&data[0][i], &data[r][i], sizeof(float)), 0) << "rank " << r;
    }
  }
}

// A member whose process is gone (its gloo pairs and transport connections closed) is named by
// its rank as UNAVAILABLE, long before the deadline.
TEST(GlooGroup, DeadMemberIsReportedByRank) {
  Members m = Join(2);
  ASSERT_EQ(m.groups.size(), 2u);
  m.groups[1].reset();
  m.transports[1].reset();
  std::vector<float> data(64, 1.0f);
  ASSERT_TRUE(m.groups[0]->Start(data).ok());
  Status s = m.groups[0]->Wait(milliseconds(60000));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("replica rank 1"), std::string::npos) << s;
  EXPECT_EQ(m.groups[0]->Start(data).code(), StatusCode::kFailedPrecondition);
}

// A member that is alive but never joins the collective (a frozen worker) ends the wait at the
// deadline instead of hanging.
TEST(GlooGroup, SilentMemberHitsTheDeadline) {
  Members m = Join(2, milliseconds(3000));
  ASSERT_EQ(m.groups.size(), 2u);
  std::vector<float> data(64, 1.0f);
  ASSERT_TRUE(m.groups[0]->Start(data).ok());
  Status s = m.groups[0]->Wait(milliseconds(300));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s;
}

// Point-to-point through gloo: messages of different tags between two members arrive intact,
// each in its own buffer, in both directions.
TEST(GlooGroup, SendsAndReceivesPointToPoint) {
  Members m = Join(2);
  ASSERT_EQ(m.groups.size(), 2u);
  std::vector<float> a(1000), b(3);
  for (int i = 0; i < 1000; ++i) a[i] = 0.5f * i;
  std::vector<float> got_a(1000, -1), got_b(3, -1), back(1000, -1);
  std::thread sender([&] {
    EXPECT_TRUE(m.groups[0]->SendTo(1, 7, a, milliseconds(10000)).ok());
    EXPECT_TRUE(m.groups[0]->SendTo(1, 8, std::vector<float>{1, 2, 3}, milliseconds(10000)).ok());
    Status s = m.groups[0]->RecvFrom(1, 9, back, milliseconds(10000));
    EXPECT_TRUE(s.ok()) << s;
  });
  Status s = m.groups[1]->RecvFrom(0, 7, got_a, milliseconds(10000));
  EXPECT_TRUE(s.ok()) << s;
  s = m.groups[1]->RecvFrom(0, 8, got_b, milliseconds(10000));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(m.groups[1]->SendTo(0, 9, got_a, milliseconds(10000)).ok());
  sender.join();
  EXPECT_EQ(got_a, a);
  EXPECT_EQ(got_b, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(back, a);
  EXPECT_EQ(m.groups[0]->SendTo(0, 1, a, milliseconds(100)).code(), StatusCode::kInvalidArgument);
}

// A receive from a member whose process is gone fails as UNAVAILABLE naming its rank, long
// before the deadline; one from a member that is alive but never sends ends at the deadline.
TEST(GlooGroup, PointToPointKeepsTheFailureSemantics) {
  {
    Members m = Join(2);
    ASSERT_EQ(m.groups.size(), 2u);
    m.groups[1].reset();
    m.transports[1].reset();
    std::vector<float> data(64);
    const auto start = std::chrono::steady_clock::now();
    Status s = m.groups[0]->RecvFrom(1, 3, data, milliseconds(60000));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
    EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    EXPECT_EQ(m.groups[0]->SendTo(1, 3, data, milliseconds(100)).code(),
              StatusCode::kFailedPrecondition);
  }
  Members m = Join(2);
  ASSERT_EQ(m.groups.size(), 2u);
  std::vector<float> data(64);
  Status s = m.groups[0]->RecvFrom(1, 4, data, milliseconds(300));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s;
}

TEST(TorchrunEnvironment, ReadsTorchrunsVariables) {
  std::map<std::string, std::string> vars{{"MASTER_ADDR", "10.0.0.1"},
                                          {"MASTER_PORT", "29500"},
                                          {"RANK", "3"},
                                          {"WORLD_SIZE", "4"},
                                          {"LOCAL_RANK", "1"},
                                          {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
  auto get = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  auto env = ReadTorchrunEnvironment(get);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->master_addr, "10.0.0.1");
  EXPECT_EQ(env->master_port, 29500);
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_TRUE(env->agent_store);
  vars["RANK"] = "3x";
  EXPECT_EQ(ReadTorchrunEnvironment(get).status().code(), StatusCode::kInvalidArgument);
  vars["RANK"] = "3";
  vars["MASTER_PORT"] = "70000";
  EXPECT_EQ(ReadTorchrunEnvironment(get).status().code(), StatusCode::kInvalidArgument);
  vars.erase("MASTER_PORT");
  EXPECT_EQ(ReadTorchrunEnvironment(get).status().code(), StatusCode::kInvalidArgument);
  vars.clear();
  env = ReadTorchrunEnvironment(get);
  ASSERT_TRUE(env.ok());
  EXPECT_FALSE(env->has_store());
  EXPECT_EQ(env->rank, -1);
}

// Buckets start during the backward, highest first, and only once every gradient in them is
// final: what each bucket held when it was started equals the buffer after the backward.
TEST(GradientBuckets, StartEachBucketOnceItsGradientsAreFinal) {
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(8, 16), torch::nn::Tanh(), torch::nn::Linear(16, 16),
                            torch::nn::Tanh(), torch::nn::Linear(16, 4));
  std::vector<torch::Tensor> params = net->parameters();
  int64_t total = 0;
  for (auto& p : params) total += p.numel();
  torch::Tensor flat = torch::zeros({total});
  int64_t offset = 0;
  for (auto& p : params) {
    p.mutable_grad() = flat.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
  }
  struct Started {
    int64_t offset;
    std::vector<float> values;
  };
  std::vector<Started> started;
  GradientBuckets buckets(params, flat, /*bucket_bytes=*/64 * 4, [&](std::span<float> b) {
    started.push_back({b.data() - flat.data_ptr<float>(), {b.begin(), b.end()}});
    return Status::Ok();
  });
  ASSERT_GE(buckets.num_buckets(), 3);
  torch::Tensor x = torch::randn({5, 8});
  // Two micro-batches: only the armed (last) backward starts buckets.
  net->forward(x).pow(2).sum().backward();
  EXPECT_TRUE(started.empty());
  buckets.Arm();
  net->forward(x * 2).pow(2).sum().backward();
  EXPECT_EQ(buckets.started_in_backward(), buckets.num_buckets());
  ASSERT_TRUE(buckets.Finish().ok());
  ASSERT_EQ(static_cast<int>(started.size()), buckets.num_buckets());
  for (size_t k = 0; k < started.size(); ++k) {
    if (k > 0) {
      EXPECT_LT(started[k].offset, started[k - 1].offset);  // descending
    }
    for (size_t i = 0; i < started[k].values.size(); ++i) {
      ASSERT_EQ(started[k].values[i], flat[started[k].offset + i].item<float>())
          << "bucket " << k << " was started before its gradient was complete";
    }
  }
  // A parameter the graph does not reach: its bucket is started by Finish, still in order.
  started.clear();
  buckets.Arm();
  torch::Tensor h = net[0]->as<torch::nn::Linear>()->forward(x);
  h.sum().backward();
  EXPECT_TRUE(buckets.Finish().ok());
  EXPECT_EQ(static_cast<int>(started.size()), buckets.num_buckets());
  EXPECT_LT(buckets.started_in_backward(), buckets.num_buckets());
}

}  // namespace
}  // namespace tessera::pipeline
