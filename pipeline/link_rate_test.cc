#include "pipeline/link_rate.h"

#include <gtest/gtest.h>

#include <thread>

namespace tessera::pipeline {
namespace {

// A 20 Mbit/s link (2.5 MB/s of wire bytes) with a 32 KB burst and a 2 ms round trip: the
// transfers take rtt + (W(n) - burst) / rate, and the fit returns exactly that link.
TEST(LinkRate, FitRecoversRateBurstAndLatency) {
  const LinkModel framing = WithTcpFraming(LinkModel{});
  const double rate = 2.5e6, burst = 32 * 1024, rtt = 2e-3;
  auto time = [&](double n) { return rtt + (framing.WireBytes(n) - burst) / rate; };
  auto link = FitLink(rtt, 256e3, time(256e3), 1e6, time(1e6));
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_NEAR(link->bandwidth_bytes_per_s, rate, 1e-6 * rate);
  EXPECT_NEAR(link->burst_bytes, burst, 1e-6 * burst);
  EXPECT_DOUBLE_EQ(link->latency_s, rtt / 2);
  EXPECT_EQ(link->mss_bytes, framing.mss_bytes);          // wire bytes: TCP framing
  EXPECT_FALSE(FitLink(rtt, 1e6, 0.5, 256e3, 0.1).ok());  // the larger must be larger
  EXPECT_FALSE(FitLink(rtt, 256e3, 0.5, 1e6, 0.4).ok());  // ... and slower
}

// Both ends over loopback: the answer's shape (speed is the bench's business), and the JSON the
// worker prints round-trips to the same model.
TEST(LinkRate, ProbesLoopback) {
  auto ports = FreeLocalPorts(1);
  ASSERT_TRUE(ports.ok()) << ports.status();
  const Endpoint at{"127.0.0.1", (*ports)[0]};
  Status served;
  std::thread server([&] { served = ServeLinkProbe(at, std::chrono::milliseconds(20000)); });
  ProbeLinkOptions options;
  options.pings = 5;
  options.repeats = 2;
  options.idle_s = 0.01;
  options.target_s = 0.05;
  options.max_bytes = 8e6;
  auto m = ProbeLink(at, options);
  server.join();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(served.ok()) << served;
  EXPECT_GT(m->rtt_s, 0);
  EXPECT_LT(m->rtt_s, 1);
  EXPECT_GT(m->link.bandwidth_bytes_per_s, 1e6);  // loopback moves more than 1 MB/s
  EXPECT_GE(m->large_bytes, 4 * m->small_bytes - 4);
  auto back = LinkMeasurementFromJson(LinkMeasurementToJson(*m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_DOUBLE_EQ(back->link.bandwidth_bytes_per_s, m->link.bandwidth_bytes_per_s);
  EXPECT_FALSE(LinkMeasurementFromJson(nlohmann::json{{"rtt_s", 1}}).ok());
}

TEST(LinkRate, NoServerIsADeadlineNotAHang) {
  auto ports = FreeLocalPorts(1);
  ASSERT_TRUE(ports.ok());
  ProbeLinkOptions options;
  options.timeout = std::chrono::milliseconds(300);
  auto m = ProbeLink({"127.0.0.1", (*ports)[0]}, options);
  EXPECT_EQ(m.status().code(), StatusCode::kDeadlineExceeded) << m.status();
  options.pings = 0;
  EXPECT_EQ(ProbeLink({"127.0.0.1", (*ports)[0]}, options).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::pipeline
